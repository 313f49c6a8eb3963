#!/usr/bin/env bash
# Boots the test VM under QEMU (TCG) with a hard timeout, captures the serial
# console into a log file and returns the guest script's exit status (read from
# the "@@VM-GUEST-EXIT status=N@@" marker printed by the initramfs's /init).
#
#   bash scripts/vm/run.sh --kernel BZIMAGE --initrd FILE [--log FILE]
#        [--timeout SECS] [--smp N] [--mem MB] [--append "kernel args"] [--quiet]
#        [--icount SHIFT] [--emulator-retries N]
#
# --icount SHIFT: QEMU's instruction counting (-icount shift=SHIFT,sleep=off):
# guest time advances 2^SHIFT ns per guest instruction and jumps over idle
# periods, so guest timings follow executed instructions, not the host's load.
# It runs all vCPUs on one host thread (slower in wall time).
#
# --emulator-retries N (default 1): boots again, at most N times, when the
# guest kernel dies of an "Oops: int3" in its own text. That is the kernel's
# live code patching (static keys, static calls: flipped when a sched_ext
# scheduler attaches) meeting a stale translation in QEMU's TCG on another
# vCPU; BPF programs cannot write kernel text, so no scheduler under test can
# cause it. Seen once in about 45 CI runs (2026-11-29: __schedule from the
# idle loop, as the counter phase attached scx_colab). Each failed attempt's
# log is kept beside the final one (LOG.attemptK) and a RETRY line says why.
# Any other failure is never retried.
#
# Exit status: the guest's status; 124 on timeout; 125 when the guest never
# printed its end marker (crash, panic, QEMU failure). On any failure the
# console log (its last 200 lines) and the full log's path are printed.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

kernel="" initrd="" log="" tmo=600 smp=4 mem=1024 append="" quiet=0 icount="" retries=1
while [ $# -gt 0 ]; do
  case "$1" in
    --kernel) kernel="$2"; shift 2 ;;
    --initrd) initrd="$2"; shift 2 ;;
    --log) log="$2"; shift 2 ;;
    --timeout) tmo="$2"; shift 2 ;;
    --smp) smp="$2"; shift 2 ;;
    --mem) mem="$2"; shift 2 ;;
    --append) append="$2"; shift 2 ;;
    --quiet) quiet=1; shift ;;
    --icount) icount="$2"; shift 2 ;;
    --emulator-retries) retries="$2"; shift 2 ;;
    *) vm_die "run.sh" "unknown argument: $1" ;;
  esac
done
[ -f "$kernel" ] || vm_die "run.sh" "kernel image '$kernel' not found (--kernel; build it with scripts/vm/kernel.sh)"
[ -f "$initrd" ] || vm_die "run.sh" "initramfs '$initrd' not found (--initrd; build it with scripts/vm/initramfs.sh)"
command -v qemu-system-x86_64 >/dev/null || vm_die "run.sh" "qemu-system-x86_64 not found: run scripts/vm/deps.sh"
accel=(-accel tcg)
if [ -n "$icount" ]; then
  [[ "$icount" =~ ^[0-9]+$ ]] || vm_die "run.sh" "--icount takes a shift (0-10), not '$icount'"
  accel=(-accel tcg -icount "shift=$icount,sleep=off")
fi
[[ "$retries" =~ ^[0-9]+$ ]] || vm_die "run.sh" "--emulator-retries takes a count (0 or more), not '$retries'"
[ -n "$log" ] || log="$VM_CACHE/logs/console-$(date +%Y%m%d-%H%M%S).log"
mkdir -p "$(dirname "$log")"

# boot: one QEMU run; sets rc (QEMU's or timeout's status) and t0/t1.
boot() {
  vm_log "booting QEMU (tcg${icount:+, icount shift=$icount}, $smp vCPUs, ${mem} MB, timeout ${tmo}s); console log: $log"
  t0=$(date +%s)
  rc=0
  # KVM guests hang on this kind of host: TCG only. stdin from /dev/null so QEMU
  # never waits on the terminal; the console is streamed and logged.
  set +e
  timeout --kill-after=10 "$tmo" qemu-system-x86_64 "${accel[@]}" -smp "$smp" -m "$mem" \
    -nographic -no-reboot -kernel "$kernel" -initrd "$initrd" \
    -append "console=ttyS0 panic=-1 loglevel=4 $append" </dev/null 2>&1 \
    | tr -d '\r' | if [ "$quiet" -eq 1 ]; then cat >"$log"; else tee "$log"; fi
  rc=${PIPESTATUS[0]}
  set -e
  t1=$(date +%s)
}

# emulator_fault: true when the run ended without the guest's end marker and
# the guest kernel died of an int3 Oops (see --emulator-retries above).
emulator_fault() {
  ! grep -q '@@VM-GUEST-EXIT status=[0-9]*@@' "$log" && grep -q 'Oops: int3' "$log"
}

attempt=1
boot
while emulator_fault && [ "$attempt" -le "$retries" ]; do
  mv "$log" "$log.attempt$attempt"
  vm_log "RETRY: the guest kernel died of an int3 Oops in its own text (QEMU TCG and live kernel code patching, not the guest's programs); booting again ($((attempt + 1)) of $((retries + 1))); that attempt's log: $log.attempt$attempt"
  attempt=$((attempt + 1))
  boot
done

show_log() {
  echo "----- last 200 lines of the console log ($log) -----" >&2
  tail -n 200 "$log" >&2
  echo "----- end of console log; full log: $log -----" >&2
}

if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
  show_log
  vm_log "FAILED: the VM did not finish within ${tmo}s (killed); full log: $log"
  exit 124
fi
marker="$(grep -o '@@VM-GUEST-EXIT status=[0-9]*@@' "$log" | tail -n 1 || true)"
if [ -z "$marker" ]; then
  show_log
  vm_log "FAILED: no guest end marker in the console (QEMU exit status $rc: kernel panic, guest crash or QEMU error); full log: $log"
  exit 125
fi
status="${marker#*status=}"; status="${status%@@}"
if [ "$status" -ne 0 ]; then
  show_log
  vm_log "FAILED: guest script exited with status $status after $((t1 - t0)) s; full log: $log"
  exit "$status"
fi
vm_log "VM run OK in $((t1 - t0)) s (guest status 0); console log: $log"
