# Guest side of scripts/vm/bench.sh (busybox sh). Prepended: SCHEDS (list of
# "default" and scheduler binary names in /bin), COLAB_ARGS, REPS, FUTEX_ARGS,
# MSG_ARGS, and guest/common.sh. Prints "@@BENCH,<sched>,<workload>,<rep>,<elapsed_s>".

LOAD=/bin/colab-vmload
for s in $SCHEDS; do
  info "===== bench under $s ====="
  if [ "$s" != default ]; then
    SCHED_BIN="/bin/$s"; SCHED_NAME="$s"; SCHED_ARGS=""
    case "$s" in
      scx_colab_rr) SCHED_ARGS="$COLAB_ARGS --strict-rr" ;;
      scx_colab*) SCHED_ARGS="$COLAB_ARGS" ;;
    esac
    if ! start_sched "bench-$s"; then
      echo "@@BENCH-FAILED,$s,attach"
      continue
    fi
  fi
  for wl in futex msg; do
    if [ "$wl" = futex ]; then args="$FUTEX_ARGS"; else args="$MSG_ARGS"; fi
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
  done
  if [ "$s" != default ]; then stop_sched "bench-$s"; fi
done
exit $((FAILS > 0))
