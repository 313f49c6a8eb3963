# Guest side of scripts/vm/amp-study.sh (busybox sh). Prepended: MACHINE
# (emulated topology, e.g. 2B2S), ALLBIG (its all-big counterpart, e.g. 4B),
# SCHEDS ("default" and scheduler binaries in /bin), WORKLOADS, REPS,
# EMU_REPS, COLAB_ARGS, and guest/common.sh. Prints:
#   @@CAL,<spins_per_us>                       the busy loop, measured once
#   @@EMU,<cpu>,<rep>,<ns>                     a pinned spin on a big / little vCPU
#   @@TSB,<workload>,<rep>,<program>,<ns>      alone on all-big vCPUs (T_SB)
#   @@RUN,<sched>,<workload>,<rep>,<program>,<ns>
#   @@RUN-FAILED,<sched>,<workload>,<why>

LOAD=/bin/colab-vmload
# Where libbpf looks for the kernel config (the host puts it at /boot/kernel-config).
[ -f /boot/kernel-config ] && ln -sf kernel-config "/boot/config-$(uname -r)"
S=$($LOAD calibrate | sed -n 's/.*"spins_per_us":\([0-9.]*\).*/\1/p')
[ -n "$S" ] || { fail "calibrate: no busy-loop speed"; exit 1; }
echo "@@CAL,$S"
info "dmesg: $(dmesg | grep -m1 colab_test_capacity)"
for c in /sys/devices/system/cpu/cpu[0-9]*; do info "$(basename "$c") cpu_capacity $(cat "$c/cpu_capacity" 2>/dev/null || echo none)"; done

# One JSON line from `colab-vmload mix` -> "<program>,<ns>" per program
# (rep 0 only: the script runs one repetition per call).
programs() {
  echo "$1" | tr '{' '\n' | sed -n 's/.*"name":"\([^"]*\)".*"raw_ns":\[\([0-9]*\)\].*/\1,\2/p'
}

cat >/tmp/spin.toml <<'X'
name = "spin"
[thread.main]
ops = [ { compute = 100000, mem_frac = 0.0 } ]
X
# Emulation accuracy: one core-bound thread pinned to a big (0) and to the
# last (little) vCPU, alternating so drift hits both alike.
last=$(($(nproc) - 1))
r=0
while [ $r -lt "$EMU_REPS" ]; do
  r=$((r + 1))
  for cpu in 0 $last; do
    out=$($LOAD mix /tmp/spin.toml --emulate "$MACHINE" --pin $cpu --spins-per-us "$S")
    echo "@@EMU,$cpu,$r,$(programs "$out" | cut -d, -f2)"
  done
done

# T_SB: each program of each workload alone on all-big vCPUs, under the
# default scheduler.
for wl in $WORKLOADS; do
  r=0
  while [ $r -lt "$REPS" ]; do
    r=$((r + 1))
    out=$($LOAD mix "$wl" --emulate "$ALLBIG" --spins-per-us "$S" --alone 2>&1) || { echo "@@RUN-FAILED,tsb,$wl,$out"; continue; }
    programs "$out" | while read -r p; do echo "@@TSB,$wl,$r,$p"; done
  done
done

for s in $SCHEDS; do
  info "===== study under $s ====="
  if [ "$s" != default ]; then
    SCHED_BIN="/bin/$s"; SCHED_NAME="$s"; SCHED_ARGS=""
    case "$s" in
      scx_colab-paper) SCHED_BIN=/bin/scx_colab; SCHED_ARGS="$COLAB_ARGS --policy colab" ;;
      scx_colab-*)
        SCHED_BIN=/bin/scx_colab
        SCHED_ARGS="$COLAB_ARGS $(variant_args "${s#scx_colab-}")" ;;
      scx_colab*) SCHED_ARGS="$COLAB_ARGS" ;;
    esac
    if ! start_sched "amp-$s"; then
      echo "@@RUN-FAILED,$s,attach,scheduler did not attach"
      continue
    fi
  fi
  for wl in $WORKLOADS; do
    r=0
    while [ $r -lt "$REPS" ]; do
      r=$((r + 1))
      [ "${MIGRATIONS:-0}" = 1 ] && mig_start
      out=$($LOAD mix "$wl" --emulate "$MACHINE" --spins-per-us "$S" 2>&1)
      rc=$?
      if [ "${MIGRATIONS:-0}" = 1 ]; then
        n=$(mig_total) && echo "@@MIG,$s,$wl,$r,$n"
      fi
      if [ $rc -ne 0 ]; then
        echo "@@RUN-FAILED,$s,$wl,$out"; FAILS=$((FAILS + 1)); continue
      fi
      programs "$out" | while read -r p; do echo "@@RUN,$s,$wl,$r,$p"; done
      if [ "$s" != default ] && [ "$(sx_state)" != enabled ]; then
        echo "@@RUN-FAILED,$s,$wl,scheduler no longer attached (state '$(sx_state)')"
        FAILS=$((FAILS + 1))
      fi
    done
  done
  if [ "$s" != default ]; then stop_sched "amp-$s"; fi
done
exit $((FAILS > 0))
