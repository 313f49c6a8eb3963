//! Setting a run up: the simulator's state for a workload on a machine,
//! a program's start and restart, and thread creation.

use super::{CoreRate, CoreRt, Counters, Phase, ProgRt, Sim, ThreadRt, NEVER, STEPS_PER_EVENT};
use crate::counters::Signature;
use crate::idle_meter::FastIdleMeter;
use crate::pmu::Pmu;
use crate::predict::SimRng;
use crate::slots::MinSlots;
use crate::sync::{BarrierState, CondState, EventState, MutexState, QueueState, WaitObj};
use crate::timeline::Timeline;
use crate::{SimConfig, SimStats};
use colab_core::{Policy, ProgramId, SchedState, ThreadId, ThreadInfo, Topology, WakeKind};
use colab_workload::control::Loops;
use colab_workload::{Op, Workload};
use dary_heap::QuaternaryHeap;
use rand::SeedableRng;

impl<'a> Sim<'a> {
    pub(super) fn new(
        w: &'a Workload,
        topo: &Topology,
        policy: &'a mut dyn Policy,
        cfg: &'a SimConfig,
        mut pmu: Option<Box<Pmu>>,
    ) -> Sim<'a> {
        let mut progs = Vec::new();
        let (mut mb, mut bb, mut cb, mut qb, mut eb) = (0u32, 0u32, 0u32, 0u32, 0u32);
        let mut barriers = Vec::new();
        let mut queues = Vec::new();
        for p in &w.programs {
            progs.push(ProgRt {
                mutex_base: mb,
                barrier_base: bb,
                cond_base: cb,
                queue_base: qb,
                event_base: eb,
                live: vec![0; p.groups.len()],
                joiners: vec![Vec::new(); p.groups.len()],
                live_total: 0,
                start: 0,
                end: None,
                first_start: 0,
                completed: Vec::new(),
                cpu_ns: 0,
                fast_cpu_ns: 0,
                drawn_by_phase: Vec::new(),
                longest_path_ns: 0.0,
                longest_held_ns: 0.0,
                exit_path_ns: vec![0.0; p.groups.len()],
            });
            mb += p.num_mutexes;
            bb += p.barriers.len() as u32;
            cb += p.conds.len() as u32;
            qb += p.queues.len() as u32;
            eb += p.num_events;
            barriers.extend(p.barriers.iter().map(|(_, need)| BarrierState::new(*need)));
            queues.extend(
                p.queues
                    .iter()
                    .map(|q| QueueState::new(q.capacity, q.producers)),
            );
        }
        let n = topo.num_cores();
        // Phase table: each distinct memory fraction once, with its rate on
        // every core, so the event loop never recomputes the rate model. With
        // a PMU, phases of different programs differ in their counts, so the
        // key is (program + 1, m); otherwise (0, m).
        let mut by_mem: std::collections::BTreeMap<(u32, u64), u32> =
            std::collections::BTreeMap::new();
        let mut phases: Vec<Phase> = Vec::new();
        let mut phase_rate: Vec<CoreRate> = Vec::new();
        let sigs: Vec<Signature> = match pmu {
            Some(_) => w
                .programs
                .iter()
                .map(|p| Signature::of_program(&p.name))
                .collect(),
            None => Vec::new(),
        };
        let mut phase_of = |key: u32, m: f64| -> u32 {
            *by_mem.entry((key, m.to_bits())).or_insert_with(|| {
                let (f, s) = (
                    &topo.core_types[topo.fastest_type],
                    &topo.core_types[topo.slowest_type],
                );
                let (fast, slow) = (f.rate(m), s.rate(m));
                let (e_fast, e_slow) = (f.energy_per_work(m), s.energy_per_work(m));
                phases.push(Phase {
                    speedup: fast / slow,
                    energy_ratio: if e_slow > 0.0 { e_fast / e_slow } else { 1.0 },
                    mem_frac: m,
                    ns_fast: 1.0 / fast,
                    ns_slow: 1.0 / slow,
                    ns_best: 1.0
                        / topo
                            .cores()
                            .map(|c| topo.core_type(c).rate(m))
                            .fold(0.0_f64, f64::max),
                    e_fast,
                    e_slow,
                });
                for c in topo.cores() {
                    let ty = topo.core_type(c);
                    let r = ty.rate(m);
                    phase_rate.push(CoreRate {
                        rate: r,
                        ns_per_work: 1.0 / r,
                        stall_share: ty.stall_share(m),
                    });
                }
                if let Some(pmu) = pmu.as_deref_mut() {
                    let sig = match key {
                        0 => Signature::typical(),
                        k => sigs[k as usize - 1],
                    };
                    pmu.add_phase(&sig, m, topo);
                }
                (phases.len() - 1) as u32
            })
        };
        phase_of(0, 0.5); // phase 0: before a thread's first compute
        let counting = !sigs.is_empty();
        let op_phase: Vec<Vec<Vec<u32>>> = w
            .programs
            .iter()
            .enumerate()
            .map(|(pi, p)| {
                let key = if counting { pi as u32 + 1 } else { 0 };
                p.groups
                    .iter()
                    .map(|g| {
                        g.ops
                            .iter()
                            .map(|o| match o {
                                Op::Compute { mem_frac, .. } => phase_of(key, *mem_frac),
                                _ => u32::MAX,
                            })
                            .collect()
                    })
                    .collect()
            })
            .collect();
        let op_shared = w
            .programs
            .iter()
            .map(|p| p.groups.iter().map(|g| shared_ops(&g.ops)).collect())
            .collect();
        let async_actions = policy.has_async_actions();
        Sim {
            w,
            policy,
            cfg,
            st: SchedState::tracked(topo.clone()),
            rt: Vec::new(),
            // Every core starts idle.
            cores: vec![
                CoreRt {
                    idle: true,
                    ..CoreRt::default()
                };
                n
            ],
            spawned: progs.iter().map(|p| vec![0; p.live.len()]).collect(),
            progs,
            mutexes: vec![MutexState::default(); mb as usize],
            barriers,
            conds: vec![CondState::default(); cb as usize],
            queues,
            events_state: vec![EventState::default(); eb as usize],
            heap: QuaternaryHeap::new(),
            core_next: MinSlots::new(n, NEVER),
            unstarted: w.programs.len() as u32,
            violation: None,
            seq: 0,
            rng: SimRng::seed_from_u64(cfg.seed),
            // Any fixed, documented derivation works; this one is the
            // 64-bit golden-ratio constant.
            energy_rng: SimRng::seed_from_u64(cfg.seed ^ 0x9e37_79b9_7f4a_7c15),
            predictor: cfg
                .predictor
                .build()
                .unwrap_or_else(|| Box::new(crate::predict::OraclePredictor)),
            pmu,
            wake_q: Vec::new(),
            steps: 0,
            max_steps: cfg.max_events.saturating_mul(STEPS_PER_EVENT),
            resched_q: Vec::new(),
            actions: Vec::new(),
            async_actions,
            async_acts: Vec::new(),
            stats: SimStats::default(),
            fast_idle: FastIdleMeter::new(topo.big_mask().count() as u32),
            live_programs: w.programs.len() as u32,
            restart_done: false,
            active: 0,
            sleepers: 0,
            queued_total: 0,
            timeline: cfg.timeline.then(|| Timeline::new(topo)),
            op_phase,
            op_shared,
            phases,
            phase_rate,
            ncores: n,
        }
    }

    pub(super) fn start_program(&mut self, p: usize) {
        self.unstarted -= 1;
        self.progs[p].start = self.st.now;
        self.progs[p].first_start = self.st.now;
        self.spawned[p][0] = 1;
        self.create_thread(p, 0, 0, None);
    }

    /// Starts program `p` afresh after a completed run (`restart_until`):
    /// its synchronization objects go back to their initial state.
    pub(super) fn restart_program(&mut self, p: usize) {
        let prog = &self.w.programs[p];
        let r = &mut self.progs[p];
        r.start = self.st.now;
        r.end = None;
        r.live.iter_mut().for_each(|l| *l = 0);
        r.joiners.iter_mut().for_each(Vec::clear);
        r.exit_path_ns.iter_mut().for_each(|p| *p = 0.0);
        let range = |base: u32, n: usize| base as usize..base as usize + n;
        for m in &mut self.mutexes[range(r.mutex_base, prog.num_mutexes as usize)] {
            *m = MutexState::default();
        }
        for (b, (_, need)) in self.barriers[range(r.barrier_base, prog.barriers.len())]
            .iter_mut()
            .zip(&prog.barriers)
        {
            *b = BarrierState::new(*need);
        }
        for c in &mut self.conds[range(r.cond_base, prog.conds.len())] {
            *c = CondState::default();
        }
        for (q, spec) in self.queues[range(r.queue_base, prog.queues.len())]
            .iter_mut()
            .zip(&prog.queues)
        {
            *q = QueueState::new(spec.capacity, spec.producers);
        }
        for e in &mut self.events_state[range(r.event_base, prog.num_events as usize)] {
            *e = EventState::default();
        }
        self.spawned[p].iter_mut().for_each(|s| *s = 0);
        self.spawned[p][0] = 1;
        self.create_thread(p, 0, 0, None);
    }

    pub(super) fn create_thread(
        &mut self,
        prog: usize,
        group: u32,
        index: u32,
        parent: Option<ThreadId>,
    ) {
        let id = ThreadId(self.st.threads.len() as u32);
        // Until it has run, a thread's counters are those of its first phase.
        let first = self.op_phase[prog][group as usize]
            .iter()
            .copied()
            .find(|&p| p != u32::MAX)
            .unwrap_or(0);
        if let Some(p) = self.pmu.as_deref_mut() {
            p.add_thread();
        }
        let (pred, energy) = self.predict(first);
        // Not yet runnable until the policy places it.
        let mut info = ThreadInfo::new(id, ProgramId(prog as u16), self.st.now, pred);
        info.predicted_energy_ratio = energy;
        self.st.add_thread(info);
        self.rt.push(ThreadRt {
            prog: prog as u16,
            group,
            index,
            pc: 0,
            loops: Loops::default(),
            in_compute: false,
            remaining: 0.0,
            phase: first,
            counters: Counters::default(),
            held: Vec::new(),
            lock_target: None,
            relock: None,
            block_start: self.st.now,
            waiting: WaitObj::None,
            progress_start: 0,
            has_run: false,
            created: self.st.now,
            timers: vec![None; self.w.programs[prog].timers.len()],
            path_ns: parent.map_or(0.0, |p| self.rt[p.idx()].path_ns),
            since_barrier_ns: 0.0,
            since_barrier_from: parent.map_or(0.0, |p| self.rt[p.idx()].path_ns),
        });
        let pr = &mut self.progs[prog];
        pr.live[group as usize] += 1;
        pr.live_total += 1;
        self.policy.thread_created(&self.st, id);
        self.wake_q.push((id, WakeKind::New { parent }));
        if let Some(tl) = &mut self.timeline {
            tl.thread_name(
                id,
                &self.w.programs[prog].name,
                &self.w.programs[prog].groups[group as usize].name,
                index,
            );
        }
    }
}

/// Which ops lie inside a loop that runs until its queue closes.
fn shared_ops(ops: &[Op]) -> Vec<bool> {
    let mut shared = vec![false; ops.len()];
    for (pc, op) in ops.iter().enumerate() {
        if let Op::Loop {
            count: colab_workload::LoopCount::UntilClosed,
            end,
        } = *op
        {
            for s in &mut shared[pc + 1..end as usize] {
                *s = true;
            }
        }
    }
    shared
}
