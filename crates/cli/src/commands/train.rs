//! `colab train`: counter-based speedup and energy models.

use anyhow::{bail, Context, Result};
use colab_core::{CoreOrder, Topology};
use std::path::PathBuf;

pub const ABOUT: &str = "Train counter-based speedup and energy models (colab-tpds 5.1).";

pub const LONG_ABOUT: &str = "Train counter-based speedup and energy models (colab-tpds 5.1).

PCA event selection, least squares, leave-one-program-out validation; the
model and its report go to reports/train/ unless --out says otherwise.";

pub const EXAMPLES: &str = "\
Examples:
  colab train --from-sim --out reports/train-sim   # from the simulator's counters
  colab train --table training/example-table.csv --events 4 --name demo --out reports/train-demo
  colab train --perf runs/ --name my-board -o reports/my-board   # perf stat runs per core type
  colab train --show-builtin colab-tpds-armv8";

#[derive(clap::Args)]
pub struct TrainArgs {
    /// Training table: CSV `program,core_type,<EVENT>...,speedup,energy_ratio`
    /// (format in crates/model/src/table.rs and the README).
    #[arg(long, value_name = "FILE", required_unless_present_any = ["perf", "show_builtin", "from_sim"])]
    table: Option<PathBuf>,
    /// Directory of perf stat runs: DIR/measurements.csv and
    /// DIR/<program>/<core_type>/*.perf.csv (recipe in crates/model/src/perf.rs).
    #[arg(long, value_name = "DIR", conflicts_with = "table")]
    perf: Option<PathBuf>,
    /// Generate the table in the simulator: each of the COLAB papers' 17
    /// benchmarks alone on one core of each type of --topology, every event
    /// read (in groups the PMU can count at once), as colab-tpds 5.1 ran its
    /// training programs on each cluster.
    #[arg(long, conflicts_with_all = ["table", "perf"])]
    from_sim: bool,
    /// Machine whose core types --from-sim trains for.
    #[arg(short, long, default_value = "2B2S", requires = "from_sim")]
    topology: String,
    /// Events to select per core type, besides CPU_CYCLES.
    #[arg(long, default_value_t = 6)]
    events: usize,
    /// Hardware counters readable at once, the cycle counter included.
    #[arg(long, default_value_t = 7)]
    max_counters: usize,
    /// Model name [default: the table's file stem or the perf directory's name].
    #[arg(long)]
    name: Option<String>,
    /// Report directory (replaced only once the new report is complete).
    #[arg(short, long, default_value = "reports/train")]
    out: PathBuf,
    /// Skip the SVG/PNG charts (they need a system font).
    #[arg(long)]
    no_charts: bool,
    /// Print a built-in model (see `colab list`) instead of training.
    #[arg(long, value_name = "NAME", conflicts_with_all = ["table", "perf"])]
    show_builtin: Option<String>,
}

pub fn run(args: TrainArgs) -> Result<()> {
    if let Some(name) = &args.show_builtin {
        let Some(m) = colab_model::Model::builtin(name) else {
            let known: Vec<&str> = colab_model::BUILTIN_MODELS.iter().map(|m| m.0).collect();
            bail!(
                "unknown built-in model `{name}` (built in: {})",
                known.join(", ")
            );
        };
        print!("{}", colab_train::describe_model(&m));
        return Ok(());
    }
    let mut opts = colab_model::TrainOptions {
        events: args.events,
        max_counters: args.max_counters,
        ..Default::default()
    };
    opts.check()?;
    let (input, default_name) = load_input(&args)?;
    let shape = input
        .table
        .validate()
        .with_context(|| input.source.clone())?;
    eprintln!(
        "train: {}: {} programs on {} core types ({}), {} event columns; selecting {} events per core type",
        input.source,
        shape.programs.len(),
        shape.core_types.len(),
        shape.core_types.join(", "),
        input.table.events.len(),
        args.events
    );
    opts.name = args
        .name
        .clone()
        .or(default_name)
        .unwrap_or_else(|| "trained".into());
    let (model, files) = colab_train::train_and_report(&input, &opts, &args.out, !args.no_charts)?;
    let t = model.training().expect("a trained model has its summary");
    for n in &t.notes {
        eprintln!("note: {n}");
    }
    if !input.notes.is_empty() {
        eprintln!(
            "note: {} remarks on the input (perf warnings, dropped events), listed in {}",
            input.notes.len(),
            files.summary_md.display()
        );
    }
    print!("{}", colab_train::result_lines(&model, &files));
    Ok(())
}

/// The training table the options name, and the model's default name.
fn load_input(args: &TrainArgs) -> Result<(colab_train::LoadedTable, Option<String>)> {
    Ok(match (&args.table, &args.perf) {
        (Some(t), _) => (
            colab_train::load_table_file(t)?,
            t.file_stem().map(|s| s.to_string_lossy().into_owned()),
        ),
        (None, Some(d)) => (
            colab_train::load_perf_dir(d)?,
            d.file_name().map(|s| s.to_string_lossy().into_owned()),
        ),
        _ if args.from_sim => {
            let topo = Topology::named(&args.topology, CoreOrder::BigFirst)
                .with_context(|| format!("--topology {}", args.topology))?;
            let (table, source) = colab_campaign::training::sim_training_table(&topo)?;
            (
                colab_train::LoadedTable {
                    table,
                    source,
                    notes: Vec::new(),
                },
                Some(colab_campaign::training::sim_model_name(&topo)),
            )
        }
        (None, None) => bail!("give --table FILE, --perf DIR or --from-sim"),
    })
}
