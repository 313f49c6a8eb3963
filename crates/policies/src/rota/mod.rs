//! ROTA: rotating fast-core shares. A scheduler for asymmetric machines
//! designed here from what our studies measured (README, "Beyond COLAB");
//! not from a paper. It has been frozen nineteen times, each time in a
//! commit made before any run on held-out work; the default is the
//! nineteenth (`share-fast=short`; the eighteenth is `share-fast=on`; the
//! seventeenth, `share-rank`, lost to the sixteenth on held-out work and
//! was withdrawn). Every earlier freeze is a set of switches
//! (`params.rs`); the book's ROTA pages (book/src/results/rota.md, rota-history.md) give each
//! freeze's commit, spelling, the rule it was chosen by, and its held-out
//! results.
//!
//! What it does (the defaults):
//! - **Fast cores are never idle while a thread waits.** A waking thread
//!   goes to an idle fast core; a fast core with nothing queued steals the
//!   first waiting thread in the order below, anywhere, and failing that
//!   takes over a thread running on a slow core (COLAB's remote
//!   preemption, the one COLAB mechanism that measurably pays), except
//!   while it waits for a gang's sleeper (below).
//! - **Every core shares when none is idle** (`share-fast=short`): a
//!   waking thread whose bursts are shorter than CFS's minimum slice, and
//!   a new thread, queue on the shortest queue of any cluster, and each
//!   core runs its queue by CFS's rules (vruntime, wake-up preemption), so
//!   a thread that sleeps often is served at once on fast cores too; a
//!   waking thread with longer bursts queues on the slow cores and gets a
//!   fast core by the order below (the nineteenth freeze).
//! - **Serial phases first** (`serial-first`, camp-tocs12's boost): the
//!   only runnable thread of a program that has had several goes before
//!   everyone for fast cores and takes one at the next tick.
//! - **The largest gain in slowdown first** (`order=ntt-seen`): otherwise
//!   fast cores take the waiting thread whose slowdown a unit of
//!   fast-core time lowers most: (1 - 1/s) / r^2, with s the thread's
//!   predicted speedup and r its fast-core-equivalent progress per unit of
//!   time runnable, from each wake-up to the block (the gradient of the
//!   sum of slowdowns, so greedy turns move the shares toward the ones
//!   that minimise it). Per thread, as per-thread fair schedulers share,
//!   in a one-shot batch, where a program that finishes leaves its cores
//!   to the rest and programs whose work is spread over more threads
//!   should finish sooner; for a program seen to finish a run and start
//!   again (a steady load, where finishing frees nothing), the program's
//!   gradient: r summed over its threads and the gain divided among its
//!   runnable threads (`order=ntt-pr`, the eleventh to thirteenth
//!   freezes' order). An occupant rotates out at its core's tick
//!   when a waiting thread ranks before it, once it has held the core for
//!   as long as that thread has run so far (`quantum=age`: at least CFS's
//!   minimum slice, at most the 20 ms quantum), so a young thread, which
//!   may be about to end, waits no longer than it has run.
//! - **A program's threads take turns** (`sibling-turns`): an occupant
//!   that no waiting thread outranks still gives way after that quantum
//!   to its own program's thread on a slow core longest away from a fast
//!   core. The gradient decides a program's share; which of its threads
//!   holds the core it leaves to turns, since a barrier phase ends with
//!   its slowest thread (without turns, a thread that ranked first by its
//!   history held a fast core for seconds at the papers' lengths while its
//!   siblings set the pace on slow cores).
//! - **Previous core first.** A waking thread returns to its idle previous
//!   core; it takes an idle fast core instead only when its previous core is
//!   busy or the fast core has been idle longer than a cross-cluster
//!   migration costs.
//! - **Short bursts stay in their cluster** (`stay`): a waking thread whose
//!   bursts between sleeps, on average and the last one, are shorter than
//!   a cross-cluster migration takes an idle core of its previous core's
//!   cluster, else the shortest queue there: the move would cost more than
//!   the burst it serves.
//! - **A run counts from its last synchronisation** (`pull-from=sync`): a
//!   slow core's thread must have run `pull_min` before a fast core takes
//!   it over, counted from when it got on the core or, if later, when it
//!   last woke another thread (the releasing side of a barrier or a lock
//!   hand-off), since a run so far predicts the rest only within a phase.
//! - **The minimum run only for a sibling** (`pull-min=siblings`, since
//!   the eighteenth freeze): `pull_min` holds when the slow core's thread
//!   belongs to the program whose thread last left the idle fast core. That
//!   thread blocked where the straggler is heading (a barrier, a lock), and
//!   the move would be undone when it wakes; a thread of another program,
//!   or one wanted by a core no thread has left, is taken over at once
//!   (after `hold`'s wait). Nearly all the fast-core idle time the
//!   sixteenth left was `pull_min`'s (book, "Where ROTA leaves fast cores
//!   idle").
//! - **New threads in arrival order** (`new-start=debit-fifo`): each core
//!   shares its queue by CFS's rules, which start a new thread a slice of
//!   the period behind min_vruntime (START_DEBIT); the slice shrinks as the
//!   queue grows, so a thread created later could start ahead of one
//!   created earlier that still waits, and a program's last-created
//!   workers could wait a whole slice of another program's threads
//!   (blackscholes beside swaptions). A new thread starts no earlier than
//!   the previous new thread on its core (still within a period of
//!   min_vruntime, which never falls).
//! - **No pull that will be undone.** An idle fast core does not take over
//!   a slow core's running thread of the same program as the thread that
//!   just left it, when that thread's sleeps are short (under a
//!   cross-cluster migration on average) and the core has been idle less
//!   than that: the sleeper would come back, find its core taken and trade
//!   clusters at every barrier (COLAB's fine-grained barrier pathology).
//!   With `hold` (since the ninth freeze) it waits so before taking a
//!   thread of any program. Nor does it take one that has run less than
//!   `pull_min` (as above).
//! - **A gang keeps its fast cores** (`gang`, since the twelfth freeze):
//!   an idle fast core whose thread blocked while every other runnable
//!   thread of its program runs on a fast core waits for it, up to CFS's
//!   minimum slice, taking nothing else: the sleeper will be woken by one
//!   of them (a barrier), and a barrier program gains from fast cores only
//!   with all its threads on them. Giving the core away split lu_cb in
//!   NSync-1 at its first barrier, after which its threads ran on slow
//!   cores to the end (1.173 of EEVDF's H_ANTT; 1.033 with `gang`).
//!   Only for a program whose live threads fit the fast cores (`gang-fit`,
//!   since the thirteenth): one with more threads is no gang the fast
//!   cores can hold, and holding for it idled fast cores in its phases
//!   with few runnable threads (fmm's four threads held both big cores of
//!   2B2S in 4B-2).
//! - **A sibling's core is left to it** (`reclaim`, since the
//!   fourteenth; `reclaim=barrier` since the fifteenth, read from wake-ups
//!   since the sixteenth): a waking thread let go by a wake-all (a
//!   barrier's) does not take an idle core whose last thread is a sibling
//!   that blocked after it at what looks like a barrier too (its wait
//!   before this one ended in a wake-all), so a barrier's broadcast does
//!   not rotate the program's threads across clusters (lu_cb in 2B-3).
//!   What a wait is for is not known when it starts; a kernel sees the
//!   wake-all in the futex call that ends it (nr_wake > 1, as replay reads
//!   it; a barrier's or a broadcast's asks for INT_MAX).
//!
//! Mechanisms tried while designing and left off by default, because they
//! made the design set worse or left it level, or lost on a CAMP / Prop-SP
//! machine, are switches too (`colab list`, `params.rs`), measured by
//! `colab reproduce --ablation mechanisms`; the book's ROTA pages say what
//! each did. `order=sjf-oracle` is an oracle-mode ablation (program lengths
//! handed over).
//!
//! What it sees is what a kernel sees: run state, queues, runtime, the
//! program (thread group) of a thread and, across a program's restarts,
//! its name (a kernel's `comm`), who woke a thread and whether the wake-up
//! let every waiter go (a futex wake of all), futex waits caused
//! (`blocked_others_ns`) and the *predicted* speedup; never what a thread
//! waits on (`reclaim=barrier-oracle` reads that, as an ablation). The hot
//! path is 64-bit integer arithmetic (`fixed.rs`: exact where the 128-bit
//! products it replaced fitted, which covers every study; the fixed-point
//! speedup is set by the 10 ms labeller; CFS's vruntime charge is an f64
//! product by a scale that is 1 unless `group` is on). Its loops are
//! bounded by the core count and the queued threads (a steal or a rotation
//! walks every queue); per-thread state is about 20 integers and
//! per-program state five counters and eight integers of sums, what BPF
//! maps hold. The book's "Porting ROTA's default to sched_ext" goes rule by
//! rule.
//!
//! Every constant comes from the machine's own costs or CFS's tunables,
//! the same for every workload:
//! - rotation quantum: 100 x (two cross-cluster migrations), so a swap costs
//!   at most 1% of the quantum (20 ms with the default costs); an occupant
//!   gives way sooner to a waiting thread that has run less than that, but
//!   not before CFS's minimum slice (`quantum=age`: a thread that has run
//!   r is taken to be about to run about r more, as for pull_min); the cap on
//!   fast-core lead is one quantum (`cap=N` quanta; 1 was chosen among 0-3
//!   and 5, 10 on the design set as the one with the smallest worst-case
//!   loss to the best rival over its eight machine x workload-set cells);
//! - the slowdown gradient's prior: a program starts with a rotation
//!   quantum of progress at full speed, shared by its live threads
//!   (`split-prior`), so a first wait does not rank it as starved before
//!   it has had a turn (assumption);
//! - pull_min: 4 cross-cluster migrations (a thread that has run r is taken
//!   to be about to run about r more; moving it gains r(1 - 1/s), about r/2
//!   at the study's speedups, against a move there and, later, back);
//! - "short" sleeps and "long enough" idle: one cross-cluster migration.

use crate::cfs::CfsCore;
use crate::eevdf::Eevdf;
use crate::queue_index::{is_queued_on, QueueIndex};
use colab_core::{
    Action, BlockKind, CoreId, CoreMask, Nanos, Pick, Policy, RunState, SchedState, StopReason,
    ThreadId, WakeKind,
};
use colab_labels::BlockTracker;
use order::ProgRate;
use std::collections::BTreeSet;

mod balance;
mod fixed;
mod idle;
mod order;
mod params;
mod place;

pub use params::{
    Local, Order, PullFrom, PullMin, Quantum, Reclaim, RotaParams, RotateAfter, ShareFast, Stay,
    ROTA_OPTIONS_HELP,
};

/// Fixed-point unit of speedups (1.0 = 1024).
const FP: u64 = 1024;

#[derive(Clone, Debug, Default)]
struct ThreadSt {
    /// Fast-core runtime so far, ns.
    fast_ns: u64,
    /// Predicted speedup in units of 1/FP, at least FP; set by the labeller.
    speed_fp: u64,
    high_block: bool,
    block: BlockTracker,
    /// When it last blocked, and the running average (weight 1/4) of how
    /// long its sleeps last.
    blocked_at: Nanos,
    avg_sleep_ns: u64,
    /// Running average (weight 1/4) of its CPU bursts between sleeps, and
    /// the current burst so far.
    avg_burst_ns: u64,
    burst_ns: u64,
    /// Time spent runnable (queued or running), up to its last block.
    runnable_ns: u64,
    /// When it last woke (or was created): the start of its current
    /// runnable time, which preemptions do not end.
    woke_at_ns: Nanos,
    /// When it last left a fast core (its creation, if never on one).
    fast_left_at: Nanos,
    /// Whether it has ever blocked (slept, waited), and whether its last
    /// block is taken for a barrier's (`reclaim=barrier`): its wait before
    /// was ended by a wake-all (a program that waits at barriers waits at
    /// them again), or with `reclaim=barrier-oracle` the simulator's
    /// ground truth.
    has_slept: bool,
    barrier_block: bool,
    /// Whether its last wake-up let it go with every other waiter at once
    /// ([`WakeKind::Wakeup`]'s `broadcast`, a FUTEX_WAKE of all waiters).
    woke_by_broadcast: bool,
    /// When it last woke another thread.
    woke_at: Nanos,
    /// Its current run's progress factor ([`ProgRate::done_fp`]), start and
    /// core kind (factor 0 when not running).
    run_factor_fp: u64,
    run_start: Nanos,
    run_fast: bool,
    /// Slow-core runtime of its finished runs, ns.
    slow_ns: u64,
    /// Between a wake-up and the next block, as this policy was told.
    awake: bool,
    /// Its finished runs' progress, as counted in [`ProgRate::done_fp`].
    progress_fp: u64,
    /// With `floor`: its even-split fast-core time of finished spells
    /// (wake to block), ns, and [`Rota::even_fp`] at its last wake-up.
    even_done_ns: u64,
    even_from_fp: u64,
}

#[derive(Clone, Debug)]
struct Machine {
    fast: CoreMask,
    slow: CoreMask,
    quantum_ns: Nanos,
    /// The shortest an occupant keeps a fast core before a rotation: the
    /// quantum, or with `quantum=age` CFS's minimum slice.
    min_quantum_ns: Nanos,
    pull_min_ns: Nanos,
    idle_worth_ns: Nanos,
    /// A third of the machine's speedup range, fixed point.
    swap_margin_fp: u64,
}

pub struct Rota {
    pub params: RotaParams,
    cfs: Option<CfsCore>,
    /// With `local=eevdf`: EEVDF's state, which orders each core's own
    /// queue and decides wake-up and tick preemption there.
    eevdf: Option<Eevdf>,
    mach: Option<Machine>,
    th: Vec<ThreadSt>,
    /// Per core: the thread that holds it and since when (a thread that
    /// blocks and comes back to the same core keeps its turn).
    occupant: Vec<Option<(ThreadId, Nanos)>>,
    /// Per core: when it went idle (None while busy).
    idle_since: Vec<Option<Nanos>>,
    /// Per core, with `core-turn`: when its current turn began (it took a
    /// thread by rank, after idling, or after a rotation); None: the next
    /// thread to run there begins one. Its own queue's picks continue it.
    turn_since: Vec<Option<Nanos>>,
    /// Per program: threads created so far.
    created: Vec<u32>,
    /// Per program: threads created and not yet exited (a thread group's
    /// size in a kernel), for `gang-fit`.
    live: Vec<u32>,
    /// Per program: runs finished (its live threads fell to none), for
    /// `order=ntt-seen`.
    runs_done: Vec<u32>,
    /// Per program: runnable or running threads, kept up to date as
    /// threads wake, block and exit (a per-thread-group counter in a kernel).
    active: Vec<u32>,
    /// Per program: CPU time of its threads' finished runs.
    prog_exec: Vec<u64>,
    /// Per program: its threads running on fast cores now (`gang`).
    fast_running: Vec<u32>,
    /// Per program: its threads' runnable time and progress, for
    /// `order=ntt-pr`.
    prog_rate: Vec<ProgRate>,
    /// Runnable or running threads in all (the sum of `active`).
    wanting: u64,
    /// `order=sjf-oracle`: each program's T_SB, ns (oracle mode).
    oracle_len: Vec<u64>,
    /// With `floor`: the even-split fast-core time one thread wanting a
    /// core all along would have had (ns x FP), up to `even_at`.
    even_fp: u64,
    even_at: Nanos,
    /// Per core, its queue in [`Rota::local`]'s order.
    local_ix: QueueIndex<LocalKey>,
    /// Programs in a serial phase ([`Rota::is_serial`]), so that the serial
    /// swap finds their threads without a pass over every waiting thread.
    serial_progs: BTreeSet<usize>,
}

/// [`Rota::local`]'s order: bottleneck threads first (when switched on),
/// then CFS's vruntime, then the lower id.
type LocalKey = (bool, i64);

impl Rota {
    pub fn new(params: RotaParams) -> Rota {
        Rota {
            params,
            cfs: None,
            eevdf: None,
            mach: None,
            th: Vec::new(),
            occupant: Vec::new(),
            idle_since: Vec::new(),
            turn_since: Vec::new(),
            created: Vec::new(),
            live: Vec::new(),
            runs_done: Vec::new(),
            active: Vec::new(),
            prog_exec: Vec::new(),
            fast_running: Vec::new(),
            prog_rate: Vec::new(),
            wanting: 0,
            oracle_len: Vec::new(),
            even_fp: 0,
            even_at: 0,
            local_ix: QueueIndex::default(),
            serial_progs: BTreeSet::new(),
        }
    }

    fn init(&mut self, st: &SchedState) {
        if self.mach.is_some() {
            return;
        }
        let topo = &st.topo;
        let all = topo.all_mask();
        let fast = if topo.is_asymmetric() {
            all.minus(topo.little_mask())
        } else {
            all
        };
        let slow = all.minus(fast);
        let mig = self
            .params
            .migration_ns
            .unwrap_or(topo.costs.migration_cross_ns)
            .max(1);
        let (f, sl) = (
            &topo.core_types[topo.fastest_type],
            &topo.core_types[topo.slowest_type],
        );
        let (lo, hi) = {
            let a = f.rate(0.0) / sl.rate(0.0);
            let b = f.rate(1.0) / sl.rate(1.0);
            (a.min(b), a.max(b))
        };
        let cfs = CfsCore::new(st);
        let (quantum_ns, min_quantum_ns) = match self.params.quantum {
            Quantum::Slice => (cfs.tun.min_granularity_ns, cfs.tun.min_granularity_ns),
            Quantum::Migrations => (200 * mig, 200 * mig),
            Quantum::Age => (200 * mig, cfs.tun.min_granularity_ns.min(200 * mig)),
        };
        self.mach = Some(Machine {
            fast,
            slow,
            quantum_ns,
            min_quantum_ns,
            pull_min_ns: 4 * mig,
            idle_worth_ns: mig,
            swap_margin_fp: speed_fp(1.0 + (hi - lo) / 3.0) - FP,
        });
        let mut cfs = cfs;
        cfs.tun.new_start = self.params.new_start;
        self.cfs = Some(cfs);
        if self.params.local != Local::Cfs {
            self.eevdf = Some(Eevdf::new());
        }
        self.occupant = vec![None; topo.num_cores()];
        self.idle_since = vec![Some(0); topo.num_cores()];
        self.turn_since = vec![None; topo.num_cores()];
        self.local_ix = QueueIndex::new(topo.num_cores());
    }

    fn m(&self) -> &Machine {
        self.mach.as_ref().expect("initialised at the first thread")
    }

    fn cfs(&self) -> &CfsCore {
        self.cfs.as_ref().expect("initialised at the first thread")
    }

    fn is_fast(&self, c: CoreId) -> bool {
        self.m().fast.contains(c)
    }

    /// Is `t` its program's serial phase: the one runnable thread of a
    /// program that has created more than one?
    /// Keeps `serial_progs` after program `p`'s counts changed.
    fn note_serial(&mut self, p: usize) {
        if self.created[p] > 1 && self.active[p] == 1 {
            self.serial_progs.insert(p);
        } else {
            self.serial_progs.remove(&p);
        }
    }

    /// The thread of each program in a serial phase: its one runnable or
    /// running thread, which the simulator's per-program sum of ids names.
    pub(super) fn serial_threads<'a>(
        &'a self,
        st: &'a SchedState,
    ) -> impl Iterator<Item = ThreadId> + 'a {
        self.serial_progs
            .iter()
            .filter_map(|&p| match st.program_active(p) {
                Some((1, id)) => Some(ThreadId(id as u32)),
                _ => None,
            })
    }

    /// Does `t` block again sooner than `ns` (it has slept, and its bursts
    /// between sleeps, on average and now, are shorter)?
    pub(super) fn bursts_under(&self, t: ThreadId, ns: Nanos) -> bool {
        let s = &self.th[t.idx()];
        s.has_slept && s.avg_burst_ns.max(s.burst_ns) < ns
    }

    fn is_serial(&self, st: &SchedState, t: ThreadId) -> bool {
        if !self.params.serial_first {
            return false;
        }
        let p = st.thread(t).program.idx();
        self.created.get(p).is_some_and(|&c| c > 1) && self.active.get(p) == Some(&1)
    }

    /// Does `t` belong on fast cores only (`fit`)? It synchronises faster
    /// than a fast core may pull it (it has slept, and its bursts, on
    /// average and now, are shorter than `pull_min`, so no takeover can
    /// even out its phases) and its predicted speedup s beats its share of a
    /// fast core among the k threads that want a core: s > k / F. `extra`:
    /// 1 if `t` is not yet counted among them (a wake-up being placed).
    pub(super) fn fits_fast(&self, t: ThreadId, extra: u64) -> bool {
        if !self.params.fit {
            return false;
        }
        let m = self.m();
        let s = &self.th[t.idx()];
        let k = self.wanting + extra;
        self.bursts_under(t, m.pull_min_ns)
            && !m.slow.is_empty()
            && s.speed_fp.saturating_mul(m.fast.count() as u64) > k.saturating_mul(FP)
    }

    /// EEVDF's state when it rules core `c`'s own queue (`local=eevdf`, or
    /// `local=eevdf-fast` on a fast core); None where CFS's rules do.
    fn eevdf_on(&self, c: CoreId) -> Option<&Eevdf> {
        let e = self.eevdf.as_ref()?;
        match self.params.local {
            Local::Eevdf => Some(e),
            Local::EevdfFast if self.is_fast(c) => Some(e),
            _ => None,
        }
    }

    /// The local thread to run: CFS's leftmost, bottleneck threads first.
    fn local(&mut self, st: &SchedState, c: CoreId) -> Option<ThreadId> {
        if let Some(e) = self.eevdf_on(c) {
            return e.pick_eevdf(st, c);
        }
        let (th, cfs, block_first) = (
            &self.th,
            self.cfs.as_ref().unwrap(),
            self.params.block_first,
        );
        let key_of = |t: ThreadId| local_key(th, cfs, block_first, t);
        let scan = || {
            st.core(c)
                .rq
                .iter()
                .copied()
                .min_by_key(|&t| (key_of(t), t))
        };
        if !self.local_ix.is_on(st, c) {
            return scan();
        }
        let found = self.local_ix.first(st, c, key_of).map(|(_, t)| t);
        debug_assert_eq!(found, scan(), "indexed local queue of core {c} differs");
        found
    }

    /// Indexes `t`, queued on `c`, in [`Rota::local`]'s order.
    fn index_local(&mut self, st: &SchedState, c: CoreId, t: ThreadId) {
        let (th, cfs, block_first) = (
            &self.th,
            self.cfs.as_ref().unwrap(),
            self.params.block_first,
        );
        let key_of = |t: ThreadId| local_key(th, cfs, block_first, t);
        self.local_ix.push(st, c, t, key_of);
    }
}

impl Policy for Rota {
    fn name(&self) -> &'static str {
        "rota"
    }

    /// Only orders that weigh by speedup, and swaps, read predictions.
    fn reads_predictions(&self) -> bool {
        let weighs = matches!(
            self.params.order,
            Order::Owed | Order::Capped | Order::Share
        );
        (weighs && self.params.weighted)
            || matches!(
                self.params.order,
                Order::Speed
                    | Order::Las
                    | Order::Plas
                    | Order::Ntt
                    | Order::NttLas
                    | Order::NttProg
                    | Order::NttPr
                    | Order::NttPt
                    | Order::NttSeen
                    | Order::NttPtSeen
                    | Order::SjfOracle
            )
            || self.params.swap
    }

    fn wants_oracle_lengths(&self) -> bool {
        self.params.order == Order::SjfOracle
    }

    fn oracle_program_lengths(&mut self, t_sb_ns: &[Nanos]) {
        self.oracle_len = t_sb_ns.to_vec();
    }

    fn thread_created(&mut self, st: &SchedState, t: ThreadId) {
        self.init(st);
        self.cfs.as_mut().unwrap().thread_created(t);
        if let Some(e) = self.eevdf.as_mut() {
            e.thread_created(st, t);
        }
        if self.th.len() <= t.idx() {
            self.th.resize(t.idx() + 1, ThreadSt::default());
        }
        let s = st.thread(t).predicted_speedup;
        self.th[t.idx()].speed_fp = speed_fp(s);
        self.th[t.idx()].fast_left_at = st.now;
        let p = st.thread(t).program.idx();
        if self.created.len() <= p {
            self.created.resize(p + 1, 0);
            self.live.resize(p + 1, 0);
            self.runs_done.resize(p + 1, 0);
            self.active.resize(p + 1, 0);
            self.prog_exec.resize(p + 1, 0);
            self.fast_running.resize(p + 1, 0);
            self.prog_rate.resize(p + 1, ProgRate::default());
        }
        self.created[p] += 1;
        self.live[p] += 1;
        self.note_serial(p);
    }

    fn select_core(&mut self, st: &SchedState, t: ThreadId, kind: WakeKind) -> CoreId {
        self.choose_core(st, t, kind)
    }

    fn enqueued(&mut self, st: &SchedState, c: CoreId, t: ThreadId, wakeup: bool) {
        if wakeup {
            self.th[t.idx()].woke_at_ns = st.now;
            self.th[t.idx()].awake = true;
            let p = st.thread(t).program.idx();
            self.prog_rate[p].run_open.open(st.now, 1, st.now);
            self.active[p] += 1;
            self.note_serial(p);
            if self.params.floor {
                self.advance_even(st.now);
                self.th[t.idx()].even_from_fp = self.even_fp;
            }
            self.wanting += 1;
            if st.thread(t).last_core.is_some() {
                let s = &mut self.th[t.idx()];
                let slept = st.now.saturating_sub(s.blocked_at);
                s.avg_sleep_ns = (3 * s.avg_sleep_ns + slept) / 4;
            }
        }
        let new = st.thread(t).last_core.is_none() && wakeup;
        if wakeup && self.params.place && matches!(self.params.order, Order::Capped | Order::Owed) {
            self.place(st, t, new);
        }
        self.cfs.as_mut().unwrap().enqueued(st, c, t, wakeup, new);
        if let Some(e) = self.eevdf.as_mut() {
            e.enqueued(st, c, t, wakeup);
        }
        if self.eevdf_on(c).is_none() {
            self.index_local(st, c, t);
        }
    }

    fn should_preempt(&mut self, st: &SchedState, c: CoreId, t: ThreadId) -> bool {
        if self.params.sync_preempt && self.is_fast(c) && !self.m().slow.is_empty() {
            let gran = self.cfs().tun.min_granularity_ns;
            if self.th[t.idx()].avg_burst_ns < gran && st.current_ran(c) >= gran {
                return true;
            }
        }
        if self.eevdf_on(c).is_some() {
            return self.eevdf.as_mut().unwrap().should_preempt(st, c, t);
        }
        self.cfs().wakeup_preempt(st, c, t, self.cfs().run_scale(c))
    }

    fn pick_next(&mut self, st: &SchedState, c: CoreId) -> Pick {
        if let Some(t) = self.local(st, c) {
            return Pick::Local(t);
        }
        self.pick_idle(st, c)
    }

    fn running(&mut self, st: &SchedState, c: CoreId, t: ThreadId) {
        if self.params.core_turn
            && (self.idle_since[c.idx()].is_some() || self.turn_since[c.idx()].is_none())
        {
            self.turn_since[c.idx()] = Some(st.now);
        }
        self.idle_since[c.idx()] = None;
        {
            let fast = self.is_fast(c);
            let s = &mut self.th[t.idx()];
            debug_assert_eq!(
                s.run_factor_fp, 0,
                "thread {t} dispatched twice without a stop"
            );
            s.run_fast = fast;
            s.run_start = st.now;
            self.set_run_factor(st, t);
            if fast {
                self.fast_running[st.thread(t).program.idx()] += 1;
            }
        }
        let scale = if self.params.group {
            self.active[st.thread(t).program.idx()].max(1) as f64
        } else {
            1.0
        };
        self.cfs.as_mut().unwrap().set_run_scale(c, scale);
        if let Some(e) = self.eevdf.as_mut() {
            e.running(st, c, t);
        }
        match self.occupant[c.idx()] {
            Some((o, _)) if o == t => {}
            _ => self.occupant[c.idx()] = Some((t, st.now)),
        }
    }

    fn stopped(&mut self, st: &SchedState, c: CoreId, t: ThreadId, ran: Nanos, why: StopReason) {
        self.clear_run_factor(st, t);
        if self.is_fast(c) {
            let n = &mut self.fast_running[st.thread(t).program.idx()];
            *n = n.saturating_sub(1);
        }
        if self.is_fast(c) {
            self.th[t.idx()].fast_ns += ran;
            self.th[t.idx()].fast_left_at = st.now;
        } else {
            self.th[t.idx()].slow_ns += ran;
        }
        self.refresh_progress(st, t);
        {
            let s = &mut self.th[t.idx()];
            s.burst_ns += ran;
            if why != StopReason::Preempted {
                s.avg_burst_ns = (3 * s.avg_burst_ns + s.burst_ns) / 4;
                s.burst_ns = 0;
            }
        }
        if self.params.order == Order::Plas {
            self.prog_exec[st.thread(t).program.idx()] += ran;
        }
        let cfs = self.cfs.as_mut().unwrap();
        let scale = cfs.run_scale(c);
        cfs.stopped(st, c, t, ran, scale);
        if let Some(e) = self.eevdf.as_mut() {
            e.stopped(st, c, t, ran, why);
        }
        if why != StopReason::Preempted {
            let p = st.thread(t).program.idx();
            let a = &mut self.active[p];
            *a = a.saturating_sub(1);
            self.note_serial(p);
            if self.params.floor {
                self.advance_even(st.now);
                let s = &mut self.th[t.idx()];
                s.even_done_ns += self.even_fp.wrapping_sub(s.even_from_fp) / FP;
            }
            self.wanting = self.wanting.saturating_sub(1);
            self.th[t.idx()].has_slept = true;
            self.th[t.idx()].barrier_block = if self.params.reclaim == Reclaim::BarrierOracle {
                st.thread(t).state == RunState::Blocked(BlockKind::Barrier)
            } else {
                self.th[t.idx()].woke_by_broadcast
            };
            self.th[t.idx()].blocked_at = st.now;
            self.th[t.idx()].runnable_ns += st.now.saturating_sub(self.runnable_from(st, t));
            let woke = self.th[t.idx()].woke_at_ns;
            self.th[t.idx()].awake = false;
            let r = &mut self.prog_rate[p];
            r.run_open.close(st.now, 1, woke);
            r.run_done_ns += st.now.saturating_sub(woke);
        }
        if why == StopReason::Exited {
            let p = st.thread(t).program.idx();
            self.live[p] = self.live[p].saturating_sub(1);
            if self.live[p] == 0 {
                self.runs_done[p] += 1;
            }
            if self.occupant[c.idx()].is_some_and(|(o, _)| o == t) {
                self.occupant[c.idx()] = None;
            }
        }
    }

    fn migrated(&mut self, st: &SchedState, t: ThreadId, from: CoreId, to: CoreId) {
        self.cfs.as_mut().unwrap().migrated(st, t, from, to);
        if let Some(e) = self.eevdf.as_mut() {
            e.migrated(st, t, from, to);
        }
    }

    fn slice_ns(&self, st: &SchedState, c: CoreId, t: ThreadId) -> Nanos {
        if let Some(e) = self.eevdf_on(c) {
            return e.slice_ns(st, c, t);
        }
        self.cfs().slice(st, c)
    }

    fn tick(&mut self, st: &SchedState, c: CoreId, out: &mut Vec<Action>) -> bool {
        if !self.m().slow.is_empty() {
            if self.is_fast(c) {
                if self.params.serial_first {
                    self.serial_swap(st, c, out);
                }
                if !out.is_empty() {
                    // swapped for a serial phase
                } else if self.params.rotate {
                    self.rotate(st, c, out);
                    if self.params.core_turn && !out.is_empty() {
                        self.turn_since[c.idx()] = None;
                    }
                } else if self.params.swap {
                    self.speed_swap(st, c, out);
                }
            } else {
                self.slow_balance(st, c, out);
                // Idle fast cores look again (a thread may now be worth pulling).
                if self.params.remote {
                    let idle_fast = self.m().fast.intersect(st.idle_mask());
                    if let Some(f) = idle_fast.iter().find(|&f| Self::is_idle_empty(st, f)) {
                        out.push(Action::Resched(f));
                    }
                }
            }
        } else {
            self.cfs().periodic_balance(st, c, out);
        }
        if self.eevdf_on(c).is_some() {
            return self.eevdf.as_mut().unwrap().local_tick(st, c);
        }
        self.cfs().tick_preempt(st, c, self.cfs().run_scale(c))
    }

    fn period_ns(&self) -> Option<Nanos> {
        Some(self.params.labels.period_ns)
    }

    /// The labeller: blocking levels and fixed-point speedups.
    fn periodic(&mut self, st: &SchedState, _out: &mut Vec<Action>) {
        let mut moved = Vec::new();
        let mut speed_changed = Vec::new();
        for th in st.live_threads() {
            let Some(s) = self.th.get_mut(th.id.idx()) else {
                continue;
            };
            let was = s.high_block;
            s.high_block = s.block.update(th.blocked_others_ns, &self.params.labels);
            let speed = speed_fp(th.predicted_speedup);
            if speed != s.speed_fp {
                s.speed_fp = speed;
                speed_changed.push(th.id);
            }
            // A queued thread whose order changed is indexed again.
            if s.high_block != was && self.params.block_first && self.params.local != Local::Eevdf {
                if let Some(c) = th.core.filter(|&c| is_queued_on(st, c, th.id)) {
                    moved.push((c, th.id));
                }
            }
        }
        for t in speed_changed {
            self.refresh_progress(st, t);
            if self.th[t.idx()].run_factor_fp != 0 {
                self.clear_run_factor(st, t);
                self.set_run_factor(st, t);
            }
        }
        for (c, t) in moved {
            if self.eevdf_on(c).is_none() {
                self.index_local(st, c, t);
            }
        }
    }
}

fn local_key(th: &[ThreadSt], cfs: &CfsCore, block_first: bool, t: ThreadId) -> LocalKey {
    let blocking = block_first && th[t.idx()].high_block;
    (!blocking, cfs.vr[t.idx()])
}

/// A predicted speedup in fixed point, at least 1 (non-finite: 1).
fn speed_fp(s: f64) -> u64 {
    if s.is_finite() && s > 1.0 {
        (s.min(1e6) * FP as f64) as u64
    } else {
        FP
    }
}
