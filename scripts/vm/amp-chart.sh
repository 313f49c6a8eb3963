#!/usr/bin/env bash
# A bar chart (SVG on stdout) of an amp-study summary.csv: H_ANTT per
# workload and the geomean, one bar per scheduler, lower is better.
#
#   bash scripts/vm/amp-chart.sh DIR/summary.csv [TITLE] > DIR/chart.svg
set -euo pipefail
summary="${1:-}"
title="${2:-H_ANTT per workload (lower is better)}"
[ -n "$summary" ] || { echo "amp-chart.sh: usage: amp-chart.sh SUMMARY.csv [TITLE]" >&2; exit 2; }
[ -f "$summary" ] || { echo "amp-chart.sh: $summary: no such file" >&2; exit 2; }
head -n 1 "$summary" | grep -q '^scheduler,workload,h_antt' ||
  { echo "amp-chart.sh: $summary: not an amp-study summary.csv (header 'scheduler,workload,h_antt,...')" >&2; exit 2; }
[ "$(wc -l <"$summary")" -gt 1 ] || { echo "amp-chart.sh: $summary: no rows" >&2; exit 2; }

awk -F, -v title="$title" '
  NR == 1 { next }
  {
    s = $1; w = $2; h = $3 + 0
    if (!(s in si)) { si[s] = ++ns; sn[ns] = s }
    if (!(w in wi)) { wi[w] = ++nw; wn[nw] = w }
    v[si[s], wi[w]] = h; lg[si[s]] += log(h); cnt[si[s]]++
    if (h > max) max = h
  }
  END {
    nw++; wn[nw] = "geomean"
    for (i = 1; i <= ns; i++) { g = exp(lg[i] / cnt[i]); v[i, nw] = g; if (g > max) max = g }
    split("#4e79a7 #f28e2b #e15759 #76b7b2 #59a14f #edc948 #b07aa1 #ff9da7 #9c755f #bab0ac", col, " ")
    bw = 14; gap = 18; left = 50; top = 40; ph = 260
    gw = ns * bw + gap; width = left + nw * gw + 20; if (width < 560) width = 560
    height = top + ph + 60 + 18 * ns
    ymax = int(max + 0.999)
    printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"11\">\n", width, height
    printf "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
    printf "<text x=\"%d\" y=\"20\" font-size=\"13\">%s</text>\n", left, title
    for (t = 0; t <= ymax; t += 0.5) {
      y = top + ph - t / ymax * ph
      printf "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", left, width - 20, y, y
      printf "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.1f</text>\n", left - 4, y + 4, t
    }
    for (j = 1; j <= nw; j++) {
      x0 = left + (j - 1) * gw + gap / 2
      for (i = 1; i <= ns; i++) {
        if (!((i, j) in v)) continue
        hgt = v[i, j] / ymax * ph
        printf "<rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"%s\"><title>%s %s %.3f</title></rect>\n", x0 + (i - 1) * bw, top + ph - hgt, bw - 2, hgt, col[(i - 1) % 10 + 1], sn[i], wn[j], v[i, j]
      }
      printf "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\"%s>%s</text>\n", x0 + ns * bw / 2, top + ph + 16, (j == nw ? " font-weight=\"bold\"" : ""), wn[j]
    }
    for (i = 1; i <= ns; i++) {
      y = top + ph + 34 + (i - 1) * 18
      printf "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>\n", left, y - 10, col[(i - 1) % 10 + 1]
      printf "<text x=\"%d\" y=\"%d\">%s (geomean %.3f)</text>\n", left + 18, y, sn[i], v[i, nw]
    }
    print "</svg>"
  }' "$summary"
