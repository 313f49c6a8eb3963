#!/usr/bin/env bash
# Builds the static colab-vmload and colab-amp-study for the VM and, if the
# crate exists and no scheduler path is forced, a static scx_colab. Prints
# "vmload=PATH", "amp_study=PATH" and "scx_colab=PATH" (empty when not
# available) on stdout.
#
#   bash scripts/vm/build-guest-bins.sh [--no-colab]
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$VM_ROOT"

TRIPLE=x86_64-unknown-linux-gnu
TARGET_DIR="${CARGO_TARGET_DIR:-$VM_ROOT/target}"
vm_log "building colab-vmload and colab-amp-study (static, release)"
RUSTFLAGS='-C target-feature=+crt-static' vm_run "build-guest-bins.sh: cargo build -p vm-workloads -p colab-amp-study" 1800 \
  cargo build --release --locked -q -p vm-workloads -p colab-amp-study --target "$TRIPLE" >&2
vmload="$TARGET_DIR/$TRIPLE/release/colab-vmload"
amp_study="$TARGET_DIR/$TRIPLE/release/colab-amp-study"
for b in "$vmload" "$amp_study"; do
  [ -x "$b" ] || vm_die "build-guest-bins.sh" "$b missing after the build"
  vm_is_static "$b" || vm_die "build-guest-bins.sh" "$b is dynamically linked (the VM has no libc)"
done
echo "vmload=$vmload"
echo "amp_study=$amp_study"

colab=""
if [ "${1:-}" != "--no-colab" ] && [ -f "$VM_ROOT/crates/scx_colab/Cargo.toml" ]; then
  # Static like colab-vmload (same RUSTFLAGS and --target: shared build
  # cache; see crates/scx_colab/README.md). Its BPF clang is scripts/bpf-clang's
  # (.cargo/config.toml); vm_llvm_path stops here, saying what to install, if none.
  vm_llvm_path
  vm_log "building scx_colab (static, release)"
  RUSTFLAGS='-C target-feature=+crt-static' vm_run "build-guest-bins.sh: cargo build -p scx_colab" 2400 \
    cargo build --release --locked -q -p scx_colab --target "$TRIPLE" >&2
  colab="$TARGET_DIR/$TRIPLE/release/scx_colab"
  [ -x "$colab" ] || vm_die "build-guest-bins.sh" "$colab missing after building scx_colab"
fi
echo "scx_colab=$colab"
