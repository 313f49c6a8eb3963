# Guest side of scripts/vm/test-real-study.sh (busybox sh): colab-amp-study
# as a user runs it on a real machine, here on an emulated 1B1S whose kernel
# is told the capacities (colab_test_capacity) but whose vCPUs run alike.
# Prints the report between @@REPORT-BEGIN and @@REPORT-END.

# Where libbpf looks for the kernel config (the host puts it at /boot/kernel-config).
[ -f /boot/kernel-config ] && ln -sf kernel-config "/boot/config-$(uname -r)"
info "dmesg: $(dmesg | grep -m1 colab_test_capacity)"
OUT=/tmp/study
# As the install page says to run it: no arguments but --quick; the
# schedulers are the ones found in PATH (/bin: scx_colab, scx_simple).
/bin/colab-amp-study --quick --out "$OUT" >/tmp/study.out 2>&1
rc=$?
cat /tmp/study.out
echo "@@REPORT-BEGIN"
cat "$OUT/report.md" 2>/dev/null
echo "@@REPORT-END"
if [ "$rc" -eq 0 ]; then pass "colab-amp-study --quick exited 0"; else fail "colab-amp-study --quick exited $rc (expected 0)"; fi
for s in default scx_colab scx_colab-paper scx_simple; do
  n=$(grep -c "^$s," "$OUT/summary.csv" 2>/dev/null)
  if [ "${n:-0}" -eq 2 ]; then pass "$s: a result for each of the 2 workloads"
  else fail "$s: expected a result for each of the 2 workloads in summary.csv, saw ${n:-0}"; fi
done
if grep -q "core types by sysfs (scx_colab's detector): 2 core types by cpu_capacity" "$OUT/report.md"; then
  pass "the report has the detector's two core types (from cpu_capacity)"
else fail "the report does not show two core types read from cpu_capacity"; fi
# The vCPUs run alike whatever the kernel is told: the measurement must say so.
if grep -q "Measurement and detection disagree" "$OUT/report.md"; then
  pass "the measured speeds flag capacities that are not real speeds"
else fail "the measured speeds did not flag the emulated capacities"; fi
if [ "$(sx_state)" = disabled ]; then pass "sched_ext is disabled after the study"
else fail "sched_ext state after the study: expected 'disabled', saw '$(sx_state)'"; fi
if [ "$FAILS" -eq 0 ]; then echo "SUMMARY: all checks passed"; else echo "SUMMARY: $FAILS check(s) failed"; fi
exit $((FAILS > 0))
