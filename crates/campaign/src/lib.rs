//! Campaigns: many simulations (workloads x configurations x policies x core
//! orders x seeds) plus the baselines their metrics need, run in parallel and
//! turned into [`colab_report::RunRecord`]s.
//!
//! Baselines (colab-tpds 6.1): T_SB is a program alone on a machine of only
//! big cores with the same core count (under CFS: on a symmetric machine the
//! policies differ little, and one fixed reference keeps every policy's
//! H_ANTT comparable); T_alone, for Unfairness, is the program alone on the
//! same configuration under the same policy, core order and seed.

use colab_core::{CoreOrder, Topology};
use colab_sim::PredictorKind;
use colab_workload::{Library, Workload};
use std::collections::BTreeMap;

pub mod bench;
pub mod fingerprint;
pub mod lengths;
pub mod model_predictor;
mod phase;
pub mod reproduce;
mod run;
pub mod single;

pub mod training;

pub use phase::{Engine, JobResult, Local, Phase};
pub use run::{
    run, run_keep_going, run_keep_going_on, run_on, CampaignStats, NoProgress, Progress,
};

/// What to run. It serializes (JSON) with its workloads, so that its runs
/// can be sent to other processes or machines ([`Phase`]).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct CampaignSpec {
    pub workloads: Vec<Workload>,
    pub configs: Vec<String>,
    pub policies: Vec<String>,
    pub orders: Vec<CoreOrder>,
    pub seeds: Vec<u64>,
    /// Predictor label for policies named without `@` (see
    /// [`model_predictor::parse_predictor`]); default
    /// [`model_predictor::DEFAULT_PREDICTOR`].
    pub predictor: String,
    /// Per workload (same index), machines that replace `configs` for it
    /// (a study whose mixes each ran on their own machine); empty: `configs`.
    pub machines: Vec<Vec<String>>,
    /// Restart programs until each completed this many times (mix runs only;
    /// baselines run once). See `SimConfig::restart_until`.
    pub restart_until: Option<u32>,
    /// Simulated-time cap of each run; None: the simulator's default (1 h).
    pub max_time_ns: Option<u64>,
    /// The programs run as long as their papers ran them
    /// ([`CampaignSpec::with_paper_lengths`]).
    pub paper_lengths: bool,
    /// Machines given as TOML (a file's or a text's), by the name `configs`
    /// and the records use ([`CampaignSpec::add_machine`]); other names are
    /// built-in machines.
    #[serde(default)]
    pub machine_files: BTreeMap<String, String>,
}

/// The studies `reproduce` knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Study {
    /// colab-tpds / cgo20: the COLAB papers' gem5 study.
    Colab,
    /// camp-tocs12 Tables III-V on its DVFS machines.
    Camp,
    /// propsp Table 3 on its machines.
    PropSp,
    /// The scenario mixes (`workloads/mixes/scenarios.toml`): the situations
    /// in which colab-tpds says criticality and scale-slice matter, each mix
    /// on its own machines.
    Scenarios,
}

impl Study {
    /// The report's title.
    pub fn title(self) -> &'static str {
        match self {
            Study::Colab => "colab reproduce: the COLAB papers' simulation study",
            Study::Camp => "colab reproduce camp: camp-tocs12 Tables III-V",
            Study::PropSp => "colab reproduce propsp: propsp Table 3",
            Study::Scenarios => {
                "colab reproduce scenarios: criticality and scale-slice scenarios (colab-tpds Fig. 1 and more)"
            }
        }
    }

    /// The policy the report normalises to: CFS for the COLAB papers' study
    /// and the scenarios (the Linux scheduler COLAB is compared with), RR for
    /// CAMP and Prop-SP (both papers report speedups over RR).
    pub fn baseline(self) -> &'static str {
        match self {
            Study::Colab | Study::Scenarios => "cfs",
            Study::Camp | Study::PropSp => "rr",
        }
    }

    /// The default report directory.
    pub fn report_dir(self) -> &'static str {
        match self {
            Study::Colab => "reports/reproduce",
            Study::Camp => "reports/reproduce-camp",
            Study::PropSp => "reports/reproduce-propsp",
            Study::Scenarios => "reports/reproduce-scenarios",
        }
    }
}

/// Configurations of the papers' gem5 study (colab-tpds 6.1).
pub const PAPER_CONFIGS: [&str; 4] = ["2B2S", "2B4S", "4B2S", "4B4S"];
/// The policies the COLAB papers compare.
pub const PAPER_POLICIES: [&str; 3] = ["cfs", "wash", "colab"];

/// Every policy, in report column order: the Linux baselines first (CFS as
/// the papers ran it, EEVDF as Linux runs today), then the papers' rivals.
/// The policies that decide from predicted speedups (the others ignore them).
pub const PREDICTING_POLICIES: [&str; 9] = [
    "wash",
    "colab",
    "colab-e",
    "camp",
    "sfd",
    "hsp",
    "propsp",
    "propsp-static",
    "rota",
];

/// Predictors of the model ablation (wash-cgo16 8.4 does this for WASH):
/// exact speedups, the paper's model error, and larger errors.
/// `noisy` is the truth with the paper's reported model error; `model` the
/// built-in model trained on the simulator's counters.
pub const ABLATION_PREDICTORS: [&str; 5] = ["oracle", "noisy", "model", "model+0.10", "model+0.25"];

/// The ablation's policy list: the baseline as it is, then every predicting
/// policy once per predictor (`colab@oracle`, ...).
pub fn ablation_policies(baseline: &str) -> Vec<String> {
    let mut v = vec![baseline.to_string()];
    for p in PREDICTING_POLICIES {
        v.extend(ABLATION_PREDICTORS.iter().map(|l| format!("{p}@{l}")));
    }
    v
}

/// COLAB's mechanism ablation: the paper's COLAB, then each mechanism off or
/// varied in turn (`colab_policies::ColabParams::parse_options`).
pub const COLAB_MECHANISM_VARIANTS: [&str; 10] = [
    "colab",
    "colab:remote=off",
    "colab:block-first=off",
    "colab:scale-slice=off",
    "colab:block-labels=off",
    "colab:window=0",
    "colab:window=inf",
    "colab:labels=medium",
    "colab:labels=rank",
    "colab:block-first=off:scale-slice=off:block-labels=off",
];

/// The mechanism ablation's policy list: the baseline, today's Linux and
/// RR (the references), then every COLAB variant.
pub fn mechanism_ablation_policies(baseline: &str) -> Vec<String> {
    let mut v = vec![baseline.to_string()];
    for p in ["eevdf", "rr"] {
        if p != baseline {
            v.push(p.to_string());
        }
    }
    v.extend(COLAB_MECHANISM_VARIANTS.iter().map(|s| s.to_string()));
    v.extend(ROTA_MECHANISM_VARIANTS.iter().map(|s| s.to_string()));
    v
}

/// ROTA's third freeze, what scx_colab's BPF implemented until 2026-12-06
/// (results cite it; the fingerprints keep it).
pub const ROTA_THIRD_FREEZE: &str = "rota@3";

/// The ROTA scx_colab's BPF implements: the default, ported rule by rule
/// (book/src/scx/porting.md), which `scripts/vm/sim-vs-vm.sh` compares the
/// VM's scx_colab with (`tests/freeze_spellings.rs` holds it to this).
pub const ROTA_SCX_COLAB: &str = "rota";

/// ROTA's mechanism ablation, the book's ROTA ablation table: the presets
/// results cite, then the default with one switch changed, each switch in
/// turn (`rota@18` is `share-fast=on`); `order=sjf-oracle` and
/// `reclaim=barrier-oracle` are oracle modes.
pub const ROTA_MECHANISM_VARIANTS: [&str; 35] = [
    "rota",
    "rota@18",
    "rota@16",
    "rota@15",
    "rota@14",
    "rota@13",
    "rota@12",
    "rota@11",
    ROTA_THIRD_FREEZE,
    "rota:rotate=off",
    "rota:remote=off",
    "rota:prev-first=off",
    "rota:serial-first=off",
    "rota:order=ntt",
    "rota:order=ntt-pr",
    "rota:order=capped",
    "rota:order=sjf-oracle",
    "rota:share-fast=off",
    "rota:pull-min=on",
    "rota:pull-min=off",
    "rota:pull-from=core",
    "rota:stay=off",
    "rota:hold=off",
    "rota:new-start=debit",
    "rota:quantum=migrations",
    "rota:quantum=slice",
    "rota:sibling-turns=off",
    "rota:full-wait=off",
    "rota:gang=off",
    "rota:gang-fit=off",
    "rota:split-prior=off",
    "rota:reclaim=off",
    "rota:reclaim=on",
    "rota:reclaim=barrier-oracle",
    "rota:local=eevdf",
];

/// Every policy of a full study: the built-in ones and scx_colab's own BPF
/// hosted by the simulator.
pub const ALL_POLICIES: [&str; 17] = [
    "cfs",
    "eevdf",
    "bpfland",
    "lavd",
    "gts",
    "wash",
    "colab",
    "colab-e",
    "camp",
    "pa",
    "sfd",
    "rr",
    "hsp",
    "propsp",
    "propsp-static",
    "rota",
    "scx:colab",
];

/// The 17 benchmark models of the COLAB papers (defined with the library in
/// `colab-workload`).
pub use colab_workload::COLAB_BENCHMARKS;

/// `count` random mixes of the COLAB benchmarks drawn from `seed`
/// (`Rand-<seed>-1` ...; see [`colab_workload::random`]): held-out
/// workloads like the random mixes of colab-cgo20 Table WC, with 2 to 6
/// programs, each at an n its real program accepts, at most
/// [`colab_workload::random::MAX_THREADS`] threads per mix.
pub fn random_workloads(
    lib: &Library,
    count: u32,
    seed: u64,
) -> Result<Vec<Workload>, colab_workload::WorkloadError> {
    random_mixes(lib, count, seed)?
        .iter()
        .map(|m| lib.mix_workload(&m.source, m))
        .collect()
}

/// The mixes of [`random_workloads`] as mix specs (for listings).
pub fn random_mixes(
    lib: &Library,
    count: u32,
    seed: u64,
) -> Result<Vec<colab_workload::MixSpec>, colab_workload::WorkloadError> {
    colab_workload::random::random_mixes(lib, &COLAB_BENCHMARKS, count, seed)
}

/// What `w` is made of, for the report's composition table.
pub fn workload_info(w: &Workload) -> colab_report::WorkloadInfo {
    colab_report::WorkloadInfo {
        name: w.name.clone(),
        source: w.source.clone(),
        programs: w
            .programs
            .iter()
            .map(|p| colab_report::WorkloadProgram {
                name: p.name.clone(),
                n: p.n,
                threads: p.total_threads,
            })
            .collect(),
    }
}

/// Is this mix from the COLAB papers (not the CAMP / Prop-SP studies)?
pub fn is_colab_mix(source: &str) -> bool {
    source.starts_with("colab")
}

impl CampaignSpec {
    /// The COLAB papers' simulation study: every mix of theirs and each of
    /// their benchmarks alone, on 2B2S/2B4S/4B2S/4B4S, under every policy,
    /// both core orders.
    /// `quick` keeps a representative subset that runs in seconds.
    pub fn paper(
        lib: &Library,
        quick: bool,
    ) -> Result<CampaignSpec, colab_workload::WorkloadError> {
        let mut workloads = Vec::new();
        if quick {
            for m in [
                "Sync-1", "Sync-2", "NSync-1", "Comm-2", "Comp-1", "2B-5", "4B-6",
            ] {
                if lib.mixes.iter().any(|x| x.name == m) {
                    workloads.push(lib.mix(m)?);
                }
            }
            for b in ["ferret", "fluidanimate", "swaptions", "blackscholes"] {
                if lib.benchmarks.contains_key(b) {
                    workloads.push(lib.single(b, None)?);
                }
            }
        } else {
            for m in lib.mixes.iter().filter(|m| is_colab_mix(&m.source)) {
                workloads.push(lib.mix(&m.name)?);
            }
            for b in COLAB_BENCHMARKS {
                if lib.benchmarks.contains_key(b) {
                    workloads.push(lib.single(b, None)?);
                }
            }
        }
        Ok(CampaignSpec {
            workloads,
            configs: if quick {
                vec!["2B2S".into(), "4B4S".into()]
            } else {
                PAPER_CONFIGS.iter().map(|s| s.to_string()).collect()
            },
            policies: ALL_POLICIES.iter().map(|s| s.to_string()).collect(),
            orders: CoreOrder::BOTH.to_vec(),
            seeds: if quick { vec![1] } else { vec![1, 2, 3] },
            predictor: model_predictor::DEFAULT_PREDICTOR.to_string(),
            machines: Vec::new(),
            restart_until: None,
            max_time_ns: None,
            paper_lengths: false,
            machine_files: Default::default(),
        })
    }

    /// The CAMP or Prop-SP study: each mix of the paper's tables on the
    /// machines the paper ran it on, every program restarted until each has
    /// completed three times (both papers' method), under every policy.
    /// `quick` keeps the first mix of each table on its first machine.
    pub fn study(
        lib: &Library,
        study: Study,
        quick: bool,
    ) -> Result<CampaignSpec, colab_workload::WorkloadError> {
        match study {
            Study::Colab => return CampaignSpec::paper(lib, quick),
            Study::Scenarios => return CampaignSpec::scenarios(lib, quick),
            Study::Camp | Study::PropSp => {}
        }
        let prefix = match study {
            Study::Camp => "camp-tocs12",
            _ => "propsp",
        };
        let mut seen_tables = std::collections::BTreeSet::new();
        let mixes = lib
            .mixes
            .iter()
            .filter(|m| m.source.starts_with(prefix))
            .filter(|m| !quick || seen_tables.insert(m.source.clone()));
        let mut spec = CampaignSpec::on_their_machines(lib, mixes, quick)?;
        // "restarted repeatedly until the longest application in the set
        // completes three times" (camp-tocs12 5.1, propsp 4).
        spec.restart_until = Some(3);
        Ok(spec)
    }

    /// Gives every program of the spec's workloads the length the papers
    /// ran it at ([`lengths::Lengths::Paper`]) and lets each run last as
    /// long as that takes ([`lengths::PAPER_MAX_TIME_NS`]). For the CAMP and
    /// Prop-SP studies; call it before adding traces, whose lengths are
    /// their recordings'.
    pub fn with_paper_lengths(&mut self) -> Result<(), CampaignError> {
        let mut cache = BTreeMap::new();
        for w in &mut self.workloads {
            lengths::to_paper_lengths(w, &mut cache)?;
        }
        self.max_time_ns = Some(lengths::PAPER_MAX_TIME_NS);
        self.paper_lengths = true;
        Ok(())
    }

    /// `mixes`, each on the machines its entry names (only the first with
    /// `quick`), under every policy, both core orders, 3 seeds (1 with
    /// `quick`), programs run once.
    fn on_their_machines<'a>(
        lib: &Library,
        mixes: impl Iterator<Item = &'a colab_workload::MixSpec>,
        quick: bool,
    ) -> Result<CampaignSpec, colab_workload::WorkloadError> {
        let mut workloads = Vec::new();
        let mut machines = Vec::new();
        for m in mixes {
            workloads.push(lib.mix(&m.name)?);
            let mut ms = m.machines.clone();
            if quick {
                ms.truncate(1);
            }
            machines.push(ms);
        }
        Ok(CampaignSpec {
            workloads,
            configs: Vec::new(),
            policies: ALL_POLICIES.iter().map(|s| s.to_string()).collect(),
            orders: CoreOrder::BOTH.to_vec(),
            seeds: if quick { vec![1] } else { vec![1, 2, 3] },
            predictor: model_predictor::DEFAULT_PREDICTOR.to_string(),
            machines,
            restart_until: None,
            max_time_ns: None,
            paper_lengths: false,
            machine_files: Default::default(),
        })
    }

    /// The scenario study: every scenario mix (source starting with
    /// "scenario") on the machines its entry names (Fig1 on 1B1S, the rest
    /// on 2B2S and 4B4S), under every policy, both core orders, 3 seeds;
    /// programs run once, as in the COLAB study. `quick` keeps each mix's
    /// first machine and one seed.
    pub fn scenarios(
        lib: &Library,
        quick: bool,
    ) -> Result<CampaignSpec, colab_workload::WorkloadError> {
        let mixes = lib
            .mixes
            .iter()
            .filter(|m| colab_workload::is_scenario_mix(&m.source));
        let mut spec = CampaignSpec::on_their_machines(lib, mixes, quick)?;
        // Every scenario mix names its machines; a mix without would run on
        // the smallest of the papers' configurations.
        spec.configs = vec!["2B2S".into()];
        Ok(spec)
    }

    /// A policy name, optionally with the predictor it runs on after `@`
    /// (`colab@oracle`, `wash@noisy:0.25`): how an ablation runs one policy on
    /// several predictors side by side. Without `@`, the spec's predictor.
    pub fn policy_and_predictor(
        &self,
        name: &str,
    ) -> Result<(Box<dyn colab_core::Policy>, model_predictor::Predictor), CampaignError> {
        let (base, label) = model_predictor::split_predictor(name);
        let label = label.unwrap_or(&self.predictor);
        let pred = model_predictor::parse_predictor(label)
            .map_err(|e| model_predictor::label_error(name, label, e))?;
        Ok((policy_by_name(base)?, pred))
    }

    /// The policy of `name` alone (its predictor label, after `@`, left aside).
    fn policy(&self, name: &str) -> Result<Box<dyn colab_core::Policy>, CampaignError> {
        let (base, _) = model_predictor::split_predictor(name);
        policy_by_name(base)
    }

    /// The policy called `name` and what it reads its predictions from on
    /// machine `topo`.
    pub fn policy_on(
        &self,
        name: &str,
        topo: &Topology,
    ) -> Result<(Box<dyn colab_core::Policy>, PredictorKind), CampaignError> {
        let (pol, pred) = self.policy_and_predictor(name)?;
        let kind =
            pred.for_machine(pol.as_ref(), topo)
                .map_err(|problem| CampaignError::Model {
                    policy: name.to_string(),
                    problem,
                })?;
        Ok((pol, kind))
    }

    /// Every machine the spec runs a workload on, in first-seen order: its
    /// `configs`, then the machines of workloads that have their own.
    pub fn all_machines(&self) -> Vec<String> {
        let mut all: Vec<String> = Vec::new();
        for m in self.configs.iter().chain(self.machines.iter().flatten()) {
            if !all.contains(m) {
                all.push(m.clone());
            }
        }
        all
    }

    /// Drops the workloads, keeping the machines they ran on: a study whose
    /// mixes each had their own machines runs what is added next on all of
    /// them.
    pub fn clear_workloads(&mut self) {
        if !self.machines.is_empty() {
            self.configs = self.all_machines();
            self.machines.clear();
        }
        self.workloads.clear();
    }

    /// Adds a workload with no machine of its own (a recorded trace): it runs
    /// on every machine of the study.
    pub fn add_everywhere(&mut self, w: Workload) {
        if !self.machines.is_empty() {
            let all = self.all_machines();
            self.machines.resize(self.workloads.len(), Vec::new());
            self.machines.push(all);
        }
        self.workloads.push(w);
    }

    /// Adds [`random_workloads`]`(lib, count, seed)` to the workloads; they run
    /// on `configs` like the COLAB study's own workloads.
    pub fn add_random_mixes(
        &mut self,
        lib: &Library,
        count: u32,
        seed: u64,
    ) -> Result<(), CampaignError> {
        if self.configs.is_empty() {
            return Err(CampaignError::Random(
                "random mixes run on the campaign's configurations, and this campaign has none \
                 (its workloads each run on their paper's machines)"
                    .into(),
            ));
        }
        let ws =
            random_workloads(lib, count, seed).map_err(|e| CampaignError::Random(e.to_string()))?;
        // Per-workload machines stay aligned: the new mixes use `configs`.
        if !self.machines.is_empty() {
            self.machines.resize(self.workloads.len(), Vec::new());
            self.machines.extend(ws.iter().map(|_| Vec::new()));
        }
        self.workloads.extend(ws);
        Ok(())
    }

    /// The compositions of the spec's random mixes (class
    /// [`colab_workload::random::RANDOM_CLASS`]), for the report.
    pub fn random_compositions(&self) -> Vec<colab_report::WorkloadInfo> {
        self.workloads
            .iter()
            .filter(|w| {
                w.classes
                    .iter()
                    .any(|c| c == colab_workload::random::RANDOM_CLASS)
            })
            .map(workload_info)
            .collect()
    }

    /// The machines workload `wi` runs on.
    /// The machine a name of `configs` (or of a workload's own machines)
    /// stands for: one given as TOML, or a built-in.
    pub fn topology(&self, name: &str, order: CoreOrder) -> Result<Topology, CampaignError> {
        match self.machine_files.get(name) {
            Some(text) => Ok(Topology::from_toml(text, order)?),
            None => Ok(Topology::named(name, order)?),
        }
    }

    /// Adds a machine to `configs`: a built-in name, a topology TOML file
    /// or a TOML text (it spans lines). A file's machine is called by its
    /// `name`, or else by the file's stem; a text's must have a `name`.
    /// Returns that name, which the records carry.
    pub fn add_machine(&mut self, arg: &str) -> anyhow::Result<String> {
        use anyhow::{bail, Context};
        let (text, fallback) = if arg.contains('\n') {
            (arg.to_string(), None)
        } else {
            let p = std::path::Path::new(arg);
            if p.extension().is_some_and(|e| e == "toml") || p.is_file() {
                let text = std::fs::read_to_string(p)
                    .with_context(|| format!("{arg}: cannot read topology file"))?;
                let stem = p.file_stem().map(|s| s.to_string_lossy().into_owned());
                (text, stem)
            } else {
                Topology::named(arg, CoreOrder::BigFirst)?;
                if !self.configs.iter().any(|c| c == arg) {
                    self.configs.push(arg.to_string());
                }
                return Ok(arg.to_string());
            }
        };
        let what = if fallback.is_some() {
            arg
        } else {
            "topology TOML text"
        };
        for order in CoreOrder::BOTH {
            Topology::from_toml(&text, order)
                .with_context(|| format!("{what}: invalid topology"))?;
        }
        #[derive(serde::Deserialize)]
        struct Named {
            name: Option<String>,
        }
        let named: Named =
            toml::from_str(&text).with_context(|| format!("{what}: invalid topology"))?;
        let Some(name) = named.name.or(fallback) else {
            bail!("a machine given as TOML text needs a name (name = \"...\") to tell its results apart");
        };
        if Topology::named(&name, CoreOrder::BigFirst).is_ok() {
            bail!("{what}: its machine is called '{name}', which is a built-in machine's name: rename it");
        }
        match self.machine_files.get(&name) {
            Some(t) if *t != text => {
                bail!("{what}: two different machines are called '{name}'")
            }
            Some(_) => {}
            None => {
                self.machine_files.insert(name.clone(), text);
                self.configs.push(name.clone());
            }
        }
        Ok(name)
    }

    fn configs_of(&self, wi: usize) -> &[String] {
        match self.machines.get(wi) {
            Some(m) if !m.is_empty() => m,
            _ => &self.configs,
        }
    }
}

/// A machine: a topology TOML file (a path ending in `.toml`, or any that
/// exists), a topology TOML text (it spans lines), or a built-in name.
pub fn load_topology(arg: &str, order: CoreOrder) -> anyhow::Result<Topology> {
    use anyhow::Context;
    if arg.contains('\n') {
        return Topology::from_toml(arg, order).context("invalid topology TOML text");
    }
    let p = std::path::Path::new(arg);
    if p.extension().is_some_and(|e| e == "toml") || p.exists() {
        let text = std::fs::read_to_string(p)
            .with_context(|| format!("{arg}: cannot read topology file"))?;
        return Topology::from_toml(&text, order)
            .with_context(|| format!("{arg}: invalid topology"));
    }
    match Topology::named(arg, order) {
        Ok(t) => Ok(t),
        // That message already quotes the name.
        Err(e @ colab_core::TopologyError::UnknownName(_)) => Err(e.into()),
        Err(e) => Err(anyhow::Error::new(e).context(arg.to_string())),
    }
}

/// A policy by name: a built-in one (`colab_policies::by_name`) or a
/// sched_ext scheduler's own code hosted by the simulator (`scx:NAME[:ARGS]`).
pub fn policy_by_name(name: &str) -> Result<Box<dyn colab_core::Policy>, CampaignError> {
    if colab_scx_host::is_hosted(name) {
        Ok(colab_scx_host::by_name(name)?)
    } else {
        Ok(colab_policies::by_name(name)?)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CampaignError {
    #[error("{0}")]
    Topology(#[from] colab_core::TopologyError),
    #[error("{0}")]
    Policy(#[from] colab_policies::PolicyError),
    #[error("{0}")]
    Hosted(#[from] colab_scx_host::HostError),
    #[error("policy '{policy}': unknown predictor '{label}': expected oracle, noisy, noisy:R (R a mean relative error, e.g. noisy:0.25), model, model:NAME or model:FILE, each model optionally +R (e.g. model+0.10), or constant:S (every thread S > 0)")]
    Predictor { policy: String, label: String },
    #[error("policy '{policy}': {problem}")]
    Model { policy: String, problem: String },
    #[error("{what}: {source}")]
    Sim {
        what: String,
        source: colab_sim::SimError,
    },
    /// A run that failed where the campaign's engine ran it.
    #[error("{}", .0.message)]
    Run(phase::JobError),
    /// A phase that could not be read or was asked for runs it lacks.
    #[error("{0}")]
    Phase(String),
    #[error("{0}")]
    Training(String),
    #[error("{0}")]
    Random(String),
    #[error("{0}")]
    Lengths(String),
    /// Several runs failed: the first (in run order) and how many others.
    #[error("{first}\n({more} more runs failed too; the first {} of them: {})", shown.len(), shown.join("; "))]
    Failed {
        first: Box<CampaignError>,
        more: usize,
        shown: Vec<String>,
    },
}
