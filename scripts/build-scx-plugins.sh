#!/usr/bin/env bash
# Builds the simulator's sched_ext plug-ins: hosted schedulers whose BPF
# source may not be compiled into colab's binaries. Today one, scx:bpfland:
# scx_bpfland 1.1.4's own src/bpf/main.bpf.c (crates.io, GPL-2.0).
#
#   bash scripts/build-scx-plugins.sh            # every plug-in
#   bash scripts/build-scx-plugins.sh bpfland    # one
#
# For each, cargo fetches the published crate (a throwaway Cargo project
# under target/scx-plugins/fetch/ that depends on it at its exact version;
# nothing of it is built), the unpacked source is found in cargo's registry
# and confirmed with `cargo metadata`, and its BPF C is compiled with the
# host's shim exactly as crates/scx_host/build.rs compiles scx_colab (one
# implementation: crates/scx_host/src/native_build.rs, run by
# crates/scx_host/examples/build-scx-plugin.rs) into
# target/scx-plugins/scx_<name>.so. `colab ... -p scx:bpfland` then loads it
# at run time (crates/scx_host/src/plugin.rs says where it looks; elsewhere:
# COLAB_SCX_PLUGINS=DIR). The plug-ins and the fetched source stay in
# target/: never commit them.
#
# Needs a C compiler and cargo's access to crates.io (or the crate already
# in cargo's cache). Exit status 2 when cargo could not fetch the crate.
# Run again after the shim (crates/scx_host/shim) changes: the host refuses
# a plug-in built against another shim, saying so.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${CARGO_TARGET_DIR:-$PWD/target}/scx-plugins"
exec cargo run --quiet -p colab-scx-host --example build-scx-plugin -- --out-dir "$out" "$@"
