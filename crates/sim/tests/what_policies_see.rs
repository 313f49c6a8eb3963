//! Policies see only what a kernel sees. A kernel knows that a thread
//! sleeps (nanosleep) or waits on a futex, not what the futex is for: a
//! barrier, a lock, a condition, a queue or a join all look alike until the
//! wait ends. Every policy, run with the wait kinds of its state blurred
//! into one futex kind, must schedule exactly as it does with them.

use colab_core::{
    Action, BlockKind, CoreId, CoreOrder, Nanos, Pick, Policy, RunState, SchedState, StopReason,
    ThreadId, Topology, WakeKind,
};
use colab_sim::{simulate, SimConfig, SimResult};
use colab_workload::Library;

/// `inner`, shown a copy of the state in which every futex wait is a
/// mutex wait (sleeps stay sleeps: a kernel tells those apart).
struct Blurred(Box<dyn Policy>);

fn blur(st: &SchedState) -> SchedState {
    let mut st = st.clone();
    for th in &mut st.threads {
        if matches!(th.state, RunState::Blocked(k) if k != BlockKind::Sleep) {
            th.state = RunState::Blocked(BlockKind::Mutex);
        }
    }
    st
}

impl Policy for Blurred {
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn reads_predictions(&self) -> bool {
        self.0.reads_predictions()
    }
    fn wants_oracle_lengths(&self) -> bool {
        self.0.wants_oracle_lengths()
    }
    fn oracle_program_lengths(&mut self, t_sb_ns: &[Nanos]) {
        self.0.oracle_program_lengths(t_sb_ns)
    }
    fn thread_created(&mut self, st: &SchedState, t: ThreadId) {
        self.0.thread_created(&blur(st), t)
    }
    fn select_core(&mut self, st: &SchedState, t: ThreadId, kind: WakeKind) -> CoreId {
        self.0.select_core(&blur(st), t, kind)
    }
    fn enqueued(&mut self, st: &SchedState, c: CoreId, t: ThreadId, wakeup: bool) {
        self.0.enqueued(&blur(st), c, t, wakeup)
    }
    fn should_preempt(&mut self, st: &SchedState, c: CoreId, t: ThreadId) -> bool {
        self.0.should_preempt(&blur(st), c, t)
    }
    fn pick_next(&mut self, st: &SchedState, c: CoreId) -> Pick {
        self.0.pick_next(&blur(st), c)
    }
    fn running(&mut self, st: &SchedState, c: CoreId, t: ThreadId) {
        self.0.running(&blur(st), c, t)
    }
    fn stopped(&mut self, st: &SchedState, c: CoreId, t: ThreadId, ran: Nanos, why: StopReason) {
        self.0.stopped(&blur(st), c, t, ran, why)
    }
    fn migrated(&mut self, st: &SchedState, t: ThreadId, from: CoreId, to: CoreId) {
        self.0.migrated(&blur(st), t, from, to)
    }
    fn slice_ns(&self, st: &SchedState, c: CoreId, t: ThreadId) -> Nanos {
        self.0.slice_ns(&blur(st), c, t)
    }
    fn tick(&mut self, st: &SchedState, c: CoreId, out: &mut Vec<Action>) -> bool {
        self.0.tick(&blur(st), c, out)
    }
    fn period_ns(&self) -> Option<Nanos> {
        self.0.period_ns()
    }
    fn periodic(&mut self, st: &SchedState, out: &mut Vec<Action>) {
        self.0.periodic(&blur(st), out)
    }
}

/// Runs `policy` on the COLAB study's mix `mix` on 2B2S, its state seen
/// plainly or blurred. 4B-4 (lu_cb, lu_ncb, bodytrack, dedup) and 4B-9
/// (fmm, water_spatial, ferret, swaptions) wait at barriers, locks,
/// conditions, queues and joins.
fn run(policy: &str, mix: &str, blurred: bool) -> SimResult {
    let w = Library::builtin().mix(mix).unwrap();
    let topo = Topology::named("2B2S", CoreOrder::BigFirst).unwrap();
    let p = colab_policies::by_name(policy).unwrap();
    let mut p: Box<dyn Policy> = if blurred { Box::new(Blurred(p)) } else { p };
    simulate(&w, &topo, p.as_mut(), &SimConfig::default()).unwrap()
}

const MIXES: [&str; 2] = ["4B-4", "4B-9"];

fn same_schedule(a: &SimResult, b: &SimResult) -> bool {
    let ends = |r: &SimResult| {
        r.programs
            .iter()
            .map(|p| p.turnaround_ns)
            .collect::<Vec<_>>()
    };
    ends(a) == ends(b) && a.stats.migrations == b.stats.migrations
}

#[test]
fn no_policy_reads_what_a_futex_wait_is_for() {
    for (name, _) in colab_policies::POLICIES {
        for mix in MIXES {
            let (plain, blurred) = (run(name, mix, false), run(name, mix, true));
            assert!(
                same_schedule(&plain, &blurred),
                "{name} schedules {mix} differently when it cannot see what threads wait on"
            );
        }
    }
}

#[test]
fn the_oracle_reading_of_barriers_is_caught() {
    // The check has teeth: ROTA's ablation that reads the wait kinds
    // schedules differently once they are blurred.
    let name = "rota:reclaim=barrier-oracle";
    let differs = MIXES
        .iter()
        .any(|mix| !same_schedule(&run(name, mix, false), &run(name, mix, true)));
    assert!(differs);
}
