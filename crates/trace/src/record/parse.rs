//! Parsing `perf script -F comm,tid,cpu,time,event,trace --ns` output into
//! a trace's threads and events, as it streams.

use crate::format::{BlockKind, Event};
use std::collections::HashMap;

const ETIMEDOUT: i64 = 110;

/// One line: `comm tid [cpu] sec.nsec: event: args`.
#[derive(Debug, PartialEq)]
struct Line<'a> {
    comm: &'a str,
    tid: u32,
    cpu: u32,
    t: u64,
    what: What<'a>,
}

#[derive(Debug, PartialEq)]
enum What<'a> {
    Switch {
        prev_state: &'a str,
    },
    Wakeup {
        pid: u32,
    },
    Fork {
        child: u32,
        child_comm: &'a str,
    },
    Exit {
        group_dead: bool,
    },
    FutexEnter {
        uaddr: u64,
        op: u64,
        val: Option<u64>,
    },
    FutexExit {
        ret: i64,
    },
    SleepEnter,
    SleepExit,
    SwitchIn,
    SwitchOut,
    Lost(u64),
    Other,
}

fn parse_time(s: &str) -> Option<u64> {
    let (sec, frac) = s.split_once('.').unwrap_or((s, ""));
    if frac.len() > 9 {
        return None;
    }
    let ns: u64 = if frac.is_empty() {
        0
    } else {
        frac.parse::<u64>().ok()? * 10u64.pow(9 - frac.len() as u32)
    };
    sec.parse::<u64>()
        .ok()?
        .checked_mul(1_000_000_000)?
        .checked_add(ns)
}

fn parse_hex(s: &str) -> Option<u64> {
    u64::from_str_radix(s.trim().trim_start_matches("0x"), 16).ok()
}

/// `key=value` of a tracepoint; the key must start a word (so `pid=` does
/// not match `prev_pid=`); the value ends at the next space.
fn kv<'a>(args: &'a str, key: &str) -> Option<&'a str> {
    let pat = format!("{key}=");
    let mut from = 0;
    while let Some(i) = args[from..].find(&pat) {
        let at = from + i;
        if at == 0 || args.as_bytes()[at - 1] == b' ' {
            let v = &args[at + pat.len()..];
            return Some(v.split(' ').next().unwrap_or(""));
        }
        from = at + pat.len();
    }
    None
}

/// `key: value` of a syscall tracepoint (`uaddr: 0x.., op: 0x..`).
fn sys_arg<'a>(args: &'a str, key: &str) -> Option<&'a str> {
    args.split(", ")
        .find_map(|kv| kv.trim().strip_prefix(key)?.strip_prefix(": "))
}

fn parse_line(line: &str) -> Option<Line<'_>> {
    // The cpu in brackets anchors the line: comm may contain spaces.
    let mut open = None;
    for (i, _) in line.match_indices(" [") {
        let rest = &line[i + 2..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && rest[digits..].starts_with(']') {
            open = Some((i, digits));
            break;
        }
    }
    let (i, digits) = open?;
    let (comm, tid) = line[..i].trim().rsplit_once(' ')?;
    // `pid/tid` if perf was asked for both.
    let tid: u32 = tid.rsplit('/').next()?.parse().ok()?;
    let cpu: u32 = line[i + 2..i + 2 + digits].parse().ok()?;
    let rest = line[i + 3 + digits..].trim_start();
    let (time, rest) = rest.split_once(':')?;
    let t = parse_time(time.trim())?;
    let rest = rest.trim_start();
    let what = if let Some(r) = rest.strip_prefix("PERF_RECORD_SWITCH") {
        match r.split_whitespace().next() {
            Some("IN") => What::SwitchIn,
            Some("OUT") => What::SwitchOut,
            _ => What::Other,
        }
    } else if rest.starts_with("PERF_RECORD_LOST") {
        let n = rest
            .split_whitespace()
            .skip_while(|w| !w.starts_with("lost"))
            .find_map(|w| w.trim_start_matches("lost:").parse().ok())
            .unwrap_or(0);
        What::Lost(n)
    } else {
        let (event, args) = match rest.split_once(": ") {
            Some((e, a)) => (e, a),
            None => (rest.trim_end_matches(':'), ""),
        };
        parse_event(event.trim(), args)
    };
    Some(Line {
        comm: comm.trim(),
        tid,
        cpu,
        t,
        what,
    })
}

fn parse_event<'a>(event: &str, args: &'a str) -> What<'a> {
    let num = |k: &str| kv(args, k).and_then(|v| v.parse::<u32>().ok());
    let parsed = match event {
        "sched:sched_switch" => {
            kv(args, "prev_state").map(|prev_state| What::Switch { prev_state })
        }
        "sched:sched_wakeup" => num("pid").map(|pid| What::Wakeup { pid }),
        "sched:sched_process_fork" => num("child_pid").map(|child| {
            // child_comm may contain spaces: it runs up to ` child_pid=`.
            let child_comm = args
                .split_once("child_comm=")
                .and_then(|(_, r)| r.rsplit_once(" child_pid="))
                .map_or("", |(c, _)| c);
            What::Fork { child, child_comm }
        }),
        "sched:sched_process_exit" => Some(What::Exit {
            group_dead: kv(args, "group_dead") == Some("true"),
        }),
        "syscalls:sys_enter_futex" => {
            match (
                sys_arg(args, "uaddr").and_then(parse_hex),
                sys_arg(args, "op").and_then(parse_hex),
            ) {
                (Some(uaddr), Some(op)) => Some(What::FutexEnter {
                    uaddr,
                    op,
                    val: sys_arg(args, "val").and_then(parse_hex),
                }),
                _ => None,
            }
        }
        // The return value is printed as an unsigned 64-bit hex number.
        "syscalls:sys_exit_futex" => {
            parse_hex(args.trim()).map(|r| What::FutexExit { ret: r as i64 })
        }
        "syscalls:sys_enter_nanosleep" | "syscalls:sys_enter_clock_nanosleep" => {
            Some(What::SleepEnter)
        }
        "syscalls:sys_exit_nanosleep" | "syscalls:sys_exit_clock_nanosleep" => {
            Some(What::SleepExit)
        }
        _ => None,
    };
    parsed.unwrap_or(What::Other)
}

/// futex ops (`op & 0x7f`, private and clock flags removed) that wait.
fn futex_waits(op: u64) -> bool {
    // WAIT, LOCK_PI, WAIT_BITSET, WAIT_REQUEUE_PI, LOCK_PI2
    matches!(op & 0x7f, 0 | 6 | 9 | 11 | 13)
}

/// futex ops that wake waiters: WAKE, REQUEUE, CMP_REQUEUE, WAKE_OP,
/// UNLOCK_PI, WAKE_BITSET, CMP_REQUEUE_PI (requeues wake `nr_wake` too).
fn futex_wakes(op: u64) -> bool {
    matches!(op & 0x7f, 1 | 3 | 4 | 5 | 7 | 10 | 12)
}

/// How many waiters a waking futex op asks to wake: its `val`, except
/// UNLOCK_PI and CMP_REQUEUE_PI, which wake one.
fn futex_nr_wake(op: u64, val: Option<u64>) -> Option<u32> {
    match op & 0x7f {
        7 | 12 => Some(1),
        _ => val.map(|v| v.min(u64::from(u32::MAX)) as u32),
    }
}

#[derive(Debug, Default)]
struct FutexWait {
    addr: String,
    /// Index of the last Block (and its Wake) inside this syscall.
    block: Option<usize>,
    wake: Option<usize>,
}

#[derive(Debug)]
struct ThreadState {
    /// Index of the thread's `Thread` event.
    thread_ev: usize,
    comm: String,
    /// Open run: (cpu, start).
    run: Option<(u32, u64)>,
    futex: Option<FutexWait>,
    in_sleep: bool,
    /// A Block not yet followed by a Wake: (event index, kind).
    blocked: Option<(usize, BlockKind)>,
    exited: bool,
}

#[derive(Debug, Default)]
pub(super) struct ScriptParser {
    base: Option<u64>,
    last: u64,
    threads: HashMap<u32, ThreadState>,
    events: Vec<Event>,
    lost: u64,
    /// Exits of threads whose process lives on, not yet matched to the
    /// wake-up they cause: (tid, time). See `exit_waker`.
    unclaimed_exits: Vec<(u32, u64)>,
}

#[derive(Debug)]
pub(super) struct Parsed {
    pub(super) events: Vec<Event>,
    /// Time of the last event, ns since the first.
    pub(super) end: u64,
    pub(super) lost: u64,
}

impl ScriptParser {
    pub(super) fn line(&mut self, text: &str) {
        if let Some(l) = parse_line(text) {
            self.event(l);
        }
    }

    fn add_thread(&mut self, tid: u32, parent: Option<u32>, comm: &str, t: u64) {
        self.events.push(Event::Thread {
            tid,
            parent,
            comm: comm.to_string(),
            t,
        });
        self.threads.insert(
            tid,
            ThreadState {
                thread_ev: self.events.len() - 1,
                comm: comm.to_string(),
                run: None,
                futex: None,
                in_sleep: false,
                blocked: None,
                exited: false,
            },
        );
    }

    fn close_run(&mut self, tid: u32, t: u64) {
        let Some(th) = self.threads.get_mut(&tid) else {
            return;
        };
        if let Some((cpu, start)) = th.run.take() {
            // Zero-length runs carry nothing.
            if t > start {
                self.events.push(Event::Run {
                    tid,
                    cpu,
                    start,
                    end: t,
                });
            }
        }
    }

    /// `tid` is running on `cpu` at `t`: opens a run, and if it was blocked
    /// with no wake-up seen (an interrupt or timer woke it), wakes it now.
    fn running(&mut self, tid: u32, cpu: u32, t: u64) {
        let th = self.threads.get_mut(&tid).expect("known thread");
        if th.exited {
            return;
        }
        if th.run.is_none() {
            th.run = Some((cpu, t));
        }
        if let Some((block_ev, kind)) = th.blocked.take() {
            let waker = if kind == BlockKind::Futex {
                let since = self.events[block_ev].time();
                self.exit_waker(since, t)
            } else {
                None
            };
            let th = self.threads.get_mut(&tid).expect("known thread");
            self.events.push(Event::Wake { tid, t, waker });
            if let Some(f) = th.futex.as_mut() {
                f.wake = Some(self.events.len() - 1);
            }
        }
    }

    /// A thread's exit wakes the thread joining it (the kernel's
    /// CLONE_CHILD_CLEARTID futex wake, which pthread_join waits for), but
    /// perf records no sched_wakeup for it. So a futex sleeper woken with no
    /// recorded wake-up is taken to be woken by the earliest exit, not yet
    /// matched, that happened while it slept (a join wakes one waiter).
    fn exit_waker(&mut self, blocked_since: u64, woken: u64) -> Option<u32> {
        let i = self
            .unclaimed_exits
            .iter()
            .position(|&(_, t)| t >= blocked_since && t <= woken)?;
        Some(self.unclaimed_exits.remove(i).0)
    }

    /// A process's end wakes its parent (wait4, pipe EOF) after perf has
    /// stopped tracing the exiting thread, so the wake-up is never seen.
    /// The parent is the first live ancestor (the process's other threads
    /// are all gone); if it waits on IO now, the exit is what it waits for.
    fn wake_waiting_parent(&mut self, tid: u32, t: u64) {
        let mut cur = tid;
        let parent = loop {
            let Some(th) = self.threads.get(&cur) else {
                return;
            };
            let Event::Thread {
                parent: Some(p), ..
            } = self.events[th.thread_ev]
            else {
                return;
            };
            match self.threads.get(&p) {
                Some(pt) if pt.exited => cur = p,
                Some(_) => break p,
                None => return,
            }
        };
        let pt = self.threads.get_mut(&parent).expect("found above");
        if matches!(pt.blocked, Some((_, BlockKind::Io))) {
            pt.blocked = None;
            self.events.push(Event::Wake {
                tid: parent,
                t,
                waker: Some(tid),
            });
        }
    }

    fn event(&mut self, l: Line<'_>) {
        let base = *self.base.get_or_insert(l.t);
        let t = l.t.saturating_sub(base);
        self.last = self.last.max(t);
        let tid = l.tid;
        // The thread in whose context the event fired belongs to the tree:
        // per-task perf events only fire there. A wake-up may be delivered
        // to the woken task's events from another context, so it proves
        // nothing about its context.
        if !self.threads.contains_key(&tid) && tid != 0 {
            match l.what {
                What::Wakeup { .. } | What::Lost(_) | What::Other => {}
                _ => self.add_thread(tid, None, l.comm, t),
            }
        }
        let traced = self.threads.contains_key(&tid);
        if traced {
            let th = self.threads.get_mut(&tid).expect("traced");
            if th.comm != l.comm {
                th.comm = l.comm.to_string();
            }
            if !matches!(l.what, What::SwitchOut) {
                self.running(tid, l.cpu, t);
            }
        }
        match l.what {
            What::Switch { prev_state } if traced => {
                self.close_run(tid, t);
                if prev_state.starts_with('S') || prev_state.starts_with('D') {
                    let th = self.threads.get_mut(&tid).expect("traced");
                    let (kind, addr) = match (&th.futex, th.in_sleep) {
                        (Some(f), _) => (BlockKind::Futex, Some(f.addr.clone())),
                        (None, true) => (BlockKind::Sleep, None),
                        (None, false) => (BlockKind::Io, None),
                    };
                    let idx = self.events.len();
                    th.blocked = Some((idx, kind));
                    if let Some(f) = th.futex.as_mut() {
                        f.block = Some(idx);
                        f.wake = None;
                    }
                    self.events.push(Event::Block { tid, t, kind, addr });
                }
            }
            What::SwitchOut if traced => self.close_run(tid, t),
            What::Wakeup { pid } => {
                let Some(th) = self.threads.get_mut(&pid) else {
                    return;
                };
                // Woken before it got off the CPU: nothing to wait for.
                let Some((_, kind)) = th.blocked.take() else {
                    return;
                };
                // A timer expiry fires in whatever task the interrupt hit.
                let waker = (traced && tid != pid && kind != BlockKind::Sleep).then_some(tid);
                self.events.push(Event::Wake { tid: pid, t, waker });
                if let Some(f) = th.futex.as_mut() {
                    f.wake = Some(self.events.len() - 1);
                }
            }
            What::Fork { child, child_comm } if traced => {
                if let Some(th) = self.threads.get(&child) {
                    if let Event::Thread { parent, .. } = &mut self.events[th.thread_ev] {
                        *parent = Some(tid);
                    }
                } else {
                    let comm = if child_comm.is_empty() {
                        l.comm
                    } else {
                        child_comm
                    };
                    self.add_thread(child, Some(tid), comm, t);
                }
            }
            What::Exit { group_dead } if traced => {
                self.close_run(tid, t);
                let th = self.threads.get_mut(&tid).expect("traced");
                th.exited = true;
                th.blocked = None;
                self.events.push(Event::Exit { tid, t });
                if group_dead {
                    self.wake_waiting_parent(tid, t);
                } else {
                    self.unclaimed_exits.push((tid, t));
                }
            }
            What::FutexEnter { uaddr, op, val } if traced => {
                let addr = format!("{uaddr:#x}");
                if futex_waits(op) {
                    let th = self.threads.get_mut(&tid).expect("traced");
                    th.futex = Some(FutexWait {
                        addr,
                        ..FutexWait::default()
                    });
                } else if futex_wakes(op) {
                    let nr_wake = futex_nr_wake(op, val);
                    self.events.push(Event::FutexWake {
                        tid,
                        t,
                        addr,
                        nr_wake,
                    });
                }
            }
            What::FutexExit { ret } if traced => {
                let th = self.threads.get_mut(&tid).expect("traced");
                let Some(f) = th.futex.take() else {
                    return;
                };
                // A timed wait that timed out was a sleep, whoever was on
                // the CPU when its timer fired.
                if ret == -ETIMEDOUT {
                    if let Some(Event::Block { kind, .. }) = f.block.map(|i| &mut self.events[i]) {
                        *kind = BlockKind::Sleep;
                    }
                    if let Some(Event::Wake { waker, .. }) = f.wake.map(|i| &mut self.events[i]) {
                        *waker = None;
                    }
                }
            }
            What::SleepEnter if traced => {
                self.threads.get_mut(&tid).expect("traced").in_sleep = true;
            }
            What::SleepExit if traced => {
                self.threads.get_mut(&tid).expect("traced").in_sleep = false;
            }
            What::Lost(n) => self.lost += n,
            _ => {}
        }
    }

    pub(super) fn finish(mut self) -> Parsed {
        let end = self.last;
        let open: Vec<u32> = self
            .threads
            .iter()
            .filter(|(_, th)| th.run.is_some())
            .map(|(&tid, _)| tid)
            .collect();
        // Exited threads' runs were closed at their exit.
        for tid in open {
            self.close_run(tid, end);
        }
        // The last name is the informative one (after exec, or prctl).
        for th in self.threads.values() {
            if let Event::Thread { comm, .. } = &mut self.events[th.thread_ev] {
                comm.clone_from(&th.comm);
            }
        }
        // Runs were pushed at their end, but same-time events from several
        // CPUs and patched indices need a final stable order.
        self.events.sort_by_key(Event::time);
        // Time 0 is the root's first event, not some untraced context's.
        let origin = match self.events.first() {
            Some(Event::Thread { t, .. }) => *t,
            _ => 0,
        };
        for e in &mut self.events {
            match e {
                Event::Run { start, end, .. } => {
                    *start -= origin;
                    *end -= origin;
                }
                Event::Thread { t, .. }
                | Event::Block { t, .. }
                | Event::Wake { t, .. }
                | Event::FutexWake { t, .. }
                | Event::Exit { t, .. } => *t -= origin,
            }
        }
        Parsed {
            events: self.events,
            end: end - origin,
            lost: self.lost,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Vec<Event> {
        let mut p = ScriptParser::default();
        for l in text.lines() {
            p.line(l);
        }
        p.finish().events
    }

    #[test]
    fn a_waking_futex_op_asks_for_its_val_waiters_but_pi_ops_for_one() {
        // FUTEX_WAKE_PRIVATE with INT_MAX (a broadcast), with 1 (a hand-off).
        assert_eq!(futex_nr_wake(0x81, Some(0x7fff_ffff)), Some(0x7fff_ffff));
        assert_eq!(futex_nr_wake(0x1, Some(1)), Some(1));
        // UNLOCK_PI and CMP_REQUEUE_PI wake one whatever val says.
        assert_eq!(futex_nr_wake(0x87, Some(0)), Some(1));
        assert_eq!(futex_nr_wake(0xc, Some(5)), Some(1));
        // A val wider than 32 bits saturates; none recorded, none known.
        assert_eq!(futex_nr_wake(0x1, Some(u64::MAX)), Some(u32::MAX));
        assert_eq!(futex_nr_wake(0x1, None), None);
    }

    #[test]
    fn line_fields() {
        let l = parse_line("  Web Content 28853 [001]  4938.660925750:           syscalls:sys_enter_futex: uaddr: 0x7f4fae421a4c, op: 0x00000081, val: 0x7fffffff, utime: 0x00000000, uaddr2: 0x00000006, val3: 0x00000000").unwrap();
        assert_eq!(l.comm, "Web Content");
        assert_eq!((l.tid, l.cpu, l.t), (28853, 1, 4_938_660_925_750));
        assert_eq!(
            l.what,
            What::FutexEnter {
                uaddr: 0x7f4fae421a4c,
                op: 0x81,
                val: Some(0x7fffffff)
            }
        );
        let l = parse_line("              xz 28853 [001]  4938.665235600:                 sched:sched_switch: prev_comm=xz prev_pid=28853 prev_prio=120 prev_state=R+ ==> next_comm=xz next_pid=28855 next_prio=120").unwrap();
        assert_eq!(l.what, What::Switch { prev_state: "R+" });
        let l = parse_line("              xz 28855 [001]  4940.182502674:                 sched:sched_wakeup: comm=xz pid=28853 prio=120 target_cpu=001").unwrap();
        assert_eq!(l.what, What::Wakeup { pid: 28853 });
        let l = parse_line("              xz 28853 [001]  4938.661743865:           sched:sched_process_fork: comm=xz pid=28853 child_comm=x z child_pid=28855").unwrap();
        assert_eq!(
            l.what,
            What::Fork {
                child: 28855,
                child_comm: "x z"
            }
        );
        let l = parse_line("              xz 28853 [001]  4938.982044419:            syscalls:sys_exit_futex: 0xffffffffffffff92").unwrap();
        assert_eq!(l.what, What::FutexExit { ret: -110 });
        let l = parse_line(
            "              sh 29027 [000]  4970.080907434: PERF_RECORD_SWITCH IN         ",
        )
        .unwrap();
        assert_eq!(l.what, What::SwitchIn);
        let l =
            parse_line("              sh 29027 [000]  4970.0809: PERF_RECORD_SWITCH OUT preempt")
                .unwrap();
        assert_eq!((l.t, l.what), (4_970_080_900_000, What::SwitchOut));
        assert!(parse_line("'trace' not valid for hardware events. Ignoring.").is_none());
    }

    /// The real `sh -c 'sleep 0.05; true'` recording.
    const SLEEP: &str = "\
              sh 29027 [000]  4970.060612555:                 sched:sched_switch: prev_comm=sh prev_pid=29027 prev_prio=120 prev_state=D ==> next_comm=perf next_pid=29026 next_prio=120
              sh 29027 [000]  4970.060614361: PERF_RECORD_SWITCH OUT
              sh 29027 [000]  4970.080907434: PERF_RECORD_SWITCH IN
              sh 29027 [000]  4970.081296103:           sched:sched_process_fork: comm=sh pid=29027 child_comm=sh child_pid=29029
              sh 29027 [000]  4970.081302746:                 sched:sched_switch: prev_comm=sh prev_pid=29027 prev_prio=120 prev_state=D ==> next_comm=sh next_pid=29029 next_prio=120
              sh 29027 [000]  4970.081303602: PERF_RECORD_SWITCH OUT
              sh 29029 [000]  4970.081304895: PERF_RECORD_SWITCH IN
              sh 29029 [000]  4970.081390393:                 sched:sched_switch: prev_comm=sh prev_pid=29029 prev_prio=120 prev_state=D ==> next_comm=swapper/0 next_pid=0 next_prio=120
              sh 29029 [000]  4970.081391235: PERF_RECORD_SWITCH OUT
              sh 29029 [000]  4970.081466267: PERF_RECORD_SWITCH IN
              sh 29029 [000]  4970.081486047:                 sched:sched_wakeup: comm=sh pid=29027 prio=120 target_cpu=000
           sleep 29029 [000]  4970.081560697:                 sched:sched_switch: prev_comm=sleep prev_pid=29029 prev_prio=120 prev_state=D ==> next_comm=sh next_pid=29027 next_prio=120
           sleep 29029 [000]  4970.081561582: PERF_RECORD_SWITCH OUT
              sh 29027 [000]  4970.081563284: PERF_RECORD_SWITCH IN
              sh 29027 [000]  4970.081573076:                 sched:sched_switch: prev_comm=sh prev_pid=29027 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
              sh 29027 [000]  4970.081573719: PERF_RECORD_SWITCH OUT
           sleep 29029 [000]  4970.081631267: PERF_RECORD_SWITCH IN
           sleep 29029 [000]  4970.082610813: syscalls:sys_enter_clock_nanosleep: which_clock: 0x00000000, flags: 0x00000000, rqtp: 0x7ffd028550c0, rmtp: 0x7ffd02855100
           sleep 29029 [000]  4970.082622174:                 sched:sched_switch: prev_comm=sleep prev_pid=29029 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
           sleep 29029 [000]  4970.082623567: PERF_RECORD_SWITCH OUT
           sleep 29029 [000]  4970.132711788: PERF_RECORD_SWITCH IN
           sleep 29029 [000]  4970.132720000: syscalls:sys_exit_clock_nanosleep: 0x0
           sleep 29029 [000]  4970.132758121:           sched:sched_process_exit: comm=sleep pid=29029 prio=120 group_dead=true
              sh 29027 [000]  4970.132926311: PERF_RECORD_SWITCH IN
              sh 29027 [000]  4970.132969582:           sched:sched_process_exit: comm=sh pid=29027 prio=120 group_dead=true
";

    #[test]
    fn sleep_recording() {
        let ev = parse(SLEEP);
        let root = 29027;
        let child = 29029;
        assert_eq!(
            ev[0],
            Event::Thread {
                tid: root,
                parent: None,
                comm: "sh".into(),
                t: 0
            }
        );
        assert!(ev.contains(&Event::Thread {
            tid: child,
            parent: Some(root),
            comm: "sleep".into(),
            t: 20_683_548,
        }));
        // The sleep: a sleep block, woken (no event seen) at its switch-in.
        let sleep_t = 4_970_082_622_174 - 4_970_060_612_555;
        let wake_t = 4_970_132_711_788 - 4_970_060_612_555;
        assert!(ev.contains(&Event::Block {
            tid: child,
            t: sleep_t,
            kind: BlockKind::Sleep,
            addr: None
        }));
        assert!(ev.contains(&Event::Wake {
            tid: child,
            t: wake_t,
            waker: None
        }));
        // The child's exec wakes its parent (vfork): a traced waker.
        assert!(ev.contains(&Event::Wake {
            tid: root,
            t: 4_970_081_486_047 - 4_970_060_612_555,
            waker: Some(child)
        }));
        // The final run closes at the exit.
        assert!(ev.contains(&Event::Run {
            tid: child,
            cpu: 0,
            start: wake_t,
            end: 4_970_132_758_121 - 4_970_060_612_555
        }));
        assert_eq!(
            ev.iter()
                .filter(|e| matches!(e, Event::Exit { .. }))
                .count(),
            2
        );
        // sh's wait4 ends with the child's exit (its wake-up is not traced).
        assert!(ev.contains(&Event::Wake {
            tid: root,
            t: 4_970_132_758_121 - 4_970_060_612_555,
            waker: Some(child)
        }));
        assert!(ev.windows(2).all(|w| w[0].time() <= w[1].time()));
        let runs: u64 = ev
            .iter()
            .filter_map(|e| match e {
                Event::Run { start, end, .. } => Some(end - start),
                _ => None,
            })
            .sum();
        assert!(runs > 0);
    }

    #[test]
    fn futex_waits_and_timeouts() {
        // 2 waits on 0x10 in futex: one woken by 2 (a dependency), one that
        // times out while 2 happens to be on a CPU (not a dependency).
        let text = "\
 a 1 [0] 1.000000000: sched:sched_process_fork: comm=a pid=1 child_comm=a child_pid=2
 a 1 [0] 1.000001000: syscalls:sys_enter_futex: uaddr: 0x10, op: 0x00000080, val: 0x0, utime: 0x0, uaddr2: 0x0, val3: 0x0
 a 1 [0] 1.000002000: sched:sched_switch: prev_comm=a prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=a next_pid=2 next_prio=120
 a 1 [0] 1.000002000: PERF_RECORD_SWITCH OUT
 a 2 [0] 1.000003000: PERF_RECORD_SWITCH IN
 a 2 [0] 1.000004000: syscalls:sys_enter_futex: uaddr: 0x10, op: 0x00000081, val: 0x1, utime: 0x0, uaddr2: 0x0, val3: 0x0
 a 2 [0] 1.000005000: sched:sched_wakeup: comm=a pid=1 prio=120 target_cpu=001
 a 2 [0] 1.000006000: syscalls:sys_exit_futex: 0x1
 a 1 [1] 1.000007000: PERF_RECORD_SWITCH IN
 a 1 [1] 1.000008000: syscalls:sys_exit_futex: 0x0
 a 1 [1] 1.000009000: syscalls:sys_enter_futex: uaddr: 0x10, op: 0x00000089, val: 0x0, utime: 0x7ff, uaddr2: 0x0, val3: 0xffffffff
 a 1 [1] 1.000010000: sched:sched_switch: prev_comm=a prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
 a 2 [0] 1.000020000: sched:sched_wakeup: comm=a pid=1 prio=120 target_cpu=001
 a 1 [1] 1.000021000: PERF_RECORD_SWITCH IN
 a 1 [1] 1.000022000: syscalls:sys_exit_futex: 0xffffffffffffff92
 a 1 [1] 1.000023000: sched:sched_process_exit: comm=a pid=1 prio=120 group_dead=false
 a 2 [0] 1.000030000: PERF_RECORD_LOST lost 7
";
        let mut p = ScriptParser::default();
        for l in text.lines() {
            p.line(l);
        }
        let parsed = p.finish();
        let ev = parsed.events;
        assert_eq!(parsed.lost, 7);
        assert_eq!(parsed.end, 30_000);
        let blocks: Vec<_> = ev
            .iter()
            .filter(|e| matches!(e, Event::Block { .. }))
            .collect();
        assert_eq!(
            blocks,
            [
                &Event::Block {
                    tid: 1,
                    t: 2000,
                    kind: BlockKind::Futex,
                    addr: Some("0x10".into())
                },
                &Event::Block {
                    tid: 1,
                    t: 10_000,
                    kind: BlockKind::Sleep,
                    addr: Some("0x10".into())
                }
            ]
        );
        let wakes: Vec<_> = ev
            .iter()
            .filter(|e| matches!(e, Event::Wake { .. }))
            .collect();
        assert_eq!(
            wakes,
            [
                &Event::Wake {
                    tid: 1,
                    t: 5000,
                    waker: Some(2)
                },
                &Event::Wake {
                    tid: 1,
                    t: 20_000,
                    waker: None
                }
            ]
        );
        // val 0x1: FUTEX_WAKE asked for one waiter.
        assert!(ev.contains(&Event::FutexWake {
            tid: 2,
            t: 4000,
            addr: "0x10".into(),
            nr_wake: Some(1)
        }));
        // 2 never switched out or exited: its run ends at the last event.
        assert!(ev.contains(&Event::Run {
            tid: 2,
            cpu: 0,
            start: 3000,
            end: 30_000
        }));
        // Parent of the root is unknown; 2 was forked by 1.
        assert!(ev.contains(&Event::Thread {
            tid: 2,
            parent: Some(1),
            comm: "a".into(),
            t: 0
        }));
    }

    #[test]
    fn wakeups_from_untraced_contexts_have_no_waker() {
        let text = "\
 a 1 [0] 1.000000000: sched:sched_switch: prev_comm=a prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
 swapper/0 0 [0] 1.000001000: sched:sched_wakeup: comm=a pid=1 prio=120 target_cpu=000
 kworker 9 [0] 1.000001500: sched:sched_wakeup: comm=a pid=1 prio=120 target_cpu=000
 a 1 [0] 1.000002000: PERF_RECORD_SWITCH IN
";
        let ev = parse(text);
        let threads = ev
            .iter()
            .filter(|e| matches!(e, Event::Thread { .. }))
            .count();
        assert_eq!(threads, 1);
        assert!(ev.contains(&Event::Wake {
            tid: 1,
            t: 1000,
            waker: None
        }));
    }

    #[test]
    fn a_thread_exit_wakes_its_joiner() {
        // Main (1) creates 2 and 3, joins 2 (futex wait on 2's tid word);
        // 2 exits and main runs again with no sched_wakeup recorded; then
        // main joins 3 after 3 has already exited, and a later, unrelated
        // futex sleep ends by an untraced wake: it must not be charged to 3.
        let text = "\
 a 1 [0] 1.000000000: sched:sched_process_fork: comm=a pid=1 child_comm=a child_pid=2
 a 1 [0] 1.000000100: sched:sched_process_fork: comm=a pid=1 child_comm=a child_pid=3
 a 1 [0] 1.000001000: syscalls:sys_enter_futex: uaddr: 0x7f10, op: 0x00000080, val: 0x00000002, utime: 0x00000000, uaddr2: 0x00000000, val3: 0x00000000
 a 1 [0] 1.000002000: sched:sched_switch: prev_comm=a prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=a next_pid=2 next_prio=120
 a 2 [0] 1.000002000: PERF_RECORD_SWITCH IN
 a 2 [0] 1.000010000: sched:sched_process_exit: comm=a pid=2 prio=120 group_dead=false
 a 1 [0] 1.000011000: PERF_RECORD_SWITCH IN
 a 1 [0] 1.000011500: syscalls:sys_exit_futex: 0x0
 a 3 [1] 1.000012000: PERF_RECORD_SWITCH IN
 a 3 [1] 1.000013000: sched:sched_process_exit: comm=a pid=3 prio=120 group_dead=false
 a 1 [0] 1.000020000: syscalls:sys_enter_futex: uaddr: 0x7f20, op: 0x00000080, val: 0x00000002, utime: 0x00000000, uaddr2: 0x00000000, val3: 0x00000000
 a 1 [0] 1.000021000: sched:sched_switch: prev_comm=a prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
 a 1 [0] 1.000030000: PERF_RECORD_SWITCH IN
";
        let ev = parse(text);
        let wakes: Vec<&Event> = ev
            .iter()
            .filter(|e| matches!(e, Event::Wake { .. }))
            .collect();
        assert_eq!(
            wakes,
            [
                &Event::Wake {
                    tid: 1,
                    t: 11_000,
                    waker: Some(2)
                },
                // 3 exited before this sleep began: not its waker.
                &Event::Wake {
                    tid: 1,
                    t: 30_000,
                    waker: None
                },
            ]
        );
    }
}
