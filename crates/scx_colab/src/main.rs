//! scx_colab: asymmetry-aware scheduling as a sched_ext scheduler: ROTA
//! (the default) or the paper's COLAB (colab-tpds, `--policy colab`). The
//! BPF side (src/bpf/) places and selects threads; this process labels
//! them every 10 ms (scx_colab_user's labeller, with colab-labels). The
//! options, the split and the BPF globals' values are scx_colab_user's.

mod bpf_intf;
mod bpf_skel;
mod counters;
mod pmu;
mod sched;
mod stats;
mod topo;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::Parser;
use colab_model::Model;
use scx_colab_user::{settings, Opts};

/// A built-in model by name, else a model file.
fn load_model(what: &str) -> Result<Model> {
    if let Some(m) = Model::builtin(what) {
        return Ok(m);
    }
    let text = std::fs::read_to_string(what).with_context(|| {
        let names: Vec<&str> = colab_model::BUILTIN_MODELS
            .iter()
            .map(|(n, _)| *n)
            .collect();
        format!(
            "--model {what}: not a built-in model ({}) and not a readable file",
            names.join(", ")
        )
    })?;
    Model::from_json(&text).with_context(|| format!("--model {what}"))
}

/// The counters for `--model`: None (and a warning) when the machine cannot
/// count them; an error when the model does not fit the machine or the
/// options.
fn setup_counters(opts: &Opts, split: &scx_colab_user::Split) -> Result<Option<sched::Counters>> {
    let Some(what) = &opts.model else {
        return Ok(None);
    };
    let model = counters::CounterModel::new(load_model(what)?, &opts.big_type, &opts.little_type)?;
    let arch = std::env::consts::ARCH;
    let resolve = |cluster: usize| -> Result<Vec<(String, pmu::PerfEvent)>> {
        model
            .events(cluster)
            .iter()
            .map(|n| {
                pmu::resolve(n, &opts.events, arch)
                    .map(|e| (n.clone(), e))
                    .map_err(anyhow::Error::msg)
            })
            .collect()
    };
    let events = [resolve(counters::BIG)?, resolve(counters::LITTLE)?];
    let cpus = [split.big.as_slice(), split.little.as_slice()];
    let fds = match pmu::open_all(cpus, [&events[0], &events[1]], counters::MAX_EVENTS) {
        Ok(fds) => fds,
        Err(why) => {
            log::warn!(
                "--model {what}: cannot count {why}; every task gets the capacity-ratio speedup"
            );
            return Ok(None);
        }
    };
    let nr_events = [0, 1].map(|c| {
        if cpus[c].is_empty() {
            0
        } else {
            events[c].len() as u32
        }
    });
    let range = opts.speedup_range.or_else(|| model.trained_range());
    println!(
        "scx_colab: counters for model `{}`: {} on big CPUs, {} on little CPUs; labels relative to {}",
        model.model().name(),
        describe_events(&events[0], cpus[0].is_empty()),
        describe_events(&events[1], cpus[1].is_empty()),
        match range {
            Some(r) => format!("speedups {:.2}..{:.2}", r.min, r.max),
            None => "each period's range of predictions".into(),
        }
    );
    Ok(Some(sched::Counters {
        model,
        fds,
        nr_events,
        range,
    }))
}

fn describe_events(events: &[(String, pmu::PerfEvent)], none: bool) -> String {
    if none {
        return "(no CPUs)".into();
    }
    events
        .iter()
        .map(|(n, _)| n.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

pub const NEED_ROOT: &str = "scx_colab needs root (CAP_SYS_ADMIN, CAP_BPF) to load a BPF scheduler";

/// The checks made before loading anything: root, then sched_ext.
pub fn preflight(euid: u32, has_sched_ext: bool, kernel: &str) -> Result<(), String> {
    if euid != 0 {
        return Err(NEED_ROOT.to_string());
    }
    if !has_sched_ext {
        return Err(format!(
            "scx_colab: this kernel ({kernel}) has no sched_ext: /sys/kernel/sched_ext is missing \
             (CONFIG_SCHED_CLASS_EXT missing); boot a kernel built with CONFIG_SCHED_CLASS_EXT=y"
        ));
    }
    Ok(())
}

/// A TSV row (program, instructions processed, total and peak states) from
/// one of libbpf's program load logs at BPF_LOG_STATS, as
/// "prog 'NAME': -- BEGIN PROG LOAD LOG --\n... processed N insns (limit
/// M) max_states_per_insn A total_states B peak_states C mark_read D\n...".
fn verifier_stats_row(msg: &str) -> Option<String> {
    let name = msg.strip_prefix("libbpf: prog '")?.split('\'').next()?;
    let line = msg.lines().find(|l| l.starts_with("processed "))?;
    let word = |key: &str| -> Option<&str> {
        let mut w = line.split_whitespace();
        w.position(|x| x == key)?;
        w.next()
    };
    let insns = line.split_whitespace().nth(1)?;
    Some(format!(
        "{name}\t{insns}\t{}\t{}",
        word("total_states")?,
        word("peak_states")?
    ))
}

fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown version".into())
}

fn main() {
    let opts = Opts::parse();
    let level = if opts.verbose {
        simplelog::LevelFilter::Debug
    } else {
        simplelog::LevelFilter::Info
    };
    let _ = simplelog::TermLogger::init(
        level,
        simplelog::Config::default(),
        simplelog::TerminalMode::Stderr,
        simplelog::ColorChoice::Never,
    );
    // libbpf's own messages: warnings only, unless --verbose.
    let libbpf_level = if opts.verbose {
        libbpf_rs::PrintLevel::Debug
    } else {
        libbpf_rs::PrintLevel::Warn
    };
    if opts.verifier_stats {
        // Each program's load log ends with the verifier's statistics; with
        // --verbose, libbpf's other messages (a failed load's log) too.
        println!("program\tinsns_processed\ttotal_states\tpeak_states");
        fn quiet(_: libbpf_rs::PrintLevel, msg: String) {
            if let Some(row) = verifier_stats_row(&msg) {
                println!("{row}");
            }
        }
        fn verbose(level: libbpf_rs::PrintLevel, msg: String) {
            match verifier_stats_row(&msg) {
                Some(_) => quiet(level, msg),
                None => eprint!("{msg}"),
            }
        }
        let print: fn(libbpf_rs::PrintLevel, String) = if opts.verbose { verbose } else { quiet };
        libbpf_rs::set_print(Some((libbpf_rs::PrintLevel::Debug, print)));
    } else {
        libbpf_rs::set_print(Some((libbpf_level, |_, msg: String| {
            eprint!("{msg}") // libbpf prefixes its messages itself
        })));
    }
    // SAFETY: geteuid has no preconditions.
    let euid = unsafe { libc::geteuid() };
    let has_sched_ext = std::path::Path::new("/sys/kernel/sched_ext").exists();
    if let Err(msg) = preflight(euid, has_sched_ext, &kernel_release()) {
        eprintln!("{msg}");
        std::process::exit(1);
    }
    match run(opts) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("scx_colab: {e:#}");
            std::process::exit(1);
        }
    }
}

fn run(opts: Opts) -> Result<i32> {
    let shutdown = Arc::new(AtomicBool::new(false));
    {
        let s = shutdown.clone();
        ctrlc::set_handler(move || s.store(true, Ordering::Relaxed))
            .context("installing the SIGINT/SIGTERM handler")?;
    }
    // The kernel ends a sched_ext scheduler when a CPU goes offline or
    // online and asks for a restart: read the CPUs again and reattach.
    loop {
        match sched::run(config(&opts)?, shutdown.clone())? {
            sched::Outcome::Exit(code) => return Ok(code),
            sched::Outcome::Restart => continue,
        }
    }
}

/// Everything a run needs, from the options and the CPUs online now.
fn config(opts: &Opts) -> Result<sched::Config> {
    let cpus = topo::online_cpus()?;
    let big = opts
        .big_cpus
        .as_ref()
        .map(|l| scx_colab_user::topo::online_only(&l.0, &cpus));
    let split = scx_colab_user::topo::split(&cpus, big.as_deref(), opts.speedup)?;
    println!("scx_colab: {}", split.describe());
    if !split.is_asymmetric() {
        log::info!("one cluster: the allocator round-robins over all CPUs, no big-core pulls");
    }
    let counters = setup_counters(opts, &split)?;
    let mut settings = settings(opts, split, cpus.len())?;
    let mut labeller = settings.labeller();
    if let Some(c) = &counters {
        settings.nr_events = c.nr_events;
        if let Some(r) = c.range {
            labeller.set_range(r);
        }
    }
    Ok(sched::Config {
        settings,
        labeller,
        counters,
        verifier_stats: opts.verifier_stats,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verifier_stats_come_from_a_load_log() {
        let log = "libbpf: prog 'colab_tick': -- BEGIN PROG LOAD LOG --\n\
                   func#0 @0\n\
                   processed 157974 insns (limit 1000000) max_states_per_insn 171 \
                   total_states 2941 peak_states 2774 mark_read 40\n\
                   -- END PROG LOAD LOG --\n";
        assert_eq!(
            verifier_stats_row(log).as_deref(),
            Some("colab_tick\t157974\t2941\t2774")
        );
        assert_eq!(verifier_stats_row("libbpf: loading object\n"), None);
        assert_eq!(
            verifier_stats_row("libbpf: prog 'x': no stats here\n"),
            None
        );
    }

    #[test]
    fn models_load_by_name_or_file_with_clear_errors() {
        assert_eq!(load_model("sim-reference").unwrap().name(), "sim-reference");
        let e = format!("{:#}", load_model("/nonexistent/m.json").unwrap_err());
        assert!(
            e.contains("not a built-in model") && e.contains("sim-reference"),
            "{e}"
        );
        let dir = std::env::temp_dir().join(format!("scx_colab_model_{}", std::process::id()));
        std::fs::write(&dir, "{\"format_version\": 1}").unwrap();
        let e = format!("{:#}", load_model(dir.to_str().unwrap()).unwrap_err());
        std::fs::remove_file(&dir).unwrap();
        assert!(e.contains("--model") && e.contains("missing field"), "{e}");
    }

    /// The built-in ARMv8-event model cannot be counted on x86 without
    /// mappings: setup says which event and how to map it.
    #[test]
    fn an_armv8_model_on_x86_names_the_unmappable_event() {
        if std::env::consts::ARCH == "aarch64" {
            return; // resolves by event number there
        }
        let o = Opts::try_parse_from(["scx_colab", "--model", "sim-reference"]).unwrap();
        let split = scx_colab_user::Split {
            big: vec![0],
            little: vec![1],
            speedup: 2.0,
            mode: scx_colab_user::SplitMode::Declared,
            siblings: Vec::new(),
            big_tiers: Vec::new(),
        };
        let e = format!("{:#}", setup_counters(&o, &split).err().unwrap());
        assert!(
            e.contains("BUS_ACCESS") && e.contains("--event BUS_ACCESS="),
            "{e}"
        );
    }

    #[test]
    fn preflight_messages() {
        assert_eq!(preflight(65534, true, "6.12.0"), Err(NEED_ROOT.to_string()));
        // Root is checked first.
        assert_eq!(preflight(1000, false, "6.1.0"), Err(NEED_ROOT.to_string()));
        let e = preflight(0, false, "6.1.0-28-amd64").unwrap_err();
        assert!(e.contains("6.1.0-28-amd64") && e.contains("CONFIG_SCHED_CLASS_EXT missing"));
        assert_eq!(preflight(0, true, "6.12.0"), Ok(()));
    }
}
