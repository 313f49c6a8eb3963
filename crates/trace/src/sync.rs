//! How a recorded program synchronises: its waits sorted by kind, so a
//! benchmark model's synchronisation can be checked against the real
//! program's (`colab trace-stats`). A trace does not name the primitive a
//! futex word belongs to, so each word is classified by how it is used:
//!
//! - **join**: the wait ended when the thread that woke it exited (a
//!   pthread_join; the recorder marks the exiting thread as the waker);
//! - **broadcast**: the word's waiters were at least once released together,
//!   two or more by one waker within [`BATCH_NS`] (barriers, condition
//!   broadcasts);
//! - **hand-off**: every other futex word (locks, signals, queues), whose
//!   waiters are released one at a time.
//!
//! Sleeps and I/O waits are counted apart. A heuristic: a mutex whose
//! waiters pile up and are let go in a burst (the mutex of a barrier built
//! from a mutex and a condition variable) counts as a broadcast too.

use crate::format::{BlockKind, Event, Trace};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};

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

/// One futex wait: its word, when it was woken and by whom.
struct Wait {
    addr: String,
    blocked: u64,
    woken: u64,
    waker: Option<u32>,
}

pub fn sync_stats(trace: &Trace) -> SyncStats {
    let mut s = SyncStats::default();
    let mut threads = BTreeSet::new();
    let mut exits: HashMap<u32, u64> = HashMap::new();
    let mut open: HashMap<u32, (u64, BlockKind, Option<String>)> = HashMap::new();
    let mut waits = Vec::new();
    let (mut first, mut last) = (u64::MAX, 0);
    for e in &trace.events {
        threads.insert(e.tid());
        let t = e.time();
        first = first.min(match e {
            Event::Run { start, .. } => *start,
            _ => t,
        });
        last = last.max(t);
        match e {
            Event::Run { start, end, .. } => s.cpu_ns += end - start,
            Event::Exit { tid, t } => {
                exits.insert(*tid, *t);
            }
            Event::Block { tid, t, kind, addr } => {
                open.insert(*tid, (*t, *kind, addr.clone()));
            }
            Event::Wake { tid, t, waker } => match open.remove(tid) {
                Some((blocked, BlockKind::Futex, Some(addr))) => waits.push(Wait {
                    addr,
                    blocked,
                    woken: *t,
                    waker: *waker,
                }),
                Some((_, BlockKind::Sleep, _)) => s.sleeps += 1,
                Some((_, BlockKind::Io, _)) => s.io_waits += 1,
                // A futex wait with no word: count it as a hand-off.
                Some((_, BlockKind::Futex, None)) => s.handoff_waits += 1,
                None => {}
            },
            Event::Thread { .. } | Event::FutexWake { .. } => {}
        }
    }
    s.threads = threads.len();
    s.duration_ns = last.saturating_sub(first.min(last));
    // Joins first; the rest grouped by word into releases.
    let mut by_word: BTreeMap<&str, Vec<(u64, Option<u32>)>> = BTreeMap::new();
    for w in &waits {
        let joined = w
            .waker
            .and_then(|k| exits.get(&k))
            .is_some_and(|&te| te >= w.blocked && te <= w.woken);
        if joined {
            s.join_waits += 1;
        } else {
            by_word.entry(&w.addr).or_default().push((w.woken, w.waker));
        }
    }
    s.words = by_word.len();
    for wakes in by_word.values_mut() {
        wakes.sort_unstable();
        // Releases: runs of wake-ups by one waker within BATCH_NS of the
        // run's first.
        let mut releases: Vec<(u64, Option<u32>, u64)> = Vec::new();
        for &(t, k) in wakes.iter() {
            match releases.last_mut() {
                Some((t0, k0, n)) if *k0 == k && k.is_some() && t - *t0 <= BATCH_NS => *n += 1,
                _ => releases.push((t, k, 1)),
            }
        }
        let n = wakes.len() as u64;
        if releases.iter().any(|r| r.2 >= 2) {
            s.broadcast_words += 1;
            s.broadcast_waits += n;
            s.broadcast_releases += releases.len() as u64;
        } else {
            s.handoff_waits += n;
        }
    }
    s
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
}
