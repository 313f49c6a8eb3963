//! The bounds against the simulator: no run of any policy beats them, on
//! the COLAB study (quick) and on random mixes; and they are the optimum on
//! hand-made cases where the optimum is known.

use colab_bound::{h_antt, program};
use colab_campaign::{run, CampaignSpec, NoProgress, Study};
use colab_core::{CoreOrder, Topology};
use colab_report::RunRecord;
use colab_workload::{Library, Workload};

/// Every record's programs and H_ANTT at or above their bounds; returns
/// the smallest ratio of a run's H_ANTT to its bound.
fn check(spec: &CampaignSpec, records: &[RunRecord]) -> f64 {
    let mut tightest = f64::INFINITY;
    for r in records {
        let w: &Workload = spec
            .workloads
            .iter()
            .find(|w| w.name == r.workload)
            .unwrap();
        let order = if r.order == "big-first" {
            CoreOrder::BigFirst
        } else {
            CoreOrder::LittleFirst
        };
        let topo = Topology::named(&r.config, order).unwrap();
        for (p, rec) in w.programs.iter().zip(&r.programs) {
            let b = program(p, &topo);
            assert!(
                rec.turnaround_ns as f64 >= b.turnaround_ns * (1.0 - 1e-9),
                "{} in {} on {} under {} (seed {}, {}): turnaround {} ns below its bound {:.0} ns",
                rec.name,
                r.workload,
                r.config,
                r.policy,
                r.seed,
                r.order,
                rec.turnaround_ns,
                b.turnaround_ns
            );
        }
        let t_sb: Vec<f64> = r.programs.iter().map(|p| p.t_sb_ns as f64).collect();
        let got: f64 = r
            .programs
            .iter()
            .map(|p| p.turnaround_ns as f64 / p.t_sb_ns as f64)
            .sum::<f64>()
            / r.programs.len() as f64;
        let bound = h_antt(&w.programs, &topo, &t_sb);
        assert!(
            got >= bound * (1.0 - 1e-9),
            "{} on {} under {} (seed {}, {}): H_ANTT {got:.4} below its bound {bound:.4}",
            r.workload,
            r.config,
            r.policy,
            r.seed,
            r.order
        );
        tightest = tightest.min(got / bound);
    }
    tightest
}

#[test]
fn no_run_of_the_colab_study_beats_the_bound() {
    let lib = Library::builtin();
    let mut spec = CampaignSpec::study(&lib, Study::Colab, true).unwrap();
    spec.seeds = vec![1];
    let (records, _) = run(&spec, &NoProgress).unwrap();
    assert!(records.len() > 100);
    let tightest = check(&spec, &records);
    assert!(tightest >= 1.0, "{tightest}");
}

#[test]
fn no_run_of_forty_random_mixes_beats_the_bound() {
    let lib = Library::builtin();
    let mut spec = CampaignSpec::study(&lib, Study::Colab, true).unwrap();
    spec.clear_workloads();
    spec.add_random_mixes(&lib, 40, 51).unwrap();
    spec.seeds = vec![1];
    spec.policies = vec!["cfs".into(), "eevdf".into(), "rota".into(), "colab".into()];
    let (records, _) = run(&spec, &NoProgress).unwrap();
    assert_eq!(
        records.len(),
        40 * spec.configs.len() * 4 * spec.orders.len()
    );
    check(&spec, &records);
}

/// Each mix of the COLAB study (quick) and 20 random mixes run under four
/// policies on two machines, T_SB by hand (alone on the all-big machine
/// under CFS): no run beats the bound of its own draws.
#[test]
fn no_run_beats_the_bound_of_its_own_draws() {
    use colab_bound::{h_antt_of_run, program_in_run};
    use colab_sim::{simulate, SimConfig};
    let lib = Library::builtin();
    let mut spec = CampaignSpec::study(&lib, Study::Colab, true).unwrap();
    spec.add_random_mixes(&lib, 20, 52).unwrap();
    let mut tightest = f64::INFINITY;
    let mut runs = 0;
    for machine in ["2B2S", "4B4S"] {
        let topo = Topology::named(machine, CoreOrder::BigFirst).unwrap();
        let all_big = topo.all_fastest();
        for w in &spec.workloads {
            let t_sb: Vec<f64> = w
                .programs
                .iter()
                .map(|p| {
                    let mut cfs = colab_campaign::policy_by_name("cfs").unwrap();
                    let alone = Workload::alone(p);
                    let r =
                        simulate(&alone, &all_big, cfs.as_mut(), &SimConfig::default()).unwrap();
                    r.programs[0].turnaround_ns as f64
                })
                .collect();
            for policy in ["cfs", "eevdf", "colab", "rota"] {
                let mut pol = colab_campaign::policy_by_name(policy).unwrap();
                let r = simulate(w, &topo, pol.as_mut(), &SimConfig::default()).unwrap();
                let drawn: Vec<_> = r.programs.iter().map(|p| &p.drawn).collect();
                for (p, res) in w.programs.iter().zip(&r.programs) {
                    let b = program_in_run(p, &topo, &res.drawn);
                    assert!(
                        res.turnaround_ns as f64 >= b.turnaround_ns * (1.0 - 1e-9),
                        "{} in {} on {machine} under {policy}: {} ns below its bound {:.0}",
                        p.name,
                        w.name,
                        res.turnaround_ns,
                        b.turnaround_ns
                    );
                }
                let got = r
                    .programs
                    .iter()
                    .zip(&t_sb)
                    .map(|(p, t)| p.turnaround_ns as f64 / t)
                    .sum::<f64>()
                    / t_sb.len() as f64;
                let bound = h_antt_of_run(&w.programs, &topo, &t_sb, &drawn);
                assert!(
                    got >= bound * (1.0 - 1e-9),
                    "{} on {machine} under {policy}: H_ANTT {got:.4} below its bound {bound:.4}",
                    w.name
                );
                tightest = tightest.min(got / bound);
                runs += 1;
            }
        }
    }
    assert!(runs > 100, "{runs}");
    assert!(tightest >= 1.0, "{tightest}");
}
