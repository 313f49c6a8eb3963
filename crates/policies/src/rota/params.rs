//! ROTA's switches: which mechanisms run, parsed from `rota:KEY=VALUE:...`.

use crate::cfs::NewStart;
use colab_labels::LabelParams;

/// ROTA's mechanisms, each a switch for ablations (`rota:rotate=off`, ...).
#[derive(Clone, Debug, PartialEq)]
pub struct RotaParams {
    /// Rotate fast-core occupants every quantum.
    pub rotate: bool,
    /// Weight fast-core shares by predicted speedup (off: equal shares).
    pub weighted: bool,
    /// Weigh by the gain over a slow core (predicted speedup - 1, as
    /// Prop-SP's credits) instead of the speedup.
    pub gain: bool,
    /// Fast cores take over threads running on slow cores.
    pub remote: bool,
    /// Waking threads go back to an idle previous core first.
    pub prev_first: bool,
    /// High-blocking threads first for fast cores (COLAB's bottleneck labels).
    pub block_first: bool,
    /// Which running threads a fast core pulls only once they ran
    /// `pull_min` (`Off`: every one at once).
    pub pull_min: PullMin,
    /// What a slow core's running thread must have run `pull_min` of
    /// before a fast core takes it over: its time on the core, or its time
    /// since it last synchronised (`sync`: got on the core, or woke another
    /// thread, the releaser's side of a barrier or a lock hand-off), as a
    /// run so far predicts the rest only within one phase.
    pub pull_from: PullFrom,
    /// How each core shares its own queue: CFS's rules (vruntime, slices
    /// of the scheduling period) or EEVDF's (virtual deadlines, lag-based
    /// placement, base slices), today's Linux.
    pub local: Local,
    /// An idle fast core that waits only for time to pass (a slow core's
    /// thread has not yet run `pull_min`, or the core has not yet been
    /// idle for a migration) looks again when that time comes, with a
    /// timer (off: at the next slow core's tick). Tried after the fifth
    /// freeze and left off: README, "ROTA's fourth and fifth freezes".
    pub recheck: bool,
    /// Whom a fast core takes from the waiting threads.
    pub order: Order,
    /// How many rotation quanta ahead of the least-served waiting thread a
    /// thread may be and still keep its FIFO place (`order=capped`).
    pub cap_quanta: u64,
    /// CFS's placement rule for fast-core time (`place_entity`): a new
    /// thread starts level with the least-served thread that wants a core,
    /// and a waking one at most a cap behind it, so neither creating
    /// threads nor sleeping earns unbounded priority (capped and owed
    /// orders).
    pub place: bool,
    /// Who may take a rotating occupant's fast core (FIFO and turn orders).
    pub rotate_after: RotateAfter,
    /// A fast core's occupant swaps with a waiting thread whose predicted
    /// speedup is higher by a third of the machine's range or more.
    pub swap: bool,
    /// Serial phases first: the only runnable thread of a program that has
    /// had several (Amdahl's bottleneck; camp-tocs12's sequential boost)
    /// goes before everyone for fast cores and takes one at the next tick.
    pub serial_first: bool,
    /// Fairness between programs, not threads: a thread's vruntime grows
    /// with its program's runnable thread count (CFS group scheduling with
    /// one group per program, as autogroup / per-service cgroups give), so a
    /// program's last runnable thread (a barrier's straggler, a serial
    /// phase) gets its program's whole share.
    pub group: bool,
    /// A waking thread whose runs are short (under CFS's minimum
    /// granularity on average: it synchronises) preempts a fast core's
    /// thread that has run longer than that, when no core is idle.
    pub sync_preempt: bool,
    /// Fast cores only for a synchronising thread that gains more from a
    /// share of a fast core than from a slow core of its own: one whose
    /// bursts are shorter than the rotation quantum (rotation cannot even
    /// out its barrier phases) and whose predicted speedup exceeds the
    /// threads wanting a core per fast core. It queues on a fast core
    /// instead of taking a slow one.
    pub fit: bool,
    /// A waking thread whose bursts between sleeps are shorter than a
    /// cross-cluster migration stays in its previous core's cluster (an
    /// idle core there, else the shortest queue there): the move would
    /// cost more than the burst it serves (`on`); or only when that cluster
    /// is the fast one (`fast`): from a slow core the move also buys a
    /// speedup that lasts while the thread keeps staying, and a short-burst
    /// thread that stayed on slow cores never reached a fast one (ferret's
    /// pipeline in 4B-9); or never (`off`).
    pub stay: Stay,
    /// Where a new thread starts in its core's queue: CFS's START_DEBIT, a
    /// slice of the period behind min_vruntime (`debit`; the slice shrinks
    /// as the queue grows, so a thread created later can start ahead of an
    /// earlier one that still waits); at min_vruntime, in arrival order
    /// (`min`); at the mean vruntime of the core's threads, as EEVDF
    /// places a new task (`avg`); or debited but never ahead of the
    /// previous new thread on the core (`debit-fifo`, the default).
    pub new_start: NewStart,
    /// An idle fast core whose last thread sleeps briefly (under a
    /// cross-cluster migration on average) is held for it, against
    /// takeovers of any program's thread, until it has been idle for a
    /// migration (off: only against its own program's threads).
    pub hold: bool,
    /// Threads of one program take turns on a fast core (on since the
    /// tenth freeze): an occupant that no waiting thread outranks still
    /// gives way, after the quantum, to the thread of its own program on a
    /// slow core longest away from a fast core (the program's gradient,
    /// not which of its threads holds the core, decides its share; a
    /// barrier phase ends with its slowest thread, so its share is best
    /// spread over its threads). Inert in the capped order and in FIFO
    /// orders with `rotate-after=owed|turn`, which rotate by their own rules.
    pub sibling_turns: bool,
    /// A thread's runnable time runs from its wake-up to its block, across
    /// preemptions (on since the eleventh freeze; off: from its last
    /// queueing, as the tenth and earlier freezes read it, which lost the
    /// runnable time before a preemption). `order=ntt-pr` always counts
    /// from the wake-up.
    pub full_wait: bool,
    /// Where a waking thread queues when no core is idle
    /// ([`ShareFast`]).
    pub share_fast: ShareFast,
    /// The rotation quantum: 200 cross-cluster migrations, so that a swap
    /// costs at most 1% of it (`migrations`); or CFS's minimum slice,
    /// 0.75 ms x (1 + ilog2 of the core count, at most 8), the granularity
    /// at which the kernel time-shares one core (`slice`); or, for the
    /// rotation only, the CPU time the first waiting thread has had so
    /// far, between those two (`age`).
    pub quantum: Quantum,
    /// A floor under each thread's fast-core time: a thread that wants a
    /// core and has had more than `cap` quanta less fast-core time than an
    /// even split would have given it (each thread that wants a core gets
    /// min(1, fast cores / threads wanting a core) of a fast core while it
    /// wants one, the share a per-thread fair scheduler aims at) ranks
    /// before every thread that has not, the order's key deciding among
    /// each group. Tried after the eleventh freeze, left off.
    pub floor: bool,
    /// An idle fast core whose thread blocked first takes over a thread of
    /// the same program running on a slow core (within `pull_min` and
    /// `hold`'s rules), before any queued thread: a barrier phase ends with
    /// its slowest thread, which is the one to speed up (tried after the
    /// eleventh freeze).
    pub straggler: bool,
    /// An idle fast core whose occupant blocked while every other runnable
    /// thread of its program runs on a fast core waits for it, up to CFS's
    /// minimum slice, rather than take another thread: the program's
    /// threads fit the fast cores as a gang and the sleeper will be woken
    /// by one of them (a barrier), so the core given away would split the
    /// gang (lu_cb in NSync-1). On since the twelfth freeze.
    pub gang: bool,
    /// `gang` holds only for a program whose live threads (created, not
    /// exited) number at most the fast cores: a program with more threads
    /// does not fit them as a gang, and holding for it idles fast cores
    /// in its phases with few runnable threads (fmm in 4B-2 on 2B2S).
    /// On since the thirteenth freeze.
    pub gang_fit: bool,
    /// Per-thread gradient orders (`ntt`, and `ntt-seen` before a program
    /// is seen again): the one-quantum full-speed prior of a thread's rate
    /// divided among its program's live threads, so that a thread of a
    /// program of many that is runnable only briefly (ferret's stages) no
    /// longer looks barely behind. Tried after the fourteenth freeze; on
    /// since the fifteenth.
    pub split_prior: bool,
    /// A waking thread does not take an idle core whose last thread is a
    /// sibling (same program) that blocked after it did: both wait at one
    /// synchronisation, the sibling wakes with it (a barrier's broadcast)
    /// and would find its core taken, so that greedy wake-ups in turn
    /// rotate a barrier program's threads across clusters at every barrier
    /// (lu_cb in 2B-3: 48 migrations in its first 16 ms where EEVDF made
    /// 3). It takes another idle core, else queues as when none is idle. A
    /// sibling that blocked first (a main thread at a join) leaves its core
    /// to anyone. Tried after the twelfth freeze; on since the fourteenth.
    /// `barrier` (tried after the fourteenth; the default since the
    /// fifteenth): only when both blocked at a barrier, the one wait after
    /// which every waiter wakes with the others; siblings that sleep or
    /// wait on locks, queues or signalled conditions do not wake with the
    /// waker. Since the sixteenth read as a kernel can: the waking thread
    /// is let go by a wake-all (a futex wake of every waiter), and the
    /// sibling's wait before its current one ended in one
    /// (`barrier-oracle`: the simulator's wait kinds, as the fifteenth read
    /// them).
    pub reclaim: Reclaim,
    /// A fast core's rotation counts how long the core has been held since
    /// it last took a thread by rank (after idling, a steal, a takeover or
    /// a rotation), not how long its current thread has: threads that
    /// take turns on it from its own queue, waking and blocking (a barrier
    /// program's), hold it together, so a thread running on a slow core
    /// that outranks them gets its turn (a CPU hog never queues, and its
    /// age sets the turn it waits for). Tried after the fifteenth freeze.
    pub core_turn: bool,
    /// With `share-fast`, a waking thread of a program with more live
    /// threads than there are fast cores (no gang the fast cores can hold,
    /// as `gang-fit` reads it) queues on a fast core only when no thread
    /// that wants a fast core from the slow cluster (queued or running
    /// there) ranks before it; otherwise it queues on the slow cluster.
    /// The order then decides who shares the fast cores at wake-up too, not
    /// only at steals and rotations: threads that wake often kept the fast
    /// queues full, each restarting the occupant's hold, while
    /// better-ranked CPU hogs ran on slow cores and never reached the turn
    /// their age asked (swaptions beside fmm and water_spatial in 4B-9).
    /// A program that fits the fast cores is left out: sending one of its
    /// threads to a slow core splits its barrier phases. The seventeenth
    /// freeze (`5756a5d`) switched it on; its held-out run (seed 14142)
    /// lost to the sixteenth, so it is off (book/src/results/rota.md).
    pub share_rank: bool,
    /// The cross-cluster migration cost ROTA's constants derive from
    /// (`migration-us=US`, as scx_colab's `--migration-us`); None: the
    /// topology's. Only the policy's constants: the engine still charges
    /// the topology's cost for every migration.
    pub migration_ns: Option<u64>,
    /// The labeller's period and blocking threshold (colab-labels).
    pub labels: LabelParams,
}

impl Default for RotaParams {
    fn default() -> Self {
        RotaParams {
            rotate: true,
            weighted: true,
            gain: false,
            remote: true,
            prev_first: true,
            block_first: false,
            pull_min: PullMin::Siblings,
            pull_from: PullFrom::Sync,
            local: Local::Cfs,
            recheck: false,
            order: Order::NttSeen,
            rotate_after: RotateAfter::Wait,
            place: true,
            cap_quanta: 1,
            swap: false,
            serial_first: true,
            group: false,
            sync_preempt: false,
            fit: false,
            stay: Stay::On,
            new_start: NewStart::DebitFifo,
            hold: true,
            sibling_turns: true,
            full_wait: true,
            share_fast: ShareFast::Short,
            quantum: Quantum::Age,
            floor: false,
            straggler: false,
            gang: true,
            gang_fit: true,
            split_prior: true,
            reclaim: Reclaim::Barrier,
            core_turn: false,
            share_rank: false,
            migration_ns: None,
            labels: LabelParams::default(),
        }
    }
}

/// The switches `rota:` accepts, for messages and `colab list`.
pub const ROTA_OPTIONS_HELP: &str = rota_options_help!();

impl RotaParams {
    /// Applies `key=on|off` options separated by `:` (after `rota:`).
    pub fn parse_options(&mut self, text: &str) -> Result<(), String> {
        for opt in text.split(':').filter(|o| !o.is_empty()) {
            let (k, v) = opt
                .split_once('=')
                .ok_or_else(|| format!("option '{opt}' is not KEY=on|off ({ROTA_OPTIONS_HELP})"))?;
            if k == "rotate-after" {
                use RotateAfter::*;
                self.rotate_after =
                    crate::one_of(k, v, &[("wait", Wait), ("turn", Turn), ("owed", Owed)])?;
                continue;
            }
            if k == "pull-from" {
                use PullFrom::*;
                self.pull_from = crate::one_of(k, v, &[("core", Core), ("sync", Sync)])?;
                continue;
            }
            if k == "new-start" {
                use NewStart::*;
                self.new_start = crate::one_of(
                    k,
                    v,
                    &[
                        ("debit", Debit),
                        ("min", Min),
                        ("avg", Avg),
                        ("debit-fifo", DebitFifo),
                    ],
                )?;
                continue;
            }
            if k == "share-fast" {
                use ShareFast::*;
                self.share_fast =
                    crate::one_of(k, v, &[("on", On), ("off", Off), ("short", Short)])?;
                continue;
            }
            if k == "local" {
                use Local::*;
                self.local = crate::one_of(
                    k,
                    v,
                    &[("cfs", Cfs), ("eevdf", Eevdf), ("eevdf-fast", EevdfFast)],
                )?;
                continue;
            }
            if k == "reclaim" {
                use Reclaim::*;
                self.reclaim = crate::one_of(
                    k,
                    v,
                    &[
                        ("on", On),
                        ("off", Off),
                        ("barrier", Barrier),
                        ("barrier-oracle", BarrierOracle),
                    ],
                )?;
                continue;
            }
            if k == "pull-min" {
                self.pull_min = crate::one_of(
                    k,
                    v,
                    &[
                        ("on", PullMin::On),
                        ("off", PullMin::Off),
                        ("siblings", PullMin::Siblings),
                        ("siblings-short", PullMin::SiblingsShort),
                    ],
                )?;
                continue;
            }
            if k == "stay" {
                use Stay::*;
                self.stay = crate::one_of(k, v, &[("on", On), ("off", Off), ("fast", Fast)])?;
                continue;
            }
            if k == "quantum" {
                use Quantum::*;
                self.quantum = crate::one_of(
                    k,
                    v,
                    &[("slice", Slice), ("migrations", Migrations), ("age", Age)],
                )?;
                continue;
            }
            if k == "migration-us" {
                let us: f64 = v
                    .parse()
                    .ok()
                    .filter(|u: &f64| u.is_finite() && *u > 0.0 && *u <= 100_000.0)
                    .ok_or_else(|| {
                        format!("'migration-us' takes microseconds, above 0 and up to 100000, not '{v}'")
                    })?;
                self.migration_ns = Some(((us * 1000.0).round() as u64).max(1));
                continue;
            }
            if k == "cap" {
                self.cap_quanta = v.parse().ok().filter(|&q| q <= 1000).ok_or_else(|| {
                    format!("'cap' takes a whole number of quanta, 0 to 1000, not '{v}'")
                })?;
                continue;
            }
            if k == "order" {
                use Order::*;
                self.order = crate::one_of(
                    k,
                    v,
                    &[
                        ("capped", Capped),
                        ("fifo", Fifo),
                        ("turn", Turn),
                        ("owed", Owed),
                        ("share", Share),
                        ("speed", Speed),
                        ("tlp", Tlp),
                        ("las", Las),
                        ("plas", Plas),
                        ("ntt", Ntt),
                        ("ntt-las", NttLas),
                        ("ntt-prog", NttProg),
                        ("ntt-pr", NttPr),
                        ("ntt-pt", NttPt),
                        ("sjf-oracle", SjfOracle),
                        ("ntt-seen", NttSeen),
                        ("ntt-pt-seen", NttPtSeen),
                    ],
                )?;
                continue;
            }
            let on = crate::on_off(k, v)?;
            match k {
                "rotate" => self.rotate = on,
                "weighted" => self.weighted = on,
                "gain" => self.gain = on,
                "remote" => self.remote = on,
                "prev-first" => self.prev_first = on,
                "block-first" => self.block_first = on,
                "recheck" => self.recheck = on,
                "swap" => self.swap = on,
                "serial-first" => self.serial_first = on,
                "group" => self.group = on,
                "sync-preempt" => self.sync_preempt = on,
                "place" => self.place = on,
                "fit" => self.fit = on,
                "hold" => self.hold = on,
                "sibling-turns" => self.sibling_turns = on,
                "full-wait" => self.full_wait = on,
                "floor" => self.floor = on,
                "straggler" => self.straggler = on,
                "gang" => self.gang = on,
                "gang-fit" => self.gang_fit = on,
                "split-prior" => self.split_prior = on,
                "core-turn" => self.core_turn = on,
                "share-rank" => self.share_rank = on,
                _ => return Err(format!("unknown option '{k}' ({ROTA_OPTIONS_HELP})")),
            }
        }
        Ok(())
    }
}

/// The order in which a fast core takes waiting threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Least fast-core time per unit of predicted speedup first.
    Owed,
    /// Runnable the longest first (RR's order).
    Fifo,
    /// FIFO among the threads within a quantum of the least fast-core time
    /// (per unit of speedup) of all waiting threads; the rest after them.
    Capped,
    /// The smallest share of its runnable time spent on fast cores (per
    /// unit of predicted speedup) first: fast cores shared in proportion
    /// to the time threads want a core, so sleeping earns no priority.
    Share,
    /// Longest wait times predicted speedup first: aging weighted by how
    /// much a fast core gains.
    Speed,
    /// Longest without a fast-core turn first: a thread keeps its place
    /// while it sleeps (FIFO over turns, not over wake-ups).
    Turn,
    /// Least attained service first: the least CPU time so far per unit
    /// of predicted speedup.
    Las,
    /// Least attained service of the thread's program (CPU time of all its
    /// threads) per unit of predicted speedup.
    Plas,
    /// Threads of programs with fewer runnable threads first (a fast core
    /// speeds up a larger share of such a program), then the longest waiting.
    Tlp,
    /// The largest marginal gain in mean normalised turnaround first: a
    /// thread progressing at rate r (fast-core-equivalent work per unit of
    /// runnable time) and gaining 1 - 1/s of a unit of work per unit of
    /// fast-core time lowers its slowdown 1/r by (1 - 1/s) / r^2 per unit
    /// of fast time; the greedy choice by that gradient moves the shares
    /// toward those that minimise the sum of slowdowns.
    Ntt,
    /// As `Ntt`, per unit of fast time rather than of fast share: a run
    /// of length A progressing at rate r loses (1 - 1/s) / (r A) of
    /// slowdown per unit of fast time, with A, unknown, taken as the
    /// progress so far (least attained service's estimate).
    NttLas,
    /// As `Ntt`, for the program's slowdown: the gradient divided by the
    /// program's runnable threads, since a unit of fast time to one of n
    /// threads sharing a program's work advances the program by 1/n of it.
    NttProg,
    /// As `NttProg`, with r the program's (the default from the eleventh
    /// to the thirteenth freeze): its threads' runnable time, from each wake-up to the block,
    /// over their progress, both summed over the program's threads and
    /// kept as they change, with one quantum's prior per program. A
    /// pipeline's stages that wait on a slow upstream stage, and a
    /// program's threads that wait at its barriers, block rather than wait
    /// runnable; summed over the program, the runnable time of those that
    /// do wait counts for all of them.
    NttPr,
    /// As `NttPr` without the division by the program's runnable threads:
    /// each thread weighs as much as a program of its own, as per-thread
    /// fair schedulers weigh threads (tried after the eleventh freeze).
    NttPt,
    /// Oracle mode, for ablations only: the program shortest alone on big
    /// cores first (its T_SB, handed over before the run; no real kernel
    /// knows it). With every program started at once, shortest-first is
    /// what minimises the mean slowdown on one core; it measures what a
    /// program's length would be worth to the other rules.
    SjfOracle,
    /// `Ntt` for a program the scheduler has not seen finish, `NttPr` for
    /// one it has (its executable run again: a kernel sees the exec of a
    /// path that exited before). A restarted program is part of a steady
    /// load, in which finishing removes no work: the program gradient is
    /// then the optimum of the sum of slowdowns. In a one-shot batch a
    /// program that finishes leaves its cores to the rest, which the
    /// gradient does not count; per-thread shares, as per-thread fair
    /// schedulers give, serve the programs whose work is spread over more
    /// threads sooner (tried after the thirteenth freeze; the default since
    /// the fourteenth).
    NttSeen,
    /// As `NttSeen` with `NttPt` before a program is seen to finish: each
    /// thread weighs as a program of its own, as in `Ntt`, but at its
    /// program's rate, so that the threads of a program that waits in
    /// short runnable spells (a pipeline's stages) still show how far
    /// behind the program is (tried after the fourteenth freeze).
    NttPtSeen,
}

/// Which waiting threads may take a fast core from an occupant that has
/// held it for a rotation quantum (in FIFO and turn orders).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RotateAfter {
    /// One that has been waiting since before the occupant took the core.
    /// A thread that sleeps and wakes often never qualifies, so a CPU hog
    /// keeps its fast core against synchronising programs.
    Wait,
    /// One that has not been on a fast core since before the occupant took
    /// the core (whether or not it slept in between).
    Turn,
    /// The one with the least fast-core time, if it has had a quantum less
    /// of it than the occupant (counting the occupant's current run).
    Owed,
}

/// Which threads running on a slow core an idle fast core takes over only
/// once they have run `pull_min` in their phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PullMin {
    /// None: every one at once.
    Off,
    /// Every one.
    On,
    /// Only a thread of the program whose thread last left the fast core
    /// (it blocked at the barrier or lock the slow thread is heading for,
    /// so the move would be undone when it wakes); one of another program,
    /// or one wanted by a core no thread has left, is taken over at once
    /// (still after `hold`'s wait). The default since the eighteenth freeze.
    Siblings,
    /// As `Siblings`, and also any thread whose bursts are short (it has
    /// slept, and its runs between sleeps, on average and now, are under
    /// `pull_min`): moved at once it would block again before it had repaid
    /// its migration, whichever program left the core.
    SiblingsShort,
}

impl PullMin {
    /// Whether the minimum run holds for any thread (and `hold` with it).
    pub fn on(self) -> bool {
        self != PullMin::Off
    }
}

/// Where the run a takeover weighs against `pull_min` starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PullFrom {
    /// When the thread got on its core.
    Core,
    /// The later of that and when it last woke another thread.
    Sync,
}

/// The rules by which a core shares its own queue among its threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Local {
    /// CFS (before 6.6): leftmost vruntime, slices of the scheduling period.
    Cfs,
    /// EEVDF (6.6 on): earliest eligible virtual deadline, lag kept across
    /// sleeps and migrations, base-slice requests.
    Eevdf,
    /// EEVDF's rules on fast cores, CFS's on slow ones: a short program's
    /// late threads get in on a fast core held by a long program's thread
    /// within a base slice, while slow cores keep CFS's sleeper credit.
    EevdfFast,
}

/// Which blocked siblings' idle cores a waking thread leaves to them
/// ([`RotaParams::reclaim`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reclaim {
    Off,
    /// Any sibling that blocked after the waking thread.
    On,
    /// Only when both blocked at a barrier, as a kernel can tell: the
    /// waking thread is let go by a wake-all, and the sibling's last wait
    /// before this one also ended in one.
    Barrier,
    /// `Barrier` by the simulator's ground truth of what each thread waits
    /// on (an ablation: no kernel sees it at block time).
    BarrierOracle,
}

/// Where a waking thread queues when no core is idle
/// ([`RotaParams::share_fast`]); with `Short`, a new thread as with `On`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShareFast {
    /// On the slow cores only: fast cores run one thread each and rotate.
    Off,
    /// On the shortest queue of any cluster, fast cores included.
    On,
    /// As `On` for a thread whose bursts, on average and the last one, are
    /// shorter than CFS's minimum slice (the shortest an occupant keeps a
    /// fast core: a thread that runs briefly and sleeps shares a fast
    /// queue at little cost to its occupant, and barrier phases are not
    /// split by it); a longer-burst thread queues on the slow cores and
    /// reaches a fast core by rank (steal, takeover, rotation), so that
    /// sharing a fast queue does not hand it fast-core time the order
    /// would give another (a one-thread program's fast core shared with
    /// every waking thread of its neighbours, fft in 4B-2).
    Short,
}

/// Where a short-burst thread stays at wake-up ([`RotaParams::stay`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stay {
    Off,
    On,
    Fast,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantum {
    Slice,
    Migrations,
    Age,
}
