#!/usr/bin/env bash
# Checks scripts/vm/sim-vs-vm.sh on hand-made amp-study summaries (no VM):
# boots are averaged, each boot's geomean is shown, only pairs every boot
# orders alike count as resolved, and bad input is refused with a reason.
# Run by scripts/test.sh.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
t="$(mktemp -d)"
trap 'rm -rf "$t"' EXIT
fail() { echo "test-sim-vs-vm: FAIL: $*" >&2; exit 1; }

boot() { # DIR MIGRATION-US ROWS...
  local d="$t/$1" mig="$2"
  shift 2
  mkdir -p "$d"
  echo 'scx_colab runs with `--big-cpus 0 --migration-us '"$mig"'` (...)' >"$d/results.md"
  { echo "scheduler,workload,h_antt,h_stp,max_spread"; printf '%s\n' "$@"; } >"$d/summary.csv"
}
# default is far above anything the simulator predicts in both boots; ROTA
# is below it in both; COLAB is above ROTA in one boot and below in the other.
boot a 100 default,fft:2,10.0,0.1,0 scx_colab,fft:2,1.0,1,0 scx_colab-paper,fft:2,2.0,1,0 other,fft:2,1,1,0
boot b 100 default,fft:2,20.0,0.1,0 scx_colab,fft:2,3.0,1,0 scx_colab-paper,fft:2,2.0,1,0
boot c 1.7 default,fft:2,1.0,1,0

out="$(bash "$root/scripts/vm/sim-vs-vm.sh" --summary "$t/a/summary.csv" --summary "$t/b/summary.csv" --seeds 1)"
# The VM's figure is the mean of the boots: (10 + 20) / 2 and (1 + 3) / 2.
grep -q '^| default (eevdf) | fft:2 | 15.000 | ' <<<"$out" || fail "default not averaged to 15.000: $out"
# --hosted: scx_colab is its own BPF with the options it ran with.
hout="$(bash "$root/scripts/vm/sim-vs-vm.sh" --summary "$t/a/summary.csv" --seeds 1 --hosted)"
grep -q '^| scx_colab (scx:colab:--big-cpus:0:--migration-us:100) | fft:2 | 1.000 | ' <<<"$hout" || fail "--hosted did not run scx_colab's own code with its options: $hout"
grep -q '^| scx_colab-paper (scx:colab:--big-cpus:0:--migration-us:100:--policy:colab) | fft:2 | ' <<<"$hout" || fail "--hosted did not run scx_colab --policy colab: $hout"
grep -q '^| scx_colab (rota:migration-us=100) | fft:2 | 2.000 | ' <<<"$out" || fail "ROTA not averaged to 2.000 with the boots' migration cost: $out"
! grep -q '^| other' <<<"$out" || fail "an unmapped scheduler was compared"
grep -q '^- default: 10.000 20.000$' <<<"$out" || fail "per-boot geomeans missing: $out"
# Resolved: default > both others (every boot); ROTA vs COLAB flips: not.
grep -q '^Pairs every boot orders alike: 2, ' <<<"$out" || fail "expected 2 resolved pairs: $out"
# The verdict follows the simulator's own column (whatever the models say).
sim_of() { awk -F' [|] ' -v s="$1" '$1 == "| " s {print $4}' <<<"$out"; }
sd="$(sim_of 'default (eevdf)')" sr="$(sim_of 'scx_colab (rota:migration-us=100)')"
[[ -n "$sd" && -n "$sr" ]] || fail "simulator column not found: $out"
verdict=disagrees
awk -v a="$sd" -v b="$sr" 'BEGIN { exit !(a > b) }' && verdict=agrees
grep -q "^- default > scx_colab in every boot; simulator $verdict\$" <<<"$out" ||
  fail "default > ROTA not resolved, or not judged by the simulator's $sd against $sr: $out"
! grep -q 'scx_colab < scx_colab-paper in every\|scx_colab > scx_colab-paper in every' <<<"$out" || fail "a pair the boots disagree on counted as resolved"

# scx_colab ran without counters: the simulator gets its one prediction.
grep -q -- '--predictor constant:2.0`' <<<"$out" || fail "not run with scx_colab's constant prediction: $out"

# --map replaces a mapping.
out="$(bash "$root/scripts/vm/sim-vs-vm.sh" --summary "$t/a/summary.csv" --seeds 1 --map scx_colab-paper=colab:window=inf)"
grep -q '^| scx_colab-paper (colab:window=inf) | fft:2 | 2.000 | ' <<<"$out" || fail "--map not applied: $out"
! grep -q 'VM geomean per boot' <<<"$out" || fail "per-boot lines with one boot"
out="$(bash "$root/scripts/vm/sim-vs-vm.sh" --summary "$t/a/summary.csv" --seeds 1 --predictor oracle)"
grep -q -- '--predictor oracle`' <<<"$out" || fail "--predictor not applied: $out"

# --help prints the whole header, to its last line.
bash "$root/scripts/vm/sim-vs-vm.sh" --help | grep -q 'Prints a markdown table' || fail "--help cut short"

# Bad input: a reason, status 2.
expect_err() { # PATTERN ARGS...
  local pat="$1" rc=0 err
  shift
  err="$(bash "$root/scripts/vm/sim-vs-vm.sh" "$@" 2>&1 >/dev/null)" || rc=$?
  [ "$rc" = 2 ] || fail "$* exited $rc, expected 2"
  grep -q -- "$pat" <<<"$err" || fail "$*: no '$pat' in: $err"
}
expect_err "not the same study" --summary "$t/a/summary.csv" --summary "$t/c/summary.csv"
expect_err "no such file" --summary "$t/none.csv"
expect_err "is required" --seeds 1
expect_err "takes SCHED=POLICY" --summary "$t/a/summary.csv" --map nonsense
echo "test-sim-vs-vm: ok"
