#!/usr/bin/env bash
# The COLAB study's headline tables and charts from one run. Builds `colab`
# at HEAD (from a clean export of HEAD into target/headline/ when the working
# tree's sources differ from it, so the numbers are the named commit's), runs
# the full study (`colab reproduce`: 47,688 simulations, 21-33 s on this
# two-core machine), writes the run's numbers with the commit and the day into
# book/src/results/headline.tsv, renders the README's and the results
# overview's tables from them (`colab headline`) and copies the run's charts
# into book/src/images/.
#   bash scripts/headline.sh           # rewrite the data file, the tables and the charts
#   bash scripts/headline.sh --check   # change nothing; fail if the committed data file
#                                      # differs from a new run at HEAD, or a table from it
# The check of the tables against the data file without a run is a test:
# cargo test -p colab-cli --test headline.
set -euo pipefail
cd "$(dirname "$0")/.."
check=
case "${1:-}" in
  --check) check=--check ;;
  "") ;;
  *) echo "usage: bash scripts/headline.sh [--check]" >&2; exit 2 ;;
esac
commit=$(git rev-parse --short HEAD)
sources="crates workloads topologies Cargo.toml Cargo.lock .cargo"
if [ -z "$(git status --porcelain -- $sources)" ]; then
  target="${CARGO_TARGET_DIR:-$PWD/target}"
  cargo build --release --locked -p colab-cli
else
  echo "headline: the working tree's sources differ from $commit; building $commit from a clean export"
  src="$PWD/target/headline/src"
  # Its own target directory: cargo would take the working tree's artefacts,
  # made from other sources at other paths, as fresh.
  target="$PWD/target/headline/target"
  rm -rf "$src" && mkdir -p "$src"
  git archive HEAD | tar -x -C "$src"
  (cd "$src" && CARGO_TARGET_DIR="$target" cargo build --release --locked -p colab-cli)
fi
colab="$target/release/colab"
run=$(mktemp -d)
trap 'rm -rf "$run"' EXIT
"$colab" reproduce --out "$run/report"
"$colab" headline $check --from "$run/report" --commit "$commit" --date "$(date -u +%F)"
if [ -z "$check" ]; then
  for chart in ranking_h_antt class_h_antt fast_share_2B2S; do
    cp "$run/report/$chart.png" "book/src/images/$chart.png"
  done
  echo "headline: book/src/images/{ranking_h_antt,class_h_antt,fast_share_2B2S}.png from the same run"
  echo "(book/src/images/camp_ranking_h_antt.png comes from the command its page names: 47 min)"
fi
