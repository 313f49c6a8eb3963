# Shared helpers for scripts/vm/*.sh (sourced, not run).
# shellcheck shell=bash

VM_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VM_CACHE="${VM_CACHE:-$VM_ROOT/.cache/vm}"
VM_SCRIPTS="$VM_ROOT/scripts/vm"

vm_log() { echo "[vm $(date +%H:%M:%S)] $*" >&2; }

# vm_die WHERE MESSAGE: prints what failed and where, then exits 1.
vm_die() {
  local where="$1"; shift
  echo "[vm] FAILED in $where: $*" >&2
  exit 1
}

# vm_run WHERE TIMEOUT_SECS CMD...: runs CMD with a timeout; on failure or
# timeout names the step and exits.
vm_run() {
  local where="$1" secs="$2"; shift 2
  local rc=0
  timeout --kill-after=10 "$secs" "$@" || rc=$?
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    vm_die "$where" "timed out after ${secs}s: $*"
  elif [ "$rc" -ne 0 ]; then
    vm_die "$where" "exit status $rc: $*"
  fi
}

# vm_verdict WHAT LOG RC: prints the PASS/FAIL lines of a guest test's console
# LOG and exits 1 unless the VM ended well (RC 0) and every check passed.
vm_verdict() {
  local what="$1" log="$2" rc="$3"
  grep -E '^(PASS|FAIL|SUMMARY):' "$log" || echo "(no PASS/FAIL lines in the console log)"
  if [ "$rc" -ne 0 ]; then
    echo "$what: FAILED (run.sh status $rc)" >&2
    exit 1
  fi
  if grep -q '^FAIL:' "$log" || ! grep -q '^SUMMARY: all checks passed' "$log"; then
    echo "$what: FAILED (see FAIL lines above)" >&2
    exit 1
  fi
  echo "$what: PASSED"
}

# bpf_clang_find: the BPF clang (BPF_CLANG if exported, else a clang >= 18;
# the search cargo's builds use too, through .cargo/config.toml).
source "$VM_ROOT/scripts/bpf-clang"

# Puts the BPF clang's directory (with its llvm-strip and llvm-config) first
# on PATH, so that `clang` is that clang (kernel.sh's scx_simple build runs
# `clang`); where that directory's `clang` is another one, a link to it in
# $VM_CACHE/bpf-clang goes first.
vm_llvm_path() {
  local clang
  clang="$(bpf_clang_find)" || vm_die "vm_llvm_path" "no clang for BPF (see above)"
  clang="$(readlink -f "$(command -v "$clang")")"
  export PATH="$(dirname "$clang"):$PATH"
  if [ "$(readlink -f "$(command -v clang)")" != "$clang" ]; then
    mkdir -p "$VM_CACHE/bpf-clang"
    ln -sfn "$clang" "$VM_CACHE/bpf-clang/clang"
    export PATH="$VM_CACHE/bpf-clang:$PATH"
  fi
}

# vm_is_static FILE: true when FILE is an ELF program with no program
# interpreter and no shared-library dependencies (static or static-pie).
vm_is_static() {
  ! readelf -lW "$1" 2>/dev/null | grep -q 'program interpreter' &&
    ! readelf -dW "$1" 2>/dev/null | grep -q '(NEEDED)'
}
