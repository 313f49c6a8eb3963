#!/usr/bin/env bash
# Builds the book (book/ -> target/book/) and checks it: no broken relative
# link or anchor in it or in the README, and mdBook builds it without error.
# Installs mdBook with cargo when it is missing (a few minutes, once).
# The check that every `colab` command shown parses against the real CLI is
# a test of the CLI crate (crates/cli/tests/doc_commands.rs).
set -euo pipefail
cd "$(dirname "$0")/.."
MDBOOK_VERSION=0.5.4
if ! command -v mdbook >/dev/null 2>&1 || ! mdbook --version | grep -q "v$MDBOOK_VERSION"; then
  echo "book: installing mdbook $MDBOOK_VERSION with cargo"
  cargo install mdbook --locked --version "$MDBOOK_VERSION" --no-default-features --features search
fi
python3 scripts/check-book-links.py
# mdBook reports some problems (an include it cannot read) as ERROR lines
# and still exits 0: treat any as a failure.
log=$(mdbook build book 2>&1) || { echo "$log"; exit 1; }
if grep -q "ERROR" <<<"$log"; then
  echo "$log"
  echo "book: mdbook reported errors" >&2
  exit 1
fi
echo "book: target/book/index.html"
