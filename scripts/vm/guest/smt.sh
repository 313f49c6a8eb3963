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
#    types), whole cores to a cluster; two hogs take one big core each, not
#    the two threads of one core: in the hogs' second second (after their
#    start-up), each big core at least 60% busy (the fault, both hogs on one
#    core, gives ~200 and ~0).
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
    $LOAD hogs --threads 2 --secs 3 >/tmp/smt.json 2>&1 &
    hp=$!
    sleep 1
    grep '^cpu[0-9]' /proc/stat >/tmp/pl0
    sleep 1
    grep '^cpu[0-9]' /proc/stat >/tmp/pl1
    wait "$hp"
    b=$(cpu_busy 0 1 2 3 4 5 6 7)
    cores=$(echo "$b" | awk '{ printf "%d %d %d %d", $1 + $2, $3 + $4, $5 + $6, $7 + $8 }')
    if echo "$cores" | awk '{ exit !($1 >= 60 && $2 >= 60) }'; then
      pass "[smt] run $r: two hogs on two big cores: core busy % $cores (CPUs: $b)"
    else
      fail "[smt] run $r: expected each big core (CPUs 0-1, 2-3) at least 60% busy, saw core busy % $cores (CPUs: $b)"
    fi
  done
  info "[smt] scheduler output (last 4 lines):"; tail -n 4 "$SOUT"
  stop_sched smt
fi

if [ "$FAILS" -eq 0 ]; then
  echo "SUMMARY: all checks passed"
  exit 0
fi
echo "SUMMARY: $FAILS check(s) failed"
exit 1
