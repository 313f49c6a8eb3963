//! A deterministic fuzz harness on stable Rust: mutants of the project's own
//! example files are fed to every parser (and, when they parse, to the
//! simulator), which must either accept them or return an error with a
//! message: never panic, never hang. See README.md.
//!
//! Case `c` of target `t` under seed `s` is always the same input (its
//! generator is seeded from all three), so any failing case can be rerun
//! alone with `--seed s --target t --case c`.

pub mod mutate;
pub mod targets;

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

pub use targets::{Context, Failure, Seed, Target, Verdict};

/// The longest one case may take (parse and simulation together).
pub const CASE_LIMIT: Duration = Duration::from_secs(2);

/// After this many cases that ran past the limit (each leaves a thread
/// behind that may spin forever), the run stops.
const MAX_HUNG: usize = 3;

pub struct Config {
    /// Cases in all, split over `targets` by [`split`].
    pub cases: u64,
    pub seed: u64,
    pub targets: Vec<Target>,
    /// Run only this case number (of the single target given).
    pub only_case: Option<u64>,
    /// Simulate a parsed workload, topology or trace only when its case
    /// number is a multiple of this (simulations cost the most).
    pub simulate_every: u64,
    pub limit: Duration,
    /// Where failing inputs are written (none: not written).
    pub save: Option<PathBuf>,
}

/// One target's results.
#[derive(Debug)]
pub struct Stats {
    pub target: Target,
    pub cases: u64,
    pub parsed: u64,
    pub rejected: u64,
    pub simulated: u64,
    pub failures: Vec<CaseFailure>,
    pub time: Duration,
}

#[derive(Debug)]
pub struct CaseFailure {
    pub target: Target,
    pub case: u64,
    pub seed_file: String,
    pub problem: String,
    pub saved: Option<PathBuf>,
}

/// `total` cases split over `targets` by their shares; the rounding
/// remainder goes to the first targets, so the counts add up to `total`.
pub fn split(total: u64, targets: &[Target]) -> Vec<u64> {
    let shares: u64 = targets.iter().map(|t| t.share()).sum();
    let mut counts: Vec<u64> = targets.iter().map(|t| total * t.share() / shares).collect();
    let mut left = total - counts.iter().sum::<u64>();
    for c in counts.iter_mut() {
        if left == 0 {
            break;
        }
        *c += 1;
        left -= 1;
    }
    counts
}

/// Case `case` of `target` under `seed`: the seed file it starts from and
/// the mutant.
pub fn case_input(seeds: &[Seed], seed: u64, target: Target, case: u64) -> (usize, String) {
    let t = Target::ALL.iter().position(|&x| x == target).unwrap_or(0) as u64;
    let key = splitmix(seed ^ splitmix((t << 48) ^ case));
    let mut rng = Pcg64::seed_from_u64(key);
    let i = rng.gen_range(0..seeds.len());
    (i, mutate::mutate(&seeds[i].text, &mut rng))
}

/// SplitMix64's finaliser: nearby seeds and case numbers give unrelated keys.
fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

type Job = (Target, String, bool);
type Answer = Result<Verdict, Failure>;

/// A thread that runs cases, so the caller can give up waiting on one
/// that hangs (a thread cannot be stopped; a hung worker is left behind).
struct Worker {
    jobs: mpsc::Sender<Job>,
    answers: mpsc::Receiver<Answer>,
    thread: std::thread::JoinHandle<()>,
}

impl Worker {
    fn start(root: &Path) -> anyhow::Result<Worker> {
        let ctx = Context::new(root)?;
        let (jobs, job_rx) = mpsc::channel::<Job>();
        let (answer_tx, answers) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("colab-fuzz-worker".into())
            // The main thread's stack size: the tools parse on theirs.
            .stack_size(8 << 20)
            .spawn(move || {
                for (target, text, simulate) in job_rx {
                    if answer_tx.send(ctx.check(target, &text, simulate)).is_err() {
                        break;
                    }
                }
            })?;
        Ok(Worker {
            jobs,
            answers,
            thread,
        })
    }

    /// Ends the thread and waits for it, so its temporary directory is
    /// removed before the process exits.
    fn stop(self) {
        drop(self.jobs);
        let _ = self.thread.join();
    }
}

/// Runs the cases of `cfg`, calling `done` after each target; returns every
/// target's results.
pub fn run(cfg: &Config, root: &Path, mut done: impl FnMut(&Stats)) -> anyhow::Result<Vec<Stats>> {
    let counts = split(cfg.cases, &cfg.targets);
    let mut worker = Worker::start(root)?;
    let mut hung = 0;
    let mut all = Vec::new();
    quiet_panics(|| -> anyhow::Result<()> {
        for (&target, &n) in cfg.targets.iter().zip(&counts) {
            let seeds = targets::seeds(target, root)?;
            let mut st = Stats {
                target,
                cases: 0,
                parsed: 0,
                rejected: 0,
                simulated: 0,
                failures: Vec::new(),
                time: Duration::ZERO,
            };
            let start = Instant::now();
            let cases = match cfg.only_case {
                Some(c) => c..c + 1,
                None => 0..n,
            };
            for case in cases {
                if hung >= MAX_HUNG {
                    break;
                }
                let (seed_file, input) = case_input(&seeds, cfg.seed, target, case);
                let simulate = case % cfg.simulate_every.max(1) == 0;
                worker.jobs.send((target, input.clone(), simulate))?;
                st.cases += 1;
                let problem = match worker.answers.recv_timeout(cfg.limit) {
                    Ok(Ok(v)) => {
                        if cfg.only_case.is_some() {
                            println!("{} case {case}: {v:?}", target.name());
                        }
                        st.parsed += u64::from(v.parsed);
                        st.rejected += u64::from(!v.parsed);
                        st.simulated += u64::from(v.simulated);
                        continue;
                    }
                    Ok(Err(f)) => f.to_string(),
                    Err(e) => {
                        // Timed out (or the worker died outside a stage):
                        // leave it and start another.
                        hung += 1;
                        worker = Worker::start(root)?;
                        match e {
                            RecvTimeoutError::Timeout => {
                                format!("took more than {:?} (hang?)", cfg.limit)
                            }
                            RecvTimeoutError::Disconnected => "the worker thread died".into(),
                        }
                    }
                };
                let saved = match &cfg.save {
                    Some(dir) => Some(save(dir, target, cfg.seed, case, &input)?),
                    None => None,
                };
                st.failures.push(CaseFailure {
                    target,
                    case,
                    seed_file: seeds[seed_file].name.clone(),
                    problem,
                    saved,
                });
            }
            st.time = start.elapsed();
            done(&st);
            all.push(st);
        }
        Ok(())
    })?;
    worker.stop();
    Ok(all)
}

fn save(dir: &Path, target: Target, seed: u64, case: u64, input: &str) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join(format!(
        "{}-seed{seed}-case{case}.{}",
        target.name(),
        target.extension()
    ));
    std::fs::write(&path, input)?;
    Ok(path)
}

/// Runs `f` with a panic hook that, in a stage under `catch_unwind`,
/// records the panic (message and location) instead of printing it, so a
/// run is not flooded; elsewhere it defers to the previous hook, which is
/// put back afterwards. Calls are serialised (tests run in parallel): an
/// overlapping call would put back the wrong hook.
pub fn quiet_panics<R>(f: impl FnOnce() -> R) -> R {
    static HOOK: Mutex<()> = Mutex::new(());
    let _only_one = HOOK.lock().unwrap_or_else(|e| e.into_inner());
    let prev = Arc::new(std::panic::take_hook());
    let fallback = Arc::clone(&prev);
    std::panic::set_hook(Box::new(move |info| {
        if targets::QUIET.with(|q| q.get()) {
            targets::LAST_PANIC.with(|p| *p.borrow_mut() = Some(info.to_string()));
        } else {
            fallback(info);
        }
    }));
    let r = f();
    drop(std::panic::take_hook());
    std::panic::set_hook(Box::new(move |info| prev(info)));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_split_follows_the_shares_and_adds_up() {
        assert_eq!(Target::ALL.iter().map(|t| t.share()).sum::<u64>(), 100);
        let c = split(100_000, &Target::ALL);
        assert_eq!(
            c,
            [25_000, 5_000, 10_000, 15_000, 10_000, 5_000, 10_000, 10_000, 10_000]
        );
        let c = split(7, &Target::ALL);
        assert_eq!(c.iter().sum::<u64>(), 7);
        assert_eq!(split(5, &[Target::Perf]), [5]);
    }

    /// A few hundred cases of every target with a fixed seed: the harness
    /// works end to end and today's code has no failure among them.
    #[test]
    fn a_short_run_of_every_target_has_no_failures() {
        for target in Target::ALL {
            let cfg = Config {
                cases: 300,
                seed: 1,
                targets: vec![target],
                only_case: None,
                simulate_every: 1,
                // Debug builds are several times slower than release.
                limit: Duration::from_secs(30),
                save: None,
            };
            let stats = run(&cfg, &targets::repo_root(), |_| {}).unwrap();
            let s = &stats[0];
            assert!(s.failures.is_empty(), "{:#?}", s.failures);
            assert_eq!((s.cases, s.cases), (300, s.parsed + s.rejected));
            // Mutants are neither all accepted nor all refused.
            assert!(s.parsed > 0 && s.rejected > 0, "{s:?}");
            if matches!(target, Target::Workload | Target::Topology) {
                assert!(s.simulated > 0, "{s:?}");
            }
        }
    }

    #[test]
    fn cases_are_reproducible_one_by_one() {
        let seeds = targets::seeds(Target::Perf, &targets::repo_root()).unwrap();
        let a: Vec<_> = (0..50)
            .map(|c| case_input(&seeds, 9, Target::Perf, c))
            .collect();
        let b: Vec<_> = (0..50)
            .map(|c| case_input(&seeds, 9, Target::Perf, c))
            .collect();
        assert_eq!(a, b);
        assert_ne!(
            case_input(&seeds, 9, Target::Perf, 3),
            case_input(&seeds, 10, Target::Perf, 3)
        );
    }
}
