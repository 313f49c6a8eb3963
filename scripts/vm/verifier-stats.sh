#!/usr/bin/env bash
# The verifier's cost of scx_colab's BPF programs on the project's 6.12
# kernel, checked against a committed baseline: boots the VM, loads the
# programs with each policy (`scx_colab --verifier-stats`: instructions
# processed, total and peak states per program) and fails when any program
# processes more than MARGIN percent more instructions than the baseline
# says, or when a program is missing from either. --bless writes the
# measured numbers as the new baseline instead.
#
#   bash scripts/vm/verifier-stats.sh [--bless] [--margin PERCENT] [--log FILE]
#
# Baseline: crates/scx_colab/verifier-baseline.tsv (policy, program,
# insns_processed, total_states, peak_states). Margin: 10 (percent).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

bless=0 margin=10 log=""
while [ $# -gt 0 ]; do
  case "$1" in
    --bless) bless=1; shift ;;
    --margin) margin="$2"; shift 2 ;;
    --log) log="$2"; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) vm_die "verifier-stats.sh" "unknown argument: $1 (see --help)" ;;
  esac
done
[[ "$margin" =~ ^[0-9]+$ ]] || vm_die "verifier-stats.sh" "--margin takes a whole percentage, not '$margin'"
baseline="$VM_ROOT/crates/scx_colab/verifier-baseline.tsv"

T0=$(date +%s)
work="$VM_CACHE/verifier"
vm_scx_colab_initramfs verifier-stats.sh "$work" verifier.sh

[ -n "$log" ] || log="$VM_CACHE/logs/verifier-$(date +%Y%m%d-%H%M%S).log"
rc=0
bash "$VM_SCRIPTS/run.sh" --kernel "$KDIR/bzImage" --initrd "$work/initramfs.cpio.gz" \
  --smp 4 --log "$log" --timeout 900 || rc=$?
echo "===== verifier statistics ($(($(date +%s) - T0)) s in all; log: $log) ====="
vm_verdict "verifier stats" "$log" "$rc"

# The measured rows, as policy<TAB>program<TAB>insns<TAB>total<TAB>peak.
measured="$work/measured.tsv"
tr -d '\r' <"$log" | awk '
  /^@@VERIFIER-BEGIN / { pol = $2; sub(/@@$/, "", pol); on = 1; next }
  /^@@VERIFIER-END / { on = 0; next }
  on && $1 != "program" && NF == 4 { print pol "\t" $1 "\t" $2 "\t" $3 "\t" $4 }
' >"$measured"
[ -s "$measured" ] || vm_die "verifier-stats.sh" "no statistics in $log"
column -t "$measured" || cat "$measured"
if [ "$bless" = 1 ]; then
  {
    echo "# scx_colab's BPF programs on the project's Linux 6.12 (scripts/vm/kernel.sh),"
    echo "# loaded by scripts/vm/verifier-stats.sh --bless on $(date -u +%Y-%m-%d) at $(git -C "$VM_ROOT" rev-parse --short HEAD)."
    echo "# CI fails when a program processes more than its margin over insns_processed."
    printf 'policy\tprogram\tinsns_processed\ttotal_states\tpeak_states\n'
    cat "$measured"
  } >"$baseline"
  echo "verifier stats: baseline written to $baseline"
  exit 0
fi
[ -f "$baseline" ] || vm_die "verifier-stats.sh" "no baseline at $baseline (run with --bless)"
awk -F '\t' -v margin="$margin" '
  FNR == NR { if ($0 !~ /^#/ && $1 != "policy") base[$1 "/" $2] = $3; next }
  { seen[$1 "/" $2] = 1
    k = $1 "/" $2
    if (!(k in base)) { printf "FAIL: %s: not in the baseline (run --bless)\n", k; bad++; next }
    limit = base[k] * (100 + margin) / 100
    if ($3 > limit) { printf "FAIL: %s: %d instructions processed, baseline %d (+%d%% allowed)\n", k, $3, base[k], margin; bad++ }
    else printf "PASS: %s: %d instructions processed (baseline %d)\n", k, $3, base[k] }
  END { for (k in base) if (!(k in seen)) { printf "FAIL: %s: in the baseline, not loaded\n", k; bad++ }
        exit bad > 0 }
' "$baseline" "$measured" || { echo "verifier stats: FAILED against $baseline" >&2; exit 1; }
echo "verifier stats: PASSED (within ${margin}% of $baseline)"
