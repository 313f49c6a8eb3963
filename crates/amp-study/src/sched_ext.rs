//! Starting and stopping a sched_ext scheduler, watched through the
//! kernel's `/sys/kernel/sched_ext/state` ("enabled" while a BPF scheduler
//! runs, "disabled" when the default is back).

use std::fs::File;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::scheds::SchedSpec;

/// The sched_ext sysfs directory under a root ("/" on a machine; a fixture
/// directory in tests).
#[derive(Clone, Debug)]
pub struct SchedExt {
    dir: PathBuf,
}

const POLL: Duration = Duration::from_millis(100);

impl SchedExt {
    pub fn new(root: &Path) -> SchedExt {
        SchedExt {
            dir: root.join("sys/kernel/sched_ext"),
        }
    }

    /// The kernel's state: enabled, disabled, enabling, disabling.
    pub fn state(&self) -> Result<String> {
        let p = self.dir.join("state");
        let s = std::fs::read_to_string(&p).with_context(|| {
            format!(
                "reading {}: this kernel has no sched_ext (Linux 6.12 or later built with CONFIG_SCHED_CLASS_EXT=y)",
                p.display()
            )
        })?;
        Ok(s.trim().to_string())
    }

    /// The running BPF scheduler's name, if the kernel says.
    pub fn ops(&self) -> Option<String> {
        std::fs::read_to_string(self.dir.join("root/ops"))
            .ok()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
    }

    /// Fails unless sched_ext exists and no BPF scheduler is attached: the
    /// study must measure the kernel's default as it is, and must not stop a
    /// scheduler it did not start.
    pub fn check_idle(&self) -> Result<()> {
        let s = self.state()?;
        if s != "disabled" {
            let who = self.ops().map(|o| format!(" ({o})")).unwrap_or_default();
            bail!(
                "a sched_ext scheduler{who} is attached (state '{s}'); stop it first (e.g. `systemctl stop scx_colab` or `systemctl stop scx_loader`), then run the study again"
            );
        }
        Ok(())
    }

    fn wait_for(&self, want: &str, deadline: Instant, child: &mut Child) -> Result<bool> {
        loop {
            if self.state()? == want {
                return Ok(true);
            }
            if child.try_wait()?.is_some() || Instant::now() >= deadline {
                return Ok(false);
            }
            sleep(POLL);
        }
    }

    /// Starts `spec`'s program with its output in `log` and waits up to
    /// `attach` for the kernel to report it enabled. On failure the process
    /// is stopped and the error quotes its output's last lines.
    pub fn start(&self, spec: &SchedSpec, attach: Duration, log: &Path) -> Result<Running> {
        let Some(program) = &spec.program else {
            bail!("{}: the default scheduler is not started", spec.label);
        };
        let out = File::create(log).with_context(|| format!("creating {}", log.display()))?;
        let mut cmd = Command::new(program);
        cmd.args(&spec.args)
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out);
        // SAFETY: prctl is async-signal-safe; it only sets this child's
        // parent-death signal, so the scheduler stops if the study is killed.
        unsafe {
            cmd.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let t0 = Instant::now();
        let child = cmd
            .spawn()
            .with_context(|| format!("starting {}", spec.command()))?;
        let mut running = Running {
            child: Some(child),
            label: spec.label.clone(),
            log: log.to_path_buf(),
            attach_time: Duration::ZERO,
        };
        let child = running.child.as_mut().expect("just set");
        if self.wait_for("enabled", t0 + attach, child)? {
            running.attach_time = t0.elapsed();
            return Ok(running);
        }
        let why = match child.try_wait()? {
            Some(st) => format!("it exited ({st})"),
            None => format!("it did not attach within {} s", attach.as_secs()),
        };
        let state = self.state().unwrap_or_default();
        running.kill();
        bail!(
            "{} did not start: {why}; sched_ext state '{state}'. Its last output ({}):\n{}",
            spec.command(),
            log.display(),
            tail(log, 20)
        )
    }
}

/// The last `n` lines of a file (a scheduler's log), for an error message.
pub fn tail(p: &Path, n: usize) -> String {
    let mut s = String::new();
    if let Ok(mut f) = File::open(p) {
        let _ = f.read_to_string(&mut s);
    }
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// A scheduler the study started. Dropped without [`Running::stop`] (an
/// error, a panic), it is terminated, so nothing is left attached.
pub struct Running {
    child: Option<Child>,
    pub label: String,
    pub log: PathBuf,
    /// From start to the kernel's "enabled".
    pub attach_time: Duration,
}

impl Running {
    /// Still attached: its process runs and the kernel says enabled.
    pub fn attached(&mut self, sx: &SchedExt) -> Result<()> {
        if let Some(c) = self.child.as_mut() {
            if let Some(st) = c.try_wait()? {
                bail!("{} exited during the study ({st})", self.label);
            }
        }
        let s = sx.state()?;
        if s != "enabled" {
            bail!("{} is no longer attached (state '{s}')", self.label);
        }
        Ok(())
    }

    /// SIGTERM, then waits up to `timeout` for the kernel's "disabled" and
    /// the process's exit; an error if either fails or it exits non-zero.
    pub fn stop(mut self, sx: &SchedExt, timeout: Duration) -> Result<()> {
        let mut child = self.child.take().expect("stopped once");
        let deadline = Instant::now() + timeout;
        signal(&mut child, libc::SIGTERM);
        let disabled = sx.wait_for("disabled", deadline, &mut child)?;
        let status = loop {
            if let Some(st) = child.try_wait()? {
                break Some(st);
            }
            if Instant::now() >= deadline {
                break None;
            }
            sleep(POLL);
        };
        let Some(status) = status else {
            let _ = child.kill();
            let _ = child.wait();
            bail!(
                "{} did not exit within {} s of SIGTERM (killed)",
                self.label,
                timeout.as_secs()
            );
        };
        if !disabled && sx.state()? != "disabled" {
            bail!(
                "{} exited but sched_ext did not return to 'disabled' (state '{}')",
                self.label,
                sx.state()?
            );
        }
        if !status.success() {
            bail!(
                "{} exited with {status} on SIGTERM; its last output ({}):\n{}",
                self.label,
                self.log.display(),
                tail(&self.log, 20)
            );
        }
        Ok(())
    }

    fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            signal(&mut c, libc::SIGTERM);
            let end = Instant::now() + Duration::from_secs(5);
            while Instant::now() < end && matches!(c.try_wait(), Ok(None)) {
                sleep(POLL);
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Signals the child unless it has exited (once reaped, its pid could be
/// another process's).
fn signal(c: &mut Child, sig: libc::c_int) {
    if let Ok(None) = c.try_wait() {
        // SAFETY: kill(2) on our own child's pid, not yet reaped: only this
        // Child waits for it, and it just said the process runs.
        unsafe {
            libc::kill(c.id() as libc::pid_t, sig);
        }
    }
}
