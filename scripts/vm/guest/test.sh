# Guest side of scripts/vm/test.sh (busybox sh). Prepended: config variables
# (SCHED_BIN SCHED_NAME SCHED_ARGS STATS_CMD EXPECT_HIGH EXPECT_OPS EXIT_RE
# MIX_SECS STRESS_SECS) and guest/common.sh.

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

if [ "$FAILS" -eq 0 ]; then
  echo "SUMMARY: all checks passed"
  exit 0
fi
echo "SUMMARY: $FAILS check(s) failed"
exit 1
