# Guest side of scripts/vm/bench.sh (busybox sh). Prepended: SCHEDS (list of
# "default" and scheduler binary names in /bin), COLAB_ARGS, REPS, FUTEX_ARGS,
# MSG_ARGS, and guest/common.sh. Prints "@@BENCH,<sched>,<workload>,<rep>,<elapsed_s>"
# and, for scx_colab (run with --stats 1), the scheduler's counters summed over
# each workload's repetitions: "@@STATS,<sched>,<workload>,<direct>,<queued>,
# <steal_own>,<steal_other>,<big_preempts_little>,<pulled>,<migrations>,
# <futex_charges>,<idle_kicks>" and the scheduler process's own CPU time:
# "@@SCHEDCPU,<sched>,<workload>,<ticks>" (USER_HZ ticks, 100 a second on x86) (stats lines that straddle two workloads count for
# the one whose repetitions they end in).

LOAD=/bin/colab-vmload
# Task migrations: mig_start / mig_total (guest/common.sh), per workload:
# "@@MIG,<sched>,<workload>,<n>".
# CPU time (USER_HZ ticks, utime + stime) of the scheduler's own process: its
# user-space side (labeller, stats), which competes with the workload.
proc_ticks() {
  awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0
}
mig_count() {
  n=$(mig_total) || return 0
  echo "@@MIG,$1,$2,$n"
}
for s in $SCHEDS; do
  info "===== bench under $s ====="
  if [ "$s" != default ]; then
    SCHED_BIN="/bin/$s"; SCHED_NAME="$s"; SCHED_ARGS=""
    case "$s" in
      scx_colab_nofutex) SCHED_ARGS="$COLAB_ARGS --no-futex-tracking --stats 1" ;;
      scx_colab_paper) SCHED_ARGS="$COLAB_ARGS --policy colab --stats 1" ;;
      scx_colab_fig6) SCHED_ARGS="$COLAB_ARGS --policy colab --strict-rr --pull-min-us 0 --stats 1" ;;
      scx_colab_*)
        SCHED_ARGS="$COLAB_ARGS $(variant_args "${s#scx_colab_}") --stats 1" ;;
      scx_colab*) SCHED_ARGS="$COLAB_ARGS --stats 1" ;;
    esac
    if ! start_sched "bench-$s"; then
      echo "@@BENCH-FAILED,$s,attach"
      continue
    fi
  fi
  for wl in futex msg; do
    if [ "$wl" = futex ]; then args="$FUTEX_ARGS"; else args="$MSG_ARGS"; fi
    n0=0 t0=0
    [ "$s" != default ] && n0=$(wc -l <"$SOUT") && t0=$(proc_ticks "$SPID")
    mig_start
    rep=0
    while [ $rep -lt "$REPS" ]; do
      rep=$((rep + 1))
      # shellcheck disable=SC2086
      out=$($LOAD $wl $args 2>&1); rc=$?
      el=$(echo "$out" | sed -n 's/.*"elapsed_s":\([0-9.e+-]*\).*/\1/p' | tail -n 1)
      if [ $rc -eq 0 ] && [ -n "$el" ]; then
        echo "@@BENCH,$s,$wl,$rep,$el"
      else
        echo "@@BENCH-FAILED,$s,$wl,rep $rep exit $rc: $out"
        FAILS=$((FAILS + 1))
      fi
      if [ "$s" != default ] && [ "$(sx_state)" != enabled ]; then
        fail "[bench-$s] scheduler no longer attached after $wl rep $rep (state '$(sx_state)')"
      fi
    done
    mig_count "$s" "$wl"
    [ "$s" != default ] && echo "@@SCHEDCPU,$s,$wl,$(($(proc_ticks "$SPID") - t0))"
    case "$s" in scx_colab*)
      tail -n +$((n0 + 1)) "$SOUT" | grep 'sched:' | awk -v s="$s" -v w="$wl" '
        BEGIN { split("direct queued steal_own steal_other big_preempts_little pulled migrations futex_charges idle_kicks", k, " ") }
        { for (i = 1; i < NF; i++) v[$i] += $(i + 1) }
        END { line = "@@STATS," s "," w; for (j = 1; j <= 9; j++) line = line "," (v[k[j]] + 0); print line }' ;;
    esac
  done
  if [ "$s" != default ]; then stop_sched "bench-$s"; fi
done
exit $((FAILS > 0))
