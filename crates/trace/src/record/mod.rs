//! Recording: runs a real program under `perf record` while the machine's own
//! scheduler runs it, then turns `perf script` output into a trace.
//!
//! perf follows the command's whole thread tree (per-task events inherited
//! by children). A per-task `sched_switch` only fires when a traced thread
//! is switched *out*, so `--switch-events` is added: its `PERF_RECORD_SWITCH
//! IN` records give the start of every run. Wake-ups by interrupts on idle
//! CPUs are not seen in per-task mode; a blocked thread that runs again with
//! no recorded wake-up gets a wake with `waker: null` at its switch-in.
//!
//! Nothing is written to tracefs: perf's events vanish when perf exits, so
//! the only state to clean up is the perf process and its data file.

use crate::format::{Event, Header, Trace, VERSION};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::overhead::{self, Overhead, ProbeKind, ProbeResult};

mod parse;
mod probe_cache;

use parse::{Parsed, ScriptParser};
pub use probe_cache::{age_min, default_probe_cache, PROBE_CACHE_SECS};
use probe_cache::{cached_probe, now_unix_s, probe_key, store_probe};

/// The tracepoints perf records.
pub const TRACEPOINTS: [&str; 10] = [
    "sched:sched_switch",
    "sched:sched_wakeup",
    "sched:sched_process_fork",
    "sched:sched_process_exit",
    "syscalls:sys_enter_futex",
    "syscalls:sys_exit_futex",
    "syscalls:sys_enter_nanosleep",
    "syscalls:sys_exit_nanosleep",
    "syscalls:sys_enter_clock_nanosleep",
    "syscalls:sys_exit_clock_nanosleep",
];

#[derive(Clone, Debug)]
pub struct RecordOptions {
    /// The perf executable.
    pub perf: PathBuf,
    /// Extra arguments for `perf record` (e.g. `-m 64M` against lost events).
    pub extra_perf_args: Vec<String>,
    /// Also copy perf's raw data file here (for debugging the parser).
    pub keep_perf_data: Option<PathBuf>,
    /// Directory for perf's temporary data file (default: the system one).
    pub temp_dir: Option<PathBuf>,
    /// Discard the program's standard output (validation runs).
    pub quiet: bool,
    /// The command that runs a probe loop (`colab trace-probe`): given, the
    /// tracing overhead is measured before recording and stored in the
    /// trace (see `overhead`). `None` records without it.
    pub overhead_probe: Option<Vec<String>>,
    /// A file that keeps the last probe's result: a later recording on the
    /// same boot, kernel, perf and CPU count, within `PROBE_CACHE_SECS`,
    /// reuses it instead of probing again (the probe takes ~10 s).
    pub probe_cache: Option<PathBuf>,
}

impl Default for RecordOptions {
    fn default() -> Self {
        RecordOptions {
            perf: PathBuf::from("perf"),
            extra_perf_args: Vec::new(),
            keep_perf_data: None,
            temp_dir: None,
            quiet: false,
            overhead_probe: None,
            probe_cache: None,
        }
    }
}

pub use crate::format::ProgramStatus;

#[derive(Clone, Debug, PartialEq)]
pub struct RecordSummary {
    /// The trace file written.
    pub out: PathBuf,
    /// How the program ended (a failure of the program is not an error).
    pub status: ProgramStatus,
    /// Threads in the trace (the root and everything it created).
    pub threads: usize,
    /// Events in the trace.
    pub events: usize,
    /// Time from the first to the last recorded event.
    pub duration: Duration,
    /// Wall time of the whole `perf record` run.
    pub wall: Duration,
    /// Events perf could not record (buffer overruns); 0 in a complete trace.
    pub lost_events: u64,
    /// The measured tracing overhead, when probed.
    pub overhead: Option<Overhead>,
    /// When the overhead came from the probe cache: when it was measured.
    pub probe_from: Option<u64>,
    /// What other processes used of the machine meanwhile (`busy()`: the
    /// recording is suspect).
    pub others: Option<crate::busy::Others>,
}

#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("no command to record")]
    EmptyCommand,
    #[error("colab trace needs root for kernel tracepoints; run it with sudo")]
    NotRoot,
    #[error(
        "perf is not available ({detail}); install linux-perf (Debian) or linux-tools (Ubuntu)"
    )]
    PerfMissing { detail: String },
    #[error("kernel tracepoints are unavailable: {detail}; the kernel needs CONFIG_FTRACE_SYSCALLS and tracefs (mount -t tracefs nodev /sys/kernel/tracing)")]
    TracepointsUnavailable { detail: String },
    #[error("command not found: {command}")]
    CommandNotFound { command: String },
    #[error("`{command}` could not be started: {detail}")]
    CommandFailedToStart { command: String, detail: String },
    #[error("`perf {step}` failed ({status}): {stderr}")]
    Perf {
        step: &'static str,
        status: String,
        stderr: String,
    },
    #[error("the tracing-overhead probe `{command}` failed: {detail}")]
    Probe { command: String, detail: String },
    #[error("recording interrupted by signal {signal}; perf was stopped and nothing was written")]
    Interrupted { signal: i32 },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> RecordError + '_ {
    move |source| RecordError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Records `command` (its whole thread tree) into the trace file `out`.
pub fn record(
    command: &[String],
    out: &Path,
    opts: &RecordOptions,
) -> Result<RecordSummary, RecordError> {
    if command.is_empty() {
        return Err(RecordError::EmptyCommand);
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(RecordError::NotRoot);
    }
    let tool = perf_version(&opts.perf)?;
    check_tracepoints()?;
    check_program(&command[0])?;
    let tmp_parent = opts.temp_dir.clone().unwrap_or_else(std::env::temp_dir);
    // Removed on drop, also on error and panic; a directory also catches
    // the `.old` backups perf may make.
    let tmp = tempfile::Builder::new()
        .prefix("colab-trace-")
        .tempdir_in(&tmp_parent)
        .map_err(io_err(&tmp_parent))?;
    let data = tmp.path().join("perf.data");
    let _signals = SignalGuard::install();
    let key = probe_key(&tool);
    let mut probe_from = None;
    let overhead = match &opts.overhead_probe {
        Some(probe) => {
            let cached = opts
                .probe_cache
                .as_deref()
                .and_then(|f| cached_probe(f, &key, now_unix_s()));
            match cached {
                Some((o, at)) => {
                    probe_from = Some(at);
                    Some(o)
                }
                None => {
                    let o = measure_overhead(probe, opts, &tmp.path().join("probe.data"))?;
                    if let Some(f) = &opts.probe_cache {
                        store_probe(f, &key, now_unix_s(), o);
                    }
                    Some(o)
                }
            }
        }
        None => None,
    };

    let mut args = perf_record_args(opts, &data);
    args.extend(command.iter().cloned());
    let before = crate::busy::snapshot();
    let started = Instant::now();
    let mut cmd = Command::new(&opts.perf);
    cmd.args(&args)
        .stdin(Stdio::inherit())
        .stdout(if opts.quiet {
            Stdio::null()
        } else {
            Stdio::inherit()
        })
        .stderr(Stdio::piped());
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            // If the recorder dies, perf stops (and ends the program) too.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGINT);
            Ok(())
        });
    }
    let child = cmd.spawn().map_err(|e| RecordError::PerfMissing {
        detail: format!("{}: {e}", opts.perf.display()),
    })?;
    let mut perf = PerfGuard(Some(child));
    let stderr = perf.child().stderr.take().expect("stderr is piped");
    // The program shares perf's stderr: pass it through, keep the tail.
    let perf_stderr = tee_stderr(stderr);
    let status = perf.wait_interruptible()?;
    let wall = started.elapsed();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let others = before
        .zip(crate::busy::snapshot())
        .map(|(b, a)| crate::busy::others(b, a, wall, cpus));
    let stderr = perf_stderr.text();

    if !data.exists() || std::fs::metadata(&data).map_or(0, |m| m.len()) == 0 {
        return Err(record_failure(command, status, stderr));
    }
    if let Some(keep) = &opts.keep_perf_data {
        std::fs::copy(&data, keep).map_err(io_err(keep))?;
    }
    let parsed = perf_script(&opts.perf, &data)?;
    if parsed.events.is_empty() && !status.success() {
        return Err(record_failure(command, status, stderr));
    }
    let status = match (status.code(), status.signal()) {
        (Some(c), _) => ProgramStatus::Exited(c),
        // perf re-raises the signal that killed the program on itself.
        (None, Some(s)) => ProgramStatus::Killed(s),
        (None, None) => ProgramStatus::Exited(-1),
    };
    let trace = Trace {
        header: Header {
            colab_trace: VERSION,
            command: command.to_vec(),
            host: hostname(),
            kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .map(|s| s.trim().to_string())
                .unwrap_or_default(),
            cpus,
            tool,
            recorded_unix_s: now_unix_s(),
            overhead_ns: overhead,
            status: Some(status),
            others,
        },
        events: parsed.events,
    };
    write_atomically(out, &trace.to_jsonl())?;
    Ok(RecordSummary {
        out: out.to_path_buf(),
        status,
        threads: trace
            .events
            .iter()
            .filter(|e| matches!(e, Event::Thread { .. }))
            .count(),
        events: trace.events.len(),
        duration: Duration::from_nanos(parsed.end),
        wall,
        lost_events: parsed.lost,
        overhead,
        probe_from,
        others,
    })
}

/// `perf record` with our events into `data`, up to the `--` before the
/// command.
fn perf_record_args(opts: &RecordOptions, data: &Path) -> Vec<String> {
    let mut args: Vec<String> = vec![
        "record".into(),
        "-q".into(),
        "--switch-events".into(),
        "-e".into(),
        TRACEPOINTS.join(","),
        "-o".into(),
        data.display().to_string(),
    ];
    args.extend(opts.extra_perf_args.iter().cloned());
    args.push("--".into());
    args
}

/// Pairs of plain and traced probe runs per kind (median taken).
const PROBE_PAIRS: usize = 3;

/// Measures the tracing overhead per event with the probe loops, each run
/// plain and under the same `perf record` as the program will be. The
/// overhead is what replay must take out: the CPU time in the traced run's
/// recorded segments beyond the plain run's CPU time (getrusage), per event
/// (recorded runs for the yield loop, calls for the syscall loop). Part of
/// each context switch falls between two recorded runs; this counts that.
fn measure_overhead(
    probe: &[String],
    opts: &RecordOptions,
    data: &Path,
) -> Result<Overhead, RecordError> {
    let probe_err = |detail: String| RecordError::Probe {
        command: probe.join(" "),
        detail,
    };
    let (exe, probe_args) = probe
        .split_first()
        .ok_or_else(|| probe_err("empty command".into()))?;
    let run = |kind: ProbeKind, traced: bool| -> Result<ProbeResult, RecordError> {
        let mut cmd = if traced {
            let mut c = Command::new(&opts.perf);
            c.args(perf_record_args(opts, data)).arg(exe);
            c
        } else {
            Command::new(exe)
        };
        cmd.args(probe_args)
            .arg(kind.name())
            .arg(kind.iterations().to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut guard = PerfGuard(Some(cmd.spawn().map_err(|e| probe_err(e.to_string()))?));
        let mut stdout = guard.child().stdout.take().expect("stdout is piped");
        let mut stderr = guard.child().stderr.take().expect("stderr is piped");
        // A few lines each: both pipes are read after the exit.
        let status = guard.wait_interruptible()?;
        let mut out = String::new();
        let mut err = String::new();
        let _ = stdout.read_to_string(&mut out);
        let _ = stderr.read_to_string(&mut err);
        let plain = match ProbeResult::from_line(&out) {
            Some(r) if status.success() => r,
            _ => return Err(probe_err(format!("{status}: {}{}", out.trim(), err.trim()))),
        };
        if !traced {
            return Ok(plain);
        }
        // Traced: what replay would see, the CPU in recorded runs.
        let parsed = perf_script(&opts.perf, data)?;
        let (mut cpu_ns, mut runs) = (0, 0);
        for e in &parsed.events {
            if let Event::Run { start, end, .. } = e {
                cpu_ns += end - start;
                runs += 1;
            }
        }
        Ok(ProbeResult {
            cpu_ns,
            events: match kind {
                ProbeKind::Yield => runs,
                ProbeKind::Syscall => plain.events,
            },
        })
    };
    let measure = |kind: ProbeKind| -> Result<f64, RecordError> {
        let mut pairs = Vec::new();
        for _ in 0..PROBE_PAIRS {
            pairs.push((run(kind, false)?, run(kind, true)?));
        }
        Ok(overhead::per_event(&pairs))
    };
    Ok(Overhead {
        switch: measure(ProbeKind::Yield)?,
        syscall: measure(ProbeKind::Syscall)?,
    })
}

/// Classifies a `perf record` that produced nothing usable.
fn record_failure(command: &[String], status: ExitStatus, stderr: String) -> RecordError {
    if stderr.contains("unknown tracepoint") || stderr.contains("event syntax error") {
        RecordError::TracepointsUnavailable {
            detail: stderr.trim().to_string(),
        }
    } else if stderr.contains("workload") {
        RecordError::CommandFailedToStart {
            command: command.join(" "),
            detail: stderr.trim().to_string(),
        }
    } else {
        RecordError::Perf {
            step: "record",
            status: status.to_string(),
            stderr: stderr.trim().to_string(),
        }
    }
}

fn perf_version(perf: &Path) -> Result<String, RecordError> {
    let out =
        Command::new(perf)
            .arg("--version")
            .output()
            .map_err(|e| RecordError::PerfMissing {
                detail: format!("{}: {e}", perf.display()),
            })?;
    let text = String::from_utf8_lossy(&out.stdout);
    // Debian's wrapper fails when no perf matches the running kernel.
    if !out.status.success() || !text.starts_with("perf version") {
        return Err(RecordError::PerfMissing {
            detail: format!(
                "`{} --version`: {}{}",
                perf.display(),
                text.trim(),
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        });
    }
    Ok(format!(
        "perf {}",
        text.trim().trim_start_matches("perf version").trim()
    ))
}

/// Fails early, naming the event, when tracefs is there but lacks one.
fn check_tracepoints() -> Result<(), RecordError> {
    let roots = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];
    let Some(root) = roots
        .iter()
        .map(Path::new)
        .find(|r| r.join("events/sched").is_dir())
    else {
        // Not mounted: perf may mount tracefs itself; its error is mapped.
        return Ok(());
    };
    for tp in TRACEPOINTS {
        let (sys, name) = tp.split_once(':').expect("tracepoints are sys:name");
        if !root.join("events").join(sys).join(name).is_dir() {
            return Err(RecordError::TracepointsUnavailable {
                detail: format!("{} has no {tp}", root.join("events").display()),
            });
        }
    }
    Ok(())
}

/// Fails early if `name` cannot be executed (PATH search like execvp).
fn check_program(name: &str) -> Result<(), RecordError> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |m: &std::fs::Metadata| m.is_file() && m.permissions().mode() & 0o111 != 0;
    if name.contains('/') {
        return match std::fs::metadata(name) {
            Ok(m) if executable(&m) => Ok(()),
            Ok(_) => Err(RecordError::CommandFailedToStart {
                command: name.to_string(),
                detail: "not an executable file".into(),
            }),
            Err(_) => Err(RecordError::CommandNotFound {
                command: name.to_string(),
            }),
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    if std::env::split_paths(&path)
        .any(|d| std::fs::metadata(d.join(name)).is_ok_and(|m| executable(&m)))
    {
        Ok(())
    } else {
        Err(RecordError::CommandNotFound {
            command: name.to_string(),
        })
    }
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn write_atomically(out: &Path, text: &str) -> Result<(), RecordError> {
    write_atomic(out, text.as_bytes()).map_err(io_err(out))
}

/// Writes `bytes` to `out` through a temporary file beside it, so a failure
/// never leaves a half-written file.
pub(crate) fn write_atomic(out: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match out.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut f = tempfile::Builder::new()
        .prefix(".colab-trace-")
        .tempfile_in(dir)?;
    f.write_all(bytes)?;
    f.as_file().sync_all()?;
    f.persist(out).map_err(|e| e.error)?;
    Ok(())
}

/// The tail of a child's stderr, copied through to ours as it arrives.
struct StderrTail(Arc<Mutex<Vec<u8>>>);

const STDERR_TAIL: usize = 16 * 1024;

fn tee_stderr(mut from: impl Read + Send + 'static) -> StderrTail {
    let buf = Arc::new(Mutex::new(Vec::new()));
    let keep = Arc::clone(&buf);
    // Not joined: a daemon the program left behind may hold the pipe open.
    std::thread::spawn(move || {
        let mut chunk = [0u8; 4096];
        while let Ok(n) = from.read(&mut chunk) {
            if n == 0 {
                break;
            }
            let _ = std::io::stderr().write_all(&chunk[..n]);
            let mut b = keep.lock().unwrap_or_else(|p| p.into_inner());
            b.extend_from_slice(&chunk[..n]);
            if b.len() > STDERR_TAIL {
                let cut = b.len() - STDERR_TAIL;
                b.drain(..cut);
            }
        }
    });
    StderrTail(buf)
}

impl StderrTail {
    fn text(&self) -> String {
        // Give the copier a moment to drain what perf wrote before exiting.
        std::thread::sleep(Duration::from_millis(20));
        let b = self.0.lock().unwrap_or_else(|p| p.into_inner());
        String::from_utf8_lossy(&b).into_owned()
    }
}

/// The last SIGINT/SIGTERM received while a recording runs (0: none).
static INTERRUPTED: AtomicI32 = AtomicI32::new(0);
/// Recordings running, and the handlers they replaced.
static HANDLERS: Mutex<(usize, Vec<(libc::c_int, libc::sigaction)>)> = Mutex::new((0, Vec::new()));

extern "C" fn on_signal(sig: libc::c_int) {
    INTERRUPTED.store(sig, Ordering::SeqCst);
}

/// Catches SIGINT/SIGTERM while recording so perf is stopped and temp files
/// removed instead of the recorder dying; restores the old handlers.
struct SignalGuard;

impl SignalGuard {
    fn install() -> SignalGuard {
        let mut h = HANDLERS.lock().unwrap_or_else(|p| p.into_inner());
        if h.0 == 0 {
            INTERRUPTED.store(0, Ordering::SeqCst);
            for sig in [libc::SIGINT, libc::SIGTERM] {
                // SAFETY: a zeroed sigaction is valid; the handler only
                // stores to an atomic, which is async-signal-safe.
                unsafe {
                    let mut new: libc::sigaction = std::mem::zeroed();
                    new.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
                    new.sa_flags = libc::SA_RESTART;
                    libc::sigemptyset(&mut new.sa_mask);
                    let mut old: libc::sigaction = std::mem::zeroed();
                    if libc::sigaction(sig, &new, &mut old) == 0 {
                        h.1.push((sig, old));
                    }
                }
            }
        }
        h.0 += 1;
        SignalGuard
    }
}

impl Drop for SignalGuard {
    fn drop(&mut self) {
        let mut h = HANDLERS.lock().unwrap_or_else(|p| p.into_inner());
        h.0 -= 1;
        if h.0 == 0 {
            for (sig, old) in h.1.drain(..) {
                // SAFETY: restores a sigaction obtained from the kernel.
                unsafe {
                    libc::sigaction(sig, &old, std::ptr::null_mut());
                }
            }
        }
    }
}

fn interrupted() -> Option<i32> {
    match INTERRUPTED.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// A running perf that is stopped (SIGINT, then SIGKILL) if dropped early.
struct PerfGuard(Option<Child>);

impl PerfGuard {
    fn child(&mut self) -> &mut Child {
        self.0.as_mut().expect("perf not yet reaped")
    }

    fn wait_interruptible(&mut self) -> Result<ExitStatus, RecordError> {
        loop {
            if let Some(signal) = interrupted() {
                self.stop();
                return Err(RecordError::Interrupted { signal });
            }
            match self.child().try_wait() {
                Ok(Some(st)) => {
                    self.0 = None;
                    return Ok(st);
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(10)),
                Err(e) => {
                    return Err(RecordError::Io {
                        path: PathBuf::from("perf"),
                        source: e,
                    })
                }
            }
        }
    }

    /// perf ends the program (SIGTERM) when interrupted; if it does not exit
    /// in time, the program's processes and perf are killed.
    fn stop(&mut self) {
        let Some(mut child) = self.0.take() else {
            return;
        };
        let pid = child.id() as libc::pid_t;
        // SAFETY: the pid is our unreaped child, so it cannot be recycled.
        unsafe { libc::kill(pid, libc::SIGINT) };
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        for c in children_of(pid) {
            // SAFETY: plain kill; the workload is perf's child.
            unsafe { libc::kill(c, libc::SIGKILL) };
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

impl Drop for PerfGuard {
    fn drop(&mut self) {
        self.stop();
    }
}

fn children_of(pid: libc::pid_t) -> Vec<libc::pid_t> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|s| s.parse().ok())
        .collect()
}

/// Runs `perf script` on the data file and parses its output as it streams.
fn perf_script(perf: &Path, data: &Path) -> Result<Parsed, RecordError> {
    let mut child = Command::new(perf)
        .arg("script")
        .arg("-i")
        .arg(data)
        .args([
            "--ns",
            "--show-switch-events",
            "--show-lost-events",
            "-F",
            "comm,tid,cpu,time,event,trace",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| RecordError::PerfMissing {
            detail: format!("{}: {e}", perf.display()),
        })?;
    let mut err = child.stderr.take().expect("stderr is piped");
    // Drained in parallel so a chatty stderr cannot block perf.
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let mut parser = ScriptParser::default();
    let stdout = child.stdout.take().expect("stdout is piped");
    for line in BufReader::new(stdout).split(b'\n') {
        let line = line.map_err(io_err(data))?;
        parser.line(&String::from_utf8_lossy(&line));
    }
    let status = child.wait().map_err(io_err(data))?;
    let stderr = err_reader.join().unwrap_or_default();
    if !status.success() {
        return Err(RecordError::Perf {
            step: "script",
            status: status.to_string(),
            stderr: stderr.trim().to_string(),
        });
    }
    if let Some(signal) = interrupted() {
        return Err(RecordError::Interrupted { signal });
    }
    Ok(parser.finish())
}
