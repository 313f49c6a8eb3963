//! rt-app task sets (JSON, the format of ARM's LISA and of sched_ext's
//! simulator prototype) as colab programs. The grammar is rt-app's
//! doc/tutorial.txt: a `tasks` object of threads, each with `instance`,
//! `delay`, `loop` and either `phases` or its events directly; events run
//! in the order written, named by prefix (`run0`, `sleep1`, ...).
//!
//! Read: `run` (work of that many us on the reference big core, as
//! rt-app's calibrated loop; compute-bound, `mem_frac = 0`, an assumption:
//! rt-app's loop spins on registers), `sleep`, `timer` (colab's `timer`),
//! `lock` / `unlock`, `wait` / `signal` / `broad`, `sync`, `barrier`,
//! phase and task `loop`, `instance`, `delay`. What colab cannot model is
//! refused by name: fixed-time `runtime`, `mem`, `iorun`, `suspend` /
//! `resume`, `yield`, `fork`, scheduling classes other than SCHED_OTHER and
//! priorities, CPU affinity, utilisation clamps, task groups, NUMA binding,
//! priority inheritance, a run `duration`, and tasks that loop forever.

use crate::expr::Count;
use crate::spec::{OpSpec, ProgramSpec, ThreadSpec};
use crate::WorkloadError;
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use std::collections::BTreeMap;

/// A JSON value whose objects keep their keys in file order (rt-app runs a
/// phase's events in the order they are written).
#[derive(Clone, Debug, PartialEq)]
enum Json {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Json, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Json;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_unit<E>(self) -> Result<Json, E> {
                Ok(Json::Null)
            }
            fn visit_bool<E>(self, b: bool) -> Result<Json, E> {
                Ok(Json::Bool(b))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
                Ok(Json::Num(v as f64))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Json, E> {
                Ok(Json::Num(v as f64))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Json, E> {
                Ok(Json::Num(v))
            }
            fn visit_str<E>(self, v: &str) -> Result<Json, E> {
                Ok(Json::Str(v.to_string()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Json, A::Error> {
                let mut v = Vec::new();
                while let Some(x) = a.next_element()? {
                    v.push(x);
                }
                Ok(Json::Arr(v))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Json, A::Error> {
                let mut v = Vec::new();
                while let Some((k, x)) = a.next_entry()? {
                    v.push((k, x));
                }
                Ok(Json::Obj(v))
            }
        }
        d.deserialize_any(V)
    }
}

/// Task and phase attributes colab cannot model, with why.
const REFUSED_ATTRS: &[(&str, &str)] = &[
    ("cpus", "CPU affinity"),
    ("util_min", "utilisation clamping"),
    ("util_max", "utilisation clamping"),
    ("membind_nodes", "NUMA memory binding"),
    ("dl-runtime", "SCHED_DEADLINE parameters"),
    ("dl-period", "SCHED_DEADLINE parameters"),
    ("dl-deadline", "SCHED_DEADLINE parameters"),
    ("period", "SCHED_DEADLINE parameters"),
    ("deadline", "SCHED_DEADLINE parameters"),
];

/// Events colab cannot model, by their rt-app prefix, with why.
const REFUSED_EVENTS: &[(&str, &str)] = &[
    (
        "runtime",
        "a fixed wall time whatever the core's speed (colab's work scales with the core)",
    ),
    ("mem", "memory-buffer writes"),
    ("iorun", "I/O writes"),
    ("suspend", "suspend/resume of a named thread"),
    ("resume", "suspend/resume of a named thread"),
    ("yield", "sched_yield"),
    ("fork", "tasks forked at run time"),
];

/// Global keys that only steer rt-app's own logging and calibration.
const IGNORED_GLOBALS: &[&str] = &[
    "calibration",
    "logdir",
    "log_basename",
    "log_size",
    "ftrace",
    "gnuplot",
    "lock_pages",
    "io_device",
    "mem_buffer_size",
    "cumulative_slack",
];

struct Ctx<'a> {
    file: &'a str,
    mutexes: Vec<String>,
    conds: Vec<String>,
    timers: Vec<String>,
    /// Barrier name -> threads' references to it.
    barriers: BTreeMap<String, u64>,
    /// Timer name -> the tasks (and instances) that use it.
    timer_users: BTreeMap<String, u64>,
}

impl Ctx<'_> {
    fn err(&self, place: &str, problem: impl Into<String>) -> WorkloadError {
        WorkloadError::Invalid {
            file: self.file.to_string(),
            place: place.to_string(),
            problem: problem.into(),
        }
    }
    fn note(list: &mut Vec<String>, name: &str) {
        if !list.iter().any(|x| x == name) {
            list.push(name.to_string());
        }
    }
}

fn num(cx: &Ctx, place: &str, v: &Json) -> Result<f64, WorkloadError> {
    match v {
        Json::Num(x) if x.is_finite() => Ok(*x),
        _ => Err(cx.err(place, "expected a number")),
    }
}

fn string<'j>(cx: &Ctx, place: &str, v: &'j Json) -> Result<&'j str, WorkloadError> {
    match v {
        Json::Str(s) if !s.is_empty() => Ok(s),
        _ => Err(cx.err(place, "expected a non-empty string")),
    }
}

fn field<'j>(o: &'j [(String, Json)], key: &str) -> Option<&'j Json> {
    o.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

/// `{ "ref": ..., "mutex": ... }` of wait and sync.
fn ref_mutex<'j>(cx: &Ctx, place: &str, v: &'j Json) -> Result<(&'j str, &'j str), WorkloadError> {
    let Json::Obj(o) = v else {
        return Err(cx.err(place, "expected { \"ref\": ..., \"mutex\": ... }"));
    };
    let r = field(o, "ref").ok_or_else(|| cx.err(place, "missing \"ref\""))?;
    let m = field(o, "mutex").ok_or_else(|| cx.err(place, "missing \"mutex\""))?;
    Ok((string(cx, place, r)?, string(cx, place, m)?))
}

fn us(v: f64) -> Count {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        Count::Int(v as i64)
    } else {
        Count::Float(v)
    }
}

/// A loop count: a positive integer; -1 (forever) and 0 are refused.
fn loop_count(cx: &Ctx, place: &str, v: &Json) -> Result<i64, WorkloadError> {
    let k = num(cx, place, v)?;
    if k == -1.0 {
        return Err(cx.err(
            place,
            "loop -1 (forever): colab runs every task to the end of its loops; give a loop count",
        ));
    }
    if !(k >= 1.0 && k.fract() == 0.0 && k <= 1e9) {
        return Err(cx.err(place, format!("loop {k}: expected a positive whole number")));
    }
    Ok(k as i64)
}

/// Checks a task's or phase's scheduling attribute `key`; true if it is one.
fn attribute(cx: &Ctx, place: &str, key: &str, v: &Json) -> Result<bool, WorkloadError> {
    if let Some((_, why)) = REFUSED_ATTRS.iter().find(|(k, _)| *k == key) {
        return Err(cx.err(&format!("{place}.{key}"), format!("not modelled: {why}")));
    }
    match key {
        "policy" => {
            let p = string(cx, &format!("{place}.policy"), v)?;
            if p != "SCHED_OTHER" {
                return Err(cx.err(
                    &format!("{place}.policy"),
                    format!(
                        "not modelled: scheduling class {p} (colab schedules SCHED_OTHER threads)"
                    ),
                ));
            }
            Ok(true)
        }
        "priority" => {
            if num(cx, &format!("{place}.priority"), v)? != 0.0 {
                return Err(cx.err(
                    &format!("{place}.priority"),
                    "not modelled: priorities and nice values",
                ));
            }
            Ok(true)
        }
        "taskgroup" => match v {
            Json::Str(s) if s.is_empty() => Ok(true),
            _ => Err(cx.err(&format!("{place}.taskgroup"), "not modelled: task groups")),
        },
        _ => Ok(false),
    }
}

/// The events of a phase (or of a task without phases), in file order.
fn events(
    cx: &mut Ctx,
    place: &str,
    o: &[(String, Json)],
    skip: &[&str],
    instances: u64,
) -> Result<Vec<OpSpec>, WorkloadError> {
    let mut ops = Vec::new();
    for (key, v) in o {
        if skip.contains(&key.as_str()) || attribute(cx, place, key, v)? {
            continue;
        }
        let here = format!("{place}.{key}");
        if let Some((_, why)) = REFUSED_EVENTS.iter().find(|(p, _)| key.starts_with(p)) {
            return Err(cx.err(&here, format!("not modelled: {why}")));
        }
        if key.starts_with("run") {
            let t = num(cx, &here, v)?;
            if t < 0.0 {
                return Err(cx.err(&here, format!("run of {t} us: must be zero or positive")));
            }
            ops.push(OpSpec {
                compute: Some(us(t)),
                mem_frac: Some(0.0),
                ..OpSpec::default()
            });
        } else if key.starts_with("sleep") {
            let t = num(cx, &here, v)?;
            if t < 0.0 {
                return Err(cx.err(&here, format!("sleep of {t} us: must be zero or positive")));
            }
            ops.push(OpSpec {
                sleep: Some(us(t)),
                ..OpSpec::default()
            });
        } else if key.starts_with("timer") {
            let Json::Obj(t) = v else {
                return Err(cx.err(&here, "expected { \"ref\": ..., \"period\": ... }"));
            };
            let name = string(
                cx,
                &here,
                field(t, "ref").ok_or_else(|| cx.err(&here, "missing \"ref\""))?,
            )?;
            let period = num(
                cx,
                &here,
                field(t, "period").ok_or_else(|| cx.err(&here, "missing \"period\""))?,
            )?;
            let mode = match field(t, "mode") {
                None => None,
                Some(m) => Some(string(cx, &here, m)?.to_string()),
            };
            Ctx::note(&mut cx.timers, name);
            *cx.timer_users.entry(name.to_string()).or_default() += instances;
            ops.push(OpSpec {
                timer: Some(name.to_string()),
                period: Some(us(period)),
                mode,
                ..OpSpec::default()
            });
        } else if key.starts_with("lock") {
            let m = string(cx, &here, v)?;
            Ctx::note(&mut cx.mutexes, m);
            ops.push(OpSpec {
                lock: Some(m.to_string()),
                ..OpSpec::default()
            });
        } else if key.starts_with("unlock") {
            let m = string(cx, &here, v)?;
            Ctx::note(&mut cx.mutexes, m);
            ops.push(OpSpec {
                unlock: Some(m.to_string()),
                ..OpSpec::default()
            });
        } else if key.starts_with("wait") {
            let (c, m) = ref_mutex(cx, &here, v)?;
            Ctx::note(&mut cx.conds, c);
            Ctx::note(&mut cx.mutexes, m);
            ops.push(OpSpec {
                wait: Some(c.to_string()),
                mutex: Some(m.to_string()),
                ..OpSpec::default()
            });
        } else if key.starts_with("signal") {
            let c = string(cx, &here, v)?;
            Ctx::note(&mut cx.conds, c);
            ops.push(OpSpec {
                signal: Some(c.to_string()),
                ..OpSpec::default()
            });
        } else if key.starts_with("broad") {
            let c = string(cx, &here, v)?;
            Ctx::note(&mut cx.conds, c);
            ops.push(OpSpec {
                broadcast: Some(c.to_string()),
                ..OpSpec::default()
            });
        } else if key.starts_with("sync") {
            // rt-app's sync: lock, signal, wait, unlock (tutorial.txt).
            let (c, m) = ref_mutex(cx, &here, v)?;
            Ctx::note(&mut cx.conds, c);
            Ctx::note(&mut cx.mutexes, m);
            ops.extend([
                OpSpec {
                    lock: Some(m.to_string()),
                    ..OpSpec::default()
                },
                OpSpec {
                    signal: Some(c.to_string()),
                    ..OpSpec::default()
                },
                OpSpec {
                    wait: Some(c.to_string()),
                    mutex: Some(m.to_string()),
                    ..OpSpec::default()
                },
                OpSpec {
                    unlock: Some(m.to_string()),
                    ..OpSpec::default()
                },
            ]);
        } else if key.starts_with("barrier") {
            let b = string(cx, &here, v)?;
            *cx.barriers.entry(b.to_string()).or_default() += instances;
            ops.push(OpSpec {
                barrier: Some(b.to_string()),
                ..OpSpec::default()
            });
        } else {
            return Err(cx.err(&here, "unknown rt-app event or attribute"));
        }
    }
    Ok(ops)
}

/// `body` repeated `k` times (inline when once).
fn repeat(k: i64, body: Vec<OpSpec>) -> Vec<OpSpec> {
    if k == 1 {
        return body;
    }
    vec![OpSpec {
        loop_: Some(Count::Int(k)),
        body: Some(body),
        ..OpSpec::default()
    }]
}

/// The colab program an rt-app task set describes, named `name`: a main
/// thread that starts each task's instances and waits for them, and a
/// thread group per task.
pub fn program_spec(name: &str, file: &str, text: &str) -> Result<ProgramSpec, WorkloadError> {
    let json: Json = serde_json::from_str(text).map_err(|e| WorkloadError::Parse {
        file: file.to_string(),
        message: format!("not rt-app JSON: {e}"),
    })?;
    let mut cx = Ctx {
        file,
        mutexes: Vec::new(),
        conds: Vec::new(),
        timers: Vec::new(),
        barriers: BTreeMap::new(),
        timer_users: BTreeMap::new(),
    };
    let Json::Obj(top) = &json else {
        return Err(cx.err("(top)", "expected an object with \"tasks\""));
    };
    for (k, v) in top {
        match k.as_str() {
            "tasks" | "resources" => {}
            "global" => global(&cx, v)?,
            _ => {
                return Err(cx.err(
                    k,
                    "unknown top-level key (rt-app has tasks, global, resources)",
                ))
            }
        }
    }
    let Some(Json::Obj(tasks)) = field(top, "tasks") else {
        return Err(cx.err("tasks", "expected an object of tasks"));
    };
    if tasks.is_empty() {
        return Err(cx.err("tasks", "no task"));
    }
    let mut threads = BTreeMap::new();
    let mut main_ops = Vec::new();
    let mut joins = Vec::new();
    let mut total = 1i64;
    for (i, (tname, t)) in tasks.iter().enumerate() {
        let place = format!("tasks.{tname}");
        let Json::Obj(t) = t else {
            return Err(cx.err(&place, "expected a task object"));
        };
        let instances = match field(t, "instance") {
            None => 1,
            Some(v) => {
                let k = num(&cx, &format!("{place}.instance"), v)?;
                if !(k >= 0.0 && k.fract() == 0.0 && k <= 4096.0) {
                    return Err(cx.err(
                        &format!("{place}.instance"),
                        format!("instance {k}: expected a whole number from 0 to 4096"),
                    ));
                }
                k as u64
            }
        };
        let task_loop = match field(t, "loop") {
            None => {
                return Err(cx.err(
                    &format!("{place}.loop"),
                    "no loop count: an rt-app task loops forever by default (loop -1); colab runs every task to the end of its loops, so give one",
                ))
            }
            Some(v) => loop_count(&cx, &format!("{place}.loop"), v)?,
        };
        let mut body = Vec::new();
        let skip = ["instance", "loop", "delay", "phases"];
        match field(t, "phases") {
            Some(Json::Obj(phases)) => {
                // Task-level attributes are still checked.
                let attrs: Vec<(String, Json)> = t
                    .iter()
                    .filter(|(k, _)| !skip.contains(&k.as_str()))
                    .cloned()
                    .collect();
                for (k, v) in &attrs {
                    if !attribute(&cx, &place, k, v)? {
                        return Err(cx.err(
                            &format!("{place}.{k}"),
                            "events go inside \"phases\" when a task has phases",
                        ));
                    }
                }
                for (pname, p) in phases {
                    let pplace = format!("{place}.phases.{pname}");
                    let Json::Obj(p) = p else {
                        return Err(cx.err(&pplace, "expected a phase object"));
                    };
                    let k = match field(p, "loop") {
                        None => 1,
                        Some(v) => loop_count(&cx, &format!("{pplace}.loop"), v)?,
                    };
                    let ev = events(&mut cx, &pplace, p, &["loop"], instances)?;
                    body.extend(repeat(k, ev));
                }
            }
            Some(_) => {
                return Err(cx.err(&format!("{place}.phases"), "expected an object of phases"))
            }
            None => body = events(&mut cx, &place, t, &skip, instances)?,
        }
        if instances == 0 {
            continue;
        }
        let group = format!("t{i}_{}", sanitise(tname));
        let mut ops = Vec::new();
        if let Some(d) = field(t, "delay") {
            let d = num(&cx, &format!("{place}.delay"), d)?;
            if d < 0.0 {
                return Err(cx.err(&format!("{place}.delay"), "must be zero or positive"));
            }
            if d > 0.0 {
                ops.push(OpSpec {
                    sleep: Some(us(d)),
                    ..OpSpec::default()
                });
            }
        }
        ops.extend(repeat(task_loop, body));
        if ops.is_empty() {
            return Err(cx.err(&place, "no events"));
        }
        threads.insert(group.clone(), ThreadSpec { ops });
        main_ops.push(OpSpec {
            spawn: Some(group.clone()),
            count: Some(Count::Int(instances as i64)),
            ..OpSpec::default()
        });
        joins.push(OpSpec {
            join: Some(group),
            ..OpSpec::default()
        });
        total += instances as i64;
    }
    if let Some((t, n)) = cx
        .timer_users
        .iter()
        .find(|(t, n)| **n > 1 && !t.starts_with("unique"))
    {
        return Err(cx.err(
            &format!("timer {t}"),
            format!("not modelled: a timer shared by {n} threads (colab's timers are per thread; rt-app's are too when the name starts with \"unique\")"),
        ));
    }
    main_ops.extend(joins);
    threads.insert("main".to_string(), ThreadSpec { ops: main_ops });
    Ok(ProgramSpec {
        name: name.to_string(),
        description: format!("rt-app task set {file}"),
        parallelism: "rt-app".to_string(),
        sync_rate: String::new(),
        comm_comp: String::new(),
        default_n: 1,
        threads_formula: Some(total.to_string()),
        mutex: cx
            .mutexes
            .iter()
            .map(|m| (m.clone(), Count::Int(1)))
            .collect(),
        barrier: cx
            .barriers
            .iter()
            .map(|(b, n)| (b.clone(), Count::Int(*n as i64)))
            .collect(),
        cond: cx.conds.clone(),
        timer: cx.timers.clone(),
        queue: BTreeMap::new(),
        thread: threads,
    })
}

fn global(cx: &Ctx, v: &Json) -> Result<(), WorkloadError> {
    let Json::Obj(g) = v else {
        return Err(cx.err("global", "expected an object"));
    };
    for (k, v) in g {
        let here = format!("global.{k}");
        match k.as_str() {
            k if IGNORED_GLOBALS.contains(&k) => {}
            "duration" => {
                if num(cx, &here, v)? != -1.0 {
                    return Err(cx.err(&here, "not modelled: a run duration (colab runs every task to the end of its loops; set -1 or drop it)"));
                }
            }
            "default_policy" => {
                if string(cx, &here, v)? != "SCHED_OTHER" {
                    return Err(cx.err(
                        &here,
                        "not modelled: scheduling classes other than SCHED_OTHER",
                    ));
                }
            }
            "pi_enabled" => {
                if *v != Json::Bool(false) {
                    return Err(cx.err(&here, "not modelled: priority inheritance"));
                }
            }
            _ => return Err(cx.err(&here, "unknown global key")),
        }
    }
    Ok(())
}

/// A task name as a thread group name (letters, digits and `_`).
fn sanitise(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// The colab program TOML of an rt-app task set (what `colab rt-app`
/// prints, to read or edit).
pub fn program_toml(name: &str, file: &str, text: &str) -> Result<String, WorkloadError> {
    let spec = program_spec(name, file, text)?;
    toml::to_string(&spec).map_err(|e| WorkloadError::Parse {
        file: file.to_string(),
        message: format!("writing the program as TOML: {e}"),
    })
}
