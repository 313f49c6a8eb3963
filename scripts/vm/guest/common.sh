# Guest-side helpers (busybox sh), prepended to the guest scripts by the host
# scripts. Expects SCHED_BIN, SCHED_ARGS (may be empty) to be set by the caller.

FAILS=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
info() { echo "INFO: $*"; }

sx_state() { cat /sys/kernel/sched_ext/state 2>/dev/null || echo "(no /sys/kernel/sched_ext/state)"; }
sx_ops() { cat /sys/kernel/sched_ext/root/ops 2>/dev/null || true; }

# now_ms: wall-clock milliseconds (from /proc/uptime).
now_ms() { awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime; }

# wait_state WANT SECS: polls the sched_ext state every 0.1 s until it is WANT
# (wall-clock deadline: polling itself is slow under TCG).
wait_state() {
  _end=$(($(now_ms) + $2 * 1000))
  while [ "$(now_ms)" -lt "$_end" ]; do
    [ "$(sx_state)" = "$1" ] && return 0
    sleep 0.1
  done
  [ "$(sx_state)" = "$1" ]
}

# proc_alive PID: true while PID runs (a zombie counts as dead).
proc_alive() {
  [ -r "/proc/$1/status" ] || return 1
  ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null
}

# wait_gone PID SECS: polls until PID has exited (or is a zombie).
wait_gone() {
  _end=$(($(now_ms) + $2 * 1000))
  while [ "$(now_ms)" -lt "$_end" ]; do
    proc_alive "$1" || return 0
    sleep 0.1
  done
  ! proc_alive "$1"
}

dmesg_mark() { dmesg | wc -l; }
# dmesg_since MARK: kernel log lines after MARK lines.
dmesg_since() { dmesg | tail -n +"$(($1 + 1))"; }

# start_sched TAG: starts the scheduler in the background (SPID, SOUT) and
# waits for state "enabled" (ATTACH_SECS, default 20 s). Returns non-zero if it did not attach.
start_sched() {
  SOUT="/tmp/sched-$1.out"
  # shellcheck disable=SC2086
  "$SCHED_BIN" $SCHED_ARGS >"$SOUT" 2>&1 &
  SPID=$!
  _t0=$(now_ms)
  _end=$((_t0 + ${ATTACH_SECS:-20} * 1000))
  # Poll (0.1 s) for "enabled"; stop early if the scheduler process exits.
  while [ "$(now_ms)" -lt "$_end" ] && [ "$(sx_state)" != enabled ] && proc_alive "$SPID"; do
    sleep 0.1
  done
  if [ "$(sx_state)" = enabled ]; then
    _ms=$(($(now_ms) - _t0))
    pass "[$1] scheduler $SCHED_NAME attached: state 'enabled' after $((_ms / 1000)).$((_ms % 1000 / 100)) s (pid $SPID)"
  else
    if proc_alive "$SPID"; then _why="still running"; else wait "$SPID"; _why="exited with status $?"; fi
    fail "[$1] scheduler $SCHED_NAME attach: expected state 'enabled' within ${ATTACH_SECS:-20} s, saw '$(sx_state)' (scheduler process $_why)"
    info "[$1] scheduler output (last 40 lines):"; tail -n 40 "$SOUT"
    info "[$1] kernel log (last 20 lines):"; dmesg | tail -n 20
    kill -TERM "$SPID" 2>/dev/null; wait_gone "$SPID" 5; kill -KILL "$SPID" 2>/dev/null
    return 1
  fi
}

# Verdicts: a check function sets V_OK (1: the run looks clean, 0: the check
# flagged it), V_MSG (what it saw, phrased for a PASS/FAIL line) and V_SEEN
# (the observation itself). The normal phases need every check clean
# (expect_clean); the stall phase needs the same checks to flag the stall
# (expect_flagged): the code that would fail a real run must fire there.
V_OK=1 V_MSG="" V_SEEN=""
verdict() { V_OK=$1; V_MSG=$2; V_SEEN=$3; }
expect_clean() { if [ "$V_OK" = 1 ]; then pass "[$1] $V_MSG"; else fail "[$1] $V_MSG"; fi; }
expect_flagged() {
  if [ "$V_OK" = 0 ]; then pass "[$1] flagged as expected ($2): $V_MSG"
  else fail "[$1] $2 went unnoticed: $V_MSG"; fi
}

# v_sched_exit SECS: waits (polled) up to SECS for the scheduler process to
# exit; verdict clean when it exited with status 0. SRC: its status, or
# "running" if it did not exit.
v_sched_exit() {
  if wait_gone "$SPID" "$1"; then
    wait "$SPID"; SRC=$?
    if [ "$SRC" -eq 0 ]; then
      verdict 1 "scheduler exit status 0" "$SRC"
    else
      verdict 0 "scheduler exit status: expected 0, saw $SRC" "$SRC"
    fi
  else
    SRC=running
    verdict 0 "scheduler process: expected it to exit within $1 s, still running" running
  fi
}

# stop_sched TAG: SIGTERM, waits for state "disabled" (10 s) and the exit.
stop_sched() {
  kill -TERM "$SPID" 2>/dev/null
  if wait_state disabled 10; then
    pass "[$1] scheduler detached: state 'disabled' after SIGTERM"
  else
    fail "[$1] scheduler detach: expected state 'disabled' within 10 s of SIGTERM, saw '$(sx_state)'"
  fi
  v_sched_exit 10
  expect_clean "$1"
  if [ "$SRC" = running ]; then
    info "[$1] killing the scheduler (SIGKILL)"
    kill -KILL "$SPID" 2>/dev/null
  fi
}

# variant_args NAME: the extra scx_colab arguments of --colab-variant NAME
# (COLAB_VARIANTS: one "NAME=ARGS" per line, set by amp-study.sh / bench.sh).
variant_args() {
  printf '%s\n' "${COLAB_VARIANTS:-}" | sed -n "s/^$1=//p"
}

# cpu_busy CPUS... : each CPU's busy percentage between /tmp/pl0 and /tmp/pl1
# (two snapshots of /proc/stat), space-separated.
cpu_busy() {
  paste -d' ' /tmp/pl0 /tmp/pl1 | awk -v want=" $* " '{
    n = NF / 2; c = substr($1, 4); if (index(want, " " c " ") == 0) next
    t = 0; for (i = 2; i <= n; i++) t += $(i + n) - $i
    idle = ($(n + 5) + $(n + 6)) - ($5 + $6)
    printf "%d ", (t > 0 ? 100 * (1 - idle / t) : 0) }'
}

# Task migrations under every scheduler alike: the kernel's sched_migrate_task
# tracepoint, counted as the events the ring buffers took (entries kept plus
# entries overwritten). mig_start clears and starts the count; mig_total
# stops it and prints it (nothing, and status 1, without the tracepoint).
TR=/sys/kernel/tracing
mig_start() {
  [ -d "$TR/events/sched/sched_migrate_task" ] || return 0
  echo 0 >"$TR/tracing_on"
  echo 1 >"$TR/events/sched/sched_migrate_task/enable"
  echo >"$TR/trace"
  echo 1 >"$TR/tracing_on"
}
mig_total() {
  [ -d "$TR/events/sched/sched_migrate_task" ] || return 1
  echo 0 >"$TR/tracing_on"
  cat "$TR"/per_cpu/cpu*/stats | awk '/^entries:|^overrun:/ { s += $2 } END { print s + 0 }'
  echo 0 >"$TR/events/sched/sched_migrate_task/enable"
}
