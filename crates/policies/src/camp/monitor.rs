//! CAMP's monitoring module (camp-tocs12 section 4.1.2): per-thread SF
//! estimates from periodic samples, a running average, a warm-up after start
//! or migration, and the phase-transition filter.
//!
//! What a reading is here: the simulator reads a thread's counters at every
//! tick and context switch and updates `predicted_speedup` (the noisy
//! performance-counter model). The monitor weights each reading by the time
//! it covers and closes a sample when a full sampling period of the thread's
//! own execution has been seen, like counters read over a 200 ms window.
//!
//! Our reading of the parts the paper leaves open:
//! - Sampling is per thread, over its own CPU time ("every 20 timer ticks":
//!   ticks are charged to the running thread); a thread that runs seldom is
//!   sampled seldom.
//! - Warm-up: "we discard the first values collected immediately after the
//!   thread starts or after it is migrated" is read as the first counter
//!   reading(s), the ones covering the cold-cache period; a migration does not
//!   throw away the rest of the sampling window, or threads that the load
//!   balancer moves often would never finish one. A new thread has no SF
//!   until its first sample closes: that is its warm-up period (section
//!   5.1.2: new threads are "not eligible ... until their warm-up periods
//!   expire").
//! - Running average and phase filter: the running average covers the
//!   samples of the current phase. Each new sample is compared with the
//!   running average so far (the "previous average"); if they differ by more
//!   than phase_transition_threshold, a transition is indicated and the
//!   average restarts at the new sample. Comparing two cumulative averages
//!   instead would make the filter blind to phase changes after a few
//!   samples, yet the paper relies on it noticing FFTW's serial phase turning
//!   memory-bound (section 5.1.2).
//! - The published SF changes only once the phase is stable: after two
//!   samples in a row without a transition ("Two or more sampling intervals
//!   containing no indicated phase transition signal a stable phase").
//! - The very first sample of a thread is published at once (assumption:
//!   there is no earlier estimate to protect from a premature change, and
//!   waiting two more periods would triple the warm-up).

use colab_core::{Nanos, NS_PER_MS};

#[derive(Clone, Debug, PartialEq)]
pub struct MonitorParams {
    /// Sampling period, in the thread's CPU time (camp-tocs12 4.1.2:
    /// "sampled every 20 timer ticks (roughly 200ms on our experimental
    /// system)"; we keep the 200 ms, since our tick is 4 ms, not 10 ms).
    pub sample_ns: Nanos,
    /// Counter readings discarded after start or migration (camp-tocs12
    /// 4.1.2 "the first values"; assumption: one reading, at most one tick
    /// of execution, well above our modelled cache-refill time).
    pub warmup_readings: u32,
    /// camp-tocs12 4.1.2: phase_transition_threshold, 12%.
    pub phase_transition_threshold: f64,
    /// Samples without a transition that make a phase stable (camp-tocs12
    /// 4.1.2: "Two or more sampling intervals").
    pub stable_samples: u32,
}

impl Default for MonitorParams {
    fn default() -> Self {
        MonitorParams {
            sample_ns: 200 * NS_PER_MS,
            warmup_readings: 1,
            phase_transition_threshold: 0.12,
            stable_samples: 2,
        }
    }
}

/// One thread's SF monitor.
#[derive(Clone, Debug, Default)]
pub struct SfMonitor {
    /// Readings still to discard (warm-up).
    skip: u32,
    win_ns: Nanos,
    win_sum: f64,
    /// Running average of the current phase's samples.
    avg_sum: f64,
    avg_n: u32,
    /// Samples since the last transition (or the first sample).
    stable: u32,
    transitions: u32,
    estimate: Option<f64>,
}

impl SfMonitor {
    /// A monitor for a thread that has just started.
    pub fn new(p: &MonitorParams) -> SfMonitor {
        SfMonitor {
            skip: p.warmup_readings,
            ..SfMonitor::default()
        }
    }

    /// The published SF estimate, if the thread is past its warm-up.
    pub fn estimate(&self) -> Option<f64> {
        self.estimate
    }

    /// Phase transitions indicated so far.
    pub fn transitions(&self) -> u32 {
        self.transitions
    }

    /// The thread moved to another core: discard the next readings.
    pub fn migrated(&mut self, p: &MonitorParams) {
        self.skip = p.warmup_readings;
    }

    /// A counter reading of predicted SF `sf` covering `covered` ns of the
    /// thread's execution. Closes a sample when the window is full.
    pub fn reading(&mut self, sf: f64, covered: Nanos, p: &MonitorParams) {
        if covered == 0 || !sf.is_finite() {
            return;
        }
        if self.skip > 0 {
            self.skip -= 1;
            return;
        }
        self.win_ns += covered;
        self.win_sum += sf * covered as f64;
        if self.win_ns >= p.sample_ns {
            let s = self.win_sum / self.win_ns as f64;
            self.win_ns = 0;
            self.win_sum = 0.0;
            self.sample(s, p);
        }
    }

    /// One closed sample: the running average and the phase filter.
    pub fn sample(&mut self, s: f64, p: &MonitorParams) {
        if self.avg_n == 0 {
            self.avg_sum = s;
            self.avg_n = 1;
            self.stable = 0;
            self.estimate.get_or_insert(s);
            return;
        }
        let avg = self.avg_sum / self.avg_n as f64;
        if (s - avg).abs() > p.phase_transition_threshold * avg {
            // A phase transition: the new phase's average starts here; the
            // published estimate waits until the phase is stable.
            self.transitions += 1;
            self.avg_sum = s;
            self.avg_n = 1;
            self.stable = 0;
            return;
        }
        self.avg_sum += s;
        self.avg_n += 1;
        self.stable += 1;
        if self.stable >= p.stable_samples {
            self.estimate = Some(self.avg_sum / self.avg_n as f64);
        }
    }
}
