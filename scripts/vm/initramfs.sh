#!/usr/bin/env bash
# Builds a gzip'd cpio initramfs for the test VM: busybox (static), an /init
# that mounts proc/sys/dev/debugfs/tracefs, runs a guest script and powers off,
# and the given programs under /bin (and --file data files where asked).
#
#   bash scripts/vm/initramfs.sh --out FILE --guest SCRIPT [--bin PATH[:NAME]]...
#        [--file PATH:/ABS/DEST]...
#
# /init prints "@@VM-GUEST-EXIT status=N@@" on the console when the guest
# script ends (N = its exit status), then runs `poweroff -f`. Dynamically
# linked programs get their shared libraries (from ldd) copied in as well.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

out="" guest="" bins=() files=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --guest) guest="$2"; shift 2 ;;
    --bin) bins+=("$2"); shift 2 ;;
    --file) files+=("$2"); shift 2 ;;
    *) vm_die "initramfs.sh" "unknown argument: $1" ;;
  esac
done
[ -n "$out" ] || vm_die "initramfs.sh" "--out FILE is required"
[ -f "$guest" ] || vm_die "initramfs.sh" "guest script '$guest' not found (--guest)"
BUSYBOX="${VM_BUSYBOX:-/bin/busybox}"
[ -x "$BUSYBOX" ] || vm_die "initramfs.sh" "$BUSYBOX not found: run scripts/vm/deps.sh (busybox-static)"
if ! vm_is_static "$BUSYBOX"; then
  vm_die "initramfs.sh" "$BUSYBOX is dynamically linked; install busybox-static"
fi

root="$(mktemp -d "${TMPDIR:-/tmp}/vm-initramfs.XXXXXX")"
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,run,etc,root,lib,lib64,usr/bin,usr/sbin,var}
ln -s ../run "$root/var/run"
cp "$BUSYBOX" "$root/bin/busybox"

# copy_libs PROGRAM: copies the shared libraries PROGRAM needs (if any).
copy_libs() {
  local lib
  vm_is_static "$1" && return 0
  for lib in $(ldd "$1" | grep -o '/[^ ]*'); do
    [ -e "$root$lib" ] && continue
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
}

for spec in "${bins[@]}"; do
  src="${spec%%:*}"; name="$(basename "$src")"
  [ "$spec" != "$src" ] && name="${spec#*:}"
  [ -f "$src" ] || vm_die "initramfs.sh" "program '$src' not found (--bin $spec)"
  cp "$src" "$root/bin/$name"
  chmod 0755 "$root/bin/$name"
  copy_libs "$src"
done
for spec in "${files[@]}"; do
  src="${spec%%:*}" dest="${spec#*:}"
  [ "$spec" != "$src" ] && [ "${dest#/}" != "$dest" ] || vm_die "initramfs.sh" "--file $spec: expected PATH:/ABS/DEST"
  [ -f "$src" ] || vm_die "initramfs.sh" "file '$src' not found (--file $spec)"
  mkdir -p "$root$(dirname "$dest")"
  cp "$src" "$root$dest"
done
cp "$guest" "$root/guest.sh"

cat >"$root/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t devtmpfs dev /dev 2>/dev/null
exec </dev/console >/dev/console 2>&1
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t tmpfs tmp /tmp
mount -t tmpfs run /run
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
hostname colab-vm
echo "@@VM-GUEST-START@@ kernel $(uname -r), $(grep -c ^processor /proc/cpuinfo) cpus"
sh /guest.sh
rc=$?
echo "@@VM-GUEST-EXIT status=$rc@@"
sync
poweroff -f
INIT
chmod 0755 "$root/init"
if [ "$(id -u)" -eq 0 ]; then
  mknod -m 0600 "$root/dev/console" c 5 1
  mknod -m 0666 "$root/dev/null" c 1 3
fi

mkdir -p "$(dirname "$out")"
( cd "$root" && find . -print0 | timeout 300 cpio --null -o -H newc --quiet ) | timeout 300 gzip -1 >"$out.tmp" \
  || vm_die "initramfs.sh" "cpio/gzip of $root into $out failed"
mv "$out.tmp" "$out"
vm_log "initramfs: $out ($(du -h "$out" | cut -f1))"
