#!/usr/bin/env bash
# Builds (once) static scx_lavd and scx_bpfland, the scx rivals of the VM
# study, from crates.io at the scx release of the scx crates scx_colab pins
# (crates/scx_colab/Cargo.toml: scx_utils/scx_cargo =1.1.4; scx_lavd and
# scx_bpfland 1.1.4 depend on scx_utils ^1.1.4 and libbpf-rs =0.27.2 like
# scx_colab, and their published Cargo.lock pins scx_utils 1.1.4), into
# .cache/vm/rivals-<version>/bin/. Prints "scx_lavd=PATH" and
# "scx_bpfland=PATH" on stdout.
#
#   bash scripts/vm/build-rivals.sh [--version 1.1.4]
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$VM_ROOT"

version=1.1.4
while [ $# -gt 0 ]; do
  case "$1" in
    --version) version="$2"; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) vm_die "build-rivals.sh" "unknown argument: $1 (see --help)" ;;
  esac
done

TRIPLE=x86_64-unknown-linux-gnu
root="$VM_CACHE/rivals-$version"
# One target dir for both crates: their lockfiles agree on the shared
# dependencies (libbpf-sys, libbpf-rs, scx_utils, ...), which build once.
tdir="$root/target"
# The BPF clang: scx_cargo runs $BPF_CLANG, which the workspace's
# .cargo/config.toml sets to scripts/bpf-clang (cargo runs from $VM_ROOT);
# vm_llvm_path stops here, saying what to install, if there is none.
vm_llvm_path

for crate in scx_lavd scx_bpfland; do
  bin="$root/bin/$crate"
  if [ -x "$bin" ] && vm_is_static "$bin"; then
    vm_log "$crate $version: already built ($bin)"
  else
    vm_log "building $crate $version (static, release; 10-30 min cold on 2 cores)"
    blog="$root/$crate-build.log"
    mkdir -p "$root"
    # Static as scx_colab (see crates/scx_colab/README.md): +crt-static with
    # --target keeps it off build scripts and proc macros; libbpf-sys builds
    # libbpf and links libelf.a/libz.a. --locked uses the crate's published
    # Cargo.lock (both 1.1.4 crates publish one). A crate without one only
    # draws a warning under --locked; the fallback below is for a lockfile
    # that cargo refuses (it "needs to be updated but --locked was passed"):
    # then the build goes on without --locked, resolving the newest
    # semver-compatible dependencies, and says so.
    # --force: rebuild over a binary that is there but not static.
    force=(); [ -e "$bin" ] && force=(--force)
    rc=0
    RUSTFLAGS='-C target-feature=+crt-static' timeout --kill-after=10 3600 \
      cargo install "${force[@]}" --locked --root "$root" --target-dir "$tdir" --target "$TRIPLE" \
        --version "$version" "$crate" >"$blog" 2>&1 || rc=$?
    if [ "$rc" -ne 0 ] && grep -qi 'lock file.*needs to be updated\|no Cargo.lock' "$blog"; then
      tail -n 5 "$blog" >&2
      vm_log "$crate $version: --locked failed (its published Cargo.lock is unusable); building without --locked"
      RUSTFLAGS='-C target-feature=+crt-static' vm_run "build-rivals.sh: cargo install $crate (unlocked)" 3600 \
        cargo install "${force[@]}" --root "$root" --target-dir "$tdir" --target "$TRIPLE" \
          --version "$version" "$crate" >&2
    elif [ "$rc" -ne 0 ]; then
      tail -n 40 "$blog" >&2
      if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        vm_die "build-rivals.sh" "cargo install $crate $version timed out after 3600s (log: $blog)"
      fi
      vm_die "build-rivals.sh" "cargo install $crate $version: exit status $rc (log: $blog)"
    fi
    [ -x "$bin" ] || vm_die "build-rivals.sh" "$bin missing after the build"
    if ! vm_is_static "$bin"; then
      vm_die "build-rivals.sh" "$bin is dynamically linked (the VM has no libc)"
    fi
  fi
  echo "$crate=$bin"
done
