#!/usr/bin/env bash
# Installs the Debian packages the VM test harness needs (kernel source,
# clang/llvm for BPF, pahole for BTF, QEMU, busybox for the initramfs).
# Installs only what is missing; safe to run again.
set -euo pipefail

PKGS=(
  linux-source-6.12
  clang-19
  llvm-19
  dwarves
  qemu-system-x86
  busybox-static
  libelf-dev
  libssl-dev
  bc
  flex
  bison
  cpio
  zlib1g-dev
  patch
  xz-utils
  make
  gcc
  libc6-dev
  pkg-config
)

missing=()
for pkg in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "vm/deps: all packages present"
  exit 0
fi
echo "vm/deps: installing: ${missing[*]}"
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
if ! timeout 300 $SUDO apt-get update -qq; then
  echo "vm/deps: FAILED: apt-get update (timeout 300 s or error)" >&2
  exit 1
fi
if ! DEBIAN_FRONTEND=noninteractive timeout 900 $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
  echo "vm/deps: FAILED: apt-get install ${missing[*]} (timeout 900 s or error)" >&2
  exit 1
fi
echo "vm/deps: installed ${#missing[@]} package(s)"
