//! How a recorded program synchronises: its waits sorted by kind, so a
//! benchmark model's synchronisation can be checked against the real
//! program's (`colab trace-stats`). A trace does not name the primitive a
//! futex word belongs to, so each wait is classified by how it ended:
//!
//! - **join**: the wait ended when the thread that woke it exited (a
//!   pthread_join; the recorder marks the exiting thread as the waker);
//! - **broadcast**: a wait on a word most of whose waits were released
//!   together with others (barriers, broadcast conditions); every wait on
//!   such a word counts, also an episode in which only one thread waited;
//! - **hand-off**: a wait on any other word (locks, signalled conditions,
//!   queues, whose waiters mostly go one at a time).
//!
//! A release is one `futex_wake` call on the word: each wait is given to
//! the last call on its word between its block and its wake-up. The
//! recorder names the waker of a wake-up only for some of them (often just
//! the first a broadcast wakes), so the calls, not the wakers, tell which
//! waits were let go together. A wait with no such call (a call the
//! recorder missed) joins the previous release of its word when woken by
//! the same thread within [`BATCH_NS`] of it, else is a release of its own.
//! Sleeps and I/O waits are counted apart.

use crate::format::{BlockKind, Event, Trace};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

/// Wake-ups of one word by one waker this close together come from one
/// FUTEX_WAKE (assumption: 200 us, a few wake-up latencies of a loaded
/// machine; a barrier's releases land within tens of microseconds).
pub const BATCH_NS: u64 = 200_000;

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SyncStats {
    pub threads: usize,
    /// First to last event.
    pub duration_ns: u64,
    /// CPU time of all threads (recorded runs).
    pub cpu_ns: u64,
    pub broadcast_waits: u64,
    /// Distinct releases of broadcast words (about one per barrier episode
    /// per word).
    pub broadcast_releases: u64,
    pub handoff_waits: u64,
    pub join_waits: u64,
    pub sleeps: u64,
    pub io_waits: u64,
    /// Futex words waited on.
    pub words: usize,
    pub broadcast_words: usize,
}

impl SyncStats {
    /// Events per second of the recording's duration.
    pub fn per_s(&self, n: u64) -> f64 {
        if self.duration_ns == 0 {
            0.0
        } else {
            n as f64 * 1e9 / self.duration_ns as f64
        }
    }
}

/// What released a futex wait: a FUTEX_WAKE call on its word (by index),
/// or, with no call recorded, a run of wake-ups by one waker.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Release {
    Call(usize),
    Uncalled(usize),
}

/// How a futex wait on a known word was used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitClass {
    /// Ended by the exit of the thread that woke it (a pthread_join).
    Join,
    /// On a word most of whose waits were released together with others.
    Broadcast,
    /// On any other word.
    HandOff,
}

/// One futex wait on a known word, as [`futex_waits`] classifies it.
#[derive(Clone, Debug, PartialEq)]
pub struct FutexWait {
    /// Index in the trace's events of the `Wake` that ended it.
    pub wake_event: usize,
    pub tid: u32,
    /// The futex word.
    pub addr: String,
    pub blocked: u64,
    pub woken: u64,
    /// The waker the recorder names, if any.
    pub waker: Option<u32>,
    /// The FUTEX_WAKE call that released it: the last call on its word
    /// between its block and its wake-up, if there was one.
    pub call: Option<WakeCall>,
    pub class: WaitClass,
    /// The release it belongs to (unique in the trace; waits released
    /// together share it). Joins have none.
    pub release: Option<usize>,
}

/// A FUTEX_WAKE call on a futex word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct WakeCall {
    pub t: u64,
    /// The calling thread.
    pub by: u32,
    /// How many waiters it asked to wake (recorded since 2026-11-29).
    pub nr_wake: Option<u32>,
}

/// Waits that are not futex waits on a known word, counted.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct OtherWaits {
    sleeps: u64,
    io: u64,
    /// Futex waits the recorder saw no word for.
    futex_no_word: u64,
}

/// Every futex wait on a known word, in the order of the events that ended
/// them, with the call that released it and its class (see the module's
/// documentation for the rules).
pub fn futex_waits(trace: &Trace) -> Vec<FutexWait> {
    classify(trace).0
}

fn classify(trace: &Trace) -> (Vec<FutexWait>, OtherWaits) {
    let mut other = OtherWaits::default();
    let mut exits: HashMap<u32, u64> = HashMap::new();
    let mut open: HashMap<u32, (u64, BlockKind, Option<&str>)> = HashMap::new();
    let mut waits: Vec<FutexWait> = Vec::new();
    // Each word's FUTEX_WAKE calls, by time.
    let mut calls: HashMap<&str, Vec<WakeCall>> = HashMap::new();
    for (i, e) in trace.events.iter().enumerate() {
        match e {
            Event::Exit { tid, t } => {
                exits.insert(*tid, *t);
            }
            Event::Block { tid, t, kind, addr } => {
                open.insert(*tid, (*t, *kind, addr.as_deref()));
            }
            Event::Wake { tid, t, waker } => match open.remove(tid) {
                Some((blocked, BlockKind::Futex, Some(addr))) => waits.push(FutexWait {
                    wake_event: i,
                    tid: *tid,
                    addr: addr.to_string(),
                    blocked,
                    woken: *t,
                    waker: *waker,
                    call: None,
                    class: WaitClass::HandOff,
                    release: None,
                }),
                Some((_, BlockKind::Sleep, _)) => other.sleeps += 1,
                Some((_, BlockKind::Io, _)) => other.io += 1,
                Some((_, BlockKind::Futex, None)) => other.futex_no_word += 1,
                None => {}
            },
            Event::FutexWake {
                tid,
                t,
                addr,
                nr_wake,
            } => calls.entry(addr.as_str()).or_default().push(WakeCall {
                t: *t,
                by: *tid,
                nr_wake: *nr_wake,
            }),
            Event::Thread { .. } | Event::Run { .. } => {}
        }
    }
    for v in calls.values_mut() {
        v.sort_unstable();
    }
    let word_calls = |addr: &str| calls.get(addr).map_or(&[][..], |v| v.as_slice());
    // Per wait, the index of its call among its word's calls.
    let mut call_at: Vec<Option<usize>> = Vec::with_capacity(waits.len());
    // Joins first; the rest grouped by word into releases.
    let mut by_word: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (k, w) in waits.iter_mut().enumerate() {
        let wc = word_calls(&w.addr);
        let at = wc
            .partition_point(|c| c.t <= w.woken)
            .checked_sub(1)
            .filter(|&i| wc[i].t >= w.blocked);
        call_at.push(at);
        w.call = at.map(|i| wc[i]);
        let joined = w
            .waker
            .and_then(|k| exits.get(&k))
            .is_some_and(|&te| te >= w.blocked && te <= w.woken);
        if joined {
            w.class = WaitClass::Join;
        } else {
            by_word.entry(w.addr.clone()).or_default().push(k);
        }
    }
    let mut next_release = 0;
    for mut ks in by_word.into_values() {
        ks.sort_unstable_by_key(|&k| (waits[k].woken, waits[k].blocked, waits[k].waker));
        // Release key: the call's index, or (for waits with no call) the
        // wake-up that opened a run of wake-ups by one waker.
        let mut releases: HashMap<Release, (usize, u64)> = HashMap::new();
        let mut last_uncalled: Option<(u64, Option<u32>, usize)> = None;
        let mut uncalled_runs = 0;
        for &k in &ks {
            let w = &waits[k];
            let key = match call_at[k] {
                Some(i) => Release::Call(i),
                None => match last_uncalled {
                    Some((t0, k0, id))
                        if k0 == w.waker && w.waker.is_some() && w.woken - t0 <= BATCH_NS =>
                    {
                        Release::Uncalled(id)
                    }
                    _ => {
                        uncalled_runs += 1;
                        last_uncalled = Some((w.woken, w.waker, uncalled_runs));
                        Release::Uncalled(uncalled_runs)
                    }
                },
            };
            let r = releases.entry(key).or_insert_with(|| {
                next_release += 1;
                (next_release - 1, 0)
            });
            r.1 += 1;
            waits[k].release = Some(r.0);
        }
        // A word most of whose waits were let go together is a broadcast
        // word (a barrier, a broadcast condition), all its waits broadcast
        // waits; a word whose waits mostly went alone is a hand-off word
        // (a queue's condition with a final broadcast stays a hand-off).
        let together: u64 = releases.values().map(|r| r.1).filter(|&n| n >= 2).sum();
        let all: u64 = releases.values().map(|r| r.1).sum();
        if 2 * together > all {
            for &k in &ks {
                waits[k].class = WaitClass::Broadcast;
            }
        }
    }
    (waits, other)
}

pub fn sync_stats(trace: &Trace) -> SyncStats {
    let mut s = SyncStats::default();
    let mut threads = BTreeSet::new();
    let (mut first, mut last) = (u64::MAX, 0);
    for e in &trace.events {
        threads.insert(e.tid());
        let t = e.time();
        first = first.min(match e {
            Event::Run { start, .. } => *start,
            _ => t,
        });
        last = last.max(t);
        if let Event::Run { start, end, .. } = e {
            s.cpu_ns += end - start;
        }
    }
    s.threads = threads.len();
    s.duration_ns = last.saturating_sub(first.min(last));
    let (waits, other) = classify(trace);
    s.sleeps = other.sleeps;
    s.io_waits = other.io;
    // A futex wait with no word: count it as a hand-off.
    s.handoff_waits = other.futex_no_word;
    let mut words = BTreeSet::new();
    let mut broadcast_words = BTreeSet::new();
    let mut broadcast_releases = BTreeSet::new();
    for w in &waits {
        match w.class {
            WaitClass::Join => s.join_waits += 1,
            WaitClass::HandOff => {
                s.handoff_waits += 1;
                words.insert(w.addr.as_str());
            }
            WaitClass::Broadcast => {
                s.broadcast_waits += 1;
                words.insert(w.addr.as_str());
                broadcast_words.insert(w.addr.as_str());
                broadcast_releases.insert(w.release);
            }
        }
    }
    s.words = words.len();
    s.broadcast_words = broadcast_words.len();
    s.broadcast_releases = broadcast_releases.len() as u64;
    s
}

/// The table `colab trace-stats` prints: a header and one row per trace
/// (named by its file name), each count with its rate per second.
pub fn stats_table(rows: &[(&Path, SyncStats)]) -> String {
    let mut out = format!(
        "{:<28} {:>7} {:>8} {:>8} {:>15} {:>15} {:>15} {:>6} {:>6} {:>6}\n",
        "trace",
        "threads",
        "ms",
        "cpu ms",
        "broadcast (/s)",
        "releases (/s)",
        "hand-off (/s)",
        "joins",
        "sleeps",
        "io"
    );
    for (f, s) in rows {
        let short = f
            .file_name()
            .map_or(f.display().to_string(), |n| n.to_string_lossy().to_string());
        let rate = |n: u64| format!("{n} ({:.0})", s.per_s(n));
        out += &format!(
            "{:<28} {:>7} {:>8.1} {:>8.1} {:>15} {:>15} {:>15} {:>6} {:>6} {:>6}\n",
            short,
            s.threads,
            s.duration_ns as f64 / 1e6,
            s.cpu_ns as f64 / 1e6,
            rate(s.broadcast_waits),
            rate(s.broadcast_releases),
            rate(s.handoff_waits),
            s.join_waits,
            s.sleeps,
            s.io_waits
        );
    }
    out
}

/// One trace's statistics as a JSON object with its path under `trace`.
pub fn stats_json(path: &Path, s: &SyncStats) -> serde_json::Value {
    let mut v = serde_json::to_value(s).expect("statistics serialize");
    v["trace"] = serde_json::Value::String(path.display().to_string());
    v
}

/// Reads and parses every trace file (`.gz` too) and counts its waits; the
/// first file that cannot be read or parsed is the error.
pub fn read_stats(files: &[std::path::PathBuf]) -> anyhow::Result<Vec<(&Path, SyncStats)>> {
    use anyhow::Context;
    let mut all = Vec::new();
    for f in files {
        let name = f.display().to_string();
        let text = crate::library::read_trace_text(f)
            .with_context(|| format!("{name}: cannot read trace"))?;
        let t = crate::Trace::parse(&name, &text)?;
        all.push((f.as_path(), sync_stats(&t)));
    }
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::Header;

    fn header() -> Header {
        Header {
            colab_trace: 1,
            command: vec!["p".into()],
            host: String::new(),
            kernel: String::new(),
            cpus: 2,
            tool: String::new(),
            recorded_unix_s: 0,
            overhead_ns: None,
            status: None,
            others: None,
        }
    }

    fn th(tid: u32, t: u64) -> Event {
        Event::Thread {
            tid,
            parent: (tid != 1).then_some(1),
            comm: "p".into(),
            t,
        }
    }
    fn block(tid: u32, t: u64, kind: BlockKind, addr: &str) -> Event {
        Event::Block {
            tid,
            t,
            kind,
            addr: (!addr.is_empty()).then(|| addr.to_string()),
        }
    }
    fn wake(tid: u32, t: u64, waker: Option<u32>) -> Event {
        Event::Wake { tid, t, waker }
    }

    #[test]
    fn waits_are_sorted_by_how_their_words_are_used() {
        let us = 1_000;
        let mut events = vec![th(1, 0), th(2, 0), th(3, 0), th(4, 0)];
        // A barrier word B: 2 and 3 wait, 4 releases both 10 us apart.
        events.extend([
            block(2, 100 * us, BlockKind::Futex, "B"),
            block(3, 110 * us, BlockKind::Futex, "B"),
            wake(2, 200 * us, Some(4)),
            wake(3, 210 * us, Some(4)),
        ]);
        // A lock word L: 2 waits twice, released by 3 then by 4, 1 ms apart.
        events.extend([
            block(2, 300 * us, BlockKind::Futex, "L"),
            wake(2, 400 * us, Some(3)),
            block(2, 500 * us, BlockKind::Futex, "L"),
            wake(2, 1_500 * us, Some(4)),
        ]);
        // A sleep and an I/O wait.
        events.extend([
            block(3, 1_600 * us, BlockKind::Sleep, ""),
            wake(3, 1_700 * us, None),
            block(4, 1_600 * us, BlockKind::Io, ""),
            wake(4, 1_800 * us, None),
        ]);
        // 1 joins 2: 2 exits while 1 waits on 2's tid word.
        events.extend([
            block(1, 1_900 * us, BlockKind::Futex, "T2"),
            Event::Exit {
                tid: 2,
                t: 2_000 * us,
            },
            wake(1, 2_000 * us, Some(2)),
        ]);
        events.sort_by_key(|e| e.time());
        let t = Trace {
            header: header(),
            events,
        };
        let s = sync_stats(&t);
        assert_eq!(s.threads, 4);
        assert_eq!(
            (s.broadcast_waits, s.broadcast_releases, s.broadcast_words),
            (2, 1, 1)
        );
        assert_eq!(s.handoff_waits, 2);
        assert_eq!((s.join_waits, s.sleeps, s.io_waits), (1, 1, 1));
        assert_eq!(s.words, 2, "the join's word is not counted");
        assert_eq!(s.duration_ns, 2_000 * us);
        assert!((s.per_s(2) - 1000.0).abs() < 1e-9);
    }

    #[test]
    fn one_waiter_per_release_is_a_hand_off_even_when_frequent() {
        let us = 1_000;
        let mut events = vec![th(1, 0), th(2, 0)];
        for k in 0..5 {
            events.push(block(2, k * 300 * us, BlockKind::Futex, "Q"));
            events.push(wake(2, k * 300 * us + 100 * us, Some(1)));
        }
        let t = Trace {
            header: header(),
            events,
        };
        let s = sync_stats(&t);
        assert_eq!((s.handoff_waits, s.broadcast_waits), (5, 0));
    }

    fn fwake(tid: u32, t: u64, addr: &str) -> Event {
        Event::FutexWake {
            tid,
            t,
            addr: addr.to_string(),
            nr_wake: None,
        }
    }

    #[test]
    fn one_futex_wake_call_releases_its_waiters_together_whoever_is_named() {
        let us = 1_000;
        let mut events = vec![th(1, 0), th(2, 0), th(3, 0), th(4, 0)];
        // Three barrier episodes on B: 4 wakes 1-3 with one call; the
        // recorder names the waker of the first wake-up only.
        for k in 0..3u64 {
            let t0 = k * 1_000 * us;
            events.extend([
                block(1, t0, BlockKind::Futex, "B"),
                block(2, t0 + 10 * us, BlockKind::Futex, "B"),
                block(3, t0 + 20 * us, BlockKind::Futex, "B"),
                fwake(4, t0 + 100 * us, "B"),
                wake(1, t0 + 110 * us, Some(4)),
                wake(2, t0 + 120 * us, None),
                // Late: more than BATCH_NS after the call, same call still.
                wake(3, t0 + 400 * us, Some(1)),
            ]);
        }
        events.sort_by_key(|e| e.time());
        let s = sync_stats(&Trace {
            header: header(),
            events,
        });
        assert_eq!(
            (s.broadcast_waits, s.broadcast_releases, s.handoff_waits),
            (9, 3, 0)
        );
    }

    #[test]
    fn a_queue_word_with_one_final_broadcast_stays_a_hand_off_word() {
        let us = 1_000;
        let mut events = vec![th(1, 0), th(2, 0), th(3, 0)];
        // Q: five signals each wake one consumer ...
        for k in 0..5u64 {
            let t0 = k * 1_000 * us;
            events.extend([
                block(2, t0, BlockKind::Futex, "Q"),
                fwake(1, t0 + 100 * us, "Q"),
                wake(2, t0 + 110 * us, Some(1)),
            ]);
        }
        // ... then the producer's last broadcast wakes both consumers.
        events.extend([
            block(2, 6_000 * us, BlockKind::Futex, "Q"),
            block(3, 6_000 * us, BlockKind::Futex, "Q"),
            fwake(1, 6_100 * us, "Q"),
            wake(2, 6_110 * us, Some(1)),
            wake(3, 6_120 * us, None),
        ]);
        events.sort_by_key(|e| e.time());
        let s = sync_stats(&Trace {
            header: header(),
            events,
        });
        assert_eq!((s.handoff_waits, s.broadcast_waits), (7, 0));
    }
}
