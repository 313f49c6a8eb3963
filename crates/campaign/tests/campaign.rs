//! The campaign runner on a small hand-picked campaign.

use colab_campaign::model_predictor::Predictor;
use colab_campaign::{run, run_keep_going, CampaignSpec, NoProgress, Study};
use colab_core::{CoreOrder, Topology};
use colab_sim::{simulate, PredictorKind, SimConfig};
use colab_workload::{Library, Workload};

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
        predictor: "noisy".into(),
        machines: Vec::new(),
        restart_until: None,
        max_time_ns: None,
        paper_lengths: false,
        machine_files: Default::default(),
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
    assert_eq!(kind, Predictor::Direct(PredictorKind::Oracle));
    let (p, kind) = spec.policy_and_predictor("wash@noisy:0.25").unwrap();
    assert_eq!(p.name(), "wash");
    assert_eq!(
        kind,
        Predictor::Direct(PredictorKind::Noisy {
            mean_abs_err: 0.25,
            energy_mean_abs_err: 0.25
        })
    );
    // Without '@': the spec's own predictor.
    assert_eq!(
        spec.policy_and_predictor("colab").unwrap().1,
        Predictor::Direct(PredictorKind::default())
    );
    assert_eq!(
        spec.policy_and_predictor("colab@model+0.1").unwrap().1,
        Predictor::MachineModel { extra_err: 0.1 }
    );
    assert_eq!(
        spec.policy_and_predictor("rota@constant:2").unwrap().1,
        Predictor::Direct(PredictorKind::Constant { speedup: 2.0 })
    );
    for bad in [
        "colab@",
        "colab@noisy:-1",
        "colab@psychic",
        "colab@constant:0",
        "colab@constant:nan",
        "colab@constant",
    ] {
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
    // `model` is trained for each machine, so it runs on CAMP's; a fixed
    // model trained on other core types is refused by name.
    spec.configs = vec!["camp-amd-2fc-2sc".into()];
    spec.policies = vec!["colab@model".into()];
    assert_eq!(run(&spec, &NoProgress).unwrap().0.len(), 4);
    spec.policies = vec!["colab@model:sim-reference".into()];
    let msg = run(&spec, &NoProgress).err().unwrap().to_string();
    assert!(
        msg.contains("no entry for core type(s) fast, slow"),
        "{msg}"
    );
}

#[test]
fn the_default_model_of_the_reference_machine_is_the_builtin_sim_reference() {
    let topo = Topology::named("2B2S", CoreOrder::BigFirst).unwrap();
    let trained = colab_campaign::model_predictor::machine_model(&topo).unwrap();
    let builtin = colab_model::Model::builtin("sim-reference").unwrap();
    let a: Vec<_> = trained.core_types().collect();
    let b: Vec<_> = builtin.core_types().collect();
    assert_eq!(a, b);
    // Other machines get their own: CAMP's slow core is not the little core.
    let camp = Topology::named("camp-amd-2fc-2sc", CoreOrder::BigFirst).unwrap();
    let m = colab_campaign::model_predictor::machine_model(&camp).unwrap();
    let names: Vec<&str> = m.core_types().map(|(n, _)| n).collect();
    assert_eq!(names, ["fast", "slow"]);
}

/// Policies that say they never read predictions schedule the same on
/// counters as on the oracle (so campaigns may spare them counter work),
/// and those that read them do not.
#[test]
fn policies_that_ignore_predictions_are_not_moved_by_them() {
    let lib = Library::builtin();
    // A COLAB mix on its machine and a CAMP mix on CAMP's.
    let cases = [
        (lib.mix("Sync-2").unwrap(), "2B2S"),
        (lib.mix("CAMP-2CI-2MI-A").unwrap(), "camp-amd-2fc-2sc"),
    ];
    // Counters read, but every thread predicted alike: as wrong as it gets.
    struct Flat;
    impl colab_sim::CounterModelPredictor for Flat {
        fn events(&self, _: &str) -> Vec<String> {
            vec!["CPU_CYCLES".into()]
        }
        fn predict(&self, _: &str, _: &dyn Fn(&str) -> Option<f64>) -> Option<(f64, f64)> {
            Some((1.0, 1.0))
        }
    }
    let model = PredictorKind::Counters(colab_sim::CounterPredictorRef::new(Flat));
    let mut moved = Vec::new();
    for name in colab_campaign::ALL_POLICIES {
        let times = |kind: &PredictorKind| -> Vec<u64> {
            let mut out = Vec::new();
            for (w, machine) in &cases {
                let topo = Topology::named(machine, CoreOrder::BigFirst).unwrap();
                let mut p = colab_campaign::policy_by_name(name).unwrap();
                let cfg = SimConfig {
                    seed: 3,
                    predictor: kind.clone(),
                    ..SimConfig::default()
                };
                let r = simulate(w, &topo, p.as_mut(), &cfg).unwrap();
                out.extend(r.programs.iter().map(|p| p.turnaround_ns));
            }
            out
        };
        let reads = colab_campaign::policy_by_name(name)
            .unwrap()
            .reads_predictions();
        let same = times(&PredictorKind::Oracle) == times(&model);
        assert_eq!(
            same, !reads,
            "{name}: reads predictions {reads}, same schedule {same}"
        );
        if reads {
            moved.push(name);
        }
    }
    assert_eq!(moved, colab_campaign::PREDICTING_POLICIES);
}

#[test]
fn random_mixes_run_like_the_studys_workloads_and_are_described() {
    let lib = Library::builtin();
    let mut spec = CampaignSpec::paper(&lib, true).unwrap();
    spec.workloads.clear();
    spec.add_random_mixes(&lib, 2, 5).unwrap();
    spec.configs = vec!["2B2S".into()];
    spec.policies = vec!["cfs".into(), "colab".into()];
    spec.orders = vec![CoreOrder::BigFirst];
    spec.predictor = "noisy".into();
    let names: Vec<&str> = spec.workloads.iter().map(|w| w.name.as_str()).collect();
    assert_eq!(names, ["Rand-5-1", "Rand-5-2"]);
    let (records, _) = run(&spec, &NoProgress).unwrap();
    assert_eq!(records.len(), 2 * 2);
    for r in &records {
        assert_eq!(r.classes, vec!["random".to_string()]);
        assert_eq!(r.config, "2B2S");
        let w = spec
            .workloads
            .iter()
            .find(|w| w.name == r.workload)
            .unwrap();
        assert_eq!(r.threads, w.total_threads());
        assert!((2..=6).contains(&r.programs.len()));
    }
    let info = spec.random_compositions();
    assert_eq!(info.len(), 2);
    for (i, w) in info.iter().zip(&spec.workloads) {
        assert_eq!(i.name, w.name);
        assert_eq!(i.source, "random (seed 5)");
        let threads: u32 = i.programs.iter().map(|p| p.threads).sum();
        assert_eq!(threads, w.total_threads());
        assert!(threads <= colab_workload::random::MAX_THREADS);
    }
    // The paper's own workloads are not described (their files do that).
    assert!(CampaignSpec::paper(&lib, true)
        .unwrap()
        .random_compositions()
        .is_empty());
    // Same request, same workloads.
    let again = colab_campaign::random_workloads(&lib, 2, 5).unwrap();
    for (a, b) in again.iter().zip(&spec.workloads) {
        assert_eq!(
            colab_campaign::workload_info(a),
            colab_campaign::workload_info(b)
        );
    }
}

#[test]
fn random_mixes_are_refused_where_they_cannot_run() {
    let lib = Library::builtin();
    let mut camp = CampaignSpec::study(&lib, Study::Camp, true).unwrap();
    let before = camp.workloads.len();
    let e = camp.add_random_mixes(&lib, 3, 1).unwrap_err().to_string();
    assert!(e.contains("has none"), "{e}");
    assert_eq!(camp.workloads.len(), before);
    let mut spec = CampaignSpec::paper(&lib, true).unwrap();
    for count in [0, 1001] {
        let e = spec
            .add_random_mixes(&lib, count, 1)
            .unwrap_err()
            .to_string();
        assert!(e.contains("from 1 to 1000"), "{e}");
    }
    // With per-workload machines, the random mixes get none (they use configs).
    camp.configs = vec!["2B2S".into()];
    camp.add_random_mixes(&lib, 2, 1).unwrap();
    assert_eq!(camp.machines.len(), camp.workloads.len());
    assert!(camp.machines[before..].iter().all(|m| m.is_empty()));
}

/// A workload with no machine of its own (a trace) added to a study whose
/// mixes each run on their paper's machines runs on all of those machines,
/// whether the mixes stay or go; it used to take the first mix's machines.
#[test]
fn workloads_without_machines_run_on_every_machine_of_the_study() {
    let lib = Library::builtin();
    let spec = CampaignSpec::study(&lib, Study::Camp, false).unwrap();
    let all = spec.all_machines();
    assert!(all.len() >= 4, "{all:?}");
    for m in spec.machines.iter().flatten() {
        assert!(all.contains(m), "{m}");
    }
    let extra = lib.single("bzip2", None).unwrap();
    // Beside the mixes: its own entry lists every machine.
    let mut with = spec.clone();
    with.add_everywhere(extra.clone());
    assert_eq!(with.workloads.len(), spec.workloads.len() + 1);
    assert_eq!(with.machines.len(), with.workloads.len());
    assert_eq!(with.machines.last().unwrap(), &all);
    // Instead of the mixes: the study's machines become the configs.
    let mut only = spec.clone();
    only.clear_workloads();
    only.add_everywhere(extra);
    assert_eq!(only.workloads.len(), 1);
    assert!(only.machines.is_empty());
    assert_eq!(only.configs, all);
    // A study on shared configs is left as it is.
    let mut colab = CampaignSpec::study(&lib, Study::Colab, true).unwrap();
    let configs = colab.configs.clone();
    colab.clear_workloads();
    assert_eq!(colab.configs, configs);
    assert!(colab.workloads.is_empty());
}

/// The papers' run lengths: a SPEC CPU2006 program runs its reference time
/// over the 2009 server's ratio, a parallel one the SPEC programs' median;
/// each program alone on one reference big core then takes that long.
#[test]
fn paper_lengths_scale_each_program_to_its_reference_run() {
    use colab_campaign::lengths::{self, SPEC_RATIO};
    assert!((lengths::paper_length_s("h264ref") - 22130.0 / SPEC_RATIO).abs() < 1e-9);
    assert!((lengths::paper_length_s("povray") - 5320.0 / SPEC_RATIO).abs() < 1e-9);
    // Median of 22: the mean of hmmer's 9,330 s and leslie3d's 9,400 s.
    let median = (9330.0 + 9400.0) / 2.0 / SPEC_RATIO;
    assert!((lengths::median_spec_length_s() - median).abs() < 1e-9);
    assert_eq!(lengths::paper_length_s("wupwise_m"), median);

    let lib = Library::builtin();
    let mut spec = CampaignSpec::study(&lib, Study::Camp, true).unwrap();
    assert!(!spec.paper_lengths && spec.max_time_ns.is_none());
    let before = spec.workloads.clone();
    spec.with_paper_lengths().unwrap();
    assert!(spec.paper_lengths);
    assert_eq!(spec.max_time_ns, Some(lengths::PAPER_MAX_TIME_NS));
    let mut topo = colab_core::Topology::named("1B", CoreOrder::BigFirst).unwrap();
    topo.costs = colab_core::Costs {
        context_switch_ns: 0,
        migration_local_ns: 0,
        migration_cross_ns: 0,
        wakeup_latency_ns: 0,
        ..colab_core::Costs::default()
    };
    let alone_s = |w: &Workload, i: usize| {
        let one = Workload {
            name: "x".into(),
            classes: Vec::new(),
            source: String::new(),
            programs: vec![w.programs[i].clone()],
        };
        let cfg = colab_sim::SimConfig {
            predictor: colab_sim::PredictorKind::Oracle,
            max_time_ns: lengths::PAPER_MAX_TIME_NS,
            ..colab_sim::SimConfig::default()
        };
        let mut cfs = colab_policies::by_name("cfs").unwrap();
        colab_sim::simulate(&one, &topo, cfs.as_mut(), &cfg)
            .unwrap()
            .makespan_ns as f64
            / 1e9
    };
    // The first mix's first program, scaled from its model's 0.5 s.
    let (w0, b0) = (&spec.workloads[0], &before[0]);
    let name = &w0.programs[0].name;
    assert!(alone_s(b0, 0) < 1.0, "{name} as modelled");
    let got = alone_s(w0, 0);
    let want = lengths::paper_length_s(name);
    assert!(
        (got / want - 1.0).abs() < 0.01,
        "{name}: {got} s, want {want} s"
    );
}

/// Oracle mode: a policy that asks for its programs' lengths gets, before
/// its run, the T_SB the campaign records for each program, and the
/// lengths move its schedule.
#[test]
fn a_campaign_hands_an_oracle_policy_its_programs_t_sb_before_the_run() {
    let lib = Library::builtin();
    let mut spec = CampaignSpec::paper(&lib, true).unwrap();
    let w = lib.mix("Comm-2-cgo").unwrap();
    spec.workloads = vec![w.clone()];
    spec.configs = vec!["2B4S".into()];
    spec.policies = vec!["rota:order=sjf-oracle".into()];
    spec.orders = vec![CoreOrder::BigFirst];
    spec.seeds = vec![2];
    spec.predictor = "oracle".into();
    let (records, _) = run(&spec, &NoProgress).unwrap();
    assert_eq!(records.len(), 1);
    let rec = &records[0];
    let t_sb: Vec<u64> = rec.programs.iter().map(|p| p.t_sb_ns).collect();
    let topo = Topology::named("2B4S", CoreOrder::BigFirst).unwrap();
    let by_hand = |lengths: &[u64]| -> Vec<u64> {
        let mut p = colab_policies::by_name("rota:order=sjf-oracle").unwrap();
        assert!(p.wants_oracle_lengths());
        p.oracle_program_lengths(lengths);
        let cfg = SimConfig {
            seed: 2,
            predictor: PredictorKind::Oracle,
            ..SimConfig::default()
        };
        let r = simulate(&w, &topo, p.as_mut(), &cfg).unwrap();
        r.programs.iter().map(|p| p.turnaround_ns).collect()
    };
    let got: Vec<u64> = rec.programs.iter().map(|p| p.turnaround_ns).collect();
    assert_eq!(got, by_hand(&t_sb), "lengths {t_sb:?}");
    // The lengths matter: swapped, the short program no longer goes first.
    let swapped: Vec<u64> = t_sb.iter().rev().copied().collect();
    assert_ne!(got, by_hand(&swapped));
    // Policies outside oracle mode ask for nothing.
    assert!(!colab_policies::by_name("rota")
        .unwrap()
        .wants_oracle_lengths());
}

#[test]
fn every_failed_run_is_counted_in_the_error() {
    // 1 ms of simulated time is too little for any run: the error names the
    // first failure and counts the others rather than stopping at one.
    let mut spec = small();
    spec.max_time_ns = Some(1_000_000);
    let e = run(&spec, &NoProgress).unwrap_err().to_string();
    assert!(e.contains("did not finish within 1000000 ns"), "{e}");
    assert!(e.contains("more runs failed too"), "{e}");
}

#[test]
fn keep_going_leaves_out_a_failed_mix_for_every_policy_and_keeps_the_rest() {
    // Eight copies of a one-thread program crowd two cores for longer than
    // any run alone takes, and for longer under some (policy, order, seed)
    // than under others: a time limit between the crowd's shortest and
    // longest runs fails some of them and nothing else.
    let lib = Library::builtin();
    let bzip2 = lib.program("bzip2", Some(1)).unwrap();
    let crowd = Workload {
        name: "Crowd".into(),
        classes: vec!["test".into()],
        source: String::new(),
        programs: vec![bzip2; 8],
    };
    let mut spec = small();
    spec.workloads = vec![lib.single("bzip2", Some(1)).unwrap(), crowd];
    let (all, _) = run(&spec, &NoProgress).unwrap();
    let longest_alone = all
        .iter()
        .flat_map(|r| &r.programs)
        .map(|p| p.t_alone_ns.max(p.t_sb_ns).max(p.t_slow_ns))
        .max()
        .unwrap();
    let crowd_times: Vec<u64> = all
        .iter()
        .filter(|r| r.workload == "Crowd")
        .map(|r| r.makespan_ns)
        .collect();
    let (shortest, longest) = (
        *crowd_times.iter().min().unwrap(),
        *crowd_times.iter().max().unwrap(),
    );
    assert!(
        shortest > longest_alone && longest > shortest,
        "{crowd_times:?} vs {longest_alone}"
    );
    spec.max_time_ns = Some((shortest + longest) / 2);
    let over = crowd_times
        .iter()
        .filter(|&&t| t > (shortest + longest) / 2)
        .count();

    assert!(run(&spec, &NoProgress).is_err());
    let (kept, stats, failures) = run_keep_going(&spec, &NoProgress).unwrap();
    assert_eq!(failures.runs.len(), over, "{failures:?}");
    for f in &failures.runs {
        assert_eq!((f.workload.as_str(), f.config.as_str()), ("Crowd", "1B1S"));
        assert!(f.error.contains("did not finish"), "{}", f.error);
    }
    // The crowd's finished runs go too: every policy over the same workloads.
    assert_eq!(failures.left_out, vec![("Crowd".into(), "1B1S".into())]);
    let expected: Vec<_> = all.into_iter().filter(|r| r.workload != "Crowd").collect();
    assert_eq!(kept, expected);
    assert!(stats.simulations > 0);
}

#[test]
fn keep_going_does_not_run_a_mix_whose_program_alone_failed() {
    let mut lib = Library::builtin();
    // A lost wake-up: the signal comes before the wait, in every run.
    lib.add_program_text(
        "lost_signal.toml",
        include_str!("../../sim/tests/fixtures/lost_signal.toml"),
    )
    .unwrap();
    let pair = Workload {
        name: "Pair".into(),
        classes: vec!["test".into()],
        source: String::new(),
        programs: vec![
            lib.program("radix", Some(2)).unwrap(),
            lib.program("lost_signal", None).unwrap(),
        ],
    };
    let mut spec = small();
    spec.workloads = vec![pair, lib.mix("Sync-1").unwrap()];
    let e = run(&spec, &NoProgress).unwrap_err().to_string();
    assert!(e.contains("deadlock"), "{e}");

    let (kept, _, failures) = run_keep_going(&spec, &NoProgress).unwrap();
    let (skipped, failed): (Vec<_>, Vec<_>) =
        failures.runs.iter().partition(|f| f.workload == "Pair");
    // Every Pair mix (2 policies x 2 orders x 2 seeds) waits on a failed run.
    assert_eq!(skipped.len(), 8);
    for s in &skipped {
        assert!(
            s.error.starts_with("not run: it needs lost_signal"),
            "{}",
            s.error
        );
    }
    // The failed runs are lost_signal's alone, each a deadlock.
    assert!(!failed.is_empty());
    for f in &failed {
        assert!(f.workload.starts_with("lost_signal") && f.workload.ends_with("alone"));
        assert!(f.error.contains("deadlock"), "{}", f.error);
    }
    assert_eq!(failures.left_out, vec![("Pair".into(), "1B1S".into())]);
    // The rest is what a campaign without Pair gives.
    spec.workloads.remove(0);
    let (expected, _) = run(&spec, &NoProgress).unwrap();
    assert_eq!(kept, expected);
}
