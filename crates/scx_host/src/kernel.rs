//! sched_ext's side of the kernel, for one simulation: dispatch queues,
//! the idle mask, kicks, direct dispatch and the dispatch buffer, and the
//! kfuncs the shim calls (through `VTable`). Semantics follow Linux 6.12's
//! kernel/sched/ext.c (the function named beside each); where later kernels
//! differ, the doc comment says so. The order of callbacks around them
//! (select_cpu, runnable, enqueue, dispatch, running, stopping, ...) is in
//! hosted.rs.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{c_char, c_void, CStr};

use colab_core::Nanos;

use crate::ffi::Desc;
use crate::maps::{ty, Map};

pub const DSQ_BUILTIN: u64 = 1 << 63;
pub const DSQ_LOCAL_ON: u64 = DSQ_BUILTIN | (1 << 62);
pub const DSQ_INVALID: u64 = DSQ_BUILTIN;
pub const DSQ_GLOBAL: u64 = DSQ_BUILTIN | 1;
pub const DSQ_LOCAL: u64 = DSQ_BUILTIN | 2;
pub const SLICE_DFL: u64 = 20_000_000;
pub const SLICE_INF: u64 = u64::MAX;
pub const ENQ_WAKEUP: u64 = 1;
pub const ENQ_HEAD: u64 = 1 << 4;
pub const ENQ_PREEMPT: u64 = 1 << 32;
pub const ENQ_LAST: u64 = 1 << 41;
pub const ENQ_DSQ_PRIQ: u64 = 1 << 57;
pub const DEQ_SLEEP: u64 = 1;
pub const KICK_IDLE: u64 = 1;
pub const KICK_PREEMPT: u64 = 2;
pub const WAKE_FORK: u64 = 0x04;
pub const WAKE_TTWU: u64 = 0x08;
pub const WAKE_SYNC: u64 = 0x10;
pub const TASK_QUEUED: u32 = 1;
pub const TASK_DEQD_FOR_SLEEP: u32 = 1 << 3;
pub const OPS_ENQ_LAST: u64 = 1 << 1;
const DSQ_ITER_REV: u64 = 1 << 16;
const EBUSY: i32 = 16;
const ENOENT: i32 = 2;
const EEXIST: i32 = 17;
const EINVAL: i32 = 22;
/// `SCX_DSP_MAX_LOOPS`.
pub const DSP_MAX_LOOPS: u32 = 32;
/// `SCX_DSP_DFL_MAX_BATCH`.
const DSP_DFL_MAX_BATCH: u32 = 32;
/// `SCX_WATCHDOG_MAX_TIMEOUT`: 30 s, the watchdog when ops.timeout_ms is 0.
const WATCHDOG_MAX_NS: Nanos = 30_000_000_000;
/// Words of a `struct cpumask` in the shim (SCX_HOST_MAX_CPUS / 64).
pub const MASK_WORDS: usize = 16;
pub const MAX_CPUS: usize = MASK_WORDS * 64;

/// The callback running now: what kfuncs may do depends on it (the
/// kernel's `kf_mask`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cb {
    None,
    Init,
    SelectCpu,
    Enqueue,
    Dispatch,
    Other,
}

/// A queued task's place: vtime (0 in FIFO queues), then insertion order
/// (negative for head insertions), then its index.
pub type Key = (u64, i64, u32);

#[derive(Default)]
struct Dsq {
    /// Some(true): vtime ordered; Some(false): FIFO; None: empty so far.
    priq: Option<bool>,
    items: BTreeSet<Key>,
    builtin: bool,
}

pub struct Task {
    /// The task_struct the BPF code sees (8-byte aligned words).
    pub mem: Box<[u64]>,
    /// The DSQ and key it waits in.
    pub dsq: Option<(u64, Key)>,
    /// The insertion counter when it was queued (iterators skip later ones).
    ins_seq: u64,
    /// A direct dispatch asked for in select_cpu or enqueue: (DSQ, flags).
    pub ddsp: Option<(u64, u64)>,
    /// In the BPF scheduler's custody (ops.enqueue returned without
    /// dispatching it): `SCX_OPSS_QUEUED`.
    pub custody: bool,
    /// The CPU whose run queue it is on (`task_cpu`).
    pub cpu: usize,
    /// Runnable and not running since (the watchdog's `runnable_at`).
    pub runnable_at: Option<Nanos>,
    /// In a futex wait (the fexit program runs when it runs again).
    pub futex_wait: bool,
    /// Never enqueued yet (a new task's first enqueue has no WAKEUP flag).
    pub new: bool,
}

impl Task {
    /// A new task whose task_struct has `words` 8-byte words.
    pub fn new(words: usize) -> Task {
        Task {
            mem: vec![0u64; words].into_boxed_slice(),
            dsq: None,
            ins_seq: 0,
            ddsp: None,
            custody: false,
            cpu: 0,
            runnable_at: None,
            futex_wait: false,
            new: true,
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Cpu {
    pub curr: Option<u32>,
    /// Idle as the scheduler was last told (ops.update_idle).
    pub idle: bool,
    /// An idle CPU asked to reschedule (a kick, or a task queued for it).
    pub woken: bool,
    /// Balance already ran for the pick to come (a tick or a kick decided
    /// to switch): the pick takes the local DSQ's head.
    pub balanced: bool,
    /// The task that last blocked or exited here, passed as `prev` to the
    /// next dispatch.
    pub prev: Option<u32>,
    /// Flags of the coming re-enqueue of the current task (SCX_ENQ_LAST when
    /// the balance found nothing else).
    pub put_flags: u64,
    /// Since when the current task's slice is charged.
    pub slice_mark: Nanos,
    /// Exited tasks whose exit_task is due after this CPU's next pick.
    pub reap: Vec<u32>,
    /// The task switched in last (None: the idle task), for sched_switch.
    pub on_cpu: Option<u32>,
    /// The state it left in: 0 runnable (preempted), 1 asleep
    /// (TASK_INTERRUPTIBLE), 0x80 dead (TASK_DEAD).
    pub prev_state: u64,
}

/// The kfunc context: which CPU and task a callback runs on, and what it may do.
pub struct Cx {
    pub cpu: usize,
    pub current: *mut u8,
    pub cb: Cb,
    /// The task select_cpu / enqueue runs for (direct dispatch target).
    pub ddsp_task: Option<u32>,
    /// ops.dispatch's buffered inserts: (task, DSQ, flags).
    pub dsp_buf: Vec<(u32, u64, u64)>,
    /// Tasks dispatched by this ops.dispatch (the loop goes on while > 0).
    pub dsp_n: u32,
}

/// The kernel state of one simulation.
pub struct Scx {
    pub now: Nanos,
    pub ncpu: usize,
    pub desc: Desc,
    pub tasks: Vec<Task>,
    /// Each CPU's idle task (`swapper/N`, pid 0): current when nothing runs.
    pub swapper: Vec<Box<[u64]>>,
    dsqs: BTreeMap<u64, Dsq>,
    pub idle: Box<[u64; MASK_WORDS]>,
    pub all: Box<[u64; MASK_WORDS]>,
    pub cpus: Vec<Cpu>,
    /// Kicks and wake-ups not yet acted on: (cpu, SCX_KICK_* flags).
    pub kicks: Vec<(usize, u64)>,
    pub cx: Cx,
    /// Slice / vtime set for the next move of an iterator, by its address.
    iter_set: Vec<(usize, Option<u64>, Option<u64>)>,
    /// The first error; the run ends with it (the kernel ejects the scheduler).
    pub error: Option<String>,
    pub maps: Vec<Map>,
    rng: u64,
    seq: u64,
    /// `cpumask_any_and_distribute`'s previous CPU, per calling CPU.
    distribute: Vec<usize>,
    /// `scx_bpf_cpuperf_cap` per CPU (1024: the fastest).
    pub caps: Vec<u32>,
    pub perf: Vec<u32>,
    pub watchdog_at: Nanos,
    /// The later kernels' state (bpf_cpumasks): see the end of this file.
    pub ext: Ext,
    /// Calls into the BPF code (callbacks and programs), for `colab bench`.
    pub calls: u64,
    /// What the BPF clock (`bpf_ktime_get_ns`) reads ahead of simulated
    /// time: the machine's uptime when the simulation starts.
    pub clock: u64,
    /// Kicks acted on at simulated time `kick_at` (livelock guard).
    pub kick_at: Nanos,
    pub kicks_now: u64,
}

/// The BPF clock when the scheduler loads and its idle CPUs first go
/// through dispatch, and when the workload starts (simulated time 0).
/// Assumption: a machine that has been up (a kernel's clock is never 0,
/// which BPF code uses as "never") with the scheduler attached and its
/// CPUs idle for a while before a program is launched, as when a user
/// starts a program on an idle machine.
pub const CLOCK_AT_LOAD: u64 = 1_000_000_000;
pub const CLOCK_AT_START: u64 = 2_000_000_000;

fn mask_test(m: &[u64; MASK_WORDS], c: usize) -> bool {
    c < MAX_CPUS && (m[c / 64] >> (c % 64)) & 1 == 1
}
fn mask_set(m: &mut [u64; MASK_WORDS], c: usize, v: bool) {
    if v {
        m[c / 64] |= 1 << (c % 64);
    } else {
        m[c / 64] &= !(1 << (c % 64));
    }
}

impl Scx {
    pub fn new(desc: Desc, ncpu: usize, caps: Vec<u32>, maps: Vec<Map>) -> Scx {
        let mut all = Box::new([0u64; MASK_WORDS]);
        let mut dsqs = BTreeMap::new();
        for c in 0..ncpu {
            mask_set(&mut all, c, true);
            dsqs.insert(
                DSQ_LOCAL_ON | c as u64,
                Dsq {
                    builtin: true,
                    ..Dsq::default()
                },
            );
        }
        dsqs.insert(
            DSQ_GLOBAL,
            Dsq {
                builtin: true,
                ..Dsq::default()
            },
        );
        let words = (desc.task_size as usize).div_ceil(8);
        let mut k = Scx {
            now: 0,
            ncpu,
            desc,
            tasks: Vec::new(),
            swapper: (0..ncpu)
                .map(|_| vec![0u64; words].into_boxed_slice())
                .collect(),
            dsqs,
            idle: Box::new([0u64; MASK_WORDS]),
            all,
            cpus: vec![
                Cpu {
                    idle: true,
                    ..Cpu::default()
                };
                ncpu
            ],
            kicks: Vec::new(),
            cx: Cx {
                cpu: 0,
                current: std::ptr::null_mut(),
                cb: Cb::None,
                ddsp_task: None,
                dsp_buf: Vec::new(),
                dsp_n: 0,
            },
            iter_set: Vec::new(),
            error: None,
            maps,
            rng: 0x9e37_79b9_7f4a_7c15,
            seq: 0,
            distribute: vec![usize::MAX; ncpu],
            perf: vec![1024; ncpu],
            caps,
            watchdog_at: 0,
            ext: Ext::default(),
            calls: 0,
            clock: CLOCK_AT_LOAD,
            kick_at: 0,
            kicks_now: 0,
        };
        // Every CPU starts idle (the idle task runs), as after boot.
        for c in 0..ncpu {
            mask_set(&mut k.idle, c, true);
            let p = k.swapper[c].as_mut_ptr() as *mut u8;
            k.write_task_header(p, 0, 0, &format!("swapper/{c}"), u32::MAX);
        }
        k.cx.current = k.swapper[0].as_mut_ptr() as *mut u8;
        k
    }

    // ----- task_struct fields ---------------------------------------------

    /// Writes a task's identity and defaults (`init_scx_entity`).
    pub fn write_task_header(&mut self, p: *mut u8, pid: i32, tgid: i32, comm: &str, idx: u32) {
        let d = self.desc;
        // SAFETY: p points to task_size bytes laid out as the shim's struct.
        unsafe {
            *(p.add(d.off_pid as usize) as *mut i32) = pid;
            *(p.add(d.off_tgid as usize) as *mut i32) = tgid;
            for off in [d.off_prio, d.off_static_prio, d.off_normal_prio] {
                *(p.add(off as usize) as *mut i32) = 120;
            }
            *(p.add(d.off_nr_cpus_allowed as usize) as *mut i32) = self.ncpu as i32;
            *(p.add(d.off_cpus_ptr as usize) as *mut *const u64) = self.all.as_ptr();
            let c = p.add(d.off_comm as usize);
            for (i, b) in comm.bytes().take(15).enumerate() {
                *c.add(i) = b;
            }
            *(p.add(d.off_weight as usize) as *mut u32) = 100;
            *(p.add(d.off_slice as usize) as *mut u64) = SLICE_DFL;
            *(p.add(d.off_idx as usize) as *mut u32) = idx;
        }
    }

    pub fn ptr(&mut self, i: u32) -> *mut u8 {
        self.tasks[i as usize].mem.as_mut_ptr() as *mut u8
    }
    pub fn swapper_ptr(&mut self, c: usize) -> *mut u8 {
        self.swapper[c].as_mut_ptr() as *mut u8
    }
    fn field<T: Copy>(&self, i: u32, off: u64) -> T {
        let p = self.tasks[i as usize].mem.as_ptr() as *const u8;
        // SAFETY: off is a field offset of the shim's task_struct.
        unsafe { std::ptr::read_unaligned(p.add(off as usize) as *const T) }
    }
    fn set_field<T: Copy>(&mut self, i: u32, off: u64, v: T) {
        let p = self.tasks[i as usize].mem.as_mut_ptr() as *mut u8;
        // SAFETY: as in `field`.
        unsafe { std::ptr::write_unaligned(p.add(off as usize) as *mut T, v) }
    }
    pub fn slice(&self, i: u32) -> u64 {
        self.field(i, self.desc.off_slice)
    }
    pub fn set_slice(&mut self, i: u32, v: u64) {
        self.set_field(i, self.desc.off_slice, v)
    }
    pub fn vtime(&self, i: u32) -> u64 {
        self.field(i, self.desc.off_dsq_vtime)
    }
    pub fn set_vtime(&mut self, i: u32, v: u64) {
        self.set_field(i, self.desc.off_dsq_vtime, v)
    }
    pub fn scx_flags(&self, i: u32) -> u32 {
        self.field(i, self.desc.off_scx_flags)
    }
    pub fn set_scx_flags(&mut self, i: u32, v: u32) {
        self.set_field(i, self.desc.off_scx_flags, v)
    }
    pub fn pid(&self, i: u32) -> i32 {
        self.field(i, self.desc.off_pid)
    }
    pub fn comm(&self, i: u32) -> String {
        let p = self.tasks[i as usize].mem.as_ptr() as *const u8;
        // SAFETY: comm is 16 bytes inside the struct.
        let bytes = unsafe { std::slice::from_raw_parts(p.add(self.desc.off_comm as usize), 16) };
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(16);
        String::from_utf8_lossy(&bytes[..end]).into_owned()
    }
    /// The host index of a task_struct the BPF code handed back; None for an
    /// idle task or a pointer that is not a task.
    pub fn idx_of(&self, p: *const u8) -> Option<u32> {
        if p.is_null() {
            return None;
        }
        // SAFETY: every task_struct the BPF code sees is one of ours.
        let i =
            unsafe { std::ptr::read_unaligned(p.add(self.desc.off_idx as usize) as *const u32) };
        ((i as usize) < self.tasks.len()).then_some(i)
    }

    /// `update_curr_scx`: the current task of `c` pays for its time.
    pub fn update_curr(&mut self, c: usize) {
        let Some(t) = self.cpus[c].curr else { return };
        let used = self.now.saturating_sub(self.cpus[c].slice_mark);
        self.cpus[c].slice_mark = self.now;
        let s = self.slice(t);
        if s != SLICE_INF {
            self.set_slice(t, s - s.min(used));
        }
    }

    // ----- errors -----------------------------------------------------------

    pub fn fail(&mut self, msg: String) {
        if self.error.is_none() {
            self.error = Some(msg);
        }
    }

    /// The C format of scx_bpf_error with its u64 arguments.
    fn format(fmt: &str, args: &[u64]) -> String {
        let mut out = String::new();
        let mut it = fmt.chars().peekable();
        let mut a = args.iter();
        while let Some(c) = it.next() {
            if c != '%' {
                out.push(c);
                continue;
            }
            let mut spec = String::new();
            while let Some(&n) = it.peek() {
                it.next();
                if n.is_ascii_alphabetic() && !matches!(n, 'l' | 'h' | 'z') || n == '%' {
                    spec.push(n);
                    break;
                }
                spec.push(n);
            }
            let conv = spec.chars().last().unwrap_or('%');
            let v = if conv == '%' {
                0
            } else {
                a.next().copied().unwrap_or(0)
            };
            match conv {
                '%' => out.push('%'),
                'd' | 'i' => out.push_str(
                    &(if spec.contains("ll") || spec.contains('l') {
                        v as i64
                    } else {
                        v as i32 as i64
                    })
                    .to_string(),
                ),
                'u' => out.push_str(&v.to_string()),
                'x' => out.push_str(&format!("{v:x}")),
                'p' => out.push_str(&format!("0x{v:x}")),
                's' => {
                    // SAFETY: a %s argument is a NUL-terminated string pointer.
                    let s = if v == 0 {
                        "(null)".to_string()
                    } else {
                        unsafe { CStr::from_ptr(v as usize as *const c_char) }
                            .to_string_lossy()
                            .into_owned()
                    };
                    out.push_str(&s);
                }
                'c' => out.push(char::from(v as u8)),
                _ => out.push_str(&format!("%{spec}")),
            }
        }
        out
    }

    // ----- DSQs -----------------------------------------------------------

    fn local_id(c: usize) -> u64 {
        DSQ_LOCAL_ON | c as u64
    }

    pub fn local_len(&self, c: usize) -> usize {
        self.dsqs[&Self::local_id(c)].items.len()
    }

    /// The head of `c`'s local DSQ, taken off it.
    pub fn pop_local(&mut self, c: usize) -> Option<u32> {
        let first = self.dsqs[&Self::local_id(c)].items.first().copied()?;
        self.remove(first.2);
        Some(first.2)
    }

    /// A DSQ id as the BPF code names it, resolved to a queue (`find_dsq_for_dispatch`).
    fn resolve(&mut self, id: u64, local_cpu: usize) -> Result<u64, String> {
        if id == DSQ_LOCAL {
            return Ok(Self::local_id(local_cpu));
        }
        if id & DSQ_LOCAL_ON == DSQ_LOCAL_ON {
            let c = (id & 0xffff_ffff) as usize;
            if c >= self.ncpu {
                return Err(format!("invalid cpu {c} in SCX_DSQ_LOCAL_ON verdict"));
            }
            return Ok(Self::local_id(c));
        }
        if id == DSQ_GLOBAL {
            return Ok(id);
        }
        if id & DSQ_BUILTIN != 0 {
            return Err(format!("invalid built-in DSQ 0x{id:x}"));
        }
        if self.dsqs.contains_key(&id) {
            Ok(id)
        } else {
            Err(format!("non-existent DSQ 0x{id:x}"))
        }
    }

    /// Takes task `i` off whatever DSQ it is in.
    pub fn remove_from_dsq(&mut self, i: u32) {
        self.remove(i)
    }

    fn remove(&mut self, i: u32) {
        if let Some((id, key)) = self.tasks[i as usize].dsq.take() {
            if let Some(d) = self.dsqs.get_mut(&id) {
                d.items.remove(&key);
                if d.items.is_empty() && !d.builtin {
                    d.priq = None;
                }
            }
        }
    }

    /// `dispatch_enqueue` / `dispatch_to_local_dsq`: task `i` into DSQ `id`
    /// (`SCX_DSQ_LOCAL` meaning `local_cpu`'s).
    pub fn insert(&mut self, i: u32, id: u64, flags: u64, local_cpu: usize) {
        let target = match self.resolve(id, local_cpu) {
            Ok(t) => t,
            Err(e) => return self.fail(e),
        };
        let priq = flags & ENQ_DSQ_PRIQ != 0;
        let builtin = self.dsqs[&target].builtin;
        if priq && builtin {
            return self.fail(format!(
                "cannot use vtime ordering for built-in DSQs (0x{id:x})"
            ));
        }
        self.remove(i);
        self.seq += 1;
        let seq = self.seq as i64;
        let key = if priq {
            (self.vtime(i), seq, i)
        } else if flags & ENQ_HEAD != 0 {
            (0, -seq, i)
        } else {
            (0, seq, i)
        };
        let d = self.dsqs.get_mut(&target).unwrap();
        if let Some(was) = d.priq {
            if was != priq && !d.items.is_empty() {
                let (a, b) = if was {
                    ("vtime", "FIFO")
                } else {
                    ("FIFO", "vtime")
                };
                return self.fail(format!(
                    "DSQ 0x{target:x} already had {a} tasks queued, cannot add {b} ones"
                ));
            }
        }
        d.priq = Some(priq);
        d.items.insert(key);
        let t = &mut self.tasks[i as usize];
        t.dsq = Some((target, key));
        t.ins_seq = self.seq;
        t.custody = false;
        if target & DSQ_LOCAL_ON == DSQ_LOCAL_ON && target != DSQ_GLOBAL {
            let c = (target & 0xffff_ffff) as usize;
            t.cpu = c;
            match self.cpus[c].curr {
                None => self.kicks.push((c, KICK_IDLE)),
                Some(cur) if flags & ENQ_PREEMPT != 0 && cur != i => {
                    self.set_slice(cur, 0);
                    self.kicks.push((c, KICK_PREEMPT));
                }
                _ => {}
            }
        }
    }

    /// `consume_dispatch_q`: the first task of DSQ `id` to `c`'s local DSQ.
    fn consume(&mut self, id: u64, c: usize) -> bool {
        let Some(first) = self.dsqs.get(&id).and_then(|d| d.items.first().copied()) else {
            return false;
        };
        self.insert(first.2, Self::local_id(c), 0, c);
        true
    }

    /// `consume_global_dsq`.
    pub fn consume_global(&mut self, c: usize) -> bool {
        self.consume(DSQ_GLOBAL, c)
    }

    /// `flush_dispatch_buf`: ops.dispatch's inserts, for tasks still in custody.
    pub fn flush_dispatch(&mut self, c: usize) {
        let buf = std::mem::take(&mut self.cx.dsp_buf);
        self.cx.dsp_n += buf.len() as u32;
        for &(i, id, flags) in &buf {
            if self.tasks[i as usize].custody {
                self.insert(i, id, flags, c);
            }
        }
        let mut buf = buf;
        buf.clear();
        self.cx.dsp_buf = buf;
    }

    /// Runnable tasks that have waited longer than the watchdog allows.
    pub fn watchdog(&mut self, timeout_ms: u32) {
        let limit = if timeout_ms == 0 {
            WATCHDOG_MAX_NS
        } else {
            timeout_ms as Nanos * 1_000_000
        };
        if self.now < self.watchdog_at {
            return;
        }
        self.watchdog_at = self.now + limit / 8;
        let late = (0..self.tasks.len() as u32).find(|&i| {
            self.tasks[i as usize]
                .runnable_at
                .is_some_and(|at| self.now.saturating_sub(at) > limit)
        });
        if let Some(i) = late {
            let ms = self.now - self.tasks[i as usize].runnable_at.unwrap();
            let ms = ms / 1_000_000;
            let msg = format!(
                "runnable task stall ({}[{}] failed to run for {}.{:03}s)",
                self.comm(i),
                self.pid(i),
                ms / 1000,
                ms % 1000
            );
            self.fail(msg);
        }
    }

    // ----- idle CPUs ------------------------------------------------------

    pub fn set_idle_bit(&mut self, c: usize, v: bool) {
        mask_set(&mut self.idle, c, v);
    }

    fn test_and_clear_idle(&mut self, c: usize) -> bool {
        if c < self.ncpu && mask_test(&self.idle, c) {
            mask_set(&mut self.idle, c, false);
            true
        } else {
            false
        }
    }

    /// `cpumask_any_and_distribute`: the next CPU after the last one this
    /// CPU was given, in both masks.
    fn any_and_distribute(&mut self, a: &[u64; MASK_WORDS], b: *const u64) -> Option<usize> {
        let me = self.cx.cpu.min(self.ncpu - 1);
        let start = self.distribute[me].wrapping_add(1) % self.ncpu;
        for k in 0..self.ncpu {
            let c = (start + k) % self.ncpu;
            // SAFETY: b is a cpumask of MASK_WORDS words.
            let in_b = b.is_null() || unsafe { (*b.add(c / 64) >> (c % 64)) & 1 == 1 };
            if mask_test(a, c) && in_b {
                self.distribute[me] = c;
                return Some(c);
            }
        }
        None
    }

    /// `scx_pick_idle_cpu` (no SMT: the core flag has nothing to ask for).
    fn pick_idle(&mut self, allowed: *const u64) -> i32 {
        loop {
            let idle = *self.idle;
            match self.any_and_distribute(&idle, allowed) {
                None => return -EBUSY,
                Some(c) => {
                    if self.test_and_clear_idle(c) {
                        return c as i32;
                    }
                }
            }
        }
    }

    /// `scx_select_cpu_dfl` of 6.12 (later kernels add LLC and NUMA
    /// preferences, which these machines, one LLC each, do not have).
    pub fn select_cpu_dfl(&mut self, prev: usize, wake_flags: u64) -> (usize, bool) {
        let me = self.cx.cpu;
        if wake_flags & WAKE_SYNC != 0
            && self.idle.iter().any(|&w| w != 0)
            && self.local_len(me) == 0
        {
            return (me, true);
        }
        if self.test_and_clear_idle(prev) {
            return (prev, true);
        }
        let all = self.all.as_ptr();
        let c = self.pick_idle(all);
        if c >= 0 {
            (c as usize, true)
        } else {
            (prev, false)
        }
    }

    fn prandom(&mut self) -> u32 {
        // xorshift64*: deterministic, so that every run is reproducible.
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        (self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) as u32
    }

    fn map_index(&self, addr: usize) -> Option<usize> {
        self.maps.iter().position(|m| m.def.addr == addr)
    }
}

// ----- the table the shim calls through ---------------------------------

/// `struct scx_host_vtable` (shim/scx/common.bpf.h), field for field.
#[repr(C)]
pub struct VTable {
    pub ctx: *mut c_void,
    now: unsafe extern "C" fn(*mut c_void) -> u64,
    cpu: unsafe extern "C" fn(*mut c_void) -> i32,
    current: unsafe extern "C" fn(*mut c_void) -> *mut u8,
    dsq_insert: unsafe extern "C" fn(*mut c_void, *mut u8, u64, u64, u64, u64, i32),
    dsq_move_to_local: unsafe extern "C" fn(*mut c_void, u64) -> bool,
    dsq_nr_queued: unsafe extern "C" fn(*mut c_void, u64) -> i32,
    create_dsq: unsafe extern "C" fn(*mut c_void, u64, i32) -> i32,
    destroy_dsq: unsafe extern "C" fn(*mut c_void, u64),
    iter_new: unsafe extern "C" fn(*mut c_void, *mut u64, u64, u64) -> i32,
    iter_next: unsafe extern "C" fn(*mut c_void, *mut u64) -> *mut u8,
    dsq_move: unsafe extern "C" fn(*mut c_void, *mut u64, *mut u8, u64, u64, i32) -> bool,
    dsq_move_set: unsafe extern "C" fn(*mut c_void, *mut u64, u64, i32),
    kick_cpu: unsafe extern "C" fn(*mut c_void, i32, u64),
    task_cpu: unsafe extern "C" fn(*mut c_void, *const u8) -> i32,
    test_and_clear_cpu_idle: unsafe extern "C" fn(*mut c_void, i32) -> bool,
    idle_cpumask: unsafe extern "C" fn(*mut c_void, i32) -> *const u64,
    pick_idle_cpu: unsafe extern "C" fn(*mut c_void, *const u64, u64) -> i32,
    pick_any_cpu: unsafe extern "C" fn(*mut c_void, *const u64, u64) -> i32,
    select_cpu_dfl: unsafe extern "C" fn(*mut c_void, *mut u8, i32, u64, *mut bool) -> i32,
    nr_cpu_ids: unsafe extern "C" fn(*mut c_void) -> u32,
    cpuperf: unsafe extern "C" fn(*mut c_void, i32, i32) -> u32,
    cpuperf_set: unsafe extern "C" fn(*mut c_void, i32, u32),
    error: unsafe extern "C" fn(*mut c_void, i32, i64, *const c_char, *const u64, u32),
    map_lookup: unsafe extern "C" fn(*mut c_void, *mut c_void, *const u8) -> *mut u8,
    map_update: unsafe extern "C" fn(*mut c_void, *mut c_void, *const u8, *const u8, u64) -> i64,
    map_delete: unsafe extern "C" fn(*mut c_void, *mut c_void, *const u8) -> i64,
    task_storage_get:
        unsafe extern "C" fn(*mut c_void, *mut c_void, *mut u8, *mut u8, u64) -> *mut u8,
    task_storage_delete: unsafe extern "C" fn(*mut c_void, *mut c_void, *mut u8) -> i64,
    prandom: unsafe extern "C" fn(*mut c_void) -> u32,
    // Added for scx_bpfland 1.1.4 (kfuncs at the end of this file).
    cpumask_create: unsafe extern "C" fn(*mut c_void) -> *mut u64,
    cpumask_acquire: unsafe extern "C" fn(*mut c_void, *mut u64),
    cpumask_release: unsafe extern "C" fn(*mut c_void, *mut u64),
    map_lookup_percpu: unsafe extern "C" fn(*mut c_void, *mut c_void, *const u8, u32) -> *mut u8,
    select_cpu_and: unsafe extern "C" fn(*mut c_void, *mut u8, i32, u64, *const u64, u64) -> i32,
    task_running: unsafe extern "C" fn(*mut c_void, *const u8) -> bool,
    online_cpumask: unsafe extern "C" fn(*mut c_void) -> *const u64,
    llc_id: unsafe extern "C" fn(*mut c_void, i32) -> i32,
    unsupported: unsafe extern "C" fn(*mut c_void, *const c_char),
}

/// The kernel state behind a kfunc call's context pointer.
///
/// # Safety
/// `ctx` is the `Scx` of the simulation whose callback is running, and no
/// Rust reference to it is live across the call into the BPF code.
unsafe fn state<'a>(ctx: *mut c_void) -> &'a mut Scx {
    unsafe { &mut *(ctx as *mut Scx) }
}

macro_rules! kfunc {
    ($name:ident, $k:ident, ( $($a:ident : $t:ty),* ) -> $r:ty $body:block) => {
        unsafe extern "C" fn $name(ctx: *mut c_void, $($a: $t),*) -> $r {
            // SAFETY: see `state`.
            let $k = unsafe { state(ctx) };
            #[allow(clippy::redundant_closure_call)]
            (|$k: &mut Scx| -> $r { $body })($k)
        }
    };
}

kfunc!(now, k, () -> u64 { k.now + k.clock });
kfunc!(cpu, k, () -> i32 { k.cx.cpu as i32 });
kfunc!(current, k, () -> *mut u8 { k.cx.current });

kfunc!(dsq_insert, k, (p: *mut u8, id: u64, slice: u64, vtime: u64, flags: u64, has_vtime: i32) -> () {
    let Some(i) = k.idx_of(p) else {
        return k.fail("scx_bpf_dsq_insert: not a task".into());
    };
    let flags = if has_vtime != 0 { flags | ENQ_DSQ_PRIQ } else { flags };
    if slice != 0 {
        k.set_slice(i, slice);
    } else if k.slice(i) == 0 {
        k.set_slice(i, 1);
    }
    if has_vtime != 0 {
        k.set_vtime(i, vtime);
    }
    match k.cx.cb {
        Cb::SelectCpu | Cb::Enqueue => {
            if k.cx.ddsp_task != Some(i) {
                return k.fail(format!(
                    "{}[{}] can't be dispatched directly from {} of another task",
                    k.comm(i), k.pid(i),
                    if k.cx.cb == Cb::SelectCpu { "ops.select_cpu()" } else { "ops.enqueue()" }
                ));
            }
            if k.tasks[i as usize].ddsp.is_some() {
                return k.fail(format!("{}[{}] already direct-dispatched", k.comm(i), k.pid(i)));
            }
            k.tasks[i as usize].ddsp = Some((id, flags));
        }
        Cb::Dispatch => {
            let max = if k.desc.dispatch_max_batch == 0 { DSP_DFL_MAX_BATCH } else { k.desc.dispatch_max_batch };
            if k.cx.dsp_buf.len() >= max as usize {
                return k.fail("dispatch buffer overflow".into());
            }
            k.cx.dsp_buf.push((i, id, flags));
        }
        _ => k.fail("scx_bpf_dsq_insert called from a callback that may not dispatch".into()),
    }
});

kfunc!(dsq_move_to_local, k, (id: u64) -> bool {
    if k.cx.cb != Cb::Dispatch {
        k.fail("scx_bpf_dsq_move_to_local called outside ops.dispatch()".into());
        return false;
    }
    let c = k.cx.cpu;
    k.flush_dispatch(c);
    if id & DSQ_BUILTIN != 0 && id != DSQ_GLOBAL {
        k.fail(format!("scx_bpf_dsq_move_to_local: invalid DSQ 0x{id:x}"));
        return false;
    }
    if !k.dsqs.contains_key(&id) {
        k.fail(format!("non-existent DSQ 0x{id:x}"));
        return false;
    }
    let moved = k.consume(id, c);
    if moved {
        k.cx.dsp_n += 1;
    }
    moved
});

kfunc!(dsq_nr_queued, k, (id: u64) -> i32 {
    let c = k.cx.cpu;
    match k.resolve(id, c) {
        Ok(q) => k.dsqs[&q].items.len() as i32,
        Err(_) => -ENOENT,
    }
});

kfunc!(create_dsq, k, (id: u64, _node: i32) -> i32 {
    if id & DSQ_BUILTIN != 0 {
        return -EINVAL;
    }
    if k.dsqs.contains_key(&id) {
        return -EEXIST;
    }
    k.dsqs.insert(id, Dsq::default());
    0
});

kfunc!(destroy_dsq, k, (id: u64) -> () {
    if let Some(d) = k.dsqs.get(&id) {
        if !d.builtin {
            if !d.items.is_empty() {
                return k.fail(format!("destroying non-empty DSQ 0x{id:x}"));
            }
            k.dsqs.remove(&id);
        }
    }
});

// Iterator words: [0] DSQ (SCX_DSQ_INVALID when done), [1] the insertion
// counter at its start, [2..4] the cursor's key (vtime, seq, task), [5]
// bit 0 started, bit 1 reverse.
kfunc!(iter_new, k, (it: *mut u64, id: u64, flags: u64) -> i32 {
    // SAFETY: it is the 6-word opaque state of a bpf_iter_scx_dsq.
    let it = unsafe { std::slice::from_raw_parts_mut(it, 6) };
    let c = k.cx.cpu;
    let Ok(q) = k.resolve(id, c) else {
        it[0] = DSQ_INVALID;
        return -ENOENT;
    };
    it[0] = q;
    it[1] = k.seq;
    it[2] = 0;
    it[3] = 0;
    it[4] = 0;
    it[5] = if flags & DSQ_ITER_REV != 0 { 2 } else { 0 };
    let addr = it.as_ptr() as usize;
    k.iter_set.retain(|e| e.0 != addr);
    0
});

kfunc!(iter_next, k, (it: *mut u64) -> *mut u8 {
    // SAFETY: as in iter_new.
    let it = unsafe { std::slice::from_raw_parts_mut(it, 6) };
    if it[0] == DSQ_INVALID {
        return std::ptr::null_mut();
    }
    let Some(d) = k.dsqs.get(&it[0]) else { return std::ptr::null_mut() };
    let started = it[5] & 1 != 0;
    let rev = it[5] & 2 != 0;
    let cursor: Key = (it[2], it[3] as i64, it[4] as u32);
    let start_seq = it[1];
    let tasks = &k.tasks;
    let ok = |key: &&Key| tasks[key.2 as usize].ins_seq <= start_seq;
    let next = if rev {
        if started { d.items.range(..cursor).rev().find(ok) } else { d.items.iter().rev().find(ok) }
    } else if started {
        d.items.range((std::ops::Bound::Excluded(cursor), std::ops::Bound::Unbounded)).find(ok)
    } else {
        d.items.iter().find(ok)
    };
    match next.copied() {
        Some(key) => {
            it[2] = key.0;
            it[3] = key.1 as u64;
            it[4] = key.2 as u64;
            it[5] |= 1;
            k.ptr(key.2)
        }
        None => std::ptr::null_mut(),
    }
});

kfunc!(dsq_move, k, (it: *mut u64, p: *mut u8, id: u64, flags: u64, has_vtime: i32) -> bool {
    if k.cx.cb != Cb::Dispatch {
        k.fail("scx_bpf_dsq_move called outside ops.dispatch()".into());
        return false;
    }
    // SAFETY: as in iter_new.
    let words = unsafe { std::slice::from_raw_parts_mut(it, 6) };
    let Some(i) = k.idx_of(p) else { return false };
    let src = words[0];
    let t = &k.tasks[i as usize];
    // `scx_dsq_move`: the task must still be where the iteration saw it.
    if t.dsq.map(|d| d.0) != Some(src) || t.ins_seq > words[1] {
        return false;
    }
    let c = k.cx.cpu;
    k.flush_dispatch(c);
    let addr = it as usize;
    if let Some(pos) = k.iter_set.iter().position(|e| e.0 == addr) {
        let (_, slice, vtime) = k.iter_set.swap_remove(pos);
        if let Some(s) = slice {
            k.set_slice(i, s);
        }
        if let Some(v) = vtime {
            k.set_vtime(i, v);
        }
    }
    let flags = if has_vtime != 0 { flags | ENQ_DSQ_PRIQ } else { flags };
    k.insert(i, id, flags, c);
    k.cx.dsp_n += 1;
    true
});

kfunc!(dsq_move_set, k, (it: *mut u64, value: u64, what: i32) -> () {
    let addr = it as usize;
    let pos = match k.iter_set.iter().position(|e| e.0 == addr) {
        Some(p) => p,
        None => {
            k.iter_set.push((addr, None, None));
            k.iter_set.len() - 1
        }
    };
    if what == 0 {
        k.iter_set[pos].1 = Some(value);
    } else {
        k.iter_set[pos].2 = Some(value);
    }
});

kfunc!(kick_cpu, k, (cpu: i32, flags: u64) -> () {
    if cpu < 0 || cpu as usize >= k.ncpu {
        return k.fail(format!("invalid cpu {cpu} in scx_bpf_kick_cpu"));
    }
    k.kicks.push((cpu as usize, flags));
});

kfunc!(task_cpu, k, (p: *const u8) -> i32 {
    match k.idx_of(p) {
        Some(i) => k.tasks[i as usize].cpu as i32,
        None => k.cx.cpu as i32,
    }
});

kfunc!(test_and_clear_cpu_idle, k, (cpu: i32) -> bool {
    cpu >= 0 && k.test_and_clear_idle(cpu as usize)
});

kfunc!(idle_cpumask, k, (_smt: i32) -> *const u64 {
    // No SMT on these machines: every CPU is a whole core, so the SMT mask
    // (whole idle cores) is the idle mask itself.
    k.idle.as_ptr()
});

kfunc!(pick_idle_cpu, k, (allowed: *const u64, _flags: u64) -> i32 { k.pick_idle(allowed) });

kfunc!(pick_any_cpu, k, (allowed: *const u64, _flags: u64) -> i32 {
    let c = k.pick_idle(allowed);
    if c >= 0 {
        return c;
    }
    let all = *k.all;
    k.any_and_distribute(&all, allowed).map_or(-EBUSY, |c| c as i32)
});

kfunc!(select_cpu_dfl, k, (p: *mut u8, prev: i32, wake_flags: u64, is_idle: *mut bool) -> i32 {
    if k.cx.cb != Cb::SelectCpu {
        k.fail("scx_bpf_select_cpu_dfl can only be called from ops.select_cpu()".into());
        return prev;
    }
    let _ = p;
    let prev = (prev.max(0) as usize).min(k.ncpu - 1);
    let (c, idle) = k.select_cpu_dfl(prev, wake_flags);
    if !is_idle.is_null() {
        // SAFETY: a bool out-parameter.
        unsafe { *is_idle = idle };
    }
    c as i32
});

kfunc!(nr_cpu_ids, k, () -> u32 { k.ncpu as u32 });

kfunc!(cpuperf, k, (cpu: i32, what: i32) -> u32 {
    let c = cpu.max(0) as usize;
    if c >= k.ncpu {
        k.fail(format!("invalid cpu {cpu} in scx_bpf_cpuperf_*"));
        return 0;
    }
    if what == 0 { k.caps[c] } else { 1024 }
});

kfunc!(cpuperf_set, k, (cpu: i32, perf: u32) -> () {
    let c = cpu.max(0) as usize;
    if c >= k.ncpu || perf > 1024 {
        return k.fail(format!("invalid cpuperf target {perf} for cpu {cpu}"));
    }
    // Recorded; the simulated cores run at their full speed (no DVFS model).
    k.perf[c] = perf;
});

kfunc!(error, k, (is_exit: i32, code: i64, fmt: *const c_char, args: *const u64, nr: u32) -> () {
    // SAFETY: fmt is a string literal of the BPF code, args nr words.
    let fmt = unsafe { CStr::from_ptr(fmt) }.to_string_lossy().into_owned();
    let args = if nr == 0 { &[][..] } else { unsafe { std::slice::from_raw_parts(args, nr as usize) } };
    let msg = Scx::format(&fmt, args);
    if is_exit != 0 {
        k.fail(format!("the scheduler exited (code {code}): {msg}"));
    } else {
        k.fail(format!("scx_bpf_error: {msg}"));
    }
});

fn key_bytes<'a>(k: &Scx, m: usize, key: *const u8) -> &'a [u8] {
    let n = k.maps[m].def.key_size as usize;
    // SAFETY: key points to the map's key_size bytes (the verifier's rule).
    unsafe { std::slice::from_raw_parts(key, n) }
}

kfunc!(map_lookup, k, (map: *mut c_void, key: *const u8) -> *mut u8 {
    let Some(m) = k.map_index(map as usize) else {
        k.fail("bpf_map_lookup_elem on something that is not a map".into());
        return std::ptr::null_mut();
    };
    let cpu = k.cx.cpu;
    let kb = key_bytes(k, m, key);
    k.maps[m].lookup(kb, cpu)
});

kfunc!(map_update, k, (map: *mut c_void, key: *const u8, value: *const u8, flags: u64) -> i64 {
    let Some(m) = k.map_index(map as usize) else {
        k.fail("bpf_map_update_elem on something that is not a map".into());
        return -(EINVAL as i64);
    };
    let cpu = k.cx.cpu;
    let kb = key_bytes(k, m, key);
    let vs = k.maps[m].def.value_size as usize;
    // SAFETY: value points to value_size bytes.
    let vb = unsafe { std::slice::from_raw_parts(value, vs) };
    k.maps[m].update(kb, vb, flags, cpu)
});

kfunc!(map_delete, k, (map: *mut c_void, key: *const u8) -> i64 {
    let Some(m) = k.map_index(map as usize) else {
        k.fail("bpf_map_delete_elem on something that is not a map".into());
        return -(EINVAL as i64);
    };
    let kb = key_bytes(k, m, key);
    k.maps[m].delete(kb)
});

kfunc!(task_storage_get, k, (map: *mut c_void, p: *mut u8, value: *mut u8, flags: u64) -> *mut u8 {
    let Some(m) = k.map_index(map as usize).filter(|&m| k.maps[m].def.type_ == ty::TASK_STORAGE) else {
        k.fail("bpf_task_storage_get on a map that is not task storage".into());
        return std::ptr::null_mut();
    };
    let Some(i) = k.idx_of(p) else { return std::ptr::null_mut() };
    let vs = k.maps[m].def.value_size as usize;
    // SAFETY: value, when given, points to value_size bytes.
    let init = (!value.is_null()).then(|| unsafe { std::slice::from_raw_parts(value as *const u8, vs) });
    k.maps[m].task_storage(i as usize, init, flags & 1 != 0)
});

kfunc!(task_storage_delete, k, (map: *mut c_void, p: *mut u8) -> i64 {
    let Some(m) = k.map_index(map as usize) else { return -(EINVAL as i64) };
    let Some(i) = k.idx_of(p) else { return -(ENOENT as i64) };
    k.maps[m].task_storage_delete(i as usize)
});

kfunc!(prandom, k, () -> u32 { k.prandom() });

/// The table with every entry set, its context `ctx`.
pub fn vtable(ctx: *mut Scx) -> VTable {
    VTable {
        ctx: ctx as *mut c_void,
        now,
        cpu,
        current,
        dsq_insert,
        dsq_move_to_local,
        dsq_nr_queued,
        create_dsq,
        destroy_dsq,
        iter_new,
        iter_next,
        dsq_move,
        dsq_move_set,
        kick_cpu,
        task_cpu,
        test_and_clear_cpu_idle,
        idle_cpumask,
        pick_idle_cpu,
        pick_any_cpu,
        select_cpu_dfl,
        nr_cpu_ids,
        cpuperf,
        cpuperf_set,
        error,
        map_lookup,
        map_update,
        map_delete,
        task_storage_get,
        task_storage_delete,
        prandom,
        cpumask_create,
        cpumask_acquire,
        cpumask_release,
        map_lookup_percpu,
        select_cpu_and,
        task_running,
        online_cpumask,
        llc_id,
        unsupported,
    }
}

// ===== Added for scx_bpfland 1.1.4 =========================================
// The kfuncs and kernel state scx_bpfland 1.1.4 (src/bpf/main.bpf.c) uses
// with its default options, beyond 6.12's above. Each says whose semantics
// it has; the shim's side is at the end of shim/scx/common.bpf.h.

/// `SCX_ENQ_CPU_SELECTED` (`ENQUEUE_RQ_SELECTED`, 6.13 and later): the
/// enqueue of a task woken by `try_to_wake_up`, for which `select_task_rq`
/// (ops.select_cpu) ran; a new task's first enqueue (`wake_up_new_task`)
/// and a re-enqueue at slice end do not carry it.
pub const ENQ_CPU_SELECTED: u64 = 1 << 10;
const EPERM: i32 = 1;
/// `ops.update_idle` (its bit in `ops_mask`) and `SCX_OPS_KEEP_BUILTIN_IDLE`.
const OP_UPDATE_IDLE: u64 = 1 << 13;
const OPS_KEEP_BUILTIN_IDLE: u64 = 1;

/// Kernel state of the later kfuncs, for one simulation.
#[derive(Default)]
pub struct Ext {
    /// Every live `bpf_cpumask` (kernel/bpf/cpumask.c): its words, which stay
    /// put while it lives, and its reference count.
    cpumasks: Vec<(Box<[u64; MASK_WORDS]>, u32)>,
}

impl Ext {
    fn cpumask(&mut self, p: *mut u64) -> Option<usize> {
        self.cpumasks
            .iter()
            .position(|(b, _)| std::ptr::eq(b.as_ptr(), p))
    }
}

impl Scx {
    /// The CPUs sharing `c`'s last-level cache. The host's machines have one
    /// LLC each (as `select_cpu_dfl` above assumes): every CPU.
    fn llc_span(&self, _c: usize) -> [u64; MASK_WORDS] {
        *self.all
    }

    /// `per_cpu(sd_llc_id, c)`: the first CPU of `c`'s LLC.
    fn llc_first(&self, c: usize) -> usize {
        let span = self.llc_span(c);
        (0..self.ncpu).find(|&x| mask_test(&span, x)).unwrap_or(c)
    }

    /// `select_cpu_from_kfunc` + `scx_select_cpu_dfl` of Linux 6.17
    /// (kernel/sched/ext_idle.c) for task `i`, with no SMT and one NUMA
    /// node: the idle CPU claimed, or -EBUSY. `allowed` null: the task's own.
    fn select_cpu_and(
        &mut self,
        i: u32,
        prev: usize,
        wake_flags: u64,
        allowed: *const u64,
        flags: u64,
    ) -> i32 {
        let _ = flags; // SCX_PICK_IDLE_CORE / _IN_NODE: no SMT, one node.
        let d = self.desc;
        let p = self.tasks[i as usize].mem.as_ptr() as *const u8;
        // SAFETY: p is a task_struct laid out as the shim's; cpus_ptr points
        // to a cpumask of MASK_WORDS words (the host's or the scheduler's).
        let (own, nr_allowed) = unsafe {
            (
                std::ptr::read_unaligned(p.add(d.off_cpus_ptr as usize) as *const *const u64),
                std::ptr::read_unaligned(p.add(d.off_nr_cpus_allowed as usize) as *const i32),
            )
        };
        let word = |m: *const u64, w: usize| -> u64 {
            // SAFETY: as above; a null mask is every CPU.
            if m.is_null() {
                u64::MAX
            } else {
                unsafe { *m.add(w) }
            }
        };
        let mut mask = [0u64; MASK_WORDS];
        for (w, out) in mask.iter_mut().enumerate() {
            *out = word(allowed, w) & word(own, w) & self.all[w];
        }
        // A task that may run on one CPU only: that CPU if it is idle.
        if nr_allowed == 1 {
            return if mask_test(&mask, prev) && self.test_and_clear_idle(prev) {
                prev as i32
            } else {
                -EBUSY
            };
        }
        if mask.iter().all(|&w| w == 0) {
            return -EBUSY;
        }
        let prev_ok = mask_test(&mask, prev);
        // The LLC step runs only on machines with more than one LLC
        // (`scx_selcpu_topo_llc`); the NUMA step only with several nodes.
        let llc = self.llc_span(prev);
        let multi_llc = (0..self.ncpu).any(|c| !mask_test(&llc, c));
        if wake_flags & WAKE_SYNC != 0 {
            let me = self.cx.cpu;
            if prev_ok && mask_test(&self.llc_span(me), prev) && self.test_and_clear_idle(prev) {
                return prev as i32;
            }
            // Wake onto the waker's CPU when its local DSQ is empty and some
            // CPU is idle (the waker is not exiting here).
            if self.local_len(me) == 0 && self.idle.iter().any(|&w| w != 0) && mask_test(&mask, me)
            {
                return me as i32;
            }
        }
        if prev_ok && self.test_and_clear_idle(prev) {
            return prev as i32;
        }
        if multi_llc {
            let mut in_llc = [0u64; MASK_WORDS];
            for w in 0..MASK_WORDS {
                in_llc[w] = mask[w] & llc[w];
            }
            if in_llc.iter().any(|&w| w != 0) {
                let c = self.pick_idle(in_llc.as_ptr());
                if c >= 0 {
                    return c;
                }
            }
        }
        self.pick_idle(mask.as_ptr())
    }
}

// `bpf_cpumask_create` (6.3): a new empty mask with one reference.
kfunc!(cpumask_create, k, () -> *mut u64 {
    let mut b = Box::new([0u64; MASK_WORDS]);
    let p = b.as_mut_ptr();
    k.ext.cpumasks.push((b, 1));
    p
});

// `bpf_cpumask_acquire` (6.3): one more reference.
kfunc!(cpumask_acquire, k, (m: *mut u64) -> () {
    match k.ext.cpumask(m) {
        Some(x) => k.ext.cpumasks[x].1 += 1,
        None => k.fail("bpf_cpumask_acquire of something that is not a bpf_cpumask".into()),
    }
});

// `bpf_cpumask_release` (6.3): one reference less; freed at none.
kfunc!(cpumask_release, k, (m: *mut u64) -> () {
    match k.ext.cpumask(m) {
        Some(x) => {
            k.ext.cpumasks[x].1 -= 1;
            if k.ext.cpumasks[x].1 == 0 {
                k.ext.cpumasks.swap_remove(x);
            }
        }
        None => k.fail("bpf_cpumask_release of something that is not a live bpf_cpumask".into()),
    }
});

// `bpf_map_lookup_percpu_elem` (5.19): `cpu`'s copy of a per-CPU map's
// value; NULL for a CPU >= nr_cpu_ids or a missing key. The verifier
// allows it on per-CPU maps only: anything else ends the run.
kfunc!(map_lookup_percpu, k, (map: *mut c_void, key: *const u8, cpu: u32) -> *mut u8 {
    let Some(m) = k.map_index(map as usize) else {
        k.fail("bpf_map_lookup_percpu_elem on something that is not a map".into());
        return std::ptr::null_mut();
    };
    if !matches!(k.maps[m].def.type_, ty::PERCPU_ARRAY | ty::PERCPU_HASH) {
        k.fail(format!(
            "bpf_map_lookup_percpu_elem on map '{}', which is not per-CPU",
            k.maps[m].def.name
        ));
        return std::ptr::null_mut();
    }
    if cpu as usize >= k.ncpu {
        return std::ptr::null_mut();
    }
    let kb = key_bytes(k, m, key);
    k.maps[m].lookup(kb, cpu as usize)
});

// `scx_bpf_select_cpu_and` (6.17): from ops.select_cpu, ops.enqueue or an
// unlocked context (ops.init, a syscall program); an invalid `prev` or a
// scheduler whose ops.update_idle turned the built-in idle tracking off
// ends the run, as `ops_cpu_valid` and `check_builtin_idle_enabled` do.
kfunc!(select_cpu_and, k, (p: *mut u8, prev: i32, wake_flags: u64, allowed: *const u64, flags: u64) -> i32 {
    match k.cx.cb {
        Cb::SelectCpu | Cb::Enqueue | Cb::None | Cb::Init => {}
        _ => {
            k.fail("scx_bpf_select_cpu_and called from a callback that may not select a CPU \
                    (only ops.select_cpu(), ops.enqueue() or an unlocked context)".into());
            return -EPERM;
        }
    }
    if prev < 0 || prev as usize >= k.ncpu {
        k.fail(format!("invalid CPU {prev} in scx_bpf_select_cpu_and"));
        return -EINVAL;
    }
    if k.desc.ops_mask & OP_UPDATE_IDLE != 0 && k.desc.ops_flags & OPS_KEEP_BUILTIN_IDLE == 0 {
        k.fail("built-in idle tracking is disabled".into());
        return -EBUSY;
    }
    let Some(i) = k.idx_of(p) else {
        k.fail("scx_bpf_select_cpu_and: not a task".into());
        return -EINVAL;
    };
    k.select_cpu_and(i, prev as usize, wake_flags, allowed, flags)
});

// `scx_bpf_task_running` (6.12): `task_rq(p)->curr == p`. The task whose
// context a callback runs in is its CPU's current task until the switch
// completes (a preempted task's re-enqueue, ops.stopping, ops.dispatch's
// `prev`), as on the kernel.
kfunc!(task_running, k, (p: *const u8) -> bool {
    let Some(i) = k.idx_of(p) else { return false };
    let c = k.tasks[i as usize].cpu;
    k.cpus[c].curr == Some(i) || std::ptr::eq(k.cx.current as *const u8, p)
});

// `scx_bpf_get_online_cpumask` (6.10): every CPU is online, the whole run.
kfunc!(online_cpumask, k, () -> *const u64 { k.all.as_ptr() });

// `per_cpu(sd_llc_id, cpu)` (the scx headers' `cpu_llc_id`): the first CPU
// of `cpu`'s LLC; -EINVAL for a CPU >= nr_cpu_ids (`bpf_per_cpu_ptr`).
kfunc!(llc_id, k, (cpu: i32) -> i32 {
    if cpu < 0 || cpu as usize >= k.ncpu {
        return -EINVAL;
    }
    k.llc_first(cpu as usize) as i32
});

// A helper the simulator does not have (bpf_timer_start): the run ends
// with `what`.
kfunc!(unsupported, k, (what: *const c_char) -> () {
    // SAFETY: a string literal of the shim.
    let what = unsafe { CStr::from_ptr(what) }.to_string_lossy().into_owned();
    k.fail(what);
});

#[cfg(test)]
mod tests {
    use super::Scx;

    #[test]
    fn error_messages_format_like_printf() {
        assert_eq!(
            Scx::format("failed to create DSQ %u: %d", &[3, (-12i64) as u64]),
            "failed to create DSQ 3: -12"
        );
        assert_eq!(Scx::format("%llx and %lld%%", &[255, 7]), "ff and 7%");
    }
}
