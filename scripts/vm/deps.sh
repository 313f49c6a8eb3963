#!/usr/bin/env bash
# Installs the Debian packages the VM test harness needs: `scripts/setup.sh
# --vm`, i.e. .ci/apt-packages-vm (kernel source, pahole, QEMU, busybox for
# the initramfs, ...) with the lists it builds on (.ci/apt-packages-bpf: clang
# for BPF; .ci/apt-packages). Installs only what is missing; safe to run again.
set -euo pipefail
exec bash "$(dirname "$0")/../setup.sh" --vm
