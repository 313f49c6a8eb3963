//! Consistency of a trace's events, checked line by line as it is parsed:
//! replay trusts what this accepts. Every rule names the line that breaks
//! it (and the earlier line it conflicts with).
//!
//! - A thread is declared once, by a `thread` line, before any other event
//!   of it; at most [`MAX_THREADS`] are declared.
//! - A thread is not its own parent, and a traced thread is declared before
//!   it is named as another's parent (so parents form no cycle).
//! - Nothing of a thread happens after its `exit`.
//! - A thread that blocks is woken before it runs again, and before the
//!   trace ends or it exits.

use crate::format::Event;
use std::collections::HashMap;

/// Most threads a trace may declare: the limit of a workload file's
/// program (`crates/workload`), so a replayed trace is never bigger.
pub const MAX_THREADS: usize = 4096;

#[derive(Default)]
struct ThreadLines {
    declared: usize,
    exited: Option<(usize, u64)>,
    blocked: Option<(usize, u64)>,
}

/// The rules' state over the events seen so far.
#[derive(Default)]
pub(crate) struct Checker {
    threads: HashMap<u32, ThreadLines>,
    /// Tids named as a parent before their own `thread` line: (child, line).
    parent_refs: HashMap<u32, (u32, usize)>,
}

impl Checker {
    /// Checks the event on `line`; the problem if it breaks a rule.
    pub(crate) fn event(&mut self, line: usize, ev: &Event) -> Result<(), String> {
        let tid = ev.tid();
        if let Event::Thread { parent, .. } = *ev {
            if let Some(th) = self.threads.get(&tid) {
                return Err(format!(
                    "thread {tid} declared again (first on line {})",
                    th.declared
                ));
            }
            if self.threads.len() >= MAX_THREADS {
                return Err(format!("more than {MAX_THREADS} threads"));
            }
            if parent == Some(tid) {
                return Err(format!("thread {tid} is its own parent"));
            }
            if let Some((child, at)) = self.parent_refs.get(&tid) {
                return Err(format!(
                    "thread {tid} is declared after line {at} named it the parent of thread {child} (a parent cycle, or a child before its parent)"
                ));
            }
            if let Some(p) = parent.filter(|p| !self.threads.contains_key(p)) {
                self.parent_refs.entry(p).or_insert((tid, line));
            }
            self.threads.insert(
                tid,
                ThreadLines {
                    declared: line,
                    ..ThreadLines::default()
                },
            );
            return Ok(());
        }
        let Some(th) = self.threads.get_mut(&tid) else {
            return Err(format!("event of thread {tid} before its `thread` line"));
        };
        let t = ev.time();
        if let Some((at, te)) = th.exited {
            if t > te || matches!(ev, Event::Exit { .. }) {
                return Err(format!(
                    "event of thread {tid} at {t} ns after its exit at {te} ns (line {at})"
                ));
            }
        }
        match *ev {
            Event::Block { .. } => th.blocked = Some((line, t)),
            Event::Wake { .. } => th.blocked = None,
            Event::Run { start, .. } => {
                if let Some((at, tb)) = th.blocked.filter(|&(_, tb)| start > tb) {
                    return Err(format!(
                        "thread {tid} runs from {start} ns, but it blocked at {tb} ns (line {at}) and was not woken"
                    ));
                }
            }
            Event::Exit { .. } => {
                if let Some((at, _)) = th.blocked {
                    return Err(format!(
                        "thread {tid} exits while blocked since line {at} (no wake)"
                    ));
                }
                th.exited = Some((line, t));
            }
            Event::FutexWake { .. } | Event::Thread { .. } => {}
        }
        Ok(())
    }

    /// At the end of the trace: a thread still blocked is never woken.
    pub(crate) fn finish(&self) -> Result<(), (usize, String)> {
        let mut open: Vec<(usize, u32)> = self
            .threads
            .iter()
            .filter_map(|(&tid, th)| th.blocked.map(|(at, _)| (at, tid)))
            .collect();
        open.sort_unstable();
        match open.first() {
            Some(&(at, tid)) => Err((at, format!("thread {tid} blocks here and is never woken"))),
            None => Ok(()),
        }
    }
}
