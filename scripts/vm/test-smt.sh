#!/usr/bin/env bash
# SMT test of scx_colab in a QEMU VM: 8 vCPUs as 4 cores of 2 hardware
# threads, two big cores and two little ones (colab_test_capacity). Checks
# that a --big-cpus splitting a core's threads is refused, that the split
# read from the capacities keeps each core's threads together and says SMT,
# and that two CPU hogs take one big core each rather than both threads of
# one core (--reps times). Exit status non-zero when any check fails.
#
#   bash scripts/vm/test-smt.sh [--reps N] [--log FILE]
set -euo pipefail
source "$(dirname "$0")/lib.sh"

reps=3 log=""
while [ $# -gt 0 ]; do
  case "$1" in
    --reps) reps="$2"; shift 2 ;;
    --log) log="$2"; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) vm_die "test-smt.sh" "unknown argument: $1 (see --help)" ;;
  esac
done
[[ "$reps" =~ ^[1-9][0-9]?$ ]] || vm_die "test-smt.sh" "--reps takes 1-99, not '$reps'"

T0=$(date +%s)
work="$VM_CACHE/test-smt"
vm_scx_colab_initramfs test-smt.sh "$work" smt.sh \
  "$(printf 'SCHED_BIN=/bin/scx_colab\nSCHED_NAME=scx_colab\nREPS=%q' "$reps")"

[ -n "$log" ] || log="$VM_CACHE/logs/test-smt-$(date +%Y%m%d-%H%M%S).log"
rc=0
bash "$VM_SCRIPTS/run.sh" --kernel "$KDIR/bzImage" --initrd "$work/initramfs.cpio.gz" \
  --smp "8,sockets=1,cores=4,threads=2" \
  --append "colab_test_capacity=1024,1024,1024,1024,326,326,326,326" \
  --log "$log" --timeout $((600 + 10 * reps)) || rc=$?

echo "===== VM SMT test summary ($(($(date +%s) - T0)) s in all; log: $log) ====="
vm_verdict "vm smt test" "$log" "$rc"
