//! The schedule as Chrome trace-event JSON (opens in ui.perfetto.dev and
//! chrome://tracing): one track per core with a slice per run of a thread,
//! and one track per thread with instant events for futex waits, wake-ups and
//! migrations.

use colab_core::{BlockKind, CoreId, Nanos, ThreadId, Topology};
use serde_json::{json, Value};
use std::io::Write;

/// One run of a thread on a core ([`Timeline::run_slices`]).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct RunSlice {
    pub core: usize,
    /// `core N (TYPE)`.
    pub core_name: String,
    pub thread: u32,
    /// `program/group#index (tN)`.
    pub thread_name: String,
    pub start_ns: Nanos,
    pub end_ns: Nanos,
}

#[derive(Clone, Debug)]
enum Ev {
    Slice {
        core: CoreId,
        thread: ThreadId,
        start: Nanos,
        end: Nanos,
    },
    Wait {
        at: Nanos,
        thread: ThreadId,
        kind: BlockKind,
    },
    Wake {
        at: Nanos,
        thread: ThreadId,
        waker: Option<ThreadId>,
        waited: Nanos,
    },
    Migrate {
        at: Nanos,
        thread: ThreadId,
        from: CoreId,
        to: CoreId,
    },
}

#[derive(Clone, Debug, Default)]
pub struct Timeline {
    core_names: Vec<String>,
    thread_names: Vec<String>,
    events: Vec<Ev>,
}

const CORES_PID: u32 = 1;
const THREADS_PID: u32 = 2;

fn us(ns: Nanos) -> f64 {
    ns as f64 / 1000.0
}

impl Timeline {
    pub(crate) fn new(topo: &Topology) -> Timeline {
        let core_names = topo
            .cores()
            .map(|c| format!("core {} ({})", c.0, topo.core_type(c).name))
            .collect();
        Timeline {
            core_names,
            thread_names: Vec::new(),
            events: Vec::new(),
        }
    }
    pub(crate) fn thread_name(&mut self, t: ThreadId, prog: &str, group: &str, index: u32) {
        if self.thread_names.len() <= t.idx() {
            self.thread_names.resize(t.idx() + 1, String::new());
        }
        self.thread_names[t.idx()] = format!("{prog}/{group}#{index} (t{})", t.0);
    }
    pub(crate) fn slice(&mut self, core: CoreId, thread: ThreadId, start: Nanos, end: Nanos) {
        self.events.push(Ev::Slice {
            core,
            thread,
            start,
            end,
        });
    }
    pub(crate) fn wait(&mut self, at: Nanos, thread: ThreadId, kind: BlockKind) {
        self.events.push(Ev::Wait { at, thread, kind });
    }
    pub(crate) fn wake(
        &mut self,
        at: Nanos,
        thread: ThreadId,
        waker: Option<ThreadId>,
        waited: Nanos,
    ) {
        self.events.push(Ev::Wake {
            at,
            thread,
            waker,
            waited,
        });
    }
    pub(crate) fn migrate(&mut self, at: Nanos, thread: ThreadId, from: CoreId, to: CoreId) {
        self.events.push(Ev::Migrate {
            at,
            thread,
            from,
            to,
        });
    }

    /// Every run of a thread on a core, in the order they ended (the rows
    /// of the Python package's timeline DataFrame).
    pub fn run_slices(&self) -> Vec<RunSlice> {
        self.events
            .iter()
            .filter_map(|e| match *e {
                Ev::Slice {
                    core,
                    thread,
                    start,
                    end,
                } => Some(RunSlice {
                    core: core.0 as usize,
                    core_name: self.core_names[core.idx()].clone(),
                    thread: thread.0,
                    thread_name: self.name(thread).to_string(),
                    start_ns: start,
                    end_ns: end,
                }),
                _ => None,
            })
            .collect()
    }

    /// Number of run slices recorded.
    pub fn slices(&self) -> usize {
        self.events
            .iter()
            .filter(|e| matches!(e, Ev::Slice { .. }))
            .count()
    }

    fn name(&self, t: ThreadId) -> &str {
        self.thread_names
            .get(t.idx())
            .map(|s| s.as_str())
            .unwrap_or("?")
    }

    /// Writes the trace as JSON.
    pub fn write_json(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let mut evs: Vec<Value> = Vec::with_capacity(self.events.len() + 64);
        evs.push(
            json!({"name": "process_name", "ph": "M", "pid": CORES_PID, "args": {"name": "cores"}}),
        );
        evs.push(json!({"name": "process_name", "ph": "M", "pid": THREADS_PID, "args": {"name": "threads (sync events)"}}));
        for (i, n) in self.core_names.iter().enumerate() {
            evs.push(json!({"name": "thread_name", "ph": "M", "pid": CORES_PID, "tid": i, "args": {"name": n}}));
            evs.push(json!({"name": "thread_sort_index", "ph": "M", "pid": CORES_PID, "tid": i, "args": {"sort_index": i}}));
        }
        for (i, n) in self.thread_names.iter().enumerate() {
            evs.push(json!({"name": "thread_name", "ph": "M", "pid": THREADS_PID, "tid": i, "args": {"name": n}}));
        }
        for e in &self.events {
            evs.push(match *e {
                Ev::Slice { core, thread, start, end } => json!({
                    "name": self.name(thread), "cat": "run", "ph": "X", "pid": CORES_PID, "tid": core.0,
                    "ts": us(start), "dur": us(end - start), "args": {"thread": thread.0}
                }),
                Ev::Wait { at, thread, kind } => json!({
                    "name": format!("wait {kind:?}"), "cat": "futex", "ph": "i", "s": "t", "pid": THREADS_PID,
                    "tid": thread.0, "ts": us(at)
                }),
                Ev::Wake { at, thread, waker, waited } => json!({
                    "name": match waker { Some(w) => format!("woken by t{}", w.0), None => "timer wake".into() },
                    "cat": "futex", "ph": "i", "s": "t", "pid": THREADS_PID, "tid": thread.0, "ts": us(at),
                    "args": {"waited_us": us(waited), "waker": waker.map(|w| w.0)}
                }),
                Ev::Migrate { at, thread, from, to } => json!({
                    "name": format!("migrate {} -> {}", from.0, to.0), "cat": "migration", "ph": "i", "s": "t",
                    "pid": THREADS_PID, "tid": thread.0, "ts": us(at)
                }),
            });
        }
        let doc = json!({"traceEvents": evs, "displayTimeUnit": "ns"});
        serde_json::to_writer(&mut *out, &doc)?;
        out.flush()
    }
}
