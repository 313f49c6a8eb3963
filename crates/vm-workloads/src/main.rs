//! `colab-vmload`: workloads for the sched_ext test VM. Each subcommand prints
//! one JSON line with its results when it finishes.

use std::time::Duration;

use clap::{Parser, Subcommand};
use vm_workloads as w;

mod mix;

#[derive(Parser)]
#[command(name = "colab-vmload", about = "Workloads for the sched_ext test VM")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// One `lockholder` thread holds a mutex for long critical sections while
    /// `lockwaiter` threads wait for it.
    Lock {
        #[arg(long, default_value_t = 3)]
        waiters: usize,
        #[arg(long, default_value_t = 10.0)]
        secs: f64,
        /// Critical section length of the holder, microseconds.
        #[arg(long, default_value_t = 2000)]
        hold_us: u64,
    },
    /// Threads meeting at a barrier after uneven work per phase.
    Barrier {
        #[arg(long, default_value_t = 4)]
        threads: usize,
        #[arg(long, default_value_t = 10.0)]
        secs: f64,
        /// Work of thread i per phase is (i + 1) * unit_us microseconds.
        #[arg(long, default_value_t = 500)]
        unit_us: u64,
    },
    /// CPU-bound `hog` threads.
    Hogs {
        #[arg(long, default_value_t = 2)]
        threads: usize,
        #[arg(long, default_value_t = 10.0)]
        secs: f64,
    },
    /// `faulter` threads mapping, touching and unmapping memory: a page
    /// fault per 4 KiB (for the counter test).
    Faults {
        #[arg(long, default_value_t = 2)]
        threads: usize,
        #[arg(long, default_value_t = 10.0)]
        secs: f64,
    },
    /// Threads that sleep 1-5 ms and compute a little, repeatedly.
    Sleepers {
        #[arg(long, default_value_t = 4)]
        threads: usize,
        #[arg(long, default_value_t = 10.0)]
        secs: f64,
    },
    /// Short-lived threads spawned and joined in a loop, plus child processes.
    Churn {
        /// Threads per batch.
        #[arg(long, default_value_t = 8)]
        threads: usize,
        #[arg(long, default_value_t = 10.0)]
        secs: f64,
        /// Do not start child processes.
        #[arg(long)]
        no_procs: bool,
    },
    /// Pairs of threads ping-ponging over channels: time for --ops round trips per pair.
    Msg {
        #[arg(long, default_value_t = 2)]
        pairs: usize,
        #[arg(long, default_value_t = 20000)]
        ops: u64,
    },
    /// Many threads contending a few mutexes: time for --ops acquisitions per thread.
    Futex {
        #[arg(long, default_value_t = 8)]
        threads: usize,
        #[arg(long, default_value_t = 2)]
        locks: usize,
        #[arg(long, default_value_t = 20000)]
        ops: u64,
    },
    /// A benchmark or mix of the simulator's library (`Sync-2`, `ferret:4`)
    /// with real threads (colab native), optionally on an emulated
    /// asymmetric machine; prints each program's turnaround per repetition.
    Mix {
        workload: String,
        /// Emulated machine (`2B2S`, a name `colab topology` knows): core i
        /// runs at its type's rate on the i-th CPU of --cpus.
        #[arg(long)]
        emulate: Option<String>,
        /// Which cluster gets the low CPU numbers: big-first or little-first.
        #[arg(long, default_value = "big-first")]
        order: String,
        /// CPUs, comma-separated (default: 0..N-1 of the emulated machine, or all).
        #[arg(long, value_delimiter = ',')]
        cpus: Option<Vec<usize>>,
        /// Run on this one CPU only (the emulated machine stays --cpus):
        /// measures one core type's speed.
        #[arg(long)]
        pin: Option<usize>,
        #[arg(long, default_value_t = 1)]
        reps: u32,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Busy-loop iterations per microsecond (default: measured now, 0.35 s);
        /// pass one measurement to every run of a study so all share it.
        #[arg(long)]
        spins_per_us: Option<f64>,
        /// Give up after this many seconds per repetition.
        #[arg(long, default_value_t = 600)]
        timeout: u64,
        /// Run each program of the mix alone, one after the other (T_SB
        /// on an all-big machine, T_alone on the emulated one).
        #[arg(long)]
        alone: bool,
    },
    /// Prints the busy loop's speed (iterations per microsecond) as JSON.
    Calibrate,
    /// Prints the kernel capacities (1024 scale, core-bound rate) of a
    /// machine's cores in CPU order, comma-separated: the value for the
    /// test kernel's colab_test_capacity= option.
    Capacities {
        machine: String,
        #[arg(long, default_value = "big-first")]
        order: String,
    },
    /// Exits at once (the child process of `churn`).
    Noop,
}

fn main() {
    let cli = Cli::parse();
    let report = match cli.cmd {
        Cmd::Lock {
            waiters,
            secs,
            hold_us,
        } => w::lock(waiters, secs, Duration::from_micros(hold_us)),
        Cmd::Barrier {
            threads,
            secs,
            unit_us,
        } => w::barrier(threads, secs, Duration::from_micros(unit_us)),
        Cmd::Hogs { threads, secs } => w::hogs(threads, secs),
        Cmd::Faults { threads, secs } => w::faults(threads, secs),
        Cmd::Sleepers { threads, secs } => w::sleepers(threads, secs),
        Cmd::Churn {
            threads,
            secs,
            no_procs,
        } => {
            let exe = std::env::current_exe().expect("finding this program's path");
            w::churn(threads, secs, (!no_procs).then_some(exe.as_path()))
        }
        Cmd::Msg { pairs, ops } => w::msg(pairs, ops),
        Cmd::Futex {
            threads,
            locks,
            ops,
        } => w::futex(threads, locks, ops),
        Cmd::Mix {
            workload,
            emulate,
            order,
            cpus,
            pin,
            reps,
            seed,
            spins_per_us,
            timeout,
            alone,
        } => {
            let spec = mix::MixSpec {
                workload,
                emulate,
                order,
                cpus,
                pin,
                reps,
                seed,
                spins_per_us,
                timeout_s: timeout,
                alone,
            };
            match mix::run(&spec) {
                Ok(line) => println!("{line}"),
                Err(e) => {
                    eprintln!("colab-vmload mix: {e}");
                    std::process::exit(2);
                }
            }
            return;
        }
        Cmd::Capacities { machine, order } => {
            match mix::capacities(&machine, &order) {
                Ok(c) => println!("{c}"),
                Err(e) => {
                    eprintln!("colab-vmload capacities: {e}");
                    std::process::exit(2);
                }
            }
            return;
        }
        Cmd::Calibrate => {
            let c = colab_native::calibrate_spin();
            println!("{{\"spins_per_us\":{:.3}}}", c.spins_per_us);
            return;
        }
        Cmd::Noop => return,
    };
    println!("{}", report.to_json());
}
