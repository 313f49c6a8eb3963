//! How long fast cores sat idle while slower cores ran threads: the time a
//! scheduler that never leaves a big core idle while a thread runs on a
//! little one (the rule ROTA and COLAB's remote preemption aim at) would
//! have put to use. At each moment, min(idle fastest cores, busy other
//! cores) cores' worth of fast time is left idle; the meter integrates it.

use colab_core::Nanos;

/// Integrates min(idle fastest cores, busy slower cores) over time, in
/// core-nanoseconds. A machine of one core type has no slower cores: 0.
#[derive(Clone, Debug)]
pub(crate) struct FastIdleMeter {
    at: Nanos,
    fast_idle: u32,
    slow_busy: u32,
    total_ns: u64,
}

impl FastIdleMeter {
    /// Every core idle at time 0; `fast_cores` of them of the fastest type.
    pub(crate) fn new(fast_cores: u32) -> Self {
        FastIdleMeter {
            at: 0,
            fast_idle: fast_cores,
            slow_busy: 0,
            total_ns: 0,
        }
    }

    /// Counts the time up to `now` at the current state.
    pub(crate) fn advance(&mut self, now: Nanos) {
        let dt = now.saturating_sub(self.at);
        let cores = u64::from(self.fast_idle.min(self.slow_busy));
        self.total_ns = self.total_ns.saturating_add(dt.saturating_mul(cores));
        self.at = self.at.max(now);
    }

    /// A core of the fastest type (`fast`) or a slower one became busy or
    /// idle at `now`.
    pub(crate) fn change(&mut self, now: Nanos, fast: bool, busy: bool) {
        self.advance(now);
        let n = if fast {
            &mut self.fast_idle
        } else {
            &mut self.slow_busy
        };
        // An idle fast core becoming busy is one idle fewer; a slow core
        // becoming busy one busy more.
        *n = if busy == fast {
            n.saturating_sub(1)
        } else {
            *n + 1
        };
    }

    /// Core-nanoseconds counted so far.
    pub(crate) fn total_ns(&self) -> u64 {
        self.total_ns
    }
}

#[cfg(test)]
mod tests {
    use super::FastIdleMeter;

    #[test]
    fn counts_only_fast_idle_time_matched_by_busy_slow_cores() {
        // Two fast cores, slow cores numbered freely.
        let mut m = FastIdleMeter::new(2);
        m.change(10, false, true); // t=10: one slow core busy, both fast idle
        m.change(30, true, true); // t=30: one fast busy, one fast idle
        m.change(40, false, true); // t=40: two slow busy, one fast idle
        m.change(70, true, true); // t=70: both fast busy
        m.change(100, true, false); // t=100: one fast idle again
        m.change(110, false, false); // t=110: one slow busy
        m.change(130, false, false); // t=130: no slow core busy
        m.advance(200);
        // 10..30: min(2,1)=1 -> 20; 30..40: min(1,1)=1 -> 10; 40..70:
        // min(1,2)=1 -> 30; 70..100: 0; 100..110: min(1,2)=1 -> 10;
        // 110..130: min(1,1)=1 -> 20; then no slow core busy.
        assert_eq!(m.total_ns(), 90);
    }

    #[test]
    fn many_busy_slow_cores_count_up_to_the_idle_fast_ones() {
        let mut m = FastIdleMeter::new(2);
        for _ in 0..4 {
            m.change(0, false, true);
        }
        m.advance(50);
        assert_eq!(m.total_ns(), 100, "two idle fast cores, four busy slow");
    }

    #[test]
    fn a_machine_of_one_core_type_counts_nothing() {
        // All cores are of the fastest type: nothing is slower.
        let mut m = FastIdleMeter::new(4);
        m.change(0, true, true);
        m.change(5, true, false);
        m.advance(100);
        assert_eq!(m.total_ns(), 0);
    }
}
