//! Helpers shared by the CLI test files that run the real binary.
//!
//! Each test file is a binary of its own and uses some of them, so the
//! others are dead code there.
#![allow(dead_code)]

use serde_json::Value;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs `colab ARGS` to the end, with no time limit.
pub fn colab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_colab"))
        .args(args)
        .output()
        .expect("start the colab binary")
}

/// (stdout, stderr) as text.
pub fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Runs `colab ARGS`, which must succeed without a panic; returns stdout.
pub fn succeeds(args: &[&str]) -> String {
    let o = colab(args);
    let (out, err) = text(&o);
    assert!(o.status.success(), "colab {args:?} failed\n{out}\n{err}");
    assert!(!err.contains("panicked"), "{err}");
    out
}

// ----- `colab` run with a time limit, and its output checked ---------------

/// Time limit for one run of the binary (a hang is a failure, not a stuck test).
pub const LIMIT: Duration = Duration::from_secs(30);
/// Time limit for one `reproduce --quick` (about 10 s in a debug build).
pub const REPRODUCE_LIMIT: Duration = Duration::from_secs(300);

/// What one run of the binary produced.
pub struct Run {
    pub args: Vec<String>,
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn describe(&self) -> String {
        format!(
            "colab {}\nexit code: {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.args.join(" "),
            self.code,
            self.stdout,
            self.stderr
        )
    }
}

/// Runs `colab ARGS`, killing it (and failing the test) after `limit`.
pub fn run_limited(args: &[&str], limit: Duration) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_colab"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the colab binary");
    // Drain both pipes on their own threads so a chatty child cannot block on a full pipe.
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            pipe.read_to_end(&mut buf).ok();
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("stdout pipe")));
    let err = drain(Box::new(child.stderr.take().expect("stderr pipe")));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("poll the child") {
            break status;
        }
        if start.elapsed() > limit {
            child.kill().ok();
            child.wait().ok();
            panic!(
                "colab {} did not finish within {} s (hang?)",
                args.join(" "),
                limit.as_secs()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Run {
        args: args.iter().map(|s| s.to_string()).collect(),
        code: status.code(),
        stdout: out.join().expect("stdout reader"),
        stderr: err.join().expect("stderr reader"),
    }
}

pub fn run(args: &[&str]) -> Run {
    // Campaigns (which also train each machine's counter model) get the
    // campaign limit; a debug build on a busy machine takes a while.
    // So do the scaling benchmarks (1,024 cores, 4,096 threads): 15-45 s in
    // a debug build, more on a loaded machine.
    let limit = match args.first() {
        Some(&"reproduce") => REPRODUCE_LIMIT,
        Some(&"bench") if args.contains(&"--cores") || args.contains(&"--threads") => {
            REPRODUCE_LIMIT
        }
        _ => LIMIT,
    };
    run_limited(args, limit)
}

pub fn assert_no_panic(r: &Run) {
    assert!(
        !r.stderr.contains("panicked") && !r.stdout.contains("panicked"),
        "the program panicked:\n{}",
        r.describe()
    );
    // 101 is the exit code of a Rust panic; None means killed by a signal.
    assert!(
        r.code.is_some() && r.code != Some(101),
        "abnormal exit:\n{}",
        r.describe()
    );
}

/// Runs `colab ARGS` and expects success.
pub fn ok(args: &[&str]) -> Run {
    let r = run(args);
    assert_no_panic(&r);
    assert_eq!(r.code, Some(0), "expected success:\n{}", r.describe());
    r
}

/// Checks a failed run: non-zero exit, no panic, nothing on stdout, and one
/// `error: ` message on stderr that contains every string of `expect`.
pub fn assert_fails_with(r: &Run, expect: &[&str]) {
    assert_no_panic(r);
    assert_ne!(r.code, Some(0), "expected failure:\n{}", r.describe());
    assert!(
        r.stdout.trim().is_empty(),
        "a failed run printed results:\n{}",
        r.describe()
    );
    let msg = r
        .stderr
        .lines()
        .position(|l| l.starts_with("error: "))
        .map(|i| r.stderr.lines().skip(i).collect::<Vec<_>>().join("\n"))
        .unwrap_or_else(|| panic!("no 'error: ' line on stderr:\n{}", r.describe()));
    for e in expect {
        assert!(
            msg.contains(e),
            "the error message lacks {e:?}:\n{}",
            r.describe()
        );
    }
}

/// Runs `colab ARGS` and expects a failure whose message contains every string of `expect`.
pub fn fails(args: &[&str], expect: &[&str]) -> Run {
    let r = run(args);
    assert_fails_with(&r, expect);
    r
}

/// Checks clap's usage error: exit code 2 and `mention` on stderr.
pub fn assert_fails_with_usage(r: &Run, mention: &str) {
    assert_no_panic(r);
    assert_eq!(
        r.code,
        Some(2),
        "clap's usage error exit code:\n{}",
        r.describe()
    );
    assert!(
        r.stderr.contains("error:") && r.stderr.contains(mention),
        "{}",
        r.describe()
    );
}

pub fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("create a temporary directory")
}

pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write a test file");
    p
}

pub fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 temp path")
}

pub fn parse_json(text: &str, what: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{what} is not valid JSON: {e}\n{text}"))
}

/// A hand-made trace: a main thread that waits for a worker it started.
pub const DEMO_TRACE: &str = r#"{"colab_trace":1,"command":["demo"],"host":"h","kernel":"k","cpus":2,"tool":"hand","recorded_unix_s":0}
{"ev":"thread","tid":100,"parent":null,"comm":"demo","t":0}
{"ev":"thread","tid":101,"parent":100,"comm":"worker","t":5000000}
{"ev":"run","tid":100,"cpu":0,"start":0,"end":10000000}
{"ev":"block","tid":100,"t":10000000,"kind":"futex","addr":"0x10"}
{"ev":"run","tid":101,"cpu":1,"start":6000000,"end":16000000}
{"ev":"futex_wake","tid":101,"t":16000000,"addr":"0x10"}
{"ev":"wake","tid":100,"t":16000000,"waker":101}
{"ev":"exit","tid":101,"t":16000000}
{"ev":"run","tid":100,"cpu":0,"start":16000000,"end":20000000}
{"ev":"exit","tid":100,"t":20000000}
"#;
