//! The campaign runner on a small hand-picked campaign.

use colab_campaign::{run, CampaignSpec, NoProgress, Study};
use colab_core::CoreOrder;
use colab_sim::PredictorKind;
use colab_workload::Library;

fn small() -> CampaignSpec {
    let lib = Library::builtin();
    CampaignSpec {
        workloads: vec![
            lib.mix("Sync-1").unwrap(),
            lib.single("radix", Some(2)).unwrap(),
        ],
        configs: vec!["1B1S".into()],
        policies: vec!["cfs".into(), "colab".into()],
        orders: CoreOrder::BOTH.to_vec(),
        seeds: vec![1, 2],
        predictor: PredictorKind::default(),
        machines: Vec::new(),
        restart_until: None,
    }
}

#[test]
fn camp_and_propsp_studies_run_each_mix_on_its_papers_machine() {
    let lib = Library::builtin();
    for study in [Study::Camp, Study::PropSp] {
        let mut spec = CampaignSpec::study(&lib, study, true).unwrap();
        assert!(!spec.workloads.is_empty());
        assert_eq!(spec.restart_until, Some(3));
        spec.policies = vec!["cfs".into(), "rr".into()];
        spec.orders = vec![CoreOrder::BigFirst];
        let (records, _) = run(&spec, &NoProgress).unwrap();
        assert_eq!(records.len(), spec.workloads.len() * 2);
        for r in &records {
            let wi = spec
                .workloads
                .iter()
                .position(|w| w.name == r.workload)
                .unwrap();
            assert_eq!(spec.machines[wi], vec![r.config.clone()], "{}", r.workload);
            assert!(
                r.config.starts_with("camp-") || r.config.starts_with("propsp-"),
                "{}",
                r.config
            );
            // Restarted until every program completed three times: the run
            // lasts at least three times its longest program's mean run.
            let longest = r.programs.iter().map(|p| p.turnaround_ns).max().unwrap();
            assert!(r.makespan_ns >= 3 * longest - 3, "{r:?}");
        }
    }
}

#[test]
fn one_record_per_combination_with_consistent_baselines() {
    let (records, stats) = run(&small(), &NoProgress).unwrap();
    // 2 workloads x 1 config x 2 policies x 2 orders x 2 seeds.
    assert_eq!(records.len(), 16);
    // Mix runs plus, per program, alone runs and all-big baselines, deduplicated.
    assert!(stats.simulations > 16);
    for r in &records {
        assert_eq!(r.cores, 2);
        for p in &r.programs {
            assert!(p.turnaround_ns > 0 && p.t_sb_ns > 0 && p.t_alone_ns > 0);
            // Running with company never beats running alone on the same machine
            // by much, and an all-big machine is never slower than 1B1S alone.
            assert!(p.t_sb_ns <= p.t_alone_ns + p.t_alone_ns / 20, "{r:?}");
        }
        // T_SB depends only on program and seed, never on policy or order.
        let same: Vec<_> = records
            .iter()
            .filter(|o| o.workload == r.workload && o.seed == r.seed)
            .map(|o| o.programs.iter().map(|p| p.t_sb_ns).collect::<Vec<_>>())
            .collect();
        assert!(same.windows(2).all(|w| w[0] == w[1]));
    }
    // A single-program run alone under the same policy is its own T_alone.
    for r in records.iter().filter(|r| r.workload == "radix") {
        assert_eq!(r.programs[0].turnaround_ns, r.programs[0].t_alone_ns);
    }
}

#[test]
fn campaigns_are_deterministic() {
    let a = run(&small(), &NoProgress).unwrap().0;
    let b = run(&small(), &NoProgress).unwrap().0;
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
}

#[test]
fn bad_names_fail_before_running() {
    let mut s = small();
    s.policies.push("nope".into());
    assert!(run(&s, &NoProgress)
        .unwrap_err()
        .to_string()
        .contains("unknown policy 'nope'"));
    let mut s = small();
    s.configs = vec!["2X".into()];
    assert!(run(&s, &NoProgress)
        .unwrap_err()
        .to_string()
        .contains("unknown topology name '2X'"));
}

#[test]
fn a_policy_can_name_its_predictor_for_ablations() {
    let mut spec = small();
    spec.policies = vec!["colab@oracle".into(), "colab@noisy:0.25".into()];
    let (_, kind) = spec.policy_and_predictor("colab@oracle").unwrap();
    assert_eq!(kind, PredictorKind::Oracle);
    let (p, kind) = spec.policy_and_predictor("wash@noisy:0.25").unwrap();
    assert_eq!(p.name(), "wash");
    assert_eq!(
        kind,
        PredictorKind::Noisy {
            mean_abs_err: 0.25,
            energy_mean_abs_err: 0.25
        }
    );
    // Without '@': the spec's own predictor.
    assert_eq!(spec.policy_and_predictor("cfs").unwrap().1, spec.predictor);
    for bad in ["colab@", "colab@noisy:-1", "colab@psychic"] {
        let msg = spec.policy_and_predictor(bad).err().unwrap().to_string();
        assert!(msg.contains("unknown predictor"), "{bad}: {msg}");
    }
    // The variants run and are recorded under their full names; with the
    // oracle, COLAB's results differ from the 25%-error ones.
    spec.workloads.truncate(1);
    let (records, _) = run(&spec, &NoProgress).unwrap();
    let by = |p: &str| -> Vec<u64> {
        records
            .iter()
            .filter(|r| r.policy == p)
            .flat_map(|r| r.programs.iter().map(|x| x.turnaround_ns))
            .collect()
    };
    assert_eq!(by("colab@oracle").len(), 8); // 2 programs x 2 orders x 2 seeds
    assert_ne!(by("colab@oracle"), by("colab@noisy:0.25"));
    let list = colab_campaign::ablation_policies("cfs");
    assert_eq!(list[0], "cfs");
    assert!(list.contains(&"camp@model+0.25".to_string()));
    assert!(!list.iter().any(|p| p.starts_with("eevdf")));
}

#[test]
fn policies_can_run_on_the_trained_counter_model() {
    let mut spec = small();
    spec.workloads.truncate(1);
    spec.policies = vec!["colab@model".into(), "colab@model+0.25".into()];
    let (records, _) = run(&spec, &NoProgress).unwrap();
    assert_eq!(records.len(), 2 * 2 * 2); // 2 policies x 2 orders x 2 seeds
                                          // Bad labels and machines the model does not know fail up front.
    for (bad, says) in [
        (
            "colab@model:nosuch.json",
            "neither a built-in model nor a readable file",
        ),
        ("colab@model+x", "extra error 'x'"),
    ] {
        let msg = spec.policy_and_predictor(bad).err().unwrap().to_string();
        assert!(msg.contains(says), "{bad}: {msg}");
    }
    spec.configs = vec!["camp-amd-2fc-2sc".into()];
    spec.policies = vec!["colab@model".into()];
    let msg = run(&spec, &NoProgress).err().unwrap().to_string();
    assert!(
        msg.contains("no entry for core type(s) fast, slow"),
        "{msg}"
    );
}
