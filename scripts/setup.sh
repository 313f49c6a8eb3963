#!/usr/bin/env bash
# Installs the Debian packages a job needs, only those missing (safe to run
# again), then the rustfmt/clippy components:
#
#   bash scripts/setup.sh         the simulator: .ci/apt-packages (scripts/reproduce.sh)
#   bash scripts/setup.sh --bpf   and scx_colab's build: + .ci/apt-packages-bpf
#                                 (clang; scripts/test.sh)
#   bash scripts/setup.sh --vm    and the sched_ext test VM: + .ci/apt-packages-bpf
#                                 + .ci/apt-packages-vm (kernel source, QEMU; scripts/vm/deps.sh)
#   --list                        prints the packages instead; installs nothing
set -euo pipefail
cd "$(dirname "$0")/.."

level=0 list_only=0
for arg in "$@"; do
  case "$arg" in
    --bpf) [ "$level" -ge 1 ] || level=1 ;;
    --vm) level=2 ;;
    --list) list_only=1 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "setup: unknown argument: $arg (see --help)" >&2; exit 2 ;;
  esac
done
lists=(.ci/apt-packages .ci/apt-packages-bpf .ci/apt-packages-vm)

pkgs=()
for list in "${lists[@]:0:level+1}"; do
  while read -r pkg; do
    pkg="${pkg%%#*}"; pkg="${pkg//[[:space:]]/}"
    [ -n "$pkg" ] && pkgs+=("$pkg")
  done <"$list"
done
if [ "$list_only" -eq 1 ]; then
  printf '%s\n' "${pkgs[@]}"
  exit 0
fi

missing=()
for pkg in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ] && ! command -v apt-get >/dev/null 2>&1; then
  echo "setup: no apt-get (not Debian): install the equivalents of: ${missing[*]}" >&2
elif [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  # Ask for sudo's password here, untimed: under `timeout` sudo runs in the
  # background and cannot read the terminal.
  if [ -n "$SUDO" ] && ! sudo -v; then
    echo "setup: FAILED: sudo (apt-get needs root)" >&2
    exit 1
  fi
  if ! timeout 300 $SUDO apt-get update -qq; then
    echo "setup: FAILED: apt-get update (timeout 300 s or error)" >&2
    exit 1
  fi
  if ! timeout 900 $SUDO env DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
    echo "setup: FAILED: apt-get install ${missing[*]} (timeout 900 s or error)" >&2
    exit 1
  fi
  echo "setup: installed ${#missing[@]} package(s)"
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo not found; install Rust (https://rustup.rs) first" >&2
  exit 1
fi
if command -v rustup >/dev/null 2>&1; then
  rustup component add rustfmt clippy >/dev/null 2>&1 || true
fi
