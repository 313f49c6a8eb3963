//! `colab._colab`: the extension module under the Python package `colab`
//! (python/colab/__init__.py turns its JSON and CSV into pandas objects).
//! Each function takes what the command line takes, runs the same library
//! code with the GIL released, and raises `colab.ColabError` with the
//! command line's message when it fails.

use anyhow::{bail, Context, Result};
use colab_campaign::{CampaignError, CampaignSpec, Engine, JobResult, NoProgress, Phase, Progress};
use colab_core::{CoreOrder, BUILTIN_MACHINES};
use colab_sim::SimConfig;
use colab_workload::{Library, Workload};
use pyo3::create_exception;
use pyo3::prelude::*;
use std::sync::Mutex;

create_exception!(
    _colab,
    ColabError,
    pyo3::exceptions::PyException,
    "What went wrong in colab, with the message the command line prints."
);

fn py_err(e: anyhow::Error) -> PyErr {
    ColabError::new_err(format!("{e:#}"))
}

fn order_of(s: &str) -> Result<CoreOrder> {
    match s {
        "big-first" => Ok(CoreOrder::BigFirst),
        "little-first" => Ok(CoreOrder::LittleFirst),
        _ => bail!("order must be 'big-first' or 'little-first', not '{s}'"),
    }
}

/// A workload: a built-in mix or program (`name` or `name:threads`), a TOML
/// file, or a TOML text (it spans lines).
fn workload(lib: &mut Library, arg: &str) -> Result<Workload> {
    if arg.contains('\n') {
        return lib
            .resolve_text("<TOML text>", arg)
            .context("invalid workload TOML text");
    }
    Ok(lib.resolve(arg)?)
}

/// The built-in mixes and programs.
#[pyfunction]
fn workloads() -> Vec<String> {
    let lib = Library::builtin();
    let mut v: Vec<String> = lib.mixes.iter().map(|m| m.name.clone()).collect();
    v.extend(lib.benchmarks.keys().cloned());
    v
}

/// The built-in machines with a file (any `<b>B<s>S` name works too).
#[pyfunction]
fn machines() -> Vec<String> {
    let mut v: Vec<String> = ["2B2S", "2B4S", "4B2S", "4B4S"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    v.extend(BUILTIN_MACHINES.iter().map(|(n, _)| n.to_string()));
    v
}

/// The built-in policies and the hosted sched_ext schedulers.
#[pyfunction]
fn policies() -> Vec<String> {
    let mut v: Vec<String> = colab_policies::POLICIES
        .iter()
        .map(|(n, _)| n.to_string())
        .collect();
    v.extend(
        colab_scx_host::SCHEDULERS
            .iter()
            .map(|(n, _)| format!("scx:{n}")),
    );
    v
}

/// One run with its baselines, as `colab sim --json` prints it; with
/// `timeline`, also every run slice as JSON.
#[pyfunction]
#[pyo3(signature = (workload_arg, machine, policy, seed, order, predictor, timeline))]
#[allow(clippy::too_many_arguments)]
fn sim(
    py: Python<'_>,
    workload_arg: String,
    machine: String,
    policy: String,
    seed: u64,
    order: String,
    predictor: String,
    timeline: bool,
) -> PyResult<(String, Option<String>)> {
    py.allow_threads(|| -> Result<(String, Option<String>)> {
        let w = workload(&mut Library::builtin(), &workload_arg)?;
        let topo = colab_campaign::load_topology(&machine, order_of(&order)?)?;
        let cfg = SimConfig {
            seed,
            timeline,
            ..SimConfig::default()
        };
        let r = colab_campaign::single::simulate_with_baselines(
            &w,
            &topo,
            &policy,
            &predictor,
            &cfg,
            &mut |w, t, p, c| colab_sim::simulate(w, t, p, c),
        )?;
        let json = colab_campaign::single::to_json(&w, &topo, &policy, seed, &r).to_string();
        let slices = match &r.result.timeline {
            Some(tl) => Some(serde_json::to_string(&tl.run_slices())?),
            None => None,
        };
        Ok((json, slices))
    })
    .map_err(py_err)
}

/// A grid of runs (every workload on every machine under every policy, in
/// each core order and seed) as `runs.csv` text.
#[pyfunction]
#[pyo3(signature = (workload_args, machines, policies, seeds, orders, predictor))]
fn study(
    py: Python<'_>,
    workload_args: Vec<String>,
    machines: Vec<String>,
    policies: Vec<String>,
    seeds: Vec<u64>,
    orders: Vec<String>,
    predictor: String,
) -> PyResult<String> {
    py.allow_threads(|| -> Result<String> {
        let spec = grid(workload_args, machines, policies, seeds, orders, predictor)?;
        let (records, _) = colab_campaign::run(&spec, &NoProgress)?;
        Ok(colab_report::runs_csv(&records)?)
    })
    .map_err(py_err)
}

/// [`study`] with each phase's runs sent to `run_phase`, a Python function
/// from a phase's JSON to its results' JSON (colab.sweep's Ray engine).
#[pyfunction]
#[pyo3(signature = (workload_args, machines, policies, seeds, orders, predictor, run_phase))]
#[allow(clippy::too_many_arguments)]
fn sweep(
    py: Python<'_>,
    workload_args: Vec<String>,
    machines: Vec<String>,
    policies: Vec<String>,
    seeds: Vec<u64>,
    orders: Vec<String>,
    predictor: String,
    run_phase: PyObject,
) -> PyResult<String> {
    let engine = PyEngine {
        run_phase,
        raised: Mutex::new(None),
    };
    let out = py.allow_threads(|| -> Result<String> {
        let spec = grid(workload_args, machines, policies, seeds, orders, predictor)?;
        let (records, _) = colab_campaign::run_on(&spec, &NoProgress, &engine)?;
        Ok(colab_report::runs_csv(&records)?)
    });
    // The engine's own exception (Ray's, a KeyboardInterrupt) as it was.
    if let Some(e) = engine.raised.lock().expect("not poisoned").take() {
        return Err(e);
    }
    out.map_err(py_err)
}

/// An engine that hands each phase to a Python function.
struct PyEngine {
    run_phase: PyObject,
    raised: Mutex<Option<PyErr>>,
}

impl Engine for PyEngine {
    fn run_phase(
        &self,
        phase: &Phase,
        _progress: &dyn Progress,
    ) -> Result<Vec<JobResult>, CampaignError> {
        let text = phase.to_json();
        let back = Python::with_gil(|py| -> PyResult<String> {
            self.run_phase.call1(py, (text,))?.extract(py)
        });
        match back {
            Ok(t) => serde_json::from_str(&t).map_err(|e| {
                CampaignError::Phase(format!("the sweep's results could not be read: {e}"))
            }),
            Err(e) => {
                let msg = e.to_string();
                *self.raised.lock().expect("not poisoned") = Some(e);
                Err(CampaignError::Phase(msg))
            }
        }
    }
}

/// A phase of a campaign, read from the JSON its engine was given: what a
/// Ray worker runs, a slice at a time.
#[pyclass(frozen, module = "colab._colab")]
struct PhaseRuns(Phase);

#[pymethods]
impl PhaseRuns {
    #[new]
    fn new(py: Python<'_>, text: &str) -> PyResult<PhaseRuns> {
        py.allow_threads(|| Phase::from_json(text))
            .map(PhaseRuns)
            .map_err(|e| py_err(e.into()))
    }

    fn __len__(&self) -> usize {
        self.0.len()
    }

    /// Runs `start..end` one after another; their results as JSON.
    fn run_range(&self, py: Python<'_>, start: usize, end: usize) -> PyResult<String> {
        py.allow_threads(|| -> Result<String> {
            let results = self.0.run_range(start..end)?;
            Ok(serde_json::to_string(&results)?)
        })
        .map_err(py_err)
    }
}

/// The campaign of a grid, its names checked.
fn grid(
    workload_args: Vec<String>,
    machines: Vec<String>,
    policies: Vec<String>,
    seeds: Vec<u64>,
    orders: Vec<String>,
    predictor: String,
) -> Result<CampaignSpec> {
    if workload_args.is_empty() || machines.is_empty() || policies.is_empty() {
        bail!("a study needs at least one workload, machine and policy");
    }
    if seeds.is_empty() || orders.is_empty() {
        bail!("a study needs at least one seed and core order");
    }
    let mut lib = Library::builtin();
    let workloads = workload_args
        .iter()
        .map(|a| workload(&mut lib, a).with_context(|| format!("workload '{}'", first_line(a))))
        .collect::<Result<Vec<_>>>()?;
    for p in &policies {
        colab_campaign::policy_by_name(p)?;
    }
    let mut spec = CampaignSpec {
        workloads,
        configs: Vec::new(),
        policies,
        orders: orders
            .iter()
            .map(|o| order_of(o))
            .collect::<Result<Vec<_>>>()?,
        seeds,
        predictor,
        machines: Vec::new(),
        restart_until: None,
        max_time_ns: None,
        paper_lengths: false,
        machine_files: Default::default(),
    };
    for m in &machines {
        spec.add_machine(m)
            .with_context(|| format!("machine '{}'", first_line(m)))?;
    }
    Ok(spec)
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

#[pymodule]
fn _colab(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ColabError", m.py().get_type::<ColabError>())?;
    m.add_function(wrap_pyfunction!(workloads, m)?)?;
    m.add_function(wrap_pyfunction!(machines, m)?)?;
    m.add_function(wrap_pyfunction!(policies, m)?)?;
    m.add_function(wrap_pyfunction!(sim, m)?)?;
    m.add_function(wrap_pyfunction!(study, m)?)?;
    m.add_function(wrap_pyfunction!(sweep, m)?)?;
    m.add_class::<PhaseRuns>()?;
    Ok(())
}
