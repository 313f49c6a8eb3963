#!/usr/bin/env bash
# Builds (once) a small x86_64 kernel with sched_ext for the test VM, plus the
# kernel's own scx_simple scheduler (the benchmark's comparison scheduler).
#
#   bash scripts/vm/kernel.sh          # build if not cached; prints the kernel dir
#   bash scripts/vm/kernel.sh --print  # only print the cache dir (no build)
#
# Output: .cache/vm/kernel-<hash>/{bzImage,vmlinux,config,scx_simple}, where
# <hash> is the sha256 of the config fragment, the linux-source package version
# and the build recipe below. The last line on stdout is that directory.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

FRAGMENT="$VM_SCRIPTS/kernel.config"
REQUIRED="$VM_SCRIPTS/kernel.required"
PATCHES=("$VM_SCRIPTS"/kernel-patches/*.patch)   # test-only patches, applied in name order
TARBALL="${VM_KERNEL_TARBALL:-/usr/src/linux-source-6.12.tar.xz}"
SRC_NAME="linux-source-6.12"
JOBS="${VM_JOBS:-$(nproc)}"

[ -f "$TARBALL" ] || vm_die "kernel.sh" "$TARBALL not found: run scripts/vm/deps.sh (package linux-source-6.12)"
KVER="$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null || stat -c %s "$TARBALL")"

# The recipe lines (between the markers) take part in the cache key.
recipe() { sed -n '/^# >>> recipe/,/^# <<< recipe/p' "$0"; }
PATCH_HASH="$(cat "${PATCHES[@]}" | sha256sum | cut -c1-16)"
HASH="$({ cat "$FRAGMENT" "$REQUIRED"; echo "$KVER $PATCH_HASH"; recipe; } | sha256sum | cut -c1-16)"
OUT="$VM_CACHE/kernel-$HASH"

if [ "${1:-}" = "--print" ]; then echo "$OUT"; exit 0; fi
if [ -f "$OUT/bzImage" ] && [ -f "$OUT/vmlinux" ] && [ -x "$OUT/scx_simple" ]; then
  vm_log "kernel cached: $OUT"
  echo "$OUT"
  exit 0
fi

mkdir -p "$VM_CACHE"
SRC="$VM_CACHE/$SRC_NAME"
BUILD="$VM_CACHE/build"          # out-of-tree kernel build dir (reused: incremental)
TOOLS="$VM_CACHE/tools-build"    # tools/sched_ext output dir

# A fresh tree whenever the package or the patches change. tar keeps the
# archive's mtimes, so an existing build dir rebuilds only what a patch touched.
if [ ! -f "$SRC/.unpacked-$KVER-$PATCH_HASH" ]; then
  vm_log "unpacking $TARBALL into $VM_CACHE"
  rm -rf "$SRC"
  vm_run "kernel.sh: unpack" 600 tar -C "$VM_CACHE" -xf "$TARBALL"
  [ -d "$SRC" ] || vm_die "kernel.sh: unpack" "$TARBALL did not contain $SRC_NAME/"
  for p in "${PATCHES[@]}"; do
    vm_log "applying $(basename "$p")"
    patch -d "$SRC" -p1 -s --no-backup-if-mismatch <"$p" \
      || vm_die "kernel.sh: patch" "$(basename "$p") does not apply to $SRC_NAME ($KVER)"
  done
  touch "$SRC/.unpacked-$KVER-$PATCH_HASH"
fi
mkdir -p "$BUILD"

t0=$(date +%s)
# >>> recipe (edits here change the cache key)
vm_log "configuring: tinyconfig + kvm_guest.config + $(basename "$FRAGMENT")"
vm_run "kernel.sh: make tinyconfig" 300 make -C "$SRC" O="$BUILD" -s tinyconfig
vm_run "kernel.sh: merge config" 300 env -C "$BUILD" "$SRC/scripts/kconfig/merge_config.sh" -m -O "$BUILD" \
  "$BUILD/.config" "$SRC/kernel/configs/kvm_guest.config" "$FRAGMENT" >"$BUILD/merge.log" 2>&1
vm_run "kernel.sh: make olddefconfig" 300 make -C "$SRC" O="$BUILD" -s olddefconfig
missing=()
while read -r line; do
  line="${line%%#*}"; line="${line// /}"
  [ -z "$line" ] && continue
  grep -qx -- "$line" "$BUILD/.config" || missing+=("$line")
done < "$REQUIRED"
if [ ${#missing[@]} -gt 0 ]; then
  vm_die "kernel.sh: config check" "options lost after olddefconfig (unmet dependencies?): ${missing[*]} (see $BUILD/.config, $BUILD/merge.log)"
fi
vm_log "building bzImage with -j$JOBS (cold: about 7 min on 2 cores; log: $BUILD/build.log)"
if ! timeout 3600 make -C "$SRC" O="$BUILD" -j"$JOBS" bzImage >"$BUILD/build.log" 2>&1; then
  tail -n 40 "$BUILD/build.log" >&2
  vm_die "kernel.sh: make bzImage" "kernel build failed or timed out (3600 s); full log: $BUILD/build.log"
fi

# The kernel's own scx_simple. Its Makefile builds libbpf (.a and .so) and
# bpftool; linking everything with -static breaks the .so, so build normally
# and then link the final program statically in a second step.
vm_llvm_path
command -v clang >/dev/null || vm_die "kernel.sh: scx_simple" "clang not found (install clang-19 llvm-19)"
vm_log "building tools/sched_ext scx_simple (log: $TOOLS/build.log)"
mkdir -p "$TOOLS"
if ! timeout 900 make -C "$SRC/tools/sched_ext" O="$TOOLS" VMLINUX_BTF="$BUILD/vmlinux" \
    CLANG=clang -j"$JOBS" scx_simple >"$TOOLS/build.log" 2>&1; then
  tail -n 40 "$TOOLS/build.log" >&2
  vm_die "kernel.sh: make -C tools/sched_ext scx_simple" "failed or timed out (900 s); full log: $TOOLS/build.log"
fi
vm_run "kernel.sh: static link of scx_simple" 120 gcc -static -o "$TOOLS/scx_simple.static" \
  "$TOOLS/build/obj/sched_ext/scx_simple.o" "$TOOLS/build/obj/libbpf/libbpf.a" -lelf -lz -lpthread
# <<< recipe
t1=$(date +%s)

if ! vm_is_static "$TOOLS/scx_simple.static"; then
  vm_die "kernel.sh: static link of scx_simple" "$TOOLS/scx_simple.static is dynamically linked"
fi

tmp="$OUT.tmp.$$"
rm -rf "$tmp"; mkdir -p "$tmp"
cp "$BUILD/arch/x86/boot/bzImage" "$tmp/bzImage"
cp "$BUILD/vmlinux" "$tmp/vmlinux"
cp "$BUILD/.config" "$tmp/config"
cp "$TOOLS/scx_simple.static" "$tmp/scx_simple"
echo "build seconds: $((t1 - t0))" >"$tmp/build-info.txt"
echo "linux-source: $KVER" >>"$tmp/build-info.txt"
rm -rf "$OUT"; mv "$tmp" "$OUT"
vm_log "kernel built in $((t1 - t0)) s: $OUT"
echo "$OUT"
