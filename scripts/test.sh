#!/usr/bin/env bash
# Everything CI checks: formatting, lints, the whole test suite, the fuzz
# cases and the book (links, build).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked
cargo run --release --locked -p colab-fuzz -- --cases 100000 --seed "${FUZZ_SEED:-1}"
bash scripts/vm/test-sim-vs-vm.sh
bash scripts/vm/test-run-retry.sh
bash scripts/book.sh
