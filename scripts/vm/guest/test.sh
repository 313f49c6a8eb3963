# Guest side of scripts/vm/test.sh (busybox sh). Prepended: config variables
# (SCHED_BIN SCHED_NAME SCHED_ARGS STATS_CMD EXPECT_HIGH EXPECT_OPS EXIT_RE
# MIX_SECS STRESS_SECS COUNTER_ARGS COUNTER_SECS COUNTER_MODEL_JSON) and
# guest/common.sh.

LOAD=/bin/colab-vmload
BAD_DMESG='runnable task stall|watchdog: |BUG|Oops|Call Trace|[Pp]anic|sched_ext: .*disabled \((runtime error|scx_bpf_error|runnable task stall)|sched_ext:.*[Ee]rror|WARNING:'

# run_phase TAG SECS WORKLOAD... (each WORKLOAD one string of colab-vmload args)
run_phase() {
  tag=$1; secs=$2; shift 2
  info "[$tag] ===== phase '$tag': scheduler $SCHED_NAME, workloads for $secs s ====="
  mark=$(dmesg_mark)
  start_sched "$tag" || return 0
  ops=$(sx_ops)
  if [ -z "$ops" ]; then
    info "[$tag] /sys/kernel/sched_ext/root/ops not present"
  else
    # shellcheck disable=SC2254
    case "$ops" in
      ${EXPECT_OPS:-*}) pass "[$tag] sched_ext root/ops is '$ops' (expected '${EXPECT_OPS:-any}')" ;;
      *) fail "[$tag] sched_ext root/ops: expected '$EXPECT_OPS', saw '$ops'" ;;
    esac
  fi
  STPID=""
  if [ -n "$STATS_CMD" ]; then
    sh -c "$STATS_CMD" >"/tmp/stats-$tag.out" 2>&1 &
    STPID=$!
  fi

  i=0
  for w in "$@"; do
    i=$((i + 1))
    rm -f "/tmp/w-$tag-$i.rc"
    # shellcheck disable=SC2086
    ( $LOAD $w >"/tmp/w-$tag-$i.out" 2>&1; echo $? >"/tmp/w-$tag-$i.rc" ) &
  done
  nw=$i
  # Poll until every workload wrote its exit status (or the limit passes),
  # checking the scheduler stays attached and alive.
  limit=$(($(date +%s) + secs + 90))
  polls=0; bad=0; badseen=""; dead=0
  while :; do
    done_n=0; i=0
    while [ $i -lt $nw ]; do i=$((i + 1)); [ -f "/tmp/w-$tag-$i.rc" ] && done_n=$((done_n + 1)); done
    [ $done_n -eq $nw ] && break
    [ "$(date +%s)" -ge $limit ] && break
    st=$(sx_state); polls=$((polls + 1))
    if [ "$st" != enabled ]; then bad=$((bad + 1)); [ -z "$badseen" ] && badseen="$st"; fi
    proc_alive "$SPID" || dead=1
    sleep 0.5
  done
  if [ $bad -eq 0 ] && [ $polls -gt 0 ]; then
    pass "[$tag] state stayed 'enabled' while the workloads ran ($polls polls)"
  else
    fail "[$tag] state while the workloads ran: expected 'enabled' throughout, saw '$badseen' in $bad of $polls polls"
  fi
  if [ $dead -eq 0 ] && proc_alive "$SPID"; then
    pass "[$tag] scheduler process alive throughout"
  else
    fail "[$tag] scheduler process: expected alive throughout, it exited"
  fi
  i=0
  for w in "$@"; do
    i=$((i + 1))
    rc=$(cat "/tmp/w-$tag-$i.rc" 2>/dev/null || echo "none (did not finish within $((secs + 90)) s)")
    json=$(grep '^{.*"ok":true' "/tmp/w-$tag-$i.out" | tail -n 1)
    if [ "$rc" = 0 ] && [ -n "$json" ]; then
      pass "[$tag] workload '$w' completed: $json"
    else
      fail "[$tag] workload '$w': expected exit 0 and a JSON result line, saw exit $rc, output: $(tail -n 5 "/tmp/w-$tag-$i.out" | tr '\n' ' ')"
    fi
  done

  if [ "$EXPECT_HIGH" = 1 ]; then
    line=$(cat "$SOUT" "/tmp/stats-$tag.out" 2>/dev/null | grep 'lockholder' | grep 'HIGH' | tail -n 1)
    if [ -n "$line" ]; then
      pass "[$tag] scheduler labels lockholder high-blocking: $line"
    else
      fail "[$tag] scheduler stats: expected a line with 'lockholder' and 'HIGH', saw: $(cat "$SOUT" "/tmp/stats-$tag.out" 2>/dev/null | grep -i 'block' | tail -n 3 | tr '\n' '|')"
    fi
  else
    info "[$tag] lockholder HIGH-label check skipped for $SCHED_NAME"
  fi
  [ -n "$STPID" ] && kill -TERM "$STPID" 2>/dev/null

  stop_sched "$tag"
  if grep -Eq "$EXIT_RE" "$SOUT"; then
    pass "[$tag] scheduler printed its exit reason: $(grep -E "$EXIT_RE" "$SOUT" | tail -n 1)"
  else
    fail "[$tag] scheduler output: expected an exit reason matching /$EXIT_RE/, saw: $(tail -n 3 "$SOUT" | tr '\n' '|')"
  fi
  new=$(dmesg_since "$mark")
  badl=$(echo "$new" | grep -E "$BAD_DMESG")
  if [ -z "$badl" ]; then
    pass "[$tag] kernel log clean (no sched_ext error, stall, watchdog, BUG, Oops)"
  else
    fail "[$tag] kernel log: expected no errors, saw:"; echo "$badl" | head -n 40
  fi
  reason=$(echo "$new" | grep -o 'sched_ext: BPF scheduler .* disabled (.*)' | tail -n 1)
  case "$reason" in
    *"(unregistered from user space)"*) pass "[$tag] kernel: $reason" ;;
    *) fail "[$tag] kernel disable reason: expected 'unregistered from user space', saw '${reason:-no disable line}'" ;;
  esac
  info "[$tag] scheduler output (last 8 lines):"; tail -n 8 "$SOUT"
}

info "scheduler: $SCHED_NAME ($SCHED_BIN $SCHED_ARGS), lockholder HIGH check: $EXPECT_HIGH"
st=$(sx_state)
if [ "$st" = disabled ]; then pass "sched_ext present, state 'disabled' before the test"; else fail "sched_ext state before the test: expected 'disabled', saw '$st'"; fi

run_phase mix "$MIX_SECS" \
  "lock --waiters 3 --secs $MIX_SECS" \
  "barrier --threads 4 --secs $MIX_SECS" \
  "hogs --threads 2 --secs $MIX_SECS" \
  "sleepers --threads 4 --secs $MIX_SECS"

run_phase stress "$STRESS_SECS" \
  "churn --threads 8 --secs $STRESS_SECS" \
  "hogs --threads 4 --secs $STRESS_SECS" \
  "lock --waiters 3 --secs $STRESS_SECS"

# Counter phase (scx_colab): per-task speedups from perf counters through
# the BPF tracepoint and the model. The VM has no PMU, so COUNTER_ARGS maps
# the model's CPU_CYCLES to the software cpu-clock and the model reads page
# faults (scripts/vm/guest/counters-model.json): `faulter` threads must be
# labelled HIGH speedup and the hogs LOW.
if [ -n "$COUNTER_ARGS" ]; then
  printf '%s\n' "$COUNTER_MODEL_JSON" >/tmp/counters-model.json
  saved_args=$SCHED_ARGS saved_high=$EXPECT_HIGH
  SCHED_ARGS="$SCHED_ARGS $COUNTER_ARGS" EXPECT_HIGH=0
  run_phase counters "$COUNTER_SECS" \
    "faults --threads 2 --secs $COUNTER_SECS" \
    "hogs --threads 2 --secs $COUNTER_SECS"
  SCHED_ARGS=$saved_args EXPECT_HIGH=$saved_high
  out=/tmp/sched-counters.out
  if grep -q 'counters for model `vm-page-faults`' "$out"; then
    pass "[counters] counters opened: $(grep 'counters for model' "$out" | head -n 1)"
  else
    fail "[counters] expected 'counters for model \`vm-page-faults\`' in the scheduler output, saw: $(head -n 5 "$out" | tr '\n' '|')"
  fi
  reads=$(grep -o 'pmu_reads [0-9]*' "$out" | awk '{s += $2} END {print s + 0}')
  errs=$(grep -o 'pmu_errors [0-9]*' "$out" | awk '{s += $2} END {print s + 0}')
  if [ "$reads" -gt 0 ] && [ "$errs" -eq 0 ]; then
    pass "[counters] the tracepoint read the counters at $reads task switches, no read errors"
  else
    fail "[counters] counter reads: expected > 0 and no errors, saw $reads reads and $errs errors"
  fi
  # Predictions are per 10 ms period and vary (a faulter's period may hold
  # few faults): faulters must be HIGH in some stats line and never all LOW;
  # hogs (no faults, 1.0) must be LOW in every line.
  grep -o 'faulter x[0-9]* [0-9.]* [^,|]*' "$out" >/tmp/faulter.lines || true
  grep -o 'hog x[0-9]* [0-9.]* [^,|]*' "$out" >/tmp/hog.lines || true
  fh=$(grep -c ' HIGH *$' /tmp/faulter.lines || true)
  fl=$(grep -c ' LOW *$' /tmp/faulter.lines || true)
  if [ "$fh" -gt 0 ] && [ "$fl" -eq 0 ]; then
    pass "[counters] page-faulting threads labelled HIGH speedup in $fh of $(wc -l </tmp/faulter.lines) stats lines, never LOW: $(tr '\n' ';' </tmp/faulter.lines)"
  else
    fail "[counters] faulter labels: expected HIGH in some stats line and never LOW, saw: '$(tr '\n' ';' </tmp/faulter.lines)'"
  fi
  hn=$(wc -l </tmp/hog.lines)
  hl=$(grep -c ' LOW *$' /tmp/hog.lines || true)
  if [ "$hn" -gt 0 ] && [ "$hl" -eq "$hn" ]; then
    pass "[counters] CPU hogs labelled LOW speedup in all $hn stats lines: $(tail -n 1 /tmp/hog.lines)"
  else
    fail "[counters] hog labels: expected LOW in every stats line, saw: '$(tr '\n' ';' </tmp/hog.lines)'"
  fi
fi

if [ "$FAILS" -eq 0 ]; then
  echo "SUMMARY: all checks passed"
  exit 0
fi
echo "SUMMARY: $FAILS check(s) failed"
exit 1
