//! Hand-built scheduler states shared by the policy tests.

use colab_core::{
    BlockKind, CoreId, CoreOrder, Policy, ProgramId, RunState, SchedState, StopReason, ThreadId,
    ThreadInfo, Topology, WakeKind,
};

/// Threads `(program, predicted speedup)`, all created and blocked, on `topo`.
pub(crate) fn state_on(topo: Topology, threads: &[(u16, f64)]) -> SchedState {
    let mut st = SchedState::new(topo);
    for (i, &(p, sf)) in threads.iter().enumerate() {
        st.threads
            .push(ThreadInfo::new(ThreadId(i as u32), ProgramId(p), 0, sf));
    }
    st
}

/// Like [`state_on`] on a named machine, big cores first.
pub(crate) fn state_apps(topo: &str, threads: &[(u16, f64)]) -> SchedState {
    state_on(Topology::named(topo, CoreOrder::BigFirst).unwrap(), threads)
}

/// `n` threads of program 0 with predicted speedup 2.0 on a named machine.
pub(crate) fn state(topo: &str, n: usize) -> SchedState {
    state_apps(topo, &vec![(0, 2.0); n])
}

/// Appends `t` to core `c`'s run queue.
pub(crate) fn queue(st: &mut SchedState, c: u16, t: u32) {
    st.cores[c as usize].rq.push(ThreadId(t));
    let th = &mut st.threads[t as usize];
    th.state = RunState::Runnable;
    th.core = Some(CoreId(c));
}

/// Puts `t` on core `c` (taking it off the run queue first), as dispatch does.
pub(crate) fn run_on(st: &mut SchedState, c: u16, t: u32) {
    st.cores[c as usize].rq.retain(|&x| x != ThreadId(t));
    st.cores[c as usize].current = Some(ThreadId(t));
    st.cores[c as usize].run_start = st.now;
    let th = &mut st.threads[t as usize];
    th.state = RunState::Running;
    th.core = Some(CoreId(c));
    th.last_core = Some(CoreId(c));
}

/// Tells the policy about every thread of `st`.
pub(crate) fn created(p: &mut dyn Policy, st: &SchedState) {
    for t in 0..st.threads.len() {
        p.thread_created(st, ThreadId(t as u32));
    }
}

/// Where `p` puts thread `t` waking up with no waker named.
pub(crate) fn wake(p: &mut dyn Policy, st: &SchedState, t: u32) -> CoreId {
    p.select_core(st, ThreadId(t), WakeKind::wakeup(None))
}

/// `t` ran on `c` and blocked there at a barrier at `st.now`, as the
/// engine reports it.
pub(crate) fn ran_and_blocked(p: &mut dyn Policy, st: &mut SchedState, c: u16, t: u32, ran: u64) {
    ran_and_blocked_on(p, st, c, t, ran, BlockKind::Barrier);
}

/// [`ran_and_blocked`], waiting on `kind`.
pub(crate) fn ran_and_blocked_on(
    p: &mut dyn Policy,
    st: &mut SchedState,
    c: u16,
    t: u32,
    ran: u64,
    kind: BlockKind,
) {
    run_on(st, c, t);
    p.running(st, CoreId(c), ThreadId(t));
    st.now += ran;
    st.cores[c as usize].current = None;
    st.threads[t as usize].state = RunState::Blocked(kind);
    st.threads[t as usize].core = None;
    p.stopped(st, CoreId(c), ThreadId(t), ran, StopReason::Blocked);
}
