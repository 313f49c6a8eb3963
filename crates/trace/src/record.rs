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

use crate::format::{BlockKind, Event, Header, Trace, VERSION};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use crate::overhead::{self, Overhead, ProbeKind, ProbeResult};

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

/// Where recordings keep their last overhead probe by default:
/// $XDG_CACHE_HOME/colab or ~/.cache/colab (none without either variable).
pub fn default_probe_cache() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("colab").join("trace-overhead.json"))
}

/// How long a cached probe result stays valid (assumption: a day; the
/// overhead depends on the kernel, perf and the machine, all in the key).
pub const PROBE_CACHE_SECS: u64 = 24 * 3600;

/// A probe result kept between recordings.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct CachedProbe {
    /// boot id, kernel, perf version, CPU count, colab version.
    key: String,
    measured_unix_s: u64,
    overhead: Overhead,
}

/// Minutes since `at` (unix seconds).
pub fn age_min(at: u64) -> u64 {
    now_unix_s().saturating_sub(at) / 60
}

fn now_unix_s() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// What a cached probe result must match to be reused.
fn probe_key(tool: &str) -> String {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    format!(
        "boot {} | kernel {} | {} | {} cpus | colab-trace {}",
        read("/proc/sys/kernel/random/boot_id").trim(),
        read("/proc/sys/kernel/osrelease").trim(),
        tool,
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        env!("CARGO_PKG_VERSION")
    )
}

/// The cached overhead in `file` if it matches `key` and is recent enough.
fn cached_probe(file: &Path, key: &str, now: u64) -> Option<(Overhead, u64)> {
    let c: CachedProbe = serde_json::from_str(&std::fs::read_to_string(file).ok()?).ok()?;
    (c.key == key && now.saturating_sub(c.measured_unix_s) < PROBE_CACHE_SECS)
        .then_some((c.overhead, c.measured_unix_s))
}

/// Keeps a probe result; a cache that cannot be written only costs the
/// next recording a probe.
fn store_probe(file: &Path, key: &str, now: u64, overhead: Overhead) {
    let c = CachedProbe {
        key: key.to_string(),
        measured_unix_s: now,
        overhead,
    };
    if let Some(dir) = file.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let _ = write_atomically(file, &serde_json::to_string(&c).expect("serializes"));
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

// ---------------------------------------------------------------------------
// Parsing `perf script -F comm,tid,cpu,time,event,trace --ns` output.

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
struct ScriptParser {
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
struct Parsed {
    events: Vec<Event>,
    /// Time of the last event, ns since the first.
    end: u64,
    lost: u64,
}

impl ScriptParser {
    fn line(&mut self, text: &str) {
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

    fn finish(mut self) -> Parsed {
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
    #[test]
    fn a_kept_probe_is_reused_only_for_the_same_machine_state_and_a_day() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("sub").join("probe.json");
        let o = Overhead {
            switch: 500.0,
            syscall: 1400.0,
        };
        assert_eq!(cached_probe(&f, "k", 1000), None, "nothing kept yet");
        store_probe(&f, "k", 1000, o);
        assert_eq!(cached_probe(&f, "k", 1000), Some((o, 1000)));
        assert_eq!(
            cached_probe(&f, "k", 1000 + PROBE_CACHE_SECS - 1),
            Some((o, 1000))
        );
        assert_eq!(
            cached_probe(&f, "k", 1000 + PROBE_CACHE_SECS),
            None,
            "stale"
        );
        assert_eq!(cached_probe(&f, "other boot", 1000), None, "another key");
        std::fs::write(&f, "{not json").unwrap();
        assert_eq!(
            cached_probe(&f, "k", 1000),
            None,
            "a corrupt file is ignored"
        );
        let key = probe_key("perf version 6.1");
        assert!(
            key.contains("perf version 6.1") && key.contains("cpus"),
            "{key}"
        );
    }

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
