//! What a finished run yields: the result (turnarounds, energy, the
//! end-of-run invariants) and the live-thread report a deadlock or a time
//! limit prints.

use super::{Sim, REPORT_THREADS};
use crate::sync::WaitObj;
use crate::{ProgramResult, SimError, SimResult};
use colab_core::{CoreId, RunState};

impl<'a> Sim<'a> {
    /// One line per live thread, at most [`REPORT_THREADS`] of them (a
    /// program of thousands of threads would bury the message).
    pub(super) fn deadlock_report(&self) -> String {
        let mut out = String::new();
        let mut shown = 0;
        let live = self
            .st
            .threads
            .iter()
            .filter(|t| t.state != RunState::Exited)
            .count();
        for (i, r) in self.rt.iter().enumerate() {
            let th = &self.st.threads[i];
            if th.state == RunState::Exited {
                continue;
            }
            if shown == REPORT_THREADS {
                out.push_str(&format!("  ... and {} more\n", live - shown));
                break;
            }
            shown += 1;
            let p = &self.w.programs[r.prog as usize];
            let pr = &self.progs[r.prog as usize];
            let what = match r.waiting {
                WaitObj::Mutex(m) => {
                    let local = m - pr.mutex_base;
                    let arr = p
                        .mutex_arrays
                        .iter()
                        .find(|a| local >= a.base && local < a.base + a.len);
                    let owner = self.mutexes[m as usize]
                        .owner
                        .map(|o| format!(" held by thread {o}"))
                        .unwrap_or_default();
                    format!(
                        "mutex '{}'[{}]{owner}",
                        arr.map(|a| a.name.as_str()).unwrap_or("?"),
                        arr.map(|a| local - a.base).unwrap_or(0)
                    )
                }
                WaitObj::Barrier(b) => {
                    let bs = &self.barriers[b as usize];
                    format!(
                        "barrier '{}' ({} of {} arrived)",
                        p.barriers[(b - pr.barrier_base) as usize].0,
                        bs.arrived,
                        bs.needed
                    )
                }
                WaitObj::Cond(c) => format!(
                    "condition variable '{}'",
                    p.conds[(c - pr.cond_base) as usize]
                ),
                WaitObj::QueueFull(q) => format!(
                    "queue '{}' (full)",
                    p.queues[(q - pr.queue_base) as usize].name
                ),
                WaitObj::QueueEmpty(q) => {
                    let qs = &self.queues[q as usize];
                    format!(
                        "queue '{}' (empty, closed by {} of {} producers)",
                        p.queues[(q - pr.queue_base) as usize].name,
                        qs.closed_by,
                        qs.producers
                    )
                }
                WaitObj::Join(g) => format!(
                    "join of group '{}' ({} still live)",
                    p.groups[g as usize].name, pr.live[g as usize]
                ),
                WaitObj::Sleep => "sleep".into(),
                WaitObj::Event(e) => format!("replayed wake-up #{}", e - pr.event_base),
                WaitObj::None => String::new(),
            };
            let what = if what.is_empty() {
                format!("is {:?}", th.state)
            } else {
                format!("waits on {what}")
            };
            let core = th.core.map(|c| format!(" on core {c}")).unwrap_or_default();
            out.push_str(&format!(
                "  thread {} ({} / {}#{}) {what}{core}, {:.3} ms of CPU in all\n",
                i,
                p.name,
                p.groups[r.group as usize].name,
                r.index,
                th.sum_exec_ns as f64 / 1e6
            ));
        }
        out
    }

    pub(super) fn finish(mut self) -> Result<SimResult, SimError> {
        let now = self.st.now;
        self.fast_idle.advance(now);
        self.stats.fast_idle_slow_busy_ns = self.fast_idle.total_ns();
        let restarted = self.cfg.restart_until.is_some();
        // Invariants at the end: every thread exited, every queue empty, every
        // core idle (with restarts, runs in progress at the end are abandoned).
        if let Some(t) = self
            .st
            .threads
            .iter()
            .find(|t| !restarted && t.state != RunState::Exited)
        {
            return Err(SimError::Invariant {
                at_ns: now,
                problem: format!("thread {} did not finish ({:?})", t.id, t.state),
            });
        }
        if let Some((i, _)) = self
            .st
            .cores
            .iter()
            .enumerate()
            .find(|(_, c)| !restarted && (c.current.is_some() || !c.rq.is_empty()))
        {
            return Err(SimError::Invariant {
                at_ns: now,
                problem: format!("core {i} still has threads after the workload finished"),
            });
        }
        let makespan = if restarted {
            now
        } else {
            self.progs.iter().filter_map(|p| p.end).max().unwrap_or(0)
        };
        let topo = &self.st.topo;
        let mut energy = 0.0;
        for (i, c) in self.cores.iter().enumerate() {
            let ty = topo.core_type(CoreId(i as u16));
            let busy = c.busy_ns.min(makespan);
            // Busy time at active power, less what stalls on memory saved.
            let stall = c.stall_ns.min(busy as f64);
            energy += (busy as f64 * ty.active_power_w
                - stall * (ty.active_power_w - ty.stall_power())
                + (makespan - busy) as f64 * ty.idle_power_w)
                * 1e-9;
        }
        let programs = self
            .w
            .programs
            .iter()
            .zip(&self.progs)
            .map(|(p, r)| {
                if restarted {
                    let runs = r.completed.len().max(1) as u64;
                    return ProgramResult {
                        name: p.name.clone(),
                        n: p.n,
                        threads: p.total_threads,
                        start_ns: r.first_start,
                        end_ns: r.first_start + r.completed.iter().sum::<u64>(),
                        turnaround_ns: r.completed.iter().sum::<u64>() / runs,
                        completions: r.completed.len() as u32,
                        cpu_ns: r.cpu_ns,
                        fast_cpu_ns: r.fast_cpu_ns,
                        drawn: self.drawn_work(r),
                    };
                }
                let end = r.end.unwrap_or(makespan);
                ProgramResult {
                    name: p.name.clone(),
                    n: p.n,
                    threads: p.total_threads,
                    start_ns: r.start,
                    end_ns: end,
                    turnaround_ns: end - r.start,
                    completions: 1,
                    cpu_ns: r.cpu_ns,
                    fast_cpu_ns: r.fast_cpu_ns,
                    drawn: self.drawn_work(r),
                }
            })
            .collect();
        Ok(SimResult {
            programs,
            makespan_ns: makespan,
            energy_j: energy,
            core_busy_ns: self.cores.iter().map(|c| c.busy_ns).collect(),
            stats: self.stats,
            counters: self.pmu.map(|p| p.finish()).unwrap_or_default(),
            timeline: self.timeline,
        })
    }

    /// A program's drawn work by memory fraction (from its per-phase sums).
    fn drawn_work(&self, r: &super::ProgRt) -> super::DrawnWork {
        let mut by_mem_frac = std::collections::BTreeMap::new();
        for (phase, ns) in r.drawn_by_phase.iter().enumerate() {
            if *ns > 0.0 {
                *by_mem_frac
                    .entry(self.phases[phase].mem_frac.to_bits())
                    .or_default() += ns;
            }
        }
        super::DrawnWork {
            by_mem_frac,
            longest_path_ns: r.longest_path_ns,
            longest_held_ns: r.longest_held_ns,
        }
    }
}
