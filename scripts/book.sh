#!/usr/bin/env bash
# Builds the book (book/ -> target/book/) and checks that mdBook builds it
# without error. Installs mdBook with cargo when it is missing (a few
# minutes, once). The book's other checks are tests of the CLI crate, run by
# `cargo test --workspace` in scripts/test.sh: no broken relative link or
# anchor in the book or the README (crates/cli/tests/doc_links.rs), and every
# `colab` command shown parses against the real CLI (doc_commands.rs).
set -euo pipefail
cd "$(dirname "$0")/.."
MDBOOK_VERSION=0.5.4
if ! command -v mdbook >/dev/null 2>&1 || ! mdbook --version | grep -q "v$MDBOOK_VERSION"; then
  echo "book: installing mdbook $MDBOOK_VERSION with cargo"
  cargo install mdbook --locked --version "$MDBOOK_VERSION" --no-default-features --features search
fi
# mdBook reports some problems (an include it cannot read) as ERROR lines
# and still exits 0: treat any as a failure.
log=$(mdbook build book 2>&1) || { echo "$log"; exit 1; }
if grep -q "ERROR" <<<"$log"; then
  echo "$log"
  echo "book: mdbook reported errors" >&2
  exit 1
fi
echo "book: target/book/index.html"
