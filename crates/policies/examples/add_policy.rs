//! The worked example of the book's "Adding a policy" page (this file is the
//! source of truth; the page includes it as it is): a complete small policy,
//! "biggest-idle-first FIFO", run on one workload against CFS.
//!
//! `cargo run --release -p colab-policies --example add_policy` runs the mix
//! Sync-2 on 2B2S; `... --example add_policy -- Comm-2 4B4S` runs another
//! workload on another machine.

use colab_core::{
    Action, CoreId, CoreOrder, Nanos, Pick, Policy, SchedState, ThreadId, Topology, WakeKind,
    NS_PER_MS,
};
use colab_sim::{simulate, PredictorKind, SimConfig};
use colab_workload::{Library, Workload};

/// Biggest-idle-first FIFO: a new or waking thread goes to an idle core of
/// the fastest type, else to the shortest queue (a core of the fastest type
/// on a tie); each core runs its own queue in arrival order for a fixed
/// slice; a core whose queue is empty takes the thread that has waited
/// longest on any other core's queue.
pub struct BifFifo {
    slice_ns: Nanos,
}

impl BifFifo {
    pub fn new(slice_ns: Nanos) -> BifFifo {
        BifFifo { slice_ns }
    }
}

impl Policy for BifFifo {
    fn name(&self) -> &'static str {
        "bif-fifo"
    }

    /// It never reads `predicted_speedup`, so runs need no counter work.
    fn reads_predictions(&self) -> bool {
        false
    }

    fn select_core(&mut self, st: &SchedState, _t: ThreadId, _kind: WakeKind) -> CoreId {
        let topo = &st.topo;
        // The cores with the fewest threads, running plus queued: when that
        // is none, they are the idle cores. A core of the fastest type goes
        // first, so an idle fast core wins, then an idle slower one, then
        // the shortest queue (a fast core's on a tie).
        let (_, fewest) = st
            .least_loaded_in(topo.all_mask())
            .expect("a machine has at least one core");
        let fast = fewest.intersect(topo.big_mask());
        fast.iter()
            .next()
            .or_else(|| fewest.iter().next())
            .expect("least_loaded_in gives a non-empty mask")
    }

    /// No wake-up preemption: a woken thread waits for its turn.
    fn should_preempt(&mut self, _st: &SchedState, _c: CoreId, _t: ThreadId) -> bool {
        false
    }

    fn pick_next(&mut self, st: &SchedState, c: CoreId) -> Pick {
        // The core's own queue, first come first served.
        if let Some(t) = st.core(c).rq.front() {
            return Pick::Local(t);
        }
        // Empty: steal the longest-waiting thread queued on another core.
        st.queued_mask()
            .iter()
            .filter(|&o| o != c)
            .filter_map(|o| st.longest_waiting(o, |_| true).map(|t| (o, t)))
            .min_by_key(|&(_, t)| (st.thread(t).runnable_since, t))
            .map_or(Pick::Idle, |(from, thread)| Pick::Steal { from, thread })
    }

    fn slice_ns(&self, _st: &SchedState, _c: CoreId, _t: ThreadId) -> Nanos {
        self.slice_ns
    }

    /// Nothing to do at the tick: the simulator itself preempts a thread
    /// whose slice is over when another waits on its core.
    fn tick(&mut self, _st: &SchedState, _c: CoreId, _out: &mut Vec<Action>) -> bool {
        false
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let name = args.first().map_or("Sync-2", String::as_str);
    let machine = args.get(1).map_or("2B2S", String::as_str);

    let lib = Library::builtin();
    let w = lib.mix(name).or_else(|_| lib.single(name, None))?;
    let topo = Topology::named(machine, CoreOrder::BigFirst)?;
    // The exact speedups: what `colab sim` gives a policy that reads no
    // predictions (neither policy here does).
    let cfg = SimConfig {
        predictor: PredictorKind::Oracle,
        ..SimConfig::default()
    };

    // T_SB: each program alone on a machine of as many fastest cores, under CFS.
    let mut t_sb = Vec::new();
    for p in &w.programs {
        let mut cfs = colab_policies::by_name("cfs")?;
        let r = simulate(&Workload::alone(p), &topo.all_fastest(), cfs.as_mut(), &cfg)?;
        t_sb.push(r.programs[0].turnaround_ns as f64);
    }

    let candidates: Vec<Box<dyn Policy>> = vec![
        Box::new(BifFifo::new(4 * NS_PER_MS)),
        colab_policies::by_name("cfs")?,
    ];
    println!("{} on {}", w.name, topo.describe());
    for mut policy in candidates {
        let r = simulate(&w, &topo, policy.as_mut(), &cfg)?;
        // H_ANTT = mean of T_M / T_SB (colab_metrics::h_antt).
        let h_antt = r
            .programs
            .iter()
            .zip(&t_sb)
            .map(|(p, sb)| p.turnaround_ns as f64 / sb)
            .sum::<f64>()
            / t_sb.len() as f64;
        println!(
            "  {:<9} H_ANTT {:.3}  makespan {:.3} ms  {} migrations",
            policy.name(),
            h_antt,
            r.makespan_ns as f64 / 1e6,
            r.stats.migrations
        );
    }
    Ok(())
}
