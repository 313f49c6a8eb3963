#!/usr/bin/env bash
# The simulator against a real-kernel study: for every workload of an
# amp-study summary.csv, `colab sim` on the VM's topology file with the
# policy each scheduler runs, the error per workload, the median and maximum
# error, each side's geomean and whether both rank the schedulers alike.
#
#   bash scripts/vm/sim-vs-vm.sh --summary reports/vm-amp/summary.csv
#        [--topology topologies/vm-1b1s.toml] [--seeds 5] [--map SCHED=POLICY]...
#
# Schedulers compared (VM name = simulator policy): default = eevdf (the
# kernel's EEVDF with capacity awareness), scx_colab = rota (ROTA, with
# rota:migration-us= set to the --migration-us scx_colab ran with, read from
# the results.md beside the summary; else the topology's cost), scx_colab-paper =
# colab:prev-first=on:pull-min-us=1000 (the paper's COLAB with scx_colab's
# two switchable deviations). --map adds or replaces one, e.g. --map
# scx_colab-nowindow=colab:prev-first=on:pull-min-us=1000:window=inf for
# amp-study's --colab-variant nowindow="--policy colab --window inf".
# Other schedulers in the summary are skipped.
# Prints a markdown table on stdout.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
summary="" topo="" seeds=5
declare -A mapped=()
while [ $# -gt 0 ]; do
  case "$1" in
    --summary) summary="$2"; shift 2 ;;
    --topology) topo="$2"; shift 2 ;;
    --seeds) seeds="$2"; shift 2 ;;
    --map)
      [[ "$2" =~ ^[^=]+=[a-z].*$ ]] || { echo "sim-vs-vm.sh: --map takes SCHED=POLICY, not '$2'" >&2; exit 2; }
      mapped["${2%%=*}"]="${2#*=}"; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "sim-vs-vm.sh: unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -n "$summary" ] || { echo "sim-vs-vm.sh: --summary FILE is required (an amp-study summary.csv)" >&2; exit 2; }
[ -f "$summary" ] || { echo "sim-vs-vm.sh: --summary $summary: no such file" >&2; exit 2; }
[[ "$seeds" =~ ^[1-9][0-9]*$ ]] || { echo "sim-vs-vm.sh: --seeds must be a positive integer, not '$seeds'" >&2; exit 2; }
head -n 1 "$summary" | grep -q '^scheduler,workload,h_antt' ||
  { echo "sim-vs-vm.sh: $summary: not an amp-study summary.csv (header 'scheduler,workload,h_antt,...')" >&2; exit 2; }
topo="${topo:-$root/topologies/vm-1b1s.toml}"
[ -f "$topo" ] || { echo "sim-vs-vm.sh: --topology $topo: no such file" >&2; exit 2; }
colab="$root/target/release/colab"
(cd "$root" && cargo build --release -q -p colab-cli) >&2

# The migration cost scx_colab's ROTA ran with (amp-study's results.md).
rota="rota"
mig="$(sed -n 's/.*scx_colab runs with `[^`]*--migration-us \([0-9.]*\).*/\1/p' "$(dirname "$summary")/results.md" 2>/dev/null | head -n 1)"
[ -n "$mig" ] && rota="rota:migration-us=$mig"

sim_policy() {
  if [ -n "${mapped[$1]:-}" ]; then echo "${mapped[$1]}"; return 0; fi
  case "$1" in
    default) echo eevdf ;;
    scx_colab) echo "$rota" ;;
    scx_colab-paper) echo "colab:prev-first=on:pull-min-us=1000" ;;
    *) return 1 ;;
  esac
}

rows="$(mktemp)"
trap 'rm -f "$rows"' EXIT
tail -n +2 "$summary" | while IFS=, read -r sched wl vm _; do
  pol="$(sim_policy "$sched")" || continue
  sum=0
  for seed in $(seq 1 "$seeds"); do
    h="$("$colab" sim "$wl" -t "$topo" -p "$pol" --seed "$seed" | sed -n 's/.*H_ANTT \([0-9.]*\).*/\1/p' | tail -n 1)"
    [ -n "$h" ] || { echo "sim-vs-vm.sh: colab sim $wl -p $pol gave no H_ANTT" >&2; exit 1; }
    sum="$(awk -v a="$sum" -v b="$h" 'BEGIN { print a + b }')"
  done
  awk -v s="$sched" -v w="$wl" -v vm="$vm" -v sum="$sum" -v n="$seeds" \
    'BEGIN { sim = sum / n; printf "%s,%s,%.4f,%.4f,%.4f\n", s, w, vm, sim, (sim - vm) / vm }'
done >"$rows"
[ -s "$rows" ] || { echo "sim-vs-vm.sh: $summary has none of default, scx_colab, scx_colab-paper" >&2; exit 1; }

echo "Simulator (\`colab sim -t $(basename "$topo")\`, mean of seeds 1-$seeds) against the VM ($summary), H_ANTT:"
echo
echo "| scheduler (simulator policy) | workload | VM | simulator | error |"
echo "|---|---|---|---|---|"
while IFS=, read -r s w vm sim err; do
  printf '| %s (%s) | %s | %.3f | %.3f | %+.1f%% |\n' "$s" "$(sim_policy "$s")" "$w" "$vm" "$sim" "$(awk -v e="$err" 'BEGIN { print e * 100 }')"
done <"$rows"
echo
awk -F, '
  { e[++n] = ($5 < 0 ? -$5 : $5); lvm[$1] += log($3); lsim[$1] += log($4); c[$1]++ }
  END {
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (e[j] < e[i]) { t = e[i]; e[i] = e[j]; e[j] = t }
    med = (n % 2) ? e[(n + 1) / 2] : (e[n / 2] + e[n / 2 + 1]) / 2
    printf "Error over %d workload runs: median %.1f%%, maximum %.1f%%.\n\n", n, med * 100, e[n] * 100
    for (s in c) { gvm[s] = exp(lvm[s] / c[s]); gsim[s] = exp(lsim[s] / c[s]); names[++k] = s }
    for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (gvm[names[j]] < gvm[names[i]]) { t = names[i]; names[i] = names[j]; names[j] = t }
    vmr = ""; for (i = 1; i <= k; i++) vmr = vmr (i > 1 ? " < " : "") sprintf("%s %.3f", names[i], gvm[names[i]])
    for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (gsim[names[j]] < gsim[names[i]]) { t = names[i]; names[i] = names[j]; names[j] = t }
    simr = ""; for (i = 1; i <= k; i++) simr = simr (i > 1 ? " < " : "") sprintf("%s %.3f", names[i], gsim[names[i]])
    vmo = vmr; simo = simr; gsub(/ [0-9.]+/, "", vmo); gsub(/ [0-9.]+/, "", simo)
    printf "Geomean ranking, VM: %s\n\nGeomean ranking, simulator: %s\n\nSame ranking: %s\n", vmr, simr, (vmo == simo ? "yes" : "no")
  }' "$rows"
