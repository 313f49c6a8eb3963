//! Recording real programs with perf. Needs root, perf and kernel
//! tracepoints; without them every test says why it is skipped and passes.

use colab_trace::format::BlockKind;
use colab_trace::record::{record, ProgramStatus, RecordError, RecordOptions};
use colab_trace::{to_program, Event, ReplayOptions, Trace};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Recordings run one at a time: the checks for leftover perf processes
/// and signal handlers are process-wide.
static SERIAL: Mutex<()> = Mutex::new(());

fn tracing_root() -> Option<&'static Path> {
    ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"]
        .into_iter()
        .map(Path::new)
        .find(|r| r.join("events/sched/sched_switch").is_dir())
}

fn skip_reason() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("not root".into());
    }
    match std::process::Command::new("perf").arg("--version").output() {
        Ok(o) if o.status.success() => {}
        _ => return Some("perf is not installed (linux-perf)".into()),
    }
    if tracing_root().is_none() {
        return Some("no tracefs with sched tracepoints".into());
    }
    None
}

/// Takes the serial lock (held to the end of the test, which also covers
/// the `perf --version` probe) or returns after saying why it skips.
macro_rules! require_perf {
    () => {
        let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(reason) = skip_reason() {
            colab_trace::skip_test(&reason);
            return;
        }
    };
}

/// tracing_on and the sched_switch enable flag: recording must not touch them.
fn tracefs_state() -> (String, String) {
    let root = tracing_root().expect("checked");
    let read = |p: &str| std::fs::read_to_string(root.join(p)).unwrap_or_default();
    (read("tracing_on"), read("events/sched/sched_switch/enable"))
}

/// perf processes that are children of this test process.
fn perf_children() -> Vec<u32> {
    let me = std::process::id();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // pid (comm) state ppid ...
        let Some((head, tail)) = stat.rsplit_once(')') else {
            continue;
        };
        let comm = head.split_once('(').map_or("", |(_, c)| c);
        let ppid: u32 = tail
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        if ppid == me && comm.starts_with("perf") {
            found.push(pid);
        }
    }
    found
}

struct Setup {
    dir: tempfile::TempDir,
    opts: RecordOptions,
    before: (String, String),
}

impl Setup {
    fn new() -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let scratch = dir.path().join("scratch");
        std::fs::create_dir(&scratch).unwrap();
        Setup {
            opts: RecordOptions {
                temp_dir: Some(scratch),
                ..RecordOptions::default()
            },
            dir,
            before: tracefs_state(),
        }
    }

    fn out(&self) -> PathBuf {
        self.dir.path().join("t.jsonl")
    }

    /// No perf left running, no temp files, tracefs as it was.
    fn check_clean(&self) {
        assert_eq!(perf_children(), Vec::<u32>::new(), "perf left running");
        let left: Vec<_> = std::fs::read_dir(self.opts.temp_dir.as_ref().unwrap())
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        assert!(left.is_empty(), "temp files left: {left:?}");
        let stray: Vec<_> = std::fs::read_dir(self.dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".colab-trace-"))
            .collect();
        assert!(stray.is_empty(), "temp trace files left: {stray:?}");
        assert_eq!(tracefs_state(), self.before, "tracefs state changed");
    }
}

fn cmd(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

fn load(path: &Path) -> Trace {
    let text = std::fs::read_to_string(path).unwrap();
    Trace::parse(&path.display().to_string(), &text).unwrap()
}

fn threads(trace: &Trace) -> Vec<u32> {
    trace
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Thread { tid, .. } => Some(*tid),
            _ => None,
        })
        .collect()
}

#[test]
fn records_a_sleeping_shell() {
    require_perf!();
    let s = Setup::new();
    let sum = record(&cmd(&["sh", "-c", "sleep 0.05; true"]), &s.out(), &s.opts).unwrap();
    s.check_clean();
    assert_eq!(sum.status, ProgramStatus::Exited(0));
    let trace = load(&s.out());
    assert_eq!(trace.header.command, cmd(&["sh", "-c", "sleep 0.05; true"]));
    assert!(
        trace.header.tool.starts_with("perf "),
        "{}",
        trace.header.tool
    );
    assert!(trace.header.cpus >= 1);
    assert_eq!(sum.events, trace.events.len());
    assert_eq!(sum.threads, threads(&trace).len());
    assert!(
        matches!(trace.events[0], Event::Thread { parent: None, .. }),
        "first event is the root: {:?}",
        trace.events[0]
    );
    let ev = &trace.events;
    assert!(ev.iter().any(|e| matches!(e, Event::Run { .. })));
    assert!(ev.iter().any(|e| matches!(e, Event::Exit { .. })));
    // The 50 ms sleep: a sleep block, and its wake about 50 ms later.
    let (tid, t) = ev
        .iter()
        .find_map(|e| match e {
            Event::Block {
                tid,
                t,
                kind: BlockKind::Sleep,
                ..
            } => Some((*tid, *t)),
            _ => None,
        })
        .expect("a sleep block");
    let woken = ev
        .iter()
        .find_map(|e| match e {
            Event::Wake { tid: w, t: tw, .. } if *w == tid && *tw >= t => Some(*tw),
            _ => None,
        })
        .expect("the sleeper is woken");
    assert!(woken - t >= 40_000_000, "slept only {} ns", woken - t);
    // sh and the sleep it started.
    assert!(sum.threads >= 2, "{} threads", sum.threads);
}

/// About 6 MB of compressible text.
fn input_file(dir: &Path) -> PathBuf {
    let p = dir.join("input.txt");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&p).unwrap());
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    for i in 0..200_000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        writeln!(f, "line {i} value {} word{}", x % 100_000, x % 97).unwrap();
    }
    f.flush().unwrap();
    p
}

#[test]
fn records_multithreaded_xz_and_replays_it() {
    require_perf!();
    if std::process::Command::new("xz")
        .arg("--version")
        .output()
        .is_err()
    {
        colab_trace::skip_test("xz is not installed");
        return;
    }
    let s = Setup::new();
    let input = input_file(s.dir.path());
    let script = format!(
        "xz -1 -T2 --block-size=256KiB -k -c {} > /dev/null",
        input.display()
    );
    let sum = record(&cmd(&["sh", "-c", &script]), &s.out(), &s.opts).unwrap();
    s.check_clean();
    assert_eq!(sum.status, ProgramStatus::Exited(0));
    let trace = load(&s.out());
    let tids = threads(&trace);
    // sh, xz's main thread and at least one worker.
    assert!(tids.len() >= 3, "threads: {tids:?}");
    // Some futex wait ended by another traced thread: a dependency.
    let mut blocked = std::collections::HashMap::new();
    let mut futex_deps = 0;
    for e in &trace.events {
        match e {
            Event::Block { tid, kind, .. } => {
                blocked.insert(*tid, *kind);
            }
            Event::Wake { tid, waker, .. } => {
                let kind = blocked.remove(tid);
                if kind == Some(BlockKind::Futex) && waker.is_some_and(|w| tids.contains(&w)) {
                    futex_deps += 1;
                }
            }
            _ => {}
        }
    }
    assert!(futex_deps >= 1, "no futex wait woken by a traced thread");
    assert!(trace
        .events
        .iter()
        .any(|e| matches!(e, Event::FutexWake { .. })));
    let program = to_program(
        &trace,
        &ReplayOptions {
            name: "xz".into(),
            speedup: 2.0,
            thread_speedup: Default::default(),
            keep_tracing_overhead: false,
            sleep_unnamed_wakes: false,
        },
    )
    .unwrap();
    assert_eq!(program.total_threads as usize, tids.len());
    assert!(program.num_events >= 1);
}

#[test]
fn a_crashing_program_is_recorded_not_an_error() {
    require_perf!();
    let s = Setup::new();
    let sum = record(&cmd(&["sh", "-c", "kill -SEGV $$"]), &s.out(), &s.opts).unwrap();
    s.check_clean();
    assert_eq!(sum.status, ProgramStatus::Killed(libc::SIGSEGV));
    assert!(!sum.status.success());
    assert!(sum.status.to_string().contains("SIGSEGV"));
    let trace = load(&s.out());
    assert!(trace.events.iter().any(|e| matches!(e, Event::Exit { .. })));

    let sum = record(&cmd(&["sh", "-c", "exit 3"]), &s.out(), &s.opts).unwrap();
    s.check_clean();
    assert_eq!(sum.status, ProgramStatus::Exited(3));
}

#[test]
fn a_missing_command_is_a_clear_error() {
    require_perf!();
    let s = Setup::new();
    let err = record(&cmd(&["colab-no-such-command"]), &s.out(), &s.opts).unwrap_err();
    assert!(
        matches!(err, RecordError::CommandNotFound { .. }),
        "{err:?}"
    );
    assert_eq!(err.to_string(), "command not found: colab-no-such-command");
    assert!(!s.out().exists());
    s.check_clean();

    let script = s.dir.path().join("not-executable.sh");
    std::fs::write(&script, "true\n").unwrap();
    let err = record(&[script.display().to_string()], &s.out(), &s.opts).unwrap_err();
    assert!(
        matches!(err, RecordError::CommandFailedToStart { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("not an executable file"), "{err}");

    let err = record(&[], &s.out(), &s.opts).unwrap_err();
    assert!(matches!(err, RecordError::EmptyCommand), "{err:?}");
    s.check_clean();
}

#[test]
fn a_missing_perf_is_a_clear_error() {
    require_perf!();
    let s = Setup::new();
    let opts = RecordOptions {
        perf: "/nonexistent/perf".into(),
        ..s.opts.clone()
    };
    let err = record(&cmd(&["true"]), &s.out(), &opts).unwrap_err();
    assert!(matches!(err, RecordError::PerfMissing { .. }), "{err:?}");
    assert!(err.to_string().contains("install linux-perf"), "{err}");
    s.check_clean();
}

#[test]
fn sigterm_while_recording_stops_perf_and_cleans_up() {
    require_perf!();
    let s = Setup::new();
    let killer = std::thread::spawn(|| {
        std::thread::sleep(Duration::from_millis(500));
        // SAFETY: signals this process; record() handles SIGTERM meanwhile.
        unsafe { libc::kill(libc::getpid(), libc::SIGTERM) };
    });
    let start = Instant::now();
    let err = record(&cmd(&["sleep", "10"]), &s.out(), &s.opts).unwrap_err();
    killer.join().unwrap();
    assert!(
        matches!(
            err,
            RecordError::Interrupted {
                signal: libc::SIGTERM
            }
        ),
        "{err:?}"
    );
    assert!(start.elapsed() < Duration::from_secs(8), "perf not stopped");
    assert!(!s.out().exists());
    s.check_clean();
    // The default SIGTERM action is back.
    // SAFETY: queries the current action only.
    let handler = unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(libc::SIGTERM, std::ptr::null(), &mut old);
        old.sa_sigaction
    };
    assert_eq!(handler, libc::SIG_DFL);
}
