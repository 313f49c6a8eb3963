//! A sched_ext scheduler's own code behind the simulator's hook table: the
//! order of struct_ops callbacks around each simulated event, as
//! kernel/sched/ext.c of Linux 6.12 calls them.
//!
//! | simulator hook | kernel path | callbacks, in order |
//! |---|---|---|
//! | `thread_created` | `scx_fork` / `scx_post_fork` | init_task, enable |
//! | `select_core` | `try_to_wake_up` → `select_task_rq_scx` | sched_waking (tp), select_cpu (or the built-in selection) |
//! | `enqueued` (wake-up) | `enqueue_task_scx` | runnable, then direct dispatch or enqueue |
//! | `tick` | `task_tick_scx` | tick; slice out → `balance_one`: dispatch (prev still running) |
//! | `stopped` (preempted) + `enqueued` | `put_prev_task_scx` | stopping(true), enqueue (ENQ_LAST when nothing else) or local head |
//! | `stopped` (blocked) | `dequeue_task_scx` | fentry/futex_wait (futex waits), stopping(false), quiescent |
//! | `pick_next` | `balance_one` + `pick_task_scx` | local DSQ, global DSQ, dispatch (up to 32 rounds), update_idle |
//! | `running` | `set_next_task_scx` | update_idle(false), running, fexit/futex_wait |
//! | `take_actions` | `scx_bpf_kick_cpu` → `kick_cpus_irq_workfn` | kicks act at once (IDLE wakes, PREEMPT zeroes the slice and reschedules) |
//!
//! Exited threads get exit_task after their CPU's next pick (the kernel
//! frees a dead task later still). Callbacks with no simulated event
//! (dequeue of a queued task, yield, cpu_acquire/release, set_weight,
//! set_cpumask, cgroups, hotplug, dump) are never called.

use colab_core::{
    Action, BlockKind, CoreId, Nanos, Pick, Policy, RunState, SchedState, StopReason, ThreadId,
    WakeKind,
};

use crate::ffi::{op, Object};
use crate::kernel::{self, Cb, Scx, Task};
use crate::maps::Map;
use crate::user::UserSpace;

/// Kicks per CPU at one instant of simulated time beyond which the run
/// ends as a livelock (assumption: far above any scheduler's real use, a
/// few kicks per CPU per event).
const KICKS_PER_INSTANT: u64 = 10_000;

/// Result of `balance_one`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bal {
    /// Keep running the current task.
    Keep,
    /// The local DSQ has a task.
    Local,
    /// Nothing to run.
    Empty,
}

/// Attached tracing programs (function addresses), by the event that runs them.
#[derive(Default)]
struct Progs {
    futex_wait_enter: Vec<usize>,
    futex_wait_exit: Vec<usize>,
    sched_waking: Vec<usize>,
    sched_switch: Vec<usize>,
}

pub struct Hosted {
    name: &'static str,
    obj: Option<Object>,
    k: *mut Scx,
    user: Box<dyn UserSpace>,
    progs: Progs,
    /// The vtable the object calls through (kept alive here).
    vtable: Option<Box<kernel::VTable>>,
    /// Each program's leader pid (its tgid), by program index.
    leaders: Vec<i32>,
    /// Waker context of the wake-up in progress: (cpu, current task).
    waker: (usize, *mut u8),
}

// SAFETY: the raw pointers are owned by this policy (its kernel state and
// its object's memory) and used only by the thread running its simulation.
unsafe impl Send for Hosted {}

impl Hosted {
    pub(crate) fn new(
        name: &'static str,
        obj: Object,
        user: Box<dyn UserSpace>,
    ) -> Result<Hosted, crate::HostError> {
        let mut progs = Progs::default();
        let bad = |problem: String| crate::HostError::Load {
            scheduler: name.to_string(),
            problem,
        };
        for m in &obj.maps {
            if !crate::maps::ty::supported(m.type_) {
                return Err(bad(format!(
                    "map '{}' is a {}, which the simulator's sched_ext host does not provide",
                    m.name,
                    crate::maps::ty::name(m.type_)
                )));
            }
        }
        for p in &obj.progs {
            if !user.autoload(&p.name) {
                continue;
            }
            let list = match p.section.as_str() {
                "fentry/futex_wait" => &mut progs.futex_wait_enter,
                "fexit/futex_wait" => &mut progs.futex_wait_exit,
                "tp_btf/sched_waking" => &mut progs.sched_waking,
                "tp_btf/sched_switch" => &mut progs.sched_switch,
                // PI futexes: no simulated program takes one (glibc's default
                // mutexes are not PI), so these never run.
                "fentry/futex_lock_pi" | "fexit/futex_lock_pi" => continue,
                // Run by the user-space side through BPF_PROG_RUN
                // (user::run_syscall), never attached.
                "syscall" => continue,
                other => {
                    return Err(bad(format!(
                        "program '{}' attaches to '{other}', an event the simulator does not have",
                        p.name
                    )))
                }
            };
            list.push(p.func);
        }
        Ok(Hosted {
            name,
            obj: Some(obj),
            k: std::ptr::null_mut(),
            user,
            progs,
            vtable: None,
            leaders: Vec::new(),
            waker: (0, std::ptr::null_mut()),
        })
    }

    fn obj(&self) -> &Object {
        self.obj.as_ref().expect("the object is held until drop")
    }

    /// The object's entry points, counting the call about to be made.
    fn entry(&self) -> &crate::ffi::Entry {
        if !self.k.is_null() {
            self.k().calls += 1;
        }
        &self.obj().entry
    }

    fn has(&self, bit: u64) -> bool {
        self.obj().desc.ops_mask & bit != 0
    }

    /// The kernel state. Never held across a call into the BPF code.
    #[allow(clippy::mut_from_ref)]
    fn k(&self) -> &mut Scx {
        // SAFETY: k is set in `start` and lives until drop; callers keep the
        // reference only between calls into the BPF code (see kernel::k).
        unsafe { &mut *self.k }
    }

    /// Loads the scheduler onto `st`'s machine at the first hook: the
    /// user-space settings, then ops.init.
    fn start(&mut self, st: &SchedState) {
        if !self.k.is_null() {
            return;
        }
        let topo = &st.topo;
        let ncpu = topo.num_cores();
        let obj = self.obj.as_mut().unwrap();
        let maps = obj.maps.iter().map(|d| Map::new(d.clone(), ncpu)).collect();
        let caps = topo
            .cores()
            .map(|c| (topo.capacity(c) * 1024.0).round() as u32)
            .collect();
        let scx = Box::new(Scx::new(obj.desc, ncpu, caps, maps));
        self.k = Box::into_raw(scx);
        let vt = Box::new(kernel::vtable(self.k));
        // SAFETY: the object's `scx_host` global has the VTable's layout.
        unsafe {
            std::ptr::copy_nonoverlapping(
                &*vt as *const kernel::VTable as *const u8,
                obj.vtable as *mut u8,
                std::mem::size_of::<kernel::VTable>(),
            )
        };
        self.vtable = Some(vt);
        if ncpu > kernel::MAX_CPUS {
            self.k().fail(format!(
                "{ncpu} CPUs: the host handles at most {}",
                kernel::MAX_CPUS
            ));
            return;
        }
        if let Err(e) = self.user.configure(obj, topo) {
            self.k().fail(e);
            return;
        }
        self.k().now = st.now;
        if self.has(op::INIT) {
            self.cx(0, None, Cb::Init);
            // SAFETY: the object's entry point; no Rust reference to k is live.
            let r = unsafe { (self.entry().init)() };
            self.k().cx.cb = Cb::None;
            if r != 0 {
                self.k().fail(format!("ops.init() failed ({r})"));
            }
        }
        // Every CPU goes idle through the scheduler once, as each CPU of a
        // running machine does soon after a scheduler attaches: a dispatch
        // that finds nothing, then update_idle.
        for c in 0..ncpu {
            if self.k().error.is_some() {
                break;
            }
            self.k().cpus[c].idle = false;
            self.balance(c, None, false);
            self.k().set_idle_bit(c, true);
            self.k().cpus[c].idle = true;
            if self.has(op::UPDATE_IDLE) {
                self.cx(c, None, Cb::Other);
                // SAFETY: entry point; no Rust reference to k is live.
                unsafe { (self.entry().update_idle)(c as i32, true) };
                self.k().cx.cb = Cb::None;
            }
        }
        self.k().kicks.clear();
        self.k().clock = kernel::CLOCK_AT_START;
    }

    /// Sets the kfunc context: CPU `cpu`, current task `t` (None: the idle task).
    fn cx(&self, cpu: usize, t: Option<u32>, cb: Cb) {
        let k = self.k();
        k.cx.cpu = cpu;
        k.cx.current = match t {
            Some(i) => k.ptr(i),
            None => k.swapper_ptr(cpu),
        };
        k.cx.cb = cb;
    }

    fn sync(&mut self, st: &SchedState) {
        self.start(st);
        self.k().now = st.now;
    }

    fn p(&self, i: u32) -> *mut u8 {
        self.k().ptr(i)
    }

    fn call_progs(&self, progs: &[usize], args: [u64; 6]) {
        let call = self.obj().entry.call_prog;
        for &f in progs {
            self.k().calls += 1;
            // SAFETY: a tracing program of the object; integer/pointer args.
            unsafe { call(f, args[0], args[1], args[2], args[3], args[4], args[5]) };
        }
    }

    /// `do_enqueue_task`: direct dispatch, ops.enqueue, or the global DSQ.
    fn do_enqueue(&mut self, i: u32, flags: u64) {
        let ddsp = self.k().tasks[i as usize].ddsp.take();
        let local = self.k().tasks[i as usize].cpu;
        if let Some((dsq, f)) = ddsp {
            self.k().insert(i, dsq, flags | f, local);
            return;
        }
        if !self.has(op::ENQUEUE) {
            self.k().insert(i, kernel::DSQ_GLOBAL, flags, local);
            return;
        }
        {
            let k = self.k();
            k.cx.cb = Cb::Enqueue;
            k.cx.ddsp_task = Some(i);
        }
        let p = self.p(i);
        // SAFETY: entry point; no Rust reference to k is live.
        unsafe { (self.entry().enqueue)(p, flags) };
        let k = self.k();
        k.cx.cb = Cb::None;
        k.cx.ddsp_task = None;
        let local = k.tasks[i as usize].cpu;
        match k.tasks[i as usize].ddsp.take() {
            Some((dsq, f)) => k.insert(i, dsq, flags | f, local),
            None => k.tasks[i as usize].custody = true,
        }
    }

    /// `balance_one`: what `c` runs next, `prev` the task that ran there
    /// (`on_rq`: still runnable).
    fn balance(&mut self, c: usize, prev: Option<u32>, on_rq: bool) -> Bal {
        let keep = |h: &Hosted| on_rq && prev.is_some_and(|t| h.k().slice(t) > 0);
        if keep(self) {
            return Bal::Keep;
        }
        if self.k().local_len(c) > 0 || self.k().consume_global(c) {
            return Bal::Local;
        }
        if self.has(op::DISPATCH) {
            for _ in 0..kernel::DSP_MAX_LOOPS {
                self.cx(c, prev, Cb::Dispatch);
                self.k().cx.dsp_n = 0;
                let pp = prev.map_or(std::ptr::null_mut(), |t| self.p(t));
                // SAFETY: entry point; no Rust reference to k is live.
                unsafe { (self.entry().dispatch)(c as i32, pp) };
                let k = self.k();
                k.flush_dispatch(c);
                k.cx.cb = Cb::None;
                if keep(self) {
                    return Bal::Keep;
                }
                if self.k().local_len(c) > 0 || self.k().consume_global(c) {
                    return Bal::Local;
                }
                if self.k().cx.dsp_n == 0 || self.k().error.is_some() {
                    break;
                }
            }
        }
        if on_rq && prev.is_some() && self.obj().desc.ops_flags & kernel::OPS_ENQ_LAST == 0 {
            return Bal::Keep;
        }
        Bal::Empty
    }

    /// The current task of `c` keeps its CPU: a zero slice is refilled
    /// (`pick_task_scx`).
    fn keep(&self, t: u32) {
        if self.k().slice(t) == 0 {
            self.k().set_slice(t, kernel::SLICE_DFL);
        }
    }

    /// A busy CPU reschedules (its slice ran out, or a kick): true when its
    /// task must go (the balance already filled its local DSQ, or it idles).
    fn resched_busy(&mut self, c: usize) -> bool {
        let Some(t) = self.k().cpus[c].curr else {
            return false;
        };
        if self.k().cpus[c].balanced {
            return true;
        }
        self.k().update_curr(c);
        match self.balance(c, Some(t), true) {
            Bal::Keep => {
                self.keep(t);
                false
            }
            bal => {
                let cpu = &mut self.k().cpus[c];
                cpu.balanced = true;
                cpu.put_flags = if bal == Bal::Empty {
                    kernel::ENQ_LAST
                } else {
                    0
                };
                true
            }
        }
    }

    /// `__schedule`'s context switch on `ci` to `next` (None: the idle
    /// task): the sched_switch tracepoint, when the task changes.
    fn switch_to(&mut self, ci: usize, next: Option<u32>) {
        let prev = self.k().cpus[ci].on_cpu;
        if prev == next {
            return;
        }
        self.k().cpus[ci].on_cpu = next;
        if self.progs.sched_switch.is_empty() {
            return;
        }
        let state = if prev.is_some() {
            self.k().cpus[ci].prev_state
        } else {
            0
        };
        let ptr = |h: &Hosted, t: Option<u32>| match t {
            Some(i) => h.k().ptr(i),
            None => h.k().swapper_ptr(ci),
        };
        let (pp, np) = (ptr(self, prev), ptr(self, next));
        self.cx(ci, prev, Cb::Other);
        let preempt = u64::from(prev.is_some() && state == 0);
        self.call_progs(
            &self.progs.sched_switch,
            [preempt, pp as u64, np as u64, state, 0, 0],
        );
        self.k().cx.cb = Cb::None;
    }

    /// The bytes of global `name` of the scheduler's object (what user
    /// space reads from its .bss), `len` of them.
    pub fn global_bytes(&self, name: &str, len: usize) -> Option<Vec<u8>> {
        let p = self.obj.as_ref()?.global(name)?;
        // SAFETY: the caller names a global of at least `len` bytes; no BPF
        // code runs while a policy's method runs.
        Some(unsafe { std::slice::from_raw_parts(p, len) }.to_vec())
    }

    /// Every (key, value) of hash map `name` as user space would read it.
    pub fn map_entries(&self, name: &str) -> Vec<(Vec<u8>, Vec<u8>)> {
        if self.k.is_null() {
            return Vec::new();
        }
        self.k()
            .maps
            .iter()
            .find(|m| m.def.name == name)
            .map_or_else(Vec::new, |m| m.entries())
    }

    fn leader_pid(&mut self, st: &SchedState, t: ThreadId) -> i32 {
        let prog = st.thread(t).program.idx();
        if self.leaders.len() <= prog {
            self.leaders.resize(prog + 1, 0);
        }
        if self.leaders[prog] == 0 {
            self.leaders[prog] = t.0 as i32 + 1;
        }
        self.leaders[prog]
    }
}

impl Drop for Hosted {
    fn drop(&mut self) {
        if !self.k.is_null() {
            if self.has(op::EXIT) {
                let (kind, msg) = match &self.k().error {
                    Some(_) => (1025, c"error"),
                    None => (64, c"unregistered"),
                };
                self.cx(0, None, Cb::Other);
                // SAFETY: entry point; no Rust reference to k is live.
                unsafe { (self.entry().exit)(kind, 0, msg.as_ptr()) };
            }
            // SAFETY: k came from Box::into_raw in `start`.
            drop(unsafe { Box::from_raw(self.k) });
            self.k = std::ptr::null_mut();
        }
        if let Some(o) = self.obj.take() {
            crate::ffi::give_back(o);
        }
    }
}

impl Policy for Hosted {
    fn name(&self) -> &'static str {
        self.name
    }

    fn reads_predictions(&self) -> bool {
        false
    }

    fn has_async_actions(&self) -> bool {
        true
    }

    fn foreign_calls(&self) -> u64 {
        if self.k.is_null() {
            0
        } else {
            self.k().calls
        }
    }

    fn failure(&self) -> Option<String> {
        if self.k.is_null() {
            return None;
        }
        self.k().error.clone()
    }

    fn thread_created(&mut self, st: &SchedState, t: ThreadId) {
        self.sync(st);
        let pid = t.0 as i32 + 1;
        let tgid = self.leader_pid(st, t);
        let k = self.k();
        debug_assert_eq!(k.tasks.len(), t.idx(), "threads are created in id order");
        let words = (k.desc.task_size as usize).div_ceil(8);
        k.tasks.push(Task::new(words));
        let p = k.ptr(t.0);
        let comm = format!("prog{}", st.thread(t).program.idx());
        k.write_task_header(p, pid, tgid, &comm, t.0);
        // The fork runs on its parent's CPU; the child's task_cpu is that CPU.
        if self.has(op::INIT_TASK) {
            self.cx(0, None, Cb::Other);
            // SAFETY: entry point; no Rust reference to k is live.
            let r = unsafe { (self.entry().init_task)(p, true) };
            if r != 0 {
                self.k()
                    .fail(format!("ops.init_task() failed ({r}) for thread {t}"));
            }
        }
        if self.has(op::ENABLE) {
            // SAFETY: as above.
            unsafe { (self.entry().enable)(p) };
        }
        self.k().cx.cb = Cb::None;
    }

    fn select_core(&mut self, st: &SchedState, t: ThreadId, kind: WakeKind) -> CoreId {
        self.sync(st);
        let i = t.0;
        let ncpu = st.topo.num_cores();
        let on = |x: Option<ThreadId>| x.and_then(|w| st.thread(w).core.map(|c| (c.idx(), w)));
        let (prev, waker, wake_flags) = match kind {
            WakeKind::New { parent } => {
                let pc = on(parent);
                let prev = pc.map_or(0, |(c, _)| c);
                (prev, pc, kernel::WAKE_FORK)
            }
            WakeKind::Wakeup { waker, .. } => {
                let prev = st
                    .thread(t)
                    .last_core
                    .map_or(self.k().tasks[i as usize].cpu, |c| c.idx());
                let w = on(waker).filter(|(c, w)| st.cores[*c].current == Some(*w));
                (prev, w, kernel::WAKE_TTWU)
            }
        };
        // The wake-up runs in the waker's context; a timer's on the sleeper's
        // CPU, in whatever runs there.
        let (wcpu, wtask) = match waker {
            Some((c, w)) => (c, Some(w.0)),
            None => (prev, self.k().cpus[prev].curr),
        };
        self.cx(wcpu, wtask, Cb::Other);
        self.waker = (wcpu, self.k().cx.current);
        self.k().tasks[i as usize].cpu = prev;
        self.k().tasks[i as usize].ddsp = None;
        let p = self.p(i);
        if matches!(kind, WakeKind::Wakeup { .. }) && !self.progs.sched_waking.is_empty() {
            self.call_progs(&self.progs.sched_waking, [p as u64, 0, 0, 0, 0, 0]);
        }
        let cpu = if self.has(op::SELECT_CPU) {
            {
                let k = self.k();
                k.cx.cb = Cb::SelectCpu;
                k.cx.ddsp_task = Some(i);
            }
            // SAFETY: entry point; no Rust reference to k is live.
            let r = unsafe { (self.entry().select_cpu)(p, prev as i32, wake_flags) };
            let k = self.k();
            k.cx.cb = Cb::None;
            k.cx.ddsp_task = None;
            if r < 0 || r as usize >= ncpu {
                k.fail(format!("invalid CPU {r} from ops.select_cpu()"));
                prev
            } else {
                r as usize
            }
        } else {
            self.k().cx.cb = Cb::SelectCpu;
            let (c, idle) = self.k().select_cpu_dfl(prev, wake_flags);
            self.k().cx.cb = Cb::None;
            if idle {
                self.k().set_slice(i, kernel::SLICE_DFL);
                self.k().tasks[i as usize].ddsp = Some((kernel::DSQ_LOCAL, 0));
            }
            c
        };
        self.k().tasks[i as usize].cpu = cpu;
        CoreId(cpu as u16)
    }

    fn enqueued(&mut self, st: &SchedState, c: CoreId, t: ThreadId, wakeup: bool) {
        self.sync(st);
        let i = t.0;
        let k = self.k();
        k.tasks[i as usize].runnable_at = Some(st.now);
        if wakeup {
            // `enqueue_task_scx`, in the waker's context; an idle CPU whose
            // run queue gets a task reschedules (`wakeup_preempt`).
            if k.cpus[c.idx()].curr.is_none() {
                k.cpus[c.idx()].woken = true;
            }
            let new = std::mem::take(&mut k.tasks[i as usize].new);
            // A woken task's select_cpu ran (SCX_ENQ_CPU_SELECTED, 6.13 and
            // later); a new task's first enqueue carries neither flag.
            let flags = if new {
                0
            } else {
                kernel::ENQ_WAKEUP | kernel::ENQ_CPU_SELECTED
            };
            let f = k.scx_flags(i);
            k.set_scx_flags(i, (f | kernel::TASK_QUEUED) & !kernel::TASK_DEQD_FOR_SLEEP);
            let (wcpu, wcur) = self.waker;
            k.cx.cpu = wcpu;
            k.cx.current = wcur;
            if self.has(op::RUNNABLE) {
                k.cx.cb = Cb::Other;
                let p = self.p(i);
                // SAFETY: entry point; no Rust reference to k is live.
                unsafe { (self.entry().runnable)(p, flags) };
            }
            self.do_enqueue(i, flags);
        } else {
            // `put_prev_task_scx`: preempted with slice left → head of the
            // local DSQ; else back through enqueue.
            self.cx(c.idx(), Some(i), Cb::Other);
            let cpu = &mut self.k().cpus[c.idx()];
            let put = std::mem::take(&mut cpu.put_flags);
            if self.k().slice(i) > 0 {
                self.k()
                    .insert(i, kernel::DSQ_LOCAL, kernel::ENQ_HEAD, c.idx());
            } else {
                self.k().tasks[i as usize].cpu = c.idx();
                self.do_enqueue(i, put);
            }
        }
        self.k().cx.cb = Cb::None;
    }

    fn should_preempt(&mut self, _st: &SchedState, _c: CoreId, _t: ThreadId) -> bool {
        // sched_ext has no wake-up preemption of its own: a scheduler
        // preempts with SCX_ENQ_PREEMPT or a kick, which act through take_actions.
        false
    }

    fn pick_next(&mut self, st: &SchedState, c: CoreId) -> Pick {
        self.sync(st);
        let ci = c.idx();
        let timeout = self.obj().desc.timeout_ms;
        self.k().watchdog(timeout);
        let cpu = &mut self.k().cpus[ci];
        let bal = if std::mem::take(&mut cpu.balanced) {
            if self.k().local_len(ci) > 0 {
                Bal::Local
            } else if std::mem::take(&mut self.k().cpus[ci].woken) {
                // Kicked after its balance found nothing (a task queued for
                // it since): the kernel does not skip an idle kick of a CPU
                // in balance (`can_skip_idle_kick`), so it balances again.
                self.balance(ci, None, false)
            } else {
                Bal::Empty
            }
        } else if cpu.prev.is_none() && cpu.idle && !cpu.woken {
            // An idle CPU nobody woke: no balance (the simulator asks idle
            // cores at every tick; a kernel's idle CPU sleeps).
            return Pick::Idle;
        } else {
            let prev = cpu.prev.take();
            self.balance(ci, prev, false)
        };
        self.k().cpus[ci].woken = false;
        self.k().cpus[ci].prev = None;
        let reap = std::mem::take(&mut self.k().cpus[ci].reap);
        for i in reap {
            let p = self.p(i);
            self.cx(ci, None, Cb::Other);
            if self.has(op::DISABLE) {
                // SAFETY: entry point; no Rust reference to k is live.
                unsafe { (self.entry().disable)(p) };
            }
            if self.has(op::EXIT_TASK) {
                // SAFETY: as above.
                unsafe { (self.entry().exit_task)(p) };
            }
            self.k().cx.cb = Cb::None;
        }
        if bal == Bal::Local {
            if let Some(t) = self.k().pop_local(ci) {
                let t = ThreadId(t);
                return match st.thread(t).core {
                    Some(from) if from != c => Pick::Steal { from, thread: t },
                    _ => Pick::Local(t),
                };
            }
        }
        self.switch_to(ci, None);
        let k = self.k();
        k.set_idle_bit(ci, true);
        if !k.cpus[ci].idle {
            k.cpus[ci].idle = true;
            if self.has(op::UPDATE_IDLE) {
                self.cx(ci, None, Cb::Other);
                // SAFETY: entry point; no Rust reference to k is live.
                unsafe { (self.entry().update_idle)(ci as i32, true) };
                self.k().cx.cb = Cb::None;
            }
        }
        Pick::Idle
    }

    fn running(&mut self, st: &SchedState, c: CoreId, t: ThreadId) {
        self.sync(st);
        let (ci, i) = (c.idx(), t.0);
        let k = self.k();
        k.set_idle_bit(ci, false);
        let was_idle = std::mem::take(&mut k.cpus[ci].idle);
        k.cpus[ci].curr = Some(i);
        k.cpus[ci].slice_mark = st.now;
        k.cpus[ci].woken = false;
        let task = &mut k.tasks[i as usize];
        task.runnable_at = None;
        task.cpu = ci;
        task.custody = false;
        k.remove_from_dsq(i);
        if k.slice(i) == 0 {
            k.set_slice(i, kernel::SLICE_DFL);
        }
        if was_idle && self.has(op::UPDATE_IDLE) {
            self.cx(ci, None, Cb::Other);
            // SAFETY: entry point; no Rust reference to k is live.
            unsafe { (self.entry().update_idle)(ci as i32, false) };
        }
        self.cx(ci, Some(i), Cb::Other);
        let p = self.p(i);
        if self.has(op::RUNNING) && self.k().scx_flags(i) & kernel::TASK_QUEUED != 0 {
            // SAFETY: as above.
            unsafe { (self.entry().running)(p) };
        }
        self.switch_to(ci, Some(i));
        if std::mem::take(&mut self.k().tasks[i as usize].futex_wait) {
            // futex_wait returns 0 to a waiter that was woken.
            self.call_progs(&self.progs.futex_wait_exit, [0; 6]);
        }
        self.k().cx.cb = Cb::None;
    }

    fn stopped(&mut self, st: &SchedState, c: CoreId, t: ThreadId, _ran: Nanos, why: StopReason) {
        self.sync(st);
        let (ci, i) = (c.idx(), t.0);
        self.k().update_curr(ci);
        self.k().cpus[ci].curr = None;
        self.k().cpus[ci].prev_state = match why {
            StopReason::Preempted => 0,
            StopReason::Blocked => 1,
            StopReason::Exited => 0x80,
        };
        self.cx(ci, Some(i), Cb::Other);
        let p = self.p(i);
        match why {
            StopReason::Preempted => {
                if self.has(op::STOPPING) {
                    // SAFETY: entry point; no Rust reference to k is live.
                    unsafe { (self.entry().stopping)(p, true) };
                }
            }
            StopReason::Blocked | StopReason::Exited => {
                let futex =
                    matches!(st.thread(t).state, RunState::Blocked(k) if k != BlockKind::Sleep);
                if futex && why == StopReason::Blocked {
                    self.call_progs(&self.progs.futex_wait_enter, [0; 6]);
                    self.k().tasks[i as usize].futex_wait = !self.progs.futex_wait_exit.is_empty();
                }
                if self.has(op::STOPPING) {
                    // SAFETY: as above.
                    unsafe { (self.entry().stopping)(p, false) };
                }
                if self.has(op::QUIESCENT) {
                    // SAFETY: as above.
                    unsafe { (self.entry().quiescent)(p, kernel::DEQ_SLEEP) };
                }
                let k = self.k();
                let f = k.scx_flags(i);
                k.set_scx_flags(i, (f & !kernel::TASK_QUEUED) | kernel::TASK_DEQD_FOR_SLEEP);
                k.cpus[ci].prev = Some(i);
                if why == StopReason::Exited {
                    k.cpus[ci].reap.push(i);
                }
            }
        }
        self.k().cx.cb = Cb::None;
    }

    fn slice_ns(&self, _st: &SchedState, _c: CoreId, _t: ThreadId) -> Nanos {
        // Slices are the scheduler's (p->scx.slice), enforced in `tick`.
        Nanos::MAX / 4
    }

    fn tick(&mut self, st: &SchedState, c: CoreId, _out: &mut Vec<Action>) -> bool {
        self.sync(st);
        let ci = c.idx();
        let timeout = self.obj().desc.timeout_ms;
        self.k().watchdog(timeout);
        let Some(t) = self.k().cpus[ci].curr else {
            return false;
        };
        self.k().update_curr(ci);
        if self.has(op::TICK) {
            self.cx(ci, Some(t), Cb::Other);
            let p = self.p(t);
            // SAFETY: entry point; no Rust reference to k is live.
            unsafe { (self.entry().tick)(p) };
            self.k().cx.cb = Cb::None;
        }
        self.k().slice(t) == 0 && self.resched_busy(ci)
    }

    fn period_ns(&self) -> Option<Nanos> {
        self.user.period_ns()
    }

    fn periodic(&mut self, st: &SchedState, _out: &mut Vec<Action>) {
        self.sync(st);
        if self.k().error.is_some() {
            return;
        }
        let obj = self.obj.as_ref().unwrap();
        // SAFETY: user space runs between callbacks: no BPF code is running.
        let k = unsafe { &mut *self.k };
        self.user.period(obj, &mut k.maps);
    }

    fn take_actions(&mut self, st: &SchedState, out: &mut Vec<Action>) {
        if self.k.is_null() {
            return;
        }
        self.k().now = st.now;
        loop {
            let kicks = std::mem::take(&mut self.k().kicks);
            if kicks.is_empty() {
                break;
            }
            // A scheduler that kicks CPUs over and over without time passing
            // (a dispatch that wakes its own CPU whenever it finds nothing)
            // would keep a kernel's CPUs busy rescheduling; here time would
            // never move: end the run saying so.
            let k = self.k();
            if k.kick_at != st.now {
                k.kick_at = st.now;
                k.kicks_now = 0;
            }
            k.kicks_now += kicks.len() as u64;
            if k.kicks_now > KICKS_PER_INSTANT * k.ncpu as u64 {
                let msg = format!(
                    "{} kicks at {} ns without time passing: the scheduler keeps waking CPUs that find nothing to do",
                    k.kicks_now, st.now
                );
                k.fail(msg);
                return;
            }
            for (c, flags) in kicks {
                let k = self.k();
                match k.cpus[c].curr {
                    None => {
                        if !k.cpus[c].woken {
                            k.cpus[c].woken = true;
                            out.push(Action::Resched(CoreId(c as u16)));
                        }
                    }
                    Some(t) => {
                        if k.cpus[c].balanced {
                            // Its balance already ran; see pick_next.
                            k.cpus[c].woken = true;
                        }
                        if flags & kernel::KICK_PREEMPT != 0 {
                            k.update_curr(c);
                            k.set_slice(t, 0);
                        }
                        if self.k().slice(t) == 0 && self.resched_busy(c) {
                            out.push(Action::Resched(CoreId(c as u16)));
                        }
                    }
                }
            }
        }
    }
}
