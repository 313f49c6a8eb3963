//! ROTA's mechanisms on hand-built situations, one file per part of the
//! policy (as `rota/` is split).
//! 2B2S big cores first: cores 0 and 1 fast, 2 and 3 slow; a cross-cluster
//! migration costs 100 us (the default costs), so ROTA's rotation quantum
//! is 20 ms (with `quantum=age`, the default, at least 2.25 ms), pull_min
//! 400 us and a "short" sleep under 100 us.

use crate::test_util::*;
use crate::{Rota, RotaParams};
use colab_core::{
    Action, BlockKind, CoreId, Pick, Policy, RunState, SchedState, StopReason, ThreadId, WakeKind,
    NS_PER_MS, NS_PER_US,
};

mod idle;
mod order;
mod params;
mod place;
mod rotate;

const MS: u64 = NS_PER_MS;
const US: u64 = NS_PER_US;

/// The two moves of a swap: `y` to core `y_to`, `x` to core `x_to`.
fn swap(y: u32, y_to: u16, x: u32, x_to: u16) -> Vec<Action> {
    vec![
        Action::Migrate {
            thread: ThreadId(y),
            to: CoreId(y_to),
        },
        Action::Migrate {
            thread: ThreadId(x),
            to: CoreId(x_to),
        },
    ]
}

/// The third freeze (capped FIFO, one thread per fast core, no serial
/// boost), for the tests of those mechanisms.
const THIRD: &str = "@3";

/// ROTA on `st` with `opts` (`KEY=VALUE:...`, after a preset `@N:` if any).
fn rota(st: &SchedState, opts: &str) -> Rota {
    let sep = if opts.starts_with('@') { "" } else { ":" };
    let params = RotaParams::by_name(&format!("rota{sep}{opts}")).unwrap();
    let mut p = Rota::new(params);
    created(&mut p, st);
    p
}

/// Thread `t` of `st` ran `ran` on core `c` and was preempted there.
fn ran_and_preempted(p: &mut dyn Policy, st: &mut SchedState, c: u16, t: u32, ran: u64) {
    run_on(st, c, t);
    p.running(st, CoreId(c), ThreadId(t));
    st.now += ran;
    st.cores[c as usize].current = None;
    st.threads[t as usize].state = RunState::Runnable;
    p.stopped(st, CoreId(c), ThreadId(t), ran, StopReason::Preempted);
}
