#!/usr/bin/env bash
# colab-amp-study, the real-machine study, tested in the VM: one boot of an
# emulated 1B1S (colab_test_capacity), `colab-amp-study --quick` run as a
# user would, with the schedulers it finds installed (scx_colab, which it
# also runs as scx_colab-paper, and scx_simple). Checks that it exits 0,
# that every scheduler has a result for each workload, that the report shows
# the two core types sysfs gives, that its speed measurement flags them (the
# vCPUs run alike), and that nothing is left attached. Writes the report to
# OUT/report.md. Exit status non-zero when any check fails.
#
#   bash scripts/vm/test-real-study.sh [--out DIR] [--log FILE]
set -euo pipefail
source "$(dirname "$0")/lib.sh"

outdir="$VM_CACHE/real-study" log=""
while [ $# -gt 0 ]; do
  case "$1" in
    --out) outdir="$2"; shift 2 ;;
    --log) log="$2"; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) vm_die "test-real-study.sh" "unknown argument: $1 (see --help)" ;;
  esac
done

T0=$(date +%s)
work="$VM_CACHE/test-real-study"
kdir="$(bash "$VM_SCRIPTS/kernel.sh" | tail -n 1)"
# scx_simple and the kernel's config (libbpf reads it) come with the kernel build.
vm_scx_colab_initramfs test-real-study.sh "$work" real-study.sh "ATTACH_SECS=60" \
  --bin "$kdir/scx_simple:scx_simple" --file "$kdir/config:/boot/kernel-config"

caps="$("$VMLOAD" capacities 1B1S)"
mkdir -p "$outdir"
[ -n "$log" ] || log="$VM_CACHE/logs/test-real-study-$(date +%Y%m%d-%H%M%S).log"
rc=0
bash "$VM_SCRIPTS/run.sh" --kernel "$KDIR/bzImage" --initrd "$work/initramfs.cpio.gz" \
  --smp 2 --append "colab_test_capacity=$caps" \
  --log "$log" --timeout 1800 || rc=$?
sed -n '/^@@REPORT-BEGIN/,/^@@REPORT-END/p' "$log" | sed '1d;$d' >"$outdir/report.md"

echo "===== VM real-study test summary ($(($(date +%s) - T0)) s in all; log: $log; report: $outdir/report.md) ====="
vm_verdict "vm real-study test" "$log" "$rc"
