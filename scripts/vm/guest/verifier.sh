# Guest side of scripts/vm/verifier-stats.sh (busybox sh). Prepended:
# guest/common.sh. Loads scx_colab's BPF programs with each policy on the
# project's 6.12 kernel, prints the verifier's statistics per program between
# markers, and fails when a load fails.

for policy in rota colab; do
  out=/tmp/verifier-$policy.tsv
  if /bin/scx_colab --big-cpus 0,1 --policy "$policy" --verifier-stats >"$out" 2>/tmp/verifier.err; then
    rows=$(($(wc -l <"$out") - 1))
    if [ "$rows" -gt 0 ]; then
      pass "[verifier] --policy $policy: $rows programs loaded"
    else
      fail "[verifier] --policy $policy: loaded, but no statistics were printed"
    fi
  else
    fail "[verifier] --policy $policy: the BPF programs did not load: $(tail -n 5 /tmp/verifier.err | tr '\n' '|')"
    # The verifier's own log of the program it gave up on (libbpf prints
    # its end when a load fails).
    /bin/scx_colab --big-cpus 0,1 --policy "$policy" --verifier-stats --verbose 2>&1 >/dev/null |
      grep -v '^libbpf: prog .*: -- BEGIN' | tail -n 80 | sed 's/^/VERIFIER-LOG: /'
  fi
  echo "@@VERIFIER-BEGIN $policy@@"
  cat "$out"
  echo "@@VERIFIER-END $policy@@"
done

if [ "$FAILS" -eq 0 ]; then
  echo "SUMMARY: all checks passed"
  exit 0
fi
echo "SUMMARY: $FAILS check(s) failed"
exit 1
