#!/usr/bin/env bash
# CI test of a sched_ext scheduler in a QEMU VM: attach, a 20 s mixed workload
# (lock + barrier + hogs + sleepers), detach, then a 60 s stress phase (thread
# and process churn + hogs + lock), with PASS/FAIL lines for every check;
# then (scx_colab) a counter phase and a stall phase whose checks must flag a
# forced stall.
#
#   bash scripts/vm/test.sh [--scheduler PATH] [--sched-args "ARGS"]
#        [--stats-cmd "CMD"] [--expect-high | --no-expect-high]
#        [--mix-secs N] [--stress-secs N] [--attach-secs N] [--log FILE]
#        [--counter-secs N] [--stall-args "ARGS" | --no-stall] [--stall-secs N]
#        [--hotplug-cpu N | --no-hotplug] [--hotplug-secs N]
#
# Default scheduler: scx_colab built from crates/scx_colab (with
# "--big-cpus 0,1 --stats 1", the lockholder HIGH check and the stall phase
# with "--debug-stall-after 2"), else the kernel's scx_simple (no HIGH
# check, no stall phase). --stats-cmd runs CMD in the guest (background,
# during the workloads); its output is searched for the lockholder HIGH line
# too. --stall-args: extra scheduler arguments that make it stall (the phase
# runs when non-empty); --stall-secs: its hogs' duration (15).
# --counter-secs (scx_colab; default 15, 0 skips it): page-faulting threads
# and hogs under a software-event model, checking the faulters are labelled
# HIGH speedup and the hogs LOW. --hotplug-cpu N (scx_colab: 3) /
# --no-hotplug, --hotplug-secs (10): CPU N goes offline and back online under
# hogs; the scheduler must restart on the kernel's request both times and
# still detach cleanly. Exit status non-zero when any check fails.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

sched="" sched_args="__default__" stats_cmd="" expect_high="" mix=20 stress=60 log="" attach=20
stall_args="__default__" stall=15 counters=15 hotplug="__default__" hotplug_secs=10
while [ $# -gt 0 ]; do
  case "$1" in
    --scheduler) sched="$2"; shift 2 ;;
    --sched-args) sched_args="$2"; shift 2 ;;
    --stats-cmd) stats_cmd="$2"; shift 2 ;;
    --expect-high) expect_high=1; shift ;;
    --no-expect-high) expect_high=0; shift ;;
    --mix-secs) mix="$2"; shift 2 ;;
    --stress-secs) stress="$2"; shift 2 ;;
    --log) log="$2"; shift 2 ;;
    --attach-secs) attach="$2"; shift 2 ;;
    --stall-args) stall_args="$2"; shift 2 ;;
    --no-stall) stall_args=""; shift ;;
    --stall-secs) stall="$2"; shift 2 ;;
    --counter-secs) counters="$2"; shift 2 ;;
    --hotplug-cpu) hotplug="$2"; shift 2 ;;
    --no-hotplug) hotplug=""; shift ;;
    --hotplug-secs) hotplug_secs="$2"; shift 2 ;;
    -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
    *) vm_die "test.sh" "unknown argument: $1 (see --help)" ;;
  esac
done

T0=$(date +%s)
bash "$VM_SCRIPTS/deps.sh" >&2
KDIR="$(bash "$VM_SCRIPTS/kernel.sh" | tail -n 1)"
[ -f "$KDIR/bzImage" ] || vm_die "test.sh" "kernel.sh did not produce $KDIR/bzImage"

if [ -n "$sched" ]; then
  bins="$(bash "$VM_SCRIPTS/build-guest-bins.sh" --no-colab)"
else
  bins="$(bash "$VM_SCRIPTS/build-guest-bins.sh")"
fi
vmload="$(sed -n 's/^vmload=//p' <<<"$bins")"
colab="$(sed -n 's/^scx_colab=//p' <<<"$bins")"
if [ -z "$sched" ]; then
  sched="${colab:-$KDIR/scx_simple}"
fi
[ -x "$sched" ] || vm_die "test.sh" "scheduler '$sched' not found or not executable"
name="$(basename "$sched")"
if [ "$sched_args" = "__default__" ]; then
  case "$name" in
    scx_colab*) sched_args="--big-cpus 0,1 --stats 1" ;;
    *) sched_args="" ;;
  esac
fi
if [ "$stall_args" = "__default__" ]; then
  case "$name" in
    scx_colab*) stall_args="--debug-stall-after 2" ;;
    *) stall_args="" ;;
  esac
fi
# The counter phase (scx_colab only): the VM has no PMU, so the model's
# cycles are the software cpu-clock (see guest/counters-model.json).
# CPU-hotplug phase: scx_colab restarts on the kernel's request; CPU 3 is a
# little CPU under the default --big-cpus 0,1 (the VM has 4 vCPUs).
if [ "$hotplug" = "__default__" ]; then
  case "$name" in
    scx_colab*) hotplug=3 ;;
    *) hotplug="" ;;
  esac
fi
counter_args=""
case "$name" in
  scx_colab*) [ "$counters" -gt 0 ] && counter_args="--model /tmp/counters-model.json --event CPU_CYCLES=cpu-clock --speedup-range 1,2" ;;
esac
# The exact lines a requested detach prints: the kernel's exit kind
# (SCX_EXIT_UNREG) as the UEI report gives it, and scx_colab's own line.
uei_exit_line="EXIT: unregistered from user space"
case "$name" in
  scx_colab*) sched_exit_line="scx_colab: detached on request" ;;
  *) sched_exit_line="" ;;
esac
if [ -z "$expect_high" ]; then
  case "$name" in scx_colab*) expect_high=1 ;; *) expect_high=0 ;; esac
fi
# The placement phase (two hogs must run on the big CPUs, under each policy)
# needs scx_colab's --big-cpus 0,1 on the 4-vCPU VM.
case "$name:$sched_args" in scx_colab*:*"--big-cpus 0,1"*) placement=1 ;; *) placement=0 ;; esac
# Expected /sys/kernel/sched_ext/root/ops (a shell pattern; scx's Rust
# schedulers append version and build to the name, e.g. colab_0.1.0_..._debug).
case "$name" in
  scx_simple) expect_ops="simple" ;;
  scx_colab*) expect_ops="colab*" ;;
  *) expect_ops="" ;;
esac

work="$VM_CACHE/test"
mkdir -p "$work"
guest="$work/guest.sh"
{
  echo "# generated by scripts/vm/test.sh"
  printf 'SCHED_BIN=/bin/%q\n' "$name"
  printf 'SCHED_NAME=%q\n' "$name"
  printf 'SCHED_ARGS=%q\n' "$sched_args"
  printf 'STATS_CMD=%q\n' "$stats_cmd"
  printf 'EXPECT_HIGH=%q\n' "$expect_high"
  printf 'EXPECT_OPS=%q\n' "$expect_ops"
  printf 'UEI_EXIT_LINE=%q\n' "$uei_exit_line"
  printf 'SCHED_EXIT_LINE=%q\n' "$sched_exit_line"
  printf 'MIX_SECS=%q\nSTRESS_SECS=%q\nATTACH_SECS=%q\n' "$mix" "$stress" "$attach"
  printf 'STALL_ARGS=%q\nSTALL_SECS=%q\n' "$stall_args" "$stall"
  printf 'COUNTER_ARGS=%q\nCOUNTER_SECS=%q\n' "$counter_args" "$counters"
  printf 'HOTPLUG_CPU=%q\nHOTPLUG_SECS=%q\n' "$hotplug" "$hotplug_secs"
  printf 'PLACEMENT=%q\n' "$placement"
  printf 'COUNTER_MODEL_JSON=%q\n' "$(tr -d '\n' <"$VM_SCRIPTS/guest/counters-model.json")"
  cat "$VM_SCRIPTS/guest/common.sh" "$VM_SCRIPTS/guest/test.sh"
} >"$guest"
bash "$VM_SCRIPTS/initramfs.sh" --out "$work/initramfs.cpio.gz" --guest "$guest" \
  --bin "$vmload" --bin "$sched:$name"

[ -n "$log" ] || log="$VM_CACHE/logs/test-$(date +%Y%m%d-%H%M%S).log"
vm_timeout=$((mix + stress + 420))
[ -z "$stall_args" ] || vm_timeout=$((vm_timeout + stall + 150))
[ -z "$counter_args" ] || vm_timeout=$((vm_timeout + counters + 90))
[ -z "$hotplug" ] || vm_timeout=$((vm_timeout + hotplug_secs + 150))
rc=0
bash "$VM_SCRIPTS/run.sh" --kernel "$KDIR/bzImage" --initrd "$work/initramfs.cpio.gz" \
  --log "$log" --timeout "$vm_timeout" || rc=$?

echo "===== VM test summary ($name, $(($(date +%s) - T0)) s in all; log: $log) ====="
vm_verdict "vm test" "$log" "$rc"
