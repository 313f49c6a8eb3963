#!/usr/bin/env bash
# The simulator against a real-kernel study: for every workload of an
# amp-study summary.csv, `colab sim` on the VM's topology file with the
# policy each scheduler runs, the error per workload, the median and maximum
# error, each side's geomean and whether both rank the schedulers alike.
#
#   bash scripts/vm/sim-vs-vm.sh --summary reports/vm-amp/summary.csv [--summary B]...
#        [--topology topologies/vm-1b1s.toml] [--seeds 5] [--map SCHED=POLICY]...
#        [--predictor LABEL] [--hosted]
#
# Schedulers compared (VM name = simulator policy): default = eevdf (the
# kernel's EEVDF with capacity awareness), scx_colab = the ROTA scx_colab
# implements, the default `rota` (ROTA_SCX_COLAB in crates/campaign/src/lib.rs)
# (with :migration-us= set to the --migration-us scx_colab ran with, read from
# the results.md beside the summary; else the topology's cost), scx_colab-paper =
# colab:prev-first=on:pull-min-us=1000 (the paper's COLAB with scx_colab's
# two switchable deviations). --map adds or replaces one, e.g. --map
# scx_colab-nowindow=colab:prev-first=on:pull-min-us=1000:window=inf for
# amp-study's --colab-variant nowindow="--policy colab --window inf".
# Other schedulers in the summary are skipped.
# Predictions: what scx_colab saw. With no PMU in the VM and no --model,
# every task has the same predicted speedup (its --speedup, 2.0 with
# --big-cpus), so the simulator runs with --predictor constant:S (S read from
# results.md, else 2.0); --predictor overrides it (e.g. `model`, the
# simulator's default, to see what counters would change).
# --hosted: compare the same code on both sides: scx_colab (and
# scx_colab-paper) run in the simulator as scx_colab's own BPF, hosted
# (`scx:colab:ARGS`, ARGS the options scx_colab ran with in the VM, read
# from results.md), instead of the simulator's Rust model of its freeze.
# Several --summary files (boots of the same study) are averaged: the VM's
# H_ANTT of a scheduler on a workload is the mean over the boots that ran
# it. Prints a markdown table on stdout.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
summaries=() topo="" seeds=5 predictor="" hosted=0
declare -A mapped=()
while [ $# -gt 0 ]; do
  case "$1" in
    --summary) summaries+=("$2"); shift 2 ;;
    --topology) topo="$2"; shift 2 ;;
    --seeds) seeds="$2"; shift 2 ;;
    --predictor) predictor="$2"; shift 2 ;;
    --hosted) hosted=1; shift ;;
    --map)
      [[ "$2" =~ ^[^=]+=[a-z].*$ ]] || { echo "sim-vs-vm.sh: --map takes SCHED=POLICY, not '$2'" >&2; exit 2; }
      mapped["${2%%=*}"]="${2#*=}"; shift 2 ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { print }' "$0"; exit 0 ;;
    *) echo "sim-vs-vm.sh: unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ "${#summaries[@]}" -gt 0 ] || { echo "sim-vs-vm.sh: --summary FILE is required (an amp-study summary.csv)" >&2; exit 2; }
for f in "${summaries[@]}"; do
  [ -f "$f" ] || { echo "sim-vs-vm.sh: --summary $f: no such file" >&2; exit 2; }
  head -n 1 "$f" | grep -q '^scheduler,workload,h_antt' ||
    { echo "sim-vs-vm.sh: $f: not an amp-study summary.csv (header 'scheduler,workload,h_antt,...')" >&2; exit 2; }
done
[[ "$seeds" =~ ^[1-9][0-9]*$ ]] || { echo "sim-vs-vm.sh: --seeds must be a positive integer, not '$seeds'" >&2; exit 2; }
summary="${summaries[0]}"
topo="${topo:-$root/topologies/vm-1b1s.toml}"
[ -f "$topo" ] || { echo "sim-vs-vm.sh: --topology $topo: no such file" >&2; exit 2; }
colab="$root/target/release/colab"
(cd "$root" && cargo build --release -q -p colab-cli) >&2

# The migration cost scx_colab's ROTA ran with (amp-study's results.md),
# which must be the same in every boot averaged.
rota="rota" mig=""
for f in "${summaries[@]}"; do
  m="$(sed -n 's/.*scx_colab runs with `[^`]*--migration-us \([0-9.]*\).*/\1/p' "$(dirname "$f")/results.md" 2>/dev/null | head -n 1)"
  [ "$f" = "$summary" ] && mig="$m"
  [ "$m" = "$mig" ] || { echo "sim-vs-vm.sh: $f: scx_colab ran with --migration-us '${m:-default}', $summary with '${mig:-default}': not the same study" >&2; exit 2; }
done
[ -n "$mig" ] && rota="$rota:migration-us=$mig"
if [ -z "$predictor" ]; then
  sp="$(sed -n 's/.*scx_colab runs with `[^`]*--speedup \([0-9.]*\).*/\1/p' "$(dirname "$summary")/results.md" 2>/dev/null | head -n 1)"
  predictor="constant:${sp:-2.0}"
fi

# The options scx_colab ran with, as one `scx:colab:` spelling (--hosted).
colab_args="$(sed -n 's/.*scx_colab runs with `\([^`]*\)`.*/\1/p' "$(dirname "$summary")/results.md" 2>/dev/null | head -n 1)"
hosted_colab="scx:colab"
[ -n "$colab_args" ] && hosted_colab="scx:colab:$(tr ' ' ':' <<<"$colab_args")"

sim_policy() {
  if [ -n "${mapped[$1]:-}" ]; then echo "${mapped[$1]}"; return 0; fi
  if [ "$hosted" = 1 ]; then
    case "$1" in
      scx_colab) echo "$hosted_colab"; return 0 ;;
      scx_colab-paper) echo "$hosted_colab:--policy:colab"; return 0 ;;
    esac
  fi
  case "$1" in
    default) echo eevdf ;;
    scx_colab) echo "$rota" ;;
    scx_colab-paper) echo "colab:prev-first=on:pull-min-us=1000" ;;
    *) return 1 ;;
  esac
}

rows="$(mktemp)"
trap 'rm -f "$rows"' EXIT
# The VM's figure: the mean over the boots, in the first file's order.
for f in "${summaries[@]}"; do tail -n +2 "$f"; done | awk -F, '
  !(($1 FS $2) in n) { order[++k] = $1 FS $2 }
  { n[$1 FS $2]++; s[$1 FS $2] += $3 }
  END { for (i = 1; i <= k; i++) printf "%s,%.4f\n", order[i], s[order[i]] / n[order[i]] }' |
while IFS=, read -r sched wl vm; do
  pol="$(sim_policy "$sched")" || continue
  sum=0
  for seed in $(seq 1 "$seeds"); do
    h="$("$colab" sim "$wl" -t "$topo" -p "$pol" --seed "$seed" --predictor "$predictor" | sed -n 's/.*H_ANTT \([0-9.]*\).*/\1/p' | tail -n 1)"
    [ -n "$h" ] || { echo "sim-vs-vm.sh: colab sim $wl -p $pol gave no H_ANTT" >&2; exit 1; }
    sum="$(awk -v a="$sum" -v b="$h" 'BEGIN { print a + b }')"
  done
  awk -v s="$sched" -v w="$wl" -v vm="$vm" -v sum="$sum" -v n="$seeds" \
    'BEGIN { sim = sum / n; printf "%s,%s,%.4f,%.4f,%.4f\n", s, w, vm, sim, (sim - vm) / vm }'
done >"$rows"
[ -s "$rows" ] || { echo "sim-vs-vm.sh: $summary has none of default, scx_colab, scx_colab-paper" >&2; exit 1; }

boots="${#summaries[@]}"
vmwhat="$summary"
[ "$boots" -gt 1 ] && vmwhat="mean of $boots boots: ${summaries[*]}"
echo "Simulator (\`colab sim -t $(basename "$topo") --predictor $predictor\`, mean of seeds 1-$seeds) against the VM ($vmwhat), H_ANTT:"
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

# With several boots: each boot's geomeans, and the pairs of schedulers every
# boot orders the same way (what the VM's noise lets it resolve), checked
# against the simulator's order.
[ "$boots" -gt 1 ] || exit 0
keep="$(cut -d, -f1 "$rows" | sort -u | tr '\n' ' ')"
for i in "${!summaries[@]}"; do
  tail -n +2 "${summaries[$i]}" | awk -F, -v b="$i" '{ print b "," $1 "," $3 }'
done | awk -F, -v keep="$keep" -v nb="$boots" -v rows="$rows" '
  BEGIN {
    split(keep, ks, " "); for (i in ks) want[ks[i]] = 1
    while ((getline line < rows) > 0) { split(line, f, ","); lsim[f[1]] += log(f[4]); csim[f[1]]++ }
  }
  ($2 in want) { l[$1, $2] += log($3); c[$1, $2]++ }
  END {
    k = 0; for (s in want) names[++k] = s
    for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (names[j] < names[i]) { t = names[i]; names[i] = names[j]; names[j] = t }
    print "\nVM geomean per boot:\n"
    for (i = 1; i <= k; i++) {
      line = "- " names[i] ":"
      for (b = 0; b < nb; b++) line = line sprintf(" %.3f", ((b, names[i]) in c) ? exp(l[b, names[i]] / c[b, names[i]]) : 0)
      print line
    }
    resolved = 0; agree = 0; out = ""
    for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) {
      a = names[i]; z = names[j]; less = 0; more = 0
      for (b = 0; b < nb; b++) {
        if (!(((b, a) in c) && ((b, z) in c))) continue
        d = l[b, a] / c[b, a] - l[b, z] / c[b, z]
        if (d < 0) less++; else if (d > 0) more++
      }
      if (less == nb || more == nb) {
        resolved++
        simd = lsim[a] / csim[a] - lsim[z] / csim[z]
        ok = (less == nb) == (simd < 0)
        agree += ok
        out = out sprintf("- %s %s %s in every boot; simulator %s\n", a, (less == nb ? "<" : ">"), z, (ok ? "agrees" : "disagrees"))
      }
    }
    printf "\nPairs every boot orders alike: %d, of which the simulator orders %d alike.\n%s", resolved, agree, out
  }'

