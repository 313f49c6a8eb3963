//! The program interpreter: what a thread does next, op by op, until it
//! starts a compute segment, blocks or exits (locks, barriers, condition
//! variables, queues, events, spawns and joins, loops).

use super::{EvKind, Sim, Step, STEPS_PER_EVENT};
use crate::sync::WaitObj;
use crate::SimError;
use colab_core::{BlockKind, CoreId, ThreadId};
use colab_workload::{IndexSel, Op, Workload};
use rand::Rng;

impl<'a> Sim<'a> {
    /// Runs zero-time operations of `t` (running on `c`) until it starts a
    /// compute segment, blocks or exits.
    pub(super) fn interpret(&mut self, t: ThreadId, c: CoreId) -> Result<Step, SimError> {
        let ti = t.idx();
        let prog = self.rt[ti].prog as usize;
        let w: &'a Workload = self.w;
        let program = &w.programs[prog];
        let ops = &program.groups[self.rt[ti].group as usize].ops;
        // Re-acquire the mutex after a condition wait.
        if let Some((array, m)) = self.rt[ti].relock {
            if !self.try_lock(t, m) {
                return Ok(Step::Blocked(BlockKind::Mutex));
            }
            self.rt[ti].held.push((array, m));
            self.rt[ti].relock = None;
        }
        let pbase = &self.progs[prog];
        let (mb, bb, cb, qb, eb) = (
            pbase.mutex_base,
            pbase.barrier_base,
            pbase.cond_base,
            pbase.queue_base,
            pbase.event_base,
        );
        loop {
            let pc = self.rt[ti].pc as usize;
            let Some(op) = ops.get(pc) else {
                return Ok(Step::Exited);
            };
            self.steps += 1;
            if self.steps > self.max_steps {
                return Err(SimError::StepBudget {
                    program: program.name.clone(),
                    thread: t.0,
                    steps: self.steps,
                    events: self.stats.events,
                    per_event: STEPS_PER_EVENT,
                    at_ns: self.st.now,
                });
            }
            match *op {
                Op::Compute {
                    work,
                    cv,
                    imbalance,
                    ..
                } => {
                    let mut w = work;
                    if imbalance > 0.0 {
                        let size = self.group_size(prog, self.rt[ti].group);
                        if size > 1 {
                            let k = self.rt[ti].index as f64 / (size - 1) as f64;
                            w *= 1.0 + imbalance * (2.0 * k - 1.0);
                        }
                    }
                    if cv > 0.0 {
                        let a = cv * 3f64.sqrt();
                        w *= 1.0 + a * crate::predict::symmetric_unit(&mut self.rng);
                    }
                    if w <= 0.0 {
                        self.rt[ti].pc += 1;
                        continue;
                    }
                    self.rt[ti].phase = self.op_phase[prog][self.rt[ti].group as usize][pc];
                    let phase = self.rt[ti].phase as usize;
                    let best = w * self.phases[phase].ns_best;
                    if !self.op_shared[prog][self.rt[ti].group as usize][pc] {
                        self.rt[ti].path_ns += best;
                        self.rt[ti].since_barrier_ns += best;
                    }
                    let pr = &mut self.progs[prog];
                    if pr.drawn_by_phase.len() <= phase {
                        pr.drawn_by_phase.resize(phase + 1, 0.0);
                    }
                    pr.drawn_by_phase[phase] += best;
                    pr.longest_path_ns = pr.longest_path_ns.max(self.rt[ti].path_ns);
                    for &(_, m) in &self.rt[ti].held {
                        let held = &mut self.mutexes[m as usize].held_ns;
                        *held += best;
                        pr.longest_held_ns = pr.longest_held_ns.max(*held);
                    }
                    let r = &mut self.rt[ti];
                    r.in_compute = true;
                    r.remaining = w;
                    r.progress_start = r.progress_start.max(self.st.now);
                    self.schedule_done(c, t);
                    return Ok(Step::Continue);
                }
                Op::Lock { array, index } => {
                    let m = match self.rt[ti].lock_target {
                        Some(m) => m,
                        None => {
                            let arr = &program.mutex_arrays[array as usize];
                            let k = match index {
                                IndexSel::Fixed(k) => k,
                                IndexSel::Thread => self.rt[ti].index % arr.len,
                                IndexSel::Random => self.rng.gen_range(0..arr.len),
                            };
                            mb + arr.base + k
                        }
                    };
                    if self.try_lock(t, m) {
                        let r = &mut self.rt[ti];
                        r.held.push((array, m));
                        r.lock_target = None;
                        r.pc += 1;
                    } else {
                        self.rt[ti].lock_target = Some(m);
                        return Ok(Step::Blocked(BlockKind::Mutex));
                    }
                }
                Op::Unlock { array } => {
                    let r = &mut self.rt[ti];
                    let Some(pos) = r.held.iter().rposition(|(a, _)| *a == array) else {
                        return Err(self.werr(
                            t,
                            format!(
                                "unlock of mutex '{}' that it does not hold",
                                program.mutex_arrays[array as usize].name
                            ),
                        ));
                    };
                    let (_, m) = r.held.remove(pos);
                    r.pc += 1;
                    self.unlock(t, m);
                }
                Op::Barrier(b) => {
                    let g = (bb + b) as usize;
                    self.rt[ti].pc += 1;
                    let bar = &mut self.barriers[g];
                    bar.arrived += 1;
                    bar.path_ns = bar.path_ns.max(self.rt[ti].path_ns);
                    bar.work_ns += std::mem::take(&mut self.rt[ti].since_barrier_ns);
                    bar.from_ns = bar.from_ns.min(self.rt[ti].since_barrier_from);
                    if bar.arrived >= bar.needed {
                        bar.arrived = 0;
                        // The episode ends when its last thread arrives,
                        // in every schedule, and no sooner than the work
                        // its threads did since they left a barrier, over
                        // every core at the fastest rate, after the first
                        // of them left: all leave at the later of the two.
                        let work = std::mem::take(&mut bar.work_ns) / self.cores.len() as f64;
                        let from = std::mem::replace(&mut bar.from_ns, f64::INFINITY);
                        let path = std::mem::take(&mut bar.path_ns).max(from + work);
                        let r = &mut self.rt[ti];
                        (r.path_ns, r.since_barrier_from) = (path, path);
                        let mut ws = std::mem::take(&mut bar.waiters);
                        for w in &ws {
                            let r = &mut self.rt[w.idx()];
                            (r.path_ns, r.since_barrier_from) = (path, path);
                            self.wake_all_of(*w, t);
                        }
                        ws.clear();
                        self.barriers[g].waiters = ws; // keep the allocation
                    } else {
                        bar.waiters.push(t);
                        self.rt[ti].waiting = WaitObj::Barrier(g as u32);
                        return Ok(Step::Blocked(BlockKind::Barrier));
                    }
                }
                Op::CondWait { cond, array } => {
                    let r = &mut self.rt[ti];
                    let Some(pos) = r.held.iter().rposition(|(a, _)| *a == array) else {
                        return Err(self.werr(t, "condition wait without holding its mutex"));
                    };
                    let (_, m) = r.held.remove(pos);
                    r.relock = Some((array, m));
                    r.pc += 1;
                    r.waiting = WaitObj::Cond(cb + cond);
                    self.unlock(t, m);
                    self.conds[(cb + cond) as usize].waiters.push_back(t);
                    return Ok(Step::Blocked(BlockKind::CondVar));
                }
                Op::Signal(cond) => {
                    self.rt[ti].pc += 1;
                    if let Some(w) = self.conds[(cb + cond) as usize].waiters.pop_front() {
                        self.wake(w, Some(t));
                    }
                }
                Op::Broadcast(cond) => {
                    self.rt[ti].pc += 1;
                    while let Some(w) = self.conds[(cb + cond) as usize].waiters.pop_front() {
                        self.wake_all_of(w, t);
                    }
                }
                Op::Push(q) => {
                    let g = (qb + q) as usize;
                    let qs = &mut self.queues[g];
                    if qs.items < qs.capacity {
                        qs.items += 1;
                        self.rt[ti].pc += 1;
                        if let Some(w) = self.queues[g].pop_waiters.pop_front() {
                            self.wake(w, Some(t));
                        }
                    } else {
                        qs.push_waiters.push_back(t);
                        self.rt[ti].waiting = WaitObj::QueueFull(g as u32);
                        return Ok(Step::Blocked(BlockKind::QueueFull));
                    }
                }
                Op::Pop(q) => {
                    let g = (qb + q) as usize;
                    let qs = &mut self.queues[g];
                    if qs.items > 0 {
                        qs.items -= 1;
                        self.rt[ti].pc += 1;
                        if let Some(w) = self.queues[g].push_waiters.pop_front() {
                            self.wake(w, Some(t));
                        }
                    } else if qs.is_closed() {
                        // Leave the innermost until-closed loop.
                        let r = &mut self.rt[ti];
                        r.pc = r.loops.break_until_closed(ops).unwrap_or(r.pc + 1);
                    } else {
                        qs.pop_waiters.push_back(t);
                        self.rt[ti].waiting = WaitObj::QueueEmpty(g as u32);
                        return Ok(Step::Blocked(BlockKind::QueueEmpty));
                    }
                }
                Op::Close(q) => {
                    let g = (qb + q) as usize;
                    self.rt[ti].pc += 1;
                    let qs = &mut self.queues[g];
                    qs.closed_by += 1;
                    if qs.closed_by > qs.producers {
                        let producers = qs.producers;
                        return Err(self.werr(
                            t,
                            format!(
                                "queue '{}' closed more often than its {producers} producers",
                                program.queues[q as usize].name
                            ),
                        ));
                    }
                    if qs.is_closed() {
                        while let Some(w) = self.queues[g].pop_waiters.pop_front() {
                            self.wake_all_of(w, t);
                        }
                    }
                }
                Op::Sleep(ns) => {
                    self.rt[ti].pc += 1;
                    if !self.op_shared[prog][self.rt[ti].group as usize][pc] {
                        self.rt[ti].path_ns += ns as f64;
                    }
                    let pr = &mut self.progs[prog];
                    pr.longest_path_ns = pr.longest_path_ns.max(self.rt[ti].path_ns);
                    self.rt[ti].waiting = WaitObj::Sleep;
                    self.sleepers += 1;
                    self.push(self.st.now.saturating_add(ns), EvKind::Wake { thread: t.0 });
                    return Ok(Step::Blocked(BlockKind::Sleep));
                }
                Op::Timer {
                    timer,
                    period_ns,
                    absolute,
                } => {
                    self.rt[ti].pc += 1;
                    let r = &mut self.rt[ti];
                    let last = r.timers[timer as usize].unwrap_or(r.created);
                    let next = last.saturating_add(period_ns);
                    let now = self.st.now;
                    if next > now {
                        r.timers[timer as usize] = Some(next);
                        r.waiting = WaitObj::Sleep;
                        self.sleepers += 1;
                        self.push(next, EvKind::Wake { thread: t.0 });
                        return Ok(Step::Blocked(BlockKind::Sleep));
                    }
                    // Missed: go on at once; a relative timer counts its
                    // next period from now, an absolute one keeps its times.
                    r.timers[timer as usize] = Some(if absolute { next } else { now });
                }
                Op::Spawn { group, count } => {
                    self.rt[ti].pc += 1;
                    let base = self.group_size(prog, group);
                    for i in 0..count {
                        self.create_thread(prog, group, base + i, Some(t));
                    }
                    self.bump_group_size(prog, group, count);
                }
                Op::Post { event, wake_all } => {
                    self.rt[ti].pc += 1;
                    let ev = &mut self.events_state[(eb + event) as usize];
                    ev.posted = true;
                    match ev.waiter.take() {
                        Some(w) if wake_all => self.wake_all_of(w, t),
                        Some(w) => self.wake(w, Some(t)),
                        None => {}
                    }
                }
                Op::WaitEvent(e) => {
                    self.rt[ti].pc += 1;
                    let g = eb + e;
                    let ev = &mut self.events_state[g as usize];
                    if !ev.posted {
                        ev.waiter = Some(t);
                        self.rt[ti].waiting = WaitObj::Event(g);
                        return Ok(Step::Blocked(BlockKind::Event));
                    }
                }
                Op::Join(group) => {
                    self.rt[ti].pc += 1;
                    if self.progs[prog].live[group as usize] > 0 {
                        self.progs[prog].joiners[group as usize].push(t);
                        self.rt[ti].waiting = WaitObj::Join(group);
                        return Ok(Step::Blocked(BlockKind::Join));
                    }
                    let exited = self.progs[prog].exit_path_ns[group as usize];
                    let r = &mut self.rt[ti];
                    r.path_ns = r.path_ns.max(exited);
                }
                Op::Loop { count, end } => {
                    let r = &mut self.rt[ti];
                    r.pc = r.loops.enter(pc as u32, count, end);
                }
                Op::EndLoop { start } => {
                    let r = &mut self.rt[ti];
                    r.pc = r.loops.end(pc as u32, start);
                }
            }
        }
    }

    fn group_size(&self, prog: usize, group: u32) -> u32 {
        self.spawned[prog][group as usize]
    }

    fn bump_group_size(&mut self, prog: usize, group: u32, n: u32) {
        self.spawned[prog][group as usize] += n;
    }

    /// Fast path: take the mutex if free. Slow path: queue as a futex waiter.
    pub(super) fn try_lock(&mut self, t: ThreadId, m: u32) -> bool {
        let mx = &mut self.mutexes[m as usize];
        if mx.owner.is_none() {
            mx.owner = Some(t);
            true
        } else {
            mx.waiters.push_back(t);
            self.rt[t.idx()].waiting = WaitObj::Mutex(m);
            false
        }
    }

    fn unlock(&mut self, t: ThreadId, m: u32) {
        let mx = &mut self.mutexes[m as usize];
        debug_assert_eq!(mx.owner, Some(t));
        mx.owner = None;
        if let Some(w) = mx.waiters.pop_front() {
            self.wake(w, Some(t));
        }
    }
}
