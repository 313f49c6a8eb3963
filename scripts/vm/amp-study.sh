#!/usr/bin/env bash
# The papers' workloads on a real kernel on an emulated asymmetric machine:
# one QEMU boot of the test kernel with the test-only option
# colab_test_capacity= (the kernel and sched_ext schedulers see big and
# little vCPUs: SD_ASYM_CPUCAPACITY, cpuN/cpu_capacity), workloads run by
# `colab-vmload mix --emulate MACHINE` (compute at each vCPU's core-type
# rate), under every scheduler in turn, with T_SB measured on all-big vCPUs.
#
#   bash scripts/vm/amp-study.sh [--machine 2B2S] [--reps 3] [--workloads "Sync-2 ..."]
#        [--scheduler PATH]... [--rivals] [--migration-us US] [--out reports/vm-amp] [--quick]
#        [--colab-variant NAME="ARGS"]... [--migrations]
#
# --quick: one repetition of two small workloads (the CI check that no
# scheduler stalls and every workload finishes). --rivals: also the scx
# rivals scx_lavd and scx_bpfland (built once, static, from crates.io by
# build-rivals.sh; run with their default options). --migration-us: ROTA's
# migration cost for scx_colab (default: the one measured in this VM,
# topologies/vm-<machine>.toml, which the simulator reads too; else
# scx_colab's own default). --colab-variant: also scx_colab with these extra
# arguments, reported as scx_colab-NAME (e.g. --colab-variant
# nowindow="--policy colab --window inf"). --migrations: also count task
# migrations in each run (the kernel's sched_migrate_task tracepoint, which
# costs a little time per migration: compare timings without it), written to
# migrations.csv and tabled in results.md. Writes results.csv (every
# program run), summary.csv and results.md (H_ANTT, H_STP per workload and
# scheduler, geomean, spread) and chart.svg (amp-chart.sh) into the output directory. Exit status 1 if a
# scheduler failed to attach, a workload failed, or a planned run left no
# result row (amp-missing.sh).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

machine=2B2S reps=3 emu_reps=3 outdir="$VM_ROOT/reports/vm-amp" extra=() rivals=0 mig_us="" variants=() migrations=0
# Default set: one of each class of the COLAB study plus two single programs
# (chosen before any real-kernel run; small enough for a few minutes a scheduler).
# Fine-grained barriers and a contended lock (scenarios) since 2026-12-06: where
# scx_colab and the simulator's model of it part most.
workloads="Sync-2 NSync-1 Comm-2 Comp-2 Large-1 fft:4 ferret:4 finebar_25us finebar_100us lock_100us_hi"
while [ $# -gt 0 ]; do
  case "$1" in
    --machine) machine="$2"; shift 2 ;;
    --reps) reps="$2"; shift 2 ;;
    --workloads) workloads="$2"; shift 2 ;;
    --scheduler) extra+=("$2"); shift 2 ;;
    --rivals) rivals=1; shift ;;
    --migrations) migrations=1; shift ;;
    --migration-us) mig_us="$2"; shift 2 ;;
    --out) outdir="$2"; shift 2 ;;
    --quick) reps=1; emu_reps=1; workloads="NSync-1 fft:4"; shift ;;
    --colab-variant)
      [[ "$2" =~ ^[a-z0-9_]+=.+$ ]] ||
        vm_die "amp-study.sh" "--colab-variant takes NAME=\"ARGS\" (NAME: lower-case letters, digits, _), not '$2'"
      [ "${2%%=*}" != paper ] || vm_die "amp-study.sh" "--colab-variant: the name 'paper' is taken (scx_colab --policy colab)"
      variants+=("$2"); shift 2 ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { print }' "$0"; exit 0 ;;
    *) vm_die "amp-study.sh" "unknown argument: $1 (see --help)" ;;
  esac
done
[[ "$reps" =~ ^[1-9][0-9]*$ ]] || vm_die "amp-study.sh" "--reps must be a positive integer, not '$reps'"

bash "$VM_SCRIPTS/deps.sh" >&2
KDIR="$(bash "$VM_SCRIPTS/kernel.sh" | tail -n 1)"
bins="$(bash "$VM_SCRIPTS/build-guest-bins.sh")"
vmload="$(sed -n 's/^vmload=//p' <<<"$bins")"
colab="$(sed -n 's/^scx_colab=//p' <<<"$bins")"
[ -x "$vmload" ] || vm_die "amp-study.sh" "colab-vmload was not built"
if [ "$rivals" = 1 ]; then
  riv="$(bash "$VM_SCRIPTS/build-rivals.sh")"
  for r in scx_lavd scx_bpfland; do
    p="$(sed -n "s/^$r=//p" <<<"$riv")"
    [ -x "$p" ] || vm_die "amp-study.sh" "--rivals: $r was not built"
    extra+=("$p")
  done
fi

caps="$("$vmload" capacities "$machine")" || vm_die "amp-study.sh" "--machine $machine: not a machine colab knows"
ncpu=$(tr ',' '\n' <<<"$caps" | wc -l)
allbig="${ncpu}B"

scheds="default scx_simple"
# The kernel's config, linked to /boot/config-$(uname -r) by the guest:
# libbpf reads it for a BPF program's `__kconfig` externs (scx_lavd 1.1.4
# needs CONFIG_NR_CPUS, both rivals CONFIG_PREEMPT_RCU) and refuses to load
# the program (-EINVAL) when neither that file nor /proc/config.gz exists.
binargs=(--bin "$vmload" --bin "$KDIR/scx_simple:scx_simple" --file "$KDIR/config:/boot/kernel-config")
if [ -n "$colab" ]; then
  # scx_colab runs ROTA (its default) and, as scx_colab-paper, the paper's COLAB.
  scheds="$scheds scx_colab scx_colab-paper"; binargs+=(--bin "$colab:scx_colab")
  for v in "${variants[@]}"; do scheds="$scheds scx_colab-${v%%=*}"; done
elif [ "${#variants[@]}" -gt 0 ]; then
  vm_die "amp-study.sh" "--colab-variant needs scx_colab, which was not built"
fi
for p in "${extra[@]}"; do
  [ -x "$p" ] || vm_die "amp-study.sh" "scheduler '$p' not found or not executable"
  scheds="$scheds $(basename "$p")"; binargs+=(--bin "$p")
done
big_cpus="$(tr ',' '\n' <<<"$caps" | awk '$1 == 1024 { printf "%s%d", (n++ ? "," : ""), NR - 1 }')"
# ROTA's constants come from the machine's cross-cluster migration cost: the
# one measured in this VM (topologies/vm-<machine>.toml, which the simulator
# reads too), else scx_colab's default.
colab_args="--big-cpus $big_cpus"
vm_topo="$VM_ROOT/topologies/vm-$(tr 'A-Z' 'a-z' <<<"$machine").toml"
if [ -n "$mig_us" ]; then
  awk -v v="$mig_us" 'BEGIN { exit !(v + 0 > 0 && v + 0 <= 100000 && v ~ /^[0-9.]+$/) }' ||
    vm_die "amp-study.sh" "--migration-us must be a positive number of microseconds up to 100000, not '$mig_us'"
  colab_args="$colab_args --migration-us $mig_us"
elif [ -f "$vm_topo" ]; then
  mig_ns="$(sed -n 's/^migration_cross_ns *= *\([0-9]*\).*/\1/p' "$vm_topo")"
  if [ -n "$mig_ns" ]; then
    colab_args="$colab_args --migration-us $(awk -v n="$mig_ns" 'BEGIN { printf "%.3f", n / 1000 }')"
  fi
fi

work="$VM_CACHE/amp-study"
mkdir -p "$work" "$outdir"
guest="$work/guest.sh"
{
  echo "# generated by scripts/vm/amp-study.sh"
  printf 'MACHINE=%q\nALLBIG=%q\nSCHEDS=%q\nWORKLOADS=%q\nREPS=%q\nEMU_REPS=%q\n' \
    "$machine" "$allbig" "$scheds" "$workloads" "$reps" "$emu_reps"
  printf 'ATTACH_SECS=60\nCOLAB_ARGS=%q\nMIGRATIONS=%q\n' "$colab_args" "$migrations"
  # scx_colab-NAME's extra arguments, one "NAME=ARGS" per line.
  printf 'COLAB_VARIANTS=%q\n' "$(printf '%s\n' "${variants[@]}")"
  cat "$VM_SCRIPTS/guest/common.sh" "$VM_SCRIPTS/guest/amp-study.sh"
} >"$guest"
bash "$VM_SCRIPTS/initramfs.sh" --out "$work/initramfs.cpio.gz" --guest "$guest" "${binargs[@]}"

log="$work/console-$(date +%Y%m%d-%H%M%S).log"
rc=0
bash "$VM_SCRIPTS/run.sh" --kernel "$KDIR/bzImage" --initrd "$work/initramfs.cpio.gz" \
  --smp "$ncpu" --append "colab_test_capacity=$caps" --log "$log" --timeout 5400 --quiet || rc=$?

csv="$outdir/results.csv"
{
  echo "kind,scheduler,workload,rep,program,ns"
  grep '^@@TSB,' "$log" | sed 's/^@@TSB,/tsb,-,/' || true
  grep '^@@RUN,' "$log" | sed 's/^@@RUN,/run,/' || true
} >"$csv"
grep '^@@EMU,' "$log" | cut -d, -f2- >"$outdir/emulation.csv" || true
if [ "$migrations" = 1 ]; then
  { echo "scheduler,workload,rep,migrations"; grep '^@@MIG,' "$log" | cut -d, -f2- || true; } >"$outdir/migrations.csv"
fi
failed="$(grep '^@@RUN-FAILED' "$log" || true)"

# Per scheduler and workload: each program's median turnaround over the
# repetitions against its median T_SB; H_ANTT = mean of T_M/T_SB, H_STP =
# sum of T_SB/T_M; spread = (max - min) / median of the runs' H_ANTT.
awk -F, -v big="0" '
  NR == 1 { next }
  $1 == "tsb" { tsb[$3 "," $5, ++ntsb[$3 "," $5]] = $6; next }
  { k = $2 "," $3 "," $5; t[k, ++nt[k]] = $6; if (!(k in seen)) { seen[k] = 1; keys[++nk] = k }
    r = $2 "," $3 "," $4; rsum[r] += 0; }
  function median(arr, key, n,   i, j, v, tmp) {
    for (i = 1; i <= n; i++) v[i] = arr[key, i]
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { tmp = v[i]; v[i] = v[j]; v[j] = tmp }
    return (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  END {
    for (i = 1; i <= nk; i++) {
      split(keys[i], p, ","); s = p[1]; w = p[2]; prog = p[3]
      tm = median(t, keys[i], nt[keys[i]]); ts = median(tsb, w "," prog, ntsb[w "," prog])
      if (ts <= 0) continue
      sw = s "," w; antt[sw] += tm / ts; stp[sw] += ts / tm; np[sw]++
      lo = hi = t[keys[i], 1]
      for (j = 2; j <= nt[keys[i]]; j++) { if (t[keys[i], j] < lo) lo = t[keys[i], j]; if (t[keys[i], j] > hi) hi = t[keys[i], j] }
      if ((hi - lo) / tm > spread[sw]) spread[sw] = (hi - lo) / tm
      if (!(sw in sws)) { sws[sw] = 1; order[++ns] = sw }
    }
    print "scheduler,workload,h_antt,h_stp,max_spread"
    for (i = 1; i <= ns; i++) { sw = order[i]; printf "%s,%.4f,%.4f,%.4f\n", sw, antt[sw] / np[sw], stp[sw], spread[sw] }
  }' "$csv" >"$outdir/summary.csv"
# A run that left no row (its output did not parse) is a failure too.
missing="$(bash "$VM_SCRIPTS/amp-missing.sh" "$csv" "$outdir/summary.csv" "$scheds" "$workloads" "$reps")"
[ -z "$missing" ] || failed="${failed:+$failed$'\n'}$missing"

{
  echo "# Real kernel on an emulated $machine"
  echo
  echo "One QEMU boot (TCG, $ncpu vCPUs on $(nproc) host cores, host load $(cut -d' ' -f1-3 /proc/loadavg)), kernel $(basename "$KDIR") with colab_test_capacity=$caps, $(date -u +%Y-%m-%dT%H:%MZ); $reps repetitions; T_SB alone on $allbig (all vCPUs big) under the default scheduler; scx_colab runs with \`$colab_args\` (scx_colab-paper adds \`--policy colab\`)."
  for v in "${variants[@]}"; do echo "scx_colab-${v%%=*} adds \`${v#*=}\`."; done
  echo
  if [ "$ncpu" -gt "$(nproc)" ]; then
    echo "**Warning:** more vCPUs ($ncpu) than host cores ($(nproc)). A run that keeps every vCPU busy gets at most $(nproc) host cores' worth of time, while T_SB runs of programs with fewer threads do not, so H_ANTT is inflated for mixes that saturate the vCPUs (up to ${ncpu}/$(nproc)x). Compare schedulers with each other here, not with the simulator; for that, use a machine with at most $(nproc) cores (\`--machine 1B1S\` on this host)."
    echo
  fi
  echo "H_ANTT per workload (mean over programs of median T_M / median T_SB; lower is better), and the largest run-to-run spread of a program's turnaround, (max - min) / median:"
  echo
  scheds_in="$(tail -n +2 "$outdir/summary.csv" | cut -d, -f1 | awk '!s[$0]++')"
  printf '| workload |'; for s in $scheds_in; do printf ' %s |' "$s"; done; echo
  printf '|---|'; for s in $scheds_in; do printf -- '---|'; done; echo
  for w in $workloads; do
    printf '| %s |' "$w"
    for s in $scheds_in; do
      v="$(awk -F, -v s="$s" -v w="$w" '$1 == s && $2 == w { printf "%.3f (%.0f%%)", $3, $5 * 100 }' "$outdir/summary.csv")"
      printf ' %s |' "${v:--}"
    done
    echo
  done
  printf '| geomean |'
  for s in $scheds_in; do
    awk -F, -v s="$s" '$1 == s { l += log($3); n++ } END { if (n) printf " %.3f |", exp(l / n); else printf " - |" }' "$outdir/summary.csv"
  done
  echo
  echo
  if [ -s "$outdir/emulation.csv" ]; then
    echo "Emulation check: one core-bound thread pinned to vCPU 0 (big) and to the last vCPU (little), alternating:"
    awk -F, '{ t[$1] = t[$1] " " $3; s[$1] += $3; n[$1]++ } END { for (c in t) printf "- vCPU %s: mean %.1f ms (runs:%s ns)\n", c, s[c] / n[c] / 1e6, t[c] }' "$outdir/emulation.csv" | sort
    echo
  fi
  if [ "$migrations" = 1 ] && [ -s "$outdir/migrations.csv" ]; then
    echo "Task migrations per run (the kernel's sched_migrate_task events; mean over the repetitions):"
    echo
    printf '| workload |'; for s in $scheds_in; do printf ' %s |' "$s"; done; echo
    printf '|---|'; for s in $scheds_in; do printf -- '---|'; done; echo
    for w in $workloads; do
      printf '| %s |' "$w"
      for s in $scheds_in; do
        v="$(awk -F, -v s="$s" -v w="$w" '$1 == s && $2 == w { t += $4; n++ } END { if (n) printf "%.0f", t / n }' "$outdir/migrations.csv")"
        printf ' %s |' "${v:--}"
      done
      echo
    done
    echo
  fi
  if [ -n "$failed" ]; then echo "Failures:"; echo '```'; echo "$failed"; echo '```'; fi
} >"$outdir/results.md"
bash "$VM_SCRIPTS/amp-chart.sh" "$outdir/summary.csv" \
  "Real kernel, emulated $machine, $(date -u +%Y-%m-%d): H_ANTT (lower is better)" >"$outdir/chart.svg" ||
  vm_log "no chart: amp-chart.sh failed on $outdir/summary.csv"
cp "$log" "$outdir/console.log"
cat "$outdir/results.md"
if [ -n "$failed" ] || [ "$rc" -ne 0 ]; then
  vm_log "FAILED: a scheduler or workload failed (guest status $rc); console log: $log"
  exit 1
fi
vm_log "amp study done: $outdir"
