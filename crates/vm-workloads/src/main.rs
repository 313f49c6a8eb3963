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
    Mix(mix::MixSpec),
    /// Prints the busy loop's speed (iterations per microsecond) as JSON.
    Calibrate,
    /// Measures the costs the simulator charges (context switch, wake-up
    /// latency, migration, tick; `colab calibrate`'s measurement) on this
    /// machine and prints them as JSON: the VM's costs for a topology file.
    Costs,
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
        Cmd::Mix(spec) => {
            print_or_exit("mix", mix::run(&spec));
            return;
        }
        Cmd::Capacities { machine, order } => {
            print_or_exit("capacities", mix::capacities(&machine, &order));
            return;
        }
        Cmd::Calibrate => {
            let c = colab_native::calibrate_spin();
            println!("{{\"spins_per_us\":{:.3}}}", c.spins_per_us);
            return;
        }
        Cmd::Costs => {
            let m = colab_native::calibrate::measure();
            println!(
                "{}",
                serde_json::to_string(&m).expect("costs serialise to JSON")
            );
            return;
        }
        Cmd::Noop => return,
    };
    println!("{}", report.to_json());
}

/// Prints a subcommand's result line, or its error and exits 2.
fn print_or_exit(cmd: &str, r: Result<String, String>) {
    match r {
        Ok(line) => println!("{line}"),
        Err(e) => {
            eprintln!("colab-vmload {cmd}: {e}");
            std::process::exit(2);
        }
    }
}
