#!/usr/bin/env bash
# Checks amp-missing.sh on hand-made results: a complete study prints
# nothing; a repetition without rows (an unparsable run), a workload without
# T_SB and a scheduler x workload without a summary row are each named.
# Run by scripts/test.sh.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
t="$(mktemp -d)"
trap 'rm -rf "$t"' EXIT
fail() { echo "test-amp-missing: FAIL: $*" >&2; exit 1; }
cat >"$t/results.csv" <<'CSV'
kind,scheduler,workload,rep,program,ns
tsb,-,fft:4,1,fft,100
tsb,-,NSync-1,1,lu_cb,100
run,default,fft:4,1,fft,150
run,default,fft:4,2,fft,150
run,default,NSync-1,1,lu_cb,150
run,default,NSync-1,2,lu_cb,150
run,scx_colab,fft:4,1,fft,140
run,scx_colab,fft:4,2,fft,140
run,scx_colab,NSync-1,1,lu_cb,140
run,scx_colab,NSync-1,2,lu_cb,140
CSV
cat >"$t/summary.csv" <<'CSV'
scheduler,workload,h_antt,h_stp,max_spread
default,fft:4,1.5,0.6,0
default,NSync-1,1.5,0.6,0
scx_colab,fft:4,1.4,0.7,0
scx_colab,NSync-1,1.4,0.7,0
CSV
out="$(bash "$here/amp-missing.sh" "$t/results.csv" "$t/summary.csv" "default scx_colab" "fft:4 NSync-1" 2)"
[ -z "$out" ] || fail "a complete study reported missing results: $out"
# scx_colab's second NSync-1 repetition did not parse; a third workload never ran.
grep -v '^run,scx_colab,NSync-1,2,' "$t/results.csv" >"$t/r2.csv"
out="$(bash "$here/amp-missing.sh" "$t/r2.csv" "$t/summary.csv" "default scx_colab" "fft:4 NSync-1 Sync-2" 2)"
grep -qx '@@MISSING,scx_colab,NSync-1,repetition 2 gave no result row' <<<"$out" || fail "lost repetition not named: $out"
grep -qx '@@MISSING,tsb,Sync-2,no T_SB row' <<<"$out" || fail "missing T_SB not named: $out"
grep -qx '@@MISSING,default,Sync-2,no summary row' <<<"$out" || fail "missing summary row not named: $out"
[ "$(grep -c '^@@MISSING,scx_colab,fft:4' <<<"$out")" -eq 0 ] || fail "a complete pair was reported: $out"
if bash "$here/amp-missing.sh" "$t/results.csv" 2>/dev/null; then fail "bad usage accepted"; fi
echo "test-amp-missing: ok"
