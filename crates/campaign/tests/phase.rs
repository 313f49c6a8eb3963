//! The engine contract: a campaign's phases sent elsewhere as JSON, run in
//! slices in any order (some twice), give the records the local engine
//! gives; an engine that loses a run is an error, not a shorter report.

use colab_campaign::{
    run, run_keep_going_on, run_on, CampaignError, CampaignSpec, Engine, JobResult, NoProgress,
    Phase, Progress,
};
use colab_core::CoreOrder;
use colab_workload::Library;
use std::sync::Mutex;

fn spec() -> CampaignSpec {
    let lib = Library::builtin();
    CampaignSpec {
        workloads: vec![
            lib.mix("Sync-1").unwrap(),
            lib.mix("Comm-2-cgo").unwrap(),
            lib.single("radix", Some(2)).unwrap(),
        ],
        configs: vec!["1B1S".into(), "2B4S".into()],
        // An oracle-mode policy reads its programs' T_SB from the first phase.
        policies: vec!["cfs".into(), "rota".into(), "rota:order=sjf-oracle".into()],
        orders: CoreOrder::BOTH.to_vec(),
        seeds: vec![1, 2],
        predictor: "noisy".into(),
        machines: Vec::new(),
        restart_until: None,
        max_time_ns: None,
        paper_lengths: false,
        machine_files: Default::default(),
    }
}

/// Sends each phase through JSON and runs it backwards in slices of three,
/// the last slice twice (a retried task whose first result also arrived).
struct Sliced {
    phases: Mutex<usize>,
}

impl Engine for Sliced {
    fn run_phase(&self, phase: &Phase, _: &dyn Progress) -> Result<Vec<JobResult>, CampaignError> {
        *self.phases.lock().unwrap() += 1;
        let there = Phase::from_json(&phase.to_json())?;
        let mut out = Vec::new();
        let mut end = there.len();
        while end > 0 {
            let start = end.saturating_sub(3);
            let results = there.run_range(start..end)?;
            // Through JSON too, as a worker's answer comes back.
            let text = serde_json::to_string(&results).unwrap();
            out.extend(serde_json::from_str::<Vec<JobResult>>(&text).unwrap());
            end = start;
        }
        if there.len() >= 3 {
            out.extend(there.run_range(there.len() - 3..there.len())?);
        }
        Ok(out)
    }
}

fn csv(records: &[colab_report::RunRecord]) -> String {
    colab_report::runs_csv(records).unwrap()
}

#[test]
fn a_campaign_run_elsewhere_in_slices_gives_the_local_records() {
    let s = spec();
    let (local, local_stats) = run(&s, &NoProgress).unwrap();
    let engine = Sliced {
        phases: Mutex::new(0),
    };
    let (sliced, stats) = run_on(&s, &NoProgress, &engine).unwrap();
    assert_eq!(*engine.phases.lock().unwrap(), 2, "runs alone, then mixes");
    assert_eq!(csv(&sliced), csv(&local));
    assert_eq!(sliced.len(), 3 * 2 * 3 * 2 * 2);
    assert_eq!(stats.simulations, local_stats.simulations);
    assert_eq!(stats.events, local_stats.events);
}

/// Drops the last result of every phase.
struct Lossy;

impl Engine for Lossy {
    fn run_phase(&self, phase: &Phase, p: &dyn Progress) -> Result<Vec<JobResult>, CampaignError> {
        let mut r = colab_campaign::Local.run_phase(phase, p)?;
        r.pop();
        Ok(r)
    }
}

#[test]
fn an_engine_that_loses_a_run_fails_the_campaign() {
    let e = run_on(&spec(), &NoProgress, &Lossy).unwrap_err();
    assert!(e.to_string().contains("results for a phase of"), "{e}");
    let e = run_keep_going_on(&spec(), &NoProgress, &Lossy).unwrap_err();
    assert!(e.to_string().contains("results for a phase of"), "{e}");
}

#[test]
fn a_phase_refuses_what_it_cannot_run() {
    let e = Phase::from_json("{\"spec\": 1}").err().unwrap();
    assert!(e.to_string().starts_with("not a campaign phase"), "{e}");
    let phase = {
        // A real phase, caught on its way to the engine.
        struct Catch(Mutex<Option<String>>);
        impl Engine for Catch {
            fn run_phase(
                &self,
                phase: &Phase,
                p: &dyn Progress,
            ) -> Result<Vec<JobResult>, CampaignError> {
                self.0.lock().unwrap().get_or_insert(phase.to_json());
                colab_campaign::Local.run_phase(phase, p)
            }
        }
        let c = Catch(Mutex::new(None));
        run_on(&spec(), &NoProgress, &c).unwrap();
        let text = c.0.lock().unwrap().take().unwrap();
        Phase::from_json(&text).unwrap()
    };
    let n = phase.len();
    assert!(n > 0);
    let e = phase.run_range(n - 1..n + 1).unwrap_err();
    assert!(
        e.to_string().contains(&format!("a phase of {n} runs")),
        "{e}"
    );
}
