//! The scenario mixes (workloads/mixes/scenarios.toml) and the study that
//! runs them.

use colab_campaign::{
    run, CampaignSpec, NoProgress, Study, ALL_POLICIES, ROTA_THIRD_FREEZE as THIRD_FREEZE,
};
use colab_core::{CoreOrder, Topology};
use colab_sim::{simulate, SimConfig, SimResult};
use colab_workload::{is_scenario_mix, Library, Workload};

const MS: f64 = 1e6;

/// Every scenario mix, in file order.
const MIXES: [&str; 11] = [
    "Fig1",
    "Lock-10us",
    "Lock-100us",
    "Lock-1ms",
    "Pipe-slow",
    "Barrier-straggler",
    "Finebar-25us",
    "Finebar-100us",
    "Finebar-1ms",
    "Finebar-4ms",
    "Heavy-thread",
];

/// The machines a scenario mix names (workloads/mixes/scenarios.toml).
fn machines_of(mix: &str) -> Vec<&'static str> {
    match mix {
        "Fig1" => vec!["1B1S"],
        "Heavy-thread" => vec!["4B4S", "lunar-lake-258v", "tensor-g1"],
        _ => vec!["2B2S", "4B4S"],
    }
}

/// `w` on machine `config` under `policy` with the study's predictor.
fn sim(
    spec: &CampaignSpec,
    w: &Workload,
    config: &str,
    order: CoreOrder,
    policy: &str,
) -> SimResult {
    let topo = Topology::named(config, order).unwrap();
    let (mut pol, predictor) = spec.policy_on(policy, &topo).unwrap();
    let cfg = SimConfig {
        predictor,
        ..SimConfig::default()
    };
    simulate(w, &topo, pol.as_mut(), &cfg)
        .unwrap_or_else(|e| panic!("{} on {config} under {policy}: {e}", w.name))
}

#[test]
fn the_scenario_study_runs_every_scenario_mix_on_its_own_machines() {
    let lib = Library::builtin();
    let spec = CampaignSpec::study(&lib, Study::Scenarios, false).unwrap();
    let names: Vec<&str> = spec.workloads.iter().map(|w| w.name.as_str()).collect();
    assert_eq!(names, MIXES);
    for (w, machines) in spec.workloads.iter().zip(&spec.machines) {
        assert_eq!(machines, &machines_of(&w.name), "{}", w.name);
    }
    assert_eq!(spec.policies, ALL_POLICIES.map(String::from).to_vec());
    assert_eq!(spec.orders, CoreOrder::BOTH.to_vec());
    assert_eq!(spec.seeds, vec![1, 2, 3]);
    assert_eq!(spec.restart_until, None);
    assert_eq!(Study::Scenarios.baseline(), "cfs");
    assert_eq!(Study::Scenarios.report_dir(), "reports/reproduce-scenarios");
    // The COLAB study leaves the scenario mixes out, whatever their source
    // mentions.
    let colab = CampaignSpec::study(&lib, Study::Colab, false).unwrap();
    for w in &colab.workloads {
        assert!(!is_scenario_mix(&w.source), "{}", w.name);
        assert!(!MIXES.contains(&w.name.as_str()), "{}", w.name);
    }
    // --quick: each mix on its first machine, one seed.
    let quick = CampaignSpec::study(&lib, Study::Scenarios, true).unwrap();
    assert!(quick.machines.iter().all(|m| m.len() == 1));
    assert_eq!(quick.seeds, vec![1]);
}

#[test]
fn every_scenario_mix_runs_to_completion_under_cfs_and_colab() {
    let lib = Library::builtin();
    let spec = CampaignSpec::study(&lib, Study::Scenarios, false).unwrap();
    for (w, machines) in spec.workloads.iter().zip(&spec.machines) {
        // The least a program can take: its longest thread's work on a big
        // core (Fig1's alpha1 and beta1 do 30 ms; every other program's
        // threads at least 50 ms, the lock workers 40 ms).
        let floor_ms = if w.name == "Fig1" { 30.0 } else { 40.0 };
        for config in machines {
            for order in CoreOrder::BOTH {
                for policy in ["cfs", "colab"] {
                    let r = sim(&spec, w, config, order, policy);
                    assert_eq!(r.programs.len(), w.programs.len());
                    for p in &r.programs {
                        assert!(
                            p.turnaround_ns as f64 >= floor_ms * MS
                                && p.turnaround_ns <= r.makespan_ns,
                            "{} {} on {config} ({}) under {policy}: {} ns",
                            w.name,
                            p.name,
                            order.label(),
                            p.turnaround_ns
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn the_quick_scenario_study_produces_records_with_baselines() {
    let lib = Library::builtin();
    let mut spec = CampaignSpec::study(&lib, Study::Scenarios, true).unwrap();
    spec.policies = vec!["cfs".into(), "colab".into()];
    spec.orders = vec![CoreOrder::BigFirst];
    let (records, _) = run(&spec, &NoProgress).unwrap();
    assert_eq!(records.len(), MIXES.len() * 2);
    for r in &records {
        let want = machines_of(&r.workload)[0];
        assert_eq!(r.config, want, "{}", r.workload);
        assert_eq!(r.classes.len(), 1, "{}", r.workload);
        for p in &r.programs {
            assert!(
                p.t_sb_ns > 0 && p.t_alone_ns > 0 && p.t_slow_ns > 0,
                "{r:?}"
            );
        }
    }
}

/// Finebar-25us: 4 threads x 2,000 x (25 us of work, barrier). On 4 big
/// cores (4B0S) every thread keeps its own core, so the run is the 2,000
/// phases of 25 us (50 ms) plus the start: main's first dispatch costs one
/// context switch (5 us, `Costs::default`) before it spawns the workers,
/// whose first dispatches cost one more each, in parallel (5 us), so the
/// first phase ends at 35 us. After a barrier each thread is woken where it
/// slept, on a core that ran nothing else: no switch, no migration.
/// Expected: 50 ms + 10 us = 50.010 ms.
#[test]
fn finebar_25us_takes_2000_phases_of_25_us_on_four_big_cores() {
    let lib = Library::builtin();
    let spec = CampaignSpec::study(&lib, Study::Scenarios, false).unwrap();
    let w = lib.mix("Finebar-25us").unwrap();
    assert_eq!(w.total_threads(), 4);
    let expected_ns = 2000.0 * 25_000.0 + 2.0 * 5_000.0;
    for policy in ["cfs", "colab"] {
        let r = sim(&spec, &w, "4B0S", CoreOrder::BigFirst, policy);
        let got = r.makespan_ns as f64;
        // 0.5%: room for a few wake-ups that land on another core (a
        // migration within the cluster costs 10 us).
        assert!(
            (got - expected_ns).abs() <= 0.005 * expected_ns,
            "{policy}: makespan {got} ns, expected {expected_ns} ns"
        );
    }
    // On 2B2S two threads run on little cores at half speed (speedup 2.0),
    // so every phase waits for them: at least 50 us a phase unless the
    // policy moves them, and never faster than on four big cores.
    let r = sim(&spec, &w, "2B2S", CoreOrder::BigFirst, "cfs");
    assert!(r.makespan_ns as f64 >= expected_ns, "{}", r.makespan_ns);
}

/// The fine-grained barrier case (Finebar-25us) on machines where every
/// thread has a core: the new policy, ROTA, is within 10% of the best
/// policy's makespan, while COLAB trades clusters at almost every barrier
/// (measured: 309.8 ms against 50.0 ms on 4B4S, 320.1 against 100.0 on
/// 2B2S, with 6,000-8,000 cross-cluster migrations).
#[test]
fn rota_is_within_10_percent_of_the_best_policy_on_fine_grained_barriers() {
    let lib = Library::builtin();
    let spec = CampaignSpec::study(&lib, Study::Scenarios, false).unwrap();
    let w = lib.mix("Finebar-25us").unwrap();
    for config in ["2B2S", "4B4S"] {
        for order in CoreOrder::BOTH {
            let times: Vec<(&str, f64)> = ALL_POLICIES
                .iter()
                .map(|&p| (p, sim(&spec, &w, config, order, p).makespan_ns as f64))
                .collect();
            let best = times.iter().map(|t| t.1).fold(f64::INFINITY, f64::min);
            let of = |p: &str| times.iter().find(|t| t.0 == p).unwrap().1;
            assert!(
                of("rota") <= 1.10 * best,
                "{config} {order:?}: rota {} ms, best {} ms ({times:?})",
                of("rota") / MS,
                best / MS
            );
            assert!(
                of("colab") >= 3.0 * best,
                "{config} {order:?}: colab {} ms no longer thrashes (best {} ms)",
                of("colab") / MS,
                best / MS
            );
        }
    }
}

/// H_ANTT of one run: the mean over programs of T_M / T_SB.
fn h_antt(r: &colab_report::RunRecord) -> f64 {
    let n = r.programs.len() as f64;
    r.programs
        .iter()
        .map(|p| p.turnaround_ns as f64 / p.t_sb_ns as f64)
        .sum::<f64>()
        / n
}

/// colab-tpds Fig. 1 (1B1S; alpha and beta each a blocking thread and a
/// blocked one, gamma single-threaded; alpha1 and gamma gain most from the
/// big core). What the study measured, seeds 1-3 and both core orders:
/// COLAB beats WASH, as the paper says (the paper's argument: WASH crowds
/// the big core with both bottlenecks and gamma), but giving the one big
/// core to whoever waits longest (RR, and ROTA) beats COLAB: the big core
/// never idles and no thread starves on it. ROTA's third freeze is within
/// 2% of RR; its default is between COLAB and WASH.

#[test]
fn fig1_colab_beats_wash_and_rotation_beats_colab() {
    let lib = Library::builtin();
    let mut spec = CampaignSpec::study(&lib, Study::Scenarios, false).unwrap();
    let fig1 = spec
        .workloads
        .iter()
        .position(|w| w.name == "Fig1")
        .unwrap();
    spec.workloads = vec![spec.workloads[fig1].clone()];
    spec.machines = vec![spec.machines[fig1].clone()];
    spec.policies = ["cfs", "wash", "colab", "rr", "rota", THIRD_FREEZE]
        .map(String::from)
        .to_vec();
    let (records, _) = run(&spec, &NoProgress).unwrap();
    let mean = |p: &str| {
        let v: Vec<f64> = records
            .iter()
            .filter(|r| r.policy == p)
            .map(h_antt)
            .collect();
        assert!(!v.is_empty(), "{p}");
        v.iter().sum::<f64>() / v.len() as f64
    };
    let (wash, colab, rr, rota) = (mean("wash"), mean("colab"), mean("rr"), mean("rota"));
    let third = mean(THIRD_FREEZE);
    assert!(colab < wash, "colab {colab} wash {wash}");
    assert!(
        rr < colab && third < colab,
        "rr {rr} third freeze {third} colab {colab}"
    );
    // ROTA's capped order (second and third freezes) measured 1.899 against
    // RR's 1.872 here: it rotates gamma off the big core sooner than FIFO
    // does. FIFO rotation (the first freeze) was within 1%.
    assert!(third <= 1.02 * rr, "third freeze {third} rr {rr}");
    // The default loses here, as the fourth did: with nothing
    // idle every thread queues on the shortest queue of either core and
    // the big core is shared by CFS's rules (the fourth measured 2.205
    // against COLAB's 2.079, RR's 1.872, WASH's 2.731).
    assert!(
        colab < rota && rota < wash,
        "rota {rota} colab {colab} wash {wash}"
    );
}

/// The heavy-thread scenario (sched-ext/scx #3259; book/src/results/
/// heavy-thread.md) on 4B4S under one policy, one core order and one seed:
/// the numbers its report reads from each run are there and add up. By
/// hand, from the programs' files:
/// - heavy_main alone on a big core (T_SB) is 25 frames of 16 ms, 400 ms
///   within 2% (cv 0.05 per frame: the sum of 25 has a cv of 1%);
/// - it never blocks, so its CPU time is at most its turnaround, and its
///   fast-core time at speed 1 plus its little-core time at speed 1/2
///   (speedup 2.0) covers the 400 ms of work it does (within 2%), and more:
///   CPU time also holds the switches and moves charged to it;
/// - each light program alone on big cores is its periods of sleep and
///   burst: 1,900 x (1 ms + 50 us) = 1.995 s, 950 x (2 ms + 100 us) = 1.995 s
///   and 384 x (5 ms + 200 us) = 1.997 s, plus at most a 5 us switch per
///   wake-up (9.5 ms for audio's 1,900): within 1.99-2.01 s;
/// - the light programs outlast the heavy thread, so it runs beside them
///   all its run.
#[test]
fn the_heavy_thread_scenario_reports_fast_share_progress_and_light_delays() {
    let lib = Library::builtin();
    let mut spec = CampaignSpec::study(&lib, Study::Scenarios, false).unwrap();
    let i = spec
        .workloads
        .iter()
        .position(|w| w.name == "Heavy-thread")
        .unwrap();
    spec.workloads = vec![spec.workloads[i].clone()];
    spec.machines = vec![vec!["4B4S".into()]];
    spec.policies = vec!["eevdf".into()];
    spec.orders = vec![CoreOrder::BigFirst];
    spec.seeds = vec![1];
    let (records, _) = run(&spec, &NoProgress).unwrap();
    assert_eq!(records.len(), 1);
    let r = &records[0];
    assert_eq!((r.config.as_str(), r.threads), ("4B4S", 25));
    let names: Vec<&str> = r.programs.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        ["heavy_main", "light_audio", "light_ui", "light_net"]
    );
    let heavy = &r.programs[0];
    let ms = |ns: u64| ns as f64 / MS;
    assert!(
        (ms(heavy.t_sb_ns) / 400.0 - 1.0).abs() < 0.02,
        "T_SB {} ms",
        ms(heavy.t_sb_ns)
    );
    assert!(heavy.fast_cpu_ns <= heavy.cpu_ns && heavy.cpu_ns <= heavy.turnaround_ns);
    let work_ms = ms(heavy.fast_cpu_ns) + ms(heavy.cpu_ns - heavy.fast_cpu_ns) / 2.0;
    assert!(work_ms >= 0.98 * 400.0, "{work_ms} ms of work");
    let share = heavy.fast_cpu_ns as f64 / heavy.cpu_ns as f64;
    let progress = heavy.t_sb_ns as f64 / heavy.turnaround_ns as f64;
    assert!((0.0..=1.0).contains(&share), "{share}");
    // Never more than alone on a fast core, but for the frames' draws.
    assert!(progress > 0.0 && progress <= 1.02, "{progress}");
    for (light, periods) in r.programs[1..].iter().zip([1900.0, 950.0, 384.0]) {
        let t_sb = ms(light.t_sb_ns);
        assert!(
            (1990.0..=2010.0).contains(&t_sb),
            "{}: T_SB {t_sb} ms",
            light.name
        );
        assert!(
            light.turnaround_ns > heavy.turnaround_ns,
            "{} ended before heavy_main",
            light.name
        );
        let extra_us = (ms(light.turnaround_ns) - t_sb) * 1e3 / periods;
        assert!(
            extra_us.is_finite() && extra_us > -5.0,
            "{}: {extra_us} us",
            light.name
        );
    }
}
