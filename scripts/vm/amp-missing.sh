#!/usr/bin/env bash
# amp-missing.sh RESULTS.csv SUMMARY.csv "SCHEDULERS" "WORKLOADS" REPS
# Prints one @@MISSING line for each result the real-kernel study planned and
# did not get: a workload without a T_SB row, a scheduler x workload x
# repetition without a run row, a scheduler x workload without a summary row.
# A run whose output did not parse leaves no row and no @@RUN-FAILED, so
# without this an empty table passed. Used by amp-study.sh; checked by
# test-amp-missing.sh.
set -euo pipefail
[ $# -eq 5 ] || { echo "usage: amp-missing.sh RESULTS.csv SUMMARY.csv SCHEDULERS WORKLOADS REPS" >&2; exit 2; }
awk -F, -v scheds="$3" -v wls="$4" -v reps="$5" '
  FNR == NR { if (FNR > 1) { if ($1 == "tsb") tsb[$3] = 1; else run[$2 "," $3 "," $4] = 1 } next }
  FNR > 1 { sum[$1 "," $2] = 1 }
  END {
    ns = split(scheds, S, " "); nw = split(wls, W, " ")
    for (j = 1; j <= nw; j++) if (!(W[j] in tsb)) print "@@MISSING,tsb," W[j] ",no T_SB row"
    for (i = 1; i <= ns; i++) for (j = 1; j <= nw; j++) {
      for (r = 1; r <= reps; r++)
        if (!((S[i] "," W[j] "," r) in run)) print "@@MISSING," S[i] "," W[j] ",repetition " r " gave no result row"
      if (!((S[i] "," W[j]) in sum)) print "@@MISSING," S[i] "," W[j] ",no summary row"
    }
  }' "$1" "$2"
