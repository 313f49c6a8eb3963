#!/usr/bin/env bash
# The main job: the papers' simulation study on the built-in workloads.
# Extra arguments go to `colab reproduce` (e.g. --quick, --out DIR, --seeds N).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh   # the simulator's packages only (.ci/apt-packages): no clang, QEMU or kernel source
cargo build --release --locked -p colab-cli
exec ./target/release/colab reproduce "$@"
