# Guest side of scripts/vm/test-smt.sh (busybox sh). Prepended: SCHED_BIN,
# SCHED_NAME, REPS and guest/common.sh. The VM: 8 vCPUs as 4 cores of 2
# threads (QEMU numbers a core's threads next to each other: 0-1, 2-3, ...),
# cores 0-1 big (capacity 1024) and 2-3 little (326) by colab_test_capacity.

LOAD=/bin/colab-vmload
ATTACH_SECS=60
SCHED_ARGS="--stats 1"

# 1. The VM is what the checks below assume.
sib=$(cat /sys/devices/system/cpu/cpu0/topology/thread_siblings_list 2>/dev/null)
if [ "$sib" = "0-1" ]; then
  pass "[smt] CPU 0's SMT siblings are 0-1"
else
  fail "[smt] CPU 0's thread_siblings_list: expected 0-1, saw '$sib'"
fi

# 2. --big-cpus that splits a core's threads is refused, naming both.
"$SCHED_BIN" --big-cpus 0,2 >/tmp/split.out 2>&1
rc=$?
if [ "$rc" -ne 0 ] && grep -q 'CPU 0 is big but its SMT sibling 1 is not' /tmp/split.out; then
  pass "[smt] --big-cpus 0,2 refused (exit $rc): $(grep -m1 sibling /tmp/split.out)"
else
  fail "[smt] --big-cpus 0,2: expected a non-zero exit naming CPU 0 and its sibling 1, saw exit $rc: $(head -n 3 /tmp/split.out | tr '\n' '|')"
fi

# 3. Without --big-cpus the split comes from the capacities (scx_utils' core
#    types), whole cores to a cluster. Then two CPU hogs on the big cores,
#    placed badly on purpose: A pinned to CPU 0, B started on CPU 1 (A's
#    sibling) and then allowed CPUs 1-3. An idle whole big core (2-3) is
#    left, so B must move there: one second after the widening, over the
#    next second, each big core is at least 60% busy (without the SMT rules
#    B stays beside A: core busy ~200 and ~0).
if start_sched smt; then
  if grep -q 'big 0,1,2,3 / little 4,5,6,7.*SMT: idle whole cores first' "$SOUT"; then
    pass "[smt] split: $(grep -m1 'AMP from' "$SOUT")"
  else
    fail "[smt] expected 'big 0,1,2,3 / little 4,5,6,7 ... SMT: idle whole cores first' in the scheduler output, saw: $(head -n 3 "$SOUT" | tr '\n' '|')"
  fi
  sleep 1
  r=0
  while [ $r -lt "$REPS" ]; do
    r=$((r + 1))
    taskset -c 0 $LOAD hogs --threads 1 --secs 4 >/tmp/smt-a.json 2>&1 &
    ha=$!
    taskset -c 1 $LOAD hogs --threads 1 --secs 4 >/tmp/smt-b.json 2>&1 &
    hb=$!
    sleep 0.5
    taskset -a -p -c 1-3 "$hb" >/dev/null 2>&1 || fail "[smt] run $r: taskset -a -p -c 1-3 $hb failed"
    sleep 1
    grep '^cpu[0-9]' /proc/stat >/tmp/pl0
    sleep 1
    grep '^cpu[0-9]' /proc/stat >/tmp/pl1
    wait "$ha" "$hb"
    b=$(cpu_busy 0 1 2 3 4 5 6 7)
    cores=$(echo "$b" | awk '{ printf "%d %d %d %d", $1 + $2, $3 + $4, $5 + $6, $7 + $8 }')
    if echo "$cores" | awk '{ exit !($1 >= 60 && $2 >= 60) }'; then
      pass "[smt] run $r: the hog beside a busy sibling moved to the idle big core: core busy % $cores (CPUs: $b)"
    else
      fail "[smt] run $r: expected each big core (CPUs 0-1, 2-3) at least 60% busy, saw core busy % $cores (CPUs: $b)"
    fi
  done
  moves=$(grep -o 'smt_moves [0-9]*' "$SOUT" | awk '{ s += $2 } END { print s + 0 }')
  if [ "$moves" -ge "$REPS" ]; then
    pass "[smt] $moves SMT moves counted (at least one a run)"
  else
    fail "[smt] expected at least $REPS SMT moves in the stats lines, saw $moves"
  fi
  info "[smt] scheduler output (last 2 lines):"; tail -n 2 "$SOUT"
  stop_sched smt
fi

if [ "$FAILS" -eq 0 ]; then
  echo "SUMMARY: all checks passed"
  exit 0
fi
echo "SUMMARY: $FAILS check(s) failed"
exit 1
