#!/usr/bin/env bash
# Checks scripts/vm/run.sh's handling of a guest kernel that dies of an int3
# Oops (QEMU TCG meeting live kernel code patching) with a stand-in QEMU (no
# VM): such a boot is retried and said so, its log kept; any other death is
# never retried; --emulator-retries bounds the retries and refuses bad input.
# Run by scripts/test.sh.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
t="$(mktemp -d)"
trap 'rm -rf "$t"' EXIT
fail() { echo "test-run-retry: FAIL: $*" >&2; exit 1; }

# The stand-in prints the console of the boot numbered by $t/calls from the
# scripts in $FAKE_BOOTS (one word per boot: int3, gpf or ok).
mkdir -p "$t/bin"
cat >"$t/bin/qemu-system-x86_64" <<'FAKE'
#!/usr/bin/env bash
n=$(( $(cat "$FAKE_DIR/calls" 2>/dev/null || echo 0) + 1 ))
echo "$n" >"$FAKE_DIR/calls"
read -ra boots <<<"$FAKE_BOOTS"
case "${boots[$((n - 1))]:-ok}" in
  int3) echo "[  110.869397] Oops: int3: 0000 [#1] SMP"
        echo "[  110.874301] Kernel panic - not syncing: Fatal exception in interrupt" ;;
  gpf)  echo "[   12.000000] Oops: general protection fault, probably for non-canonical address"
        echo "[   12.000100] Kernel panic - not syncing: Fatal exception" ;;
  ok)   echo "PASS: something"
        echo "@@VM-GUEST-EXIT status=0@@" ;;
esac
FAKE
chmod +x "$t/bin/qemu-system-x86_64"
touch "$t/bzImage" "$t/initrd"
export PATH="$t/bin:$PATH" FAKE_DIR="$t"

# run BOOTS ARGS...: runs run.sh against the stand-in; sets rc, out, calls.
run() {
  export FAKE_BOOTS="$1"; shift
  rm -f "$t/calls" "$t"/console.log*
  rc=0
  out="$(bash "$root/scripts/vm/run.sh" --kernel "$t/bzImage" --initrd "$t/initrd" \
    --log "$t/console.log" --quiet "$@" 2>&1)" || rc=$?
  calls="$(cat "$t/calls" 2>/dev/null || echo 0)"
}

run "int3 ok"
[ "$rc" -eq 0 ] || fail "an int3 Oops then a good boot should pass, got status $rc: $out"
[ "$calls" -eq 2 ] || fail "expected 2 boots, got $calls"
grep -q 'RETRY: the guest kernel died of an int3 Oops' <<<"$out" || fail "no RETRY line: $out"
grep -q 'Oops: int3' "$t/console.log.attempt1" || fail "the failed attempt's log was not kept"
grep -q '@@VM-GUEST-EXIT status=0@@' "$t/console.log" || fail "the final log is not the last boot's"

run "int3 int3 ok"
[ "$rc" -eq 125 ] || fail "two int3 Oopses with one retry should fail with 125, got $rc: $out"
[ "$calls" -eq 2 ] || fail "one retry allowed, got $calls boots"

run "int3 int3 ok" --emulator-retries 2
[ "$rc" -eq 0 ] || fail "--emulator-retries 2 should reach the third boot, got $rc: $out"
[ "$calls" -eq 3 ] || fail "expected 3 boots, got $calls"

run "gpf ok"
[ "$rc" -eq 125 ] || fail "another Oops must not be retried, got status $rc: $out"
[ "$calls" -eq 1 ] || fail "another Oops was retried ($calls boots)"
! grep -q 'RETRY' <<<"$out" || fail "a RETRY line for another Oops: $out"

run "int3 ok" --emulator-retries 0
[ "$rc" -eq 125 ] || fail "--emulator-retries 0 should not retry, got status $rc"
[ "$calls" -eq 1 ] || fail "--emulator-retries 0 booted $calls times"

run "ok" --emulator-retries two
[ "$rc" -ne 0 ] || fail "a bad --emulator-retries was accepted"
grep -q "emulator-retries takes a count (0 or more), not 'two'" <<<"$out" || fail "bad input not named: $out"
[ "$calls" -eq 0 ] || fail "QEMU ran despite bad input"

echo "test-run-retry: all checks passed"
