//! `colab-vmload mix`: the simulator's workloads with real threads, on an
//! emulated asymmetric machine, for the real-kernel study (scripts/vm/).

use std::sync::Arc;
use std::time::Duration;

use colab_core::{CoreOrder, Topology};
use colab_native::{Calibration, Emulation, NativeOptions};
use colab_workload::Library;

#[derive(clap::Args)]
pub struct MixSpec {
    /// A benchmark (`ferret:4`), a mix (`Sync-2`) or a workload TOML file.
    pub workload: String,
    /// Emulated machine (`2B2S`, a name `colab topology` knows): core i
    /// runs at its type's rate on the i-th CPU of --cpus.
    #[arg(long)]
    pub emulate: Option<String>,
    /// Which cluster gets the low CPU numbers: big-first or little-first.
    #[arg(long, default_value = "big-first")]
    pub order: String,
    /// CPUs, comma-separated (default: 0..N-1 of the emulated machine, or all).
    #[arg(long, value_delimiter = ',')]
    pub cpus: Option<Vec<usize>>,
    /// Run on this one CPU only (the emulated machine stays --cpus):
    /// measures one core type's speed.
    #[arg(long)]
    pub pin: Option<usize>,
    #[arg(long, default_value_t = 1)]
    pub reps: u32,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Busy-loop iterations per microsecond (default: measured now, 0.35 s);
    /// pass one measurement to every run of a study so all share it.
    #[arg(long)]
    pub spins_per_us: Option<f64>,
    /// Give up after this many seconds per repetition.
    #[arg(long = "timeout", default_value_t = 600)]
    pub timeout_s: u64,
    /// Run each program of the mix alone, one after the other (T_SB
    /// on an all-big machine, T_alone on the emulated one).
    #[arg(long)]
    pub alone: bool,
}

fn core_order(order: &str) -> Result<CoreOrder, String> {
    match order {
        "big-first" => Ok(CoreOrder::BigFirst),
        "little-first" => Ok(CoreOrder::LittleFirst),
        o => Err(format!("--order {o}: expected big-first or little-first")),
    }
}

/// Each core's capacity in the kernel's 1024 scale: its core-bound rate
/// relative to the fastest core type (the kernel has one number per CPU;
/// the core-bound rate is what a CPU-bound task sees).
pub fn capacities(machine: &str, order: &str) -> Result<String, String> {
    let topo =
        Topology::named(machine, core_order(order)?).map_err(|e| format!("{machine}: {e}"))?;
    let max = topo
        .core_types
        .iter()
        .map(|t| t.compute_rate)
        .fold(f64::MIN, f64::max);
    let caps: Vec<String> = topo
        .cores()
        .map(|c| ((topo.core_type(c).compute_rate / max * 1024.0).round() as u32).to_string())
        .collect();
    Ok(caps.join(","))
}

/// Runs the spec; one JSON line with every program's turnaround per
/// repetition (wall clock, ns) and what was emulated.
pub fn run(spec: &MixSpec) -> Result<String, String> {
    let mut lib = Library::builtin();
    let w = lib
        .resolve(&spec.workload)
        .map_err(|e| format!("{}: {e}", spec.workload))?;
    let order = core_order(&spec.order)?;
    let mut cpus = spec.cpus.clone();
    let emulate = match &spec.emulate {
        Some(name) => {
            let topo =
                Topology::named(name, order).map_err(|e| format!("--emulate {name}: {e}"))?;
            let list = cpus
                .clone()
                .unwrap_or_else(|| (0..topo.num_cores()).collect());
            let e = Emulation::new(&topo, &list).map_err(|e| format!("--emulate {name}: {e}"))?;
            cpus = Some(list);
            Some(Arc::new(e))
        }
        None => None,
    };
    let calibration = match spec.spins_per_us {
        Some(s) if s.is_finite() && s > 0.0 => Calibration { spins_per_us: s },
        Some(s) => return Err(format!("--spins-per-us {s}: must be positive")),
        None => colab_native::calibrate_spin(),
    };
    if spec.reps == 0 {
        return Err("--reps must be at least 1".into());
    }
    if let Some(p) = spec.pin {
        cpus = Some(vec![p]);
    }
    let opts = NativeOptions {
        cpus,
        reps: spec.reps,
        seed: spec.seed,
        calibration,
        timeout: Duration::from_secs(spec.timeout_s.max(1)),
        emulate: emulate.clone(),
    };
    let runs = if spec.alone {
        let mut all = Vec::new();
        for p in &w.programs {
            let one = colab_workload::Workload {
                name: p.name.clone(),
                classes: vec![],
                source: String::new(),
                programs: vec![p.clone()],
            };
            all.extend(colab_native::run(&one, &opts).map_err(|e| e.to_string())?);
        }
        all
    } else {
        colab_native::run(&w, &opts).map_err(|e| e.to_string())?
    };
    let v = serde_json::json!({
        "workload": w.name,
        "alone": spec.alone,
        "emulate": emulate.map(|e| e.description.clone()),
        "reps": spec.reps,
        "spins_per_us": calibration.spins_per_us,
        "programs": runs.iter().map(|r| serde_json::json!({
            "name": r.name, "threads": r.threads, "raw_ns": r.raw_ns,
            "rate_during": r.rate_during,
        })).collect::<Vec<_>>(),
    });
    Ok(v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(workload: &str) -> MixSpec {
        MixSpec {
            workload: workload.into(),
            emulate: Some("2B2S".into()),
            order: "big-first".into(),
            cpus: None,
            pin: None,
            reps: 1,
            seed: 1,
            spins_per_us: Some(100.0),
            timeout_s: 60,
            alone: false,
        }
    }

    #[test]
    fn capacities_follow_the_core_bound_rates_in_cpu_order() {
        // 2B2S's little cores run core-bound work at 0.318 of a big core's rate.
        assert_eq!(
            capacities("2B2S", "big-first").unwrap(),
            "1024,1024,326,326"
        );
        assert_eq!(capacities("1B1S", "little-first").unwrap(), "326,1024");
        assert!(capacities("9Q", "big-first").unwrap_err().contains("9Q"));
        assert!(capacities("2B2S", "sideways")
            .unwrap_err()
            .contains("--order sideways"));
    }

    #[test]
    fn a_mix_runs_emulated_and_alone_gives_one_line_per_program() {
        let dir = std::env::temp_dir().join(format!("vmload-mix-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("tiny.toml");
        std::fs::write(
            &f,
            "name = \"tiny\"\n[thread.main]\nops = [ { compute = 100, mem_frac = 0.0 } ]\n",
        )
        .unwrap();
        let mut s = spec(f.to_str().unwrap());
        let out: serde_json::Value = serde_json::from_str(&run(&s).unwrap()).unwrap();
        assert_eq!(out["programs"].as_array().unwrap().len(), 1);
        assert!(out["emulate"]
            .as_str()
            .unwrap()
            .starts_with("2B2S on CPUs 0=big"));
        s.alone = true;
        let out: serde_json::Value = serde_json::from_str(&run(&s).unwrap()).unwrap();
        assert_eq!(out["alone"], true);
        assert!(out["programs"][0]["raw_ns"][0].as_u64().unwrap() > 0);
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn bad_arguments_are_errors_not_panics() {
        let mut s = spec("no-such-benchmark");
        assert!(run(&s).unwrap_err().contains("no-such-benchmark"));
        s = spec("fft:2");
        s.spins_per_us = Some(-1.0);
        assert!(run(&s).unwrap_err().contains("--spins-per-us"));
        s = spec("fft:2");
        s.emulate = Some("2B2S".into());
        s.cpus = Some(vec![0, 1]);
        assert!(run(&s).unwrap_err().contains("4 cores but 2 CPUs"));
    }
}
