#!/usr/bin/env bash
# Regenerates the figures the README and the book show: runs the COLAB study
# (`colab reproduce`, about 10-20 s on two cores) and copies its ranking and
# per-class charts and 2B2S's fast-core shares into book/src/images/. Usage: bash scripts/figures.sh [REPORT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-reports/reproduce}"
cargo build --release --locked -p colab-cli
target/release/colab reproduce --out "$out"
cp "$out/ranking_h_antt.png" book/src/images/ranking_h_antt.png
cp "$out/class_h_antt.png" book/src/images/class_h_antt.png
cp "$out/fast_share_2B2S.png" book/src/images/fast_share_2B2S.png
echo "figures: book/src/images/ranking_h_antt.png, class_h_antt.png and fast_share_2B2S.png from $out"
echo "(book/src/images/camp_ranking_h_antt.png comes from the command its page names: 47 min)"
