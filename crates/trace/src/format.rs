//! The trace file format, version 1: JSON Lines.
//!
//! ```text
//! {"colab_trace":1,"command":["pigz","-p","4","big.bin"],"host":"...","kernel":"6.1.0","cpus":2,"tool":"perf","recorded_unix_s":1790000000}
//! {"ev":"thread","tid":101,"parent":100,"comm":"pigz","t":1200}
//! {"ev":"run","tid":101,"cpu":0,"start":1300,"end":51300}
//! {"ev":"block","tid":101,"t":51300,"kind":"futex","addr":"0x7f00aa10"}
//! {"ev":"wake","tid":101,"t":90000,"waker":100}
//! {"ev":"futex_wake","tid":100,"t":89990,"addr":"0x7f00aa10","nr_wake":1}
//! {"ev":"exit","tid":101,"t":120000}
//! ```
//!
//! The first line is the header (`colab_trace` is the format version).
//! An optional header field `"overhead_ns":{"switch":4100.0,"syscall":900.0}`
//! is perf's measured cost per context switch and per traced system call in
//! the recorded program's CPU time (see `overhead`). An optional
//! `"status":{"exited":0}` (or `{"killed":11}`) says how the program ended,
//! and `"others":{"cpu_ns":N,"share":F}` what CPU time other processes used
//! meanwhile (see `busy`).
//! Every later line is one event; times `t`, `start`, `end` are nanoseconds
//! since the start of the recording, and events appear in time order.
//! - `thread`: a thread of the traced tree appeared (`parent` created it;
//!   the root has `"parent":null`).
//! - `run`: the thread ran on `cpu` from `start` to `end` (sched_switch in
//!   and out).
//! - `block`: the thread went to sleep. `kind` is `futex` (it was in a
//!   futex wait, `addr` its futex word), `sleep` (timed sleep, nanosleep or a
//!   timed futex that timed out), or `io` (anything else: pipes, disk).
//! - `wake`: the thread was made runnable by `waker` (the thread running
//!   when sched_wakeup fired; `null` for interrupts and timers).
//! - `futex_wake`: the thread called FUTEX_WAKE on `addr`, asking to wake
//!   at most `nr_wake` waiters (2147483647, INT_MAX: every waiter, as a
//!   barrier's release or a condition broadcast asks; absent in traces
//!   recorded before 2026-11-29).
//! - `exit`: the thread exited.

use serde::{Deserialize, Serialize};

pub const VERSION: u32 = 1;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    pub colab_trace: u32,
    pub command: Vec<String>,
    #[serde(default)]
    pub host: String,
    #[serde(default)]
    pub kernel: String,
    pub cpus: u32,
    #[serde(default)]
    pub tool: String,
    #[serde(default)]
    pub recorded_unix_s: u64,
    /// Tracing overhead per event measured before recording (absent when
    /// not probed); replay subtracts it from the recorded CPU segments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overhead_ns: Option<crate::overhead::Overhead>,
    /// How the recorded program ended (absent in traces made before it was
    /// recorded); replaying a failed run replays the failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ProgramStatus>,
    /// CPU time other processes used during the recording (`busy()`: the
    /// machine was busy and the recorded times are stretched).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others: Option<crate::busy::Others>,
}

/// How the recorded program ended: `{"exited":3}` or `{"killed":11}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProgramStatus {
    Exited(i32),
    Killed(i32),
}

impl ProgramStatus {
    pub fn success(&self) -> bool {
        *self == ProgramStatus::Exited(0)
    }

    /// The exit code a shell would report for it: the code, or 128 plus
    /// the signal (a code outside 1-255 becomes 1).
    pub fn shell_code(&self) -> i32 {
        match *self {
            ProgramStatus::Exited(0) => 0,
            ProgramStatus::Exited(c) if (1..=255).contains(&c) => c,
            ProgramStatus::Exited(_) => 1,
            ProgramStatus::Killed(s) => 128 + s.clamp(1, 127),
        }
    }
}

impl std::fmt::Display for ProgramStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProgramStatus::Exited(c) => write!(f, "exit status {c}"),
            ProgramStatus::Killed(s) => write!(f, "killed by signal {s} ({})", signal_name(*s)),
        }
    }
}

fn signal_name(s: i32) -> &'static str {
    match s {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        _ => "signal",
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BlockKind {
    Futex,
    Sleep,
    Io,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "ev", rename_all = "snake_case", deny_unknown_fields)]
pub enum Event {
    Thread {
        tid: u32,
        parent: Option<u32>,
        comm: String,
        t: u64,
    },
    Run {
        tid: u32,
        cpu: u32,
        start: u64,
        end: u64,
    },
    Block {
        tid: u32,
        t: u64,
        kind: BlockKind,
        #[serde(default)]
        addr: Option<String>,
    },
    Wake {
        tid: u32,
        t: u64,
        waker: Option<u32>,
    },
    FutexWake {
        tid: u32,
        t: u64,
        addr: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        nr_wake: Option<u32>,
    },
    Exit {
        tid: u32,
        t: u64,
    },
}

impl Event {
    pub fn tid(&self) -> u32 {
        match self {
            Event::Thread { tid, .. }
            | Event::Run { tid, .. }
            | Event::Block { tid, .. }
            | Event::Wake { tid, .. }
            | Event::FutexWake { tid, .. }
            | Event::Exit { tid, .. } => *tid,
        }
    }
    /// The time the event happened (a run's end).
    pub fn time(&self) -> u64 {
        match self {
            Event::Run { end, .. } => *end,
            Event::Thread { t, .. }
            | Event::Block { t, .. }
            | Event::Wake { t, .. }
            | Event::FutexWake { t, .. }
            | Event::Exit { t, .. } => *t,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    pub header: Header,
    pub events: Vec<Event>,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum TraceError {
    #[error("{file}: empty file: not a colab trace")]
    Empty { file: String },
    #[error("{file}: line 1: not a colab trace header ({problem}); record one with `colab trace -- COMMAND`")]
    Foreign { file: String, problem: String },
    #[error("{file}: line 1: trace format version {found}, this colab reads version {VERSION}")]
    Version { file: String, found: u32 },
    #[error("{file}: line {line}: {problem}")]
    Line {
        file: String,
        line: usize,
        problem: String,
    },
    #[error("{file}: line {line}: the file ends in the middle of a line (truncated trace?)")]
    Truncated { file: String, line: usize },
}

impl Trace {
    /// Parses a trace and checks its events are consistent (`check`); every
    /// error names the file and line.
    pub fn parse(file: &str, text: &str) -> Result<Trace, TraceError> {
        if text.trim().is_empty() {
            return Err(TraceError::Empty { file: file.into() });
        }
        let mut lines = text.split('\n').enumerate().peekable();
        let (_, first) = lines.next().expect("non-empty text has a first line");
        let header: Header = serde_json::from_str(first).map_err(|e| TraceError::Foreign {
            file: file.into(),
            problem: e.to_string(),
        })?;
        if header.colab_trace != VERSION {
            return Err(TraceError::Version {
                file: file.into(),
                found: header.colab_trace,
            });
        }
        let truncated = !text.ends_with('\n');
        let mut events = Vec::new();
        let mut check = crate::check::Checker::default();
        let mut last_t = 0u64;
        while let Some((i, l)) = lines.next() {
            let line = i + 1;
            if l.trim().is_empty() {
                continue;
            }
            let is_last = lines
                .peek()
                .is_none_or(|(_, rest)| rest.is_empty() && truncated);
            let ev: Event = match serde_json::from_str(l) {
                Ok(e) => e,
                Err(_) if truncated && is_last => {
                    return Err(TraceError::Truncated {
                        file: file.into(),
                        line,
                    });
                }
                Err(e) => {
                    return Err(TraceError::Line {
                        file: file.into(),
                        line,
                        problem: e.to_string(),
                    })
                }
            };
            if let Event::Run { start, end, .. } = ev {
                if end < start {
                    return Err(TraceError::Line {
                        file: file.into(),
                        line,
                        problem: format!("run ends ({end}) before it starts ({start})"),
                    });
                }
            }
            let t = ev.time();
            if t < last_t {
                return Err(TraceError::Line {
                    file: file.into(),
                    line,
                    problem: format!("event at {t} ns comes after one at {last_t} ns: events must be in time order"),
                });
            }
            last_t = t;
            check.event(line, &ev).map_err(|problem| TraceError::Line {
                file: file.into(),
                line,
                problem,
            })?;
            events.push(ev);
        }
        check.finish().map_err(|(line, problem)| TraceError::Line {
            file: file.into(),
            line,
            problem,
        })?;
        Ok(Trace { header, events })
    }

    /// Writes the trace in the format above.
    pub fn to_jsonl(&self) -> String {
        let mut out = serde_json::to_string(&self.header).expect("header serializes");
        out.push('\n');
        for e in &self.events {
            out.push_str(&serde_json::to_string(e).expect("event serializes"));
            out.push('\n');
        }
        out
    }
}
