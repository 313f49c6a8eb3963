//! Property tests: random, deadlock-free workloads on random machines and
//! policies, checked against bounds computed from the generator's own model
//! (not from the compiled program), so a compiler bug cannot hide an engine bug.

use colab_core::{CoreId, CoreOrder, Topology};
use colab_sim::{simulate, SimConfig, SimResult};
use colab_workload::{Library, Workload};
use proptest::prelude::*;
use std::fmt::Write as _;

const TOPOLOGIES: [&str; 6] = ["1B1S", "2B2S", "2B4S", "4B2S", "1B3S", "4B"];
/// Every policy the library offers.
fn policies() -> Vec<&'static str> {
    colab_policies::POLICIES.iter().map(|(n, _)| *n).collect()
}

/// Big/little speedup in tenths (12..=31 is 1.2..3.1), printed exactly in TOML.
fn speedup_text(tenths: u32) -> String {
    format!("{}.{}", tenths / 10, tenths % 10)
}

/// Which mutex of the program's array a critical section takes.
#[derive(Clone, Copy, Debug)]
enum Index {
    First,
    Random,
    Thread,
}

#[derive(Clone, Debug)]
enum Step {
    Compute {
        us: u64,
        sp: u32,
    },
    Critical {
        us: u64,
        sp: u32,
        index: Index,
    },
    /// The group's own barrier, sized to the group.
    Barrier,
}

#[derive(Clone, Debug)]
struct GroupGen {
    size: u32,
    iters: u32,
    body: Vec<Step>,
}

/// One producer pushing `items` tokens, `consumers` threads popping until closed.
#[derive(Clone, Debug)]
struct PipeGen {
    items: u64,
    capacity: u32,
    consumers: u32,
    produce_us: u64,
    consume_us: u64,
    sp: u32,
    /// Consumers do their per-item work under a lock.
    consume_locked: bool,
}

#[derive(Clone, Debug)]
struct ProgGen {
    mutexes: u32,
    pre_us: u64,
    post_us: u64,
    sp: u32,
    groups: Vec<GroupGen>,
    pipe: Option<PipeGen>,
}

#[derive(Clone, Debug)]
struct Case {
    programs: Vec<ProgGen>,
    topo: &'static str,
    order: CoreOrder,
    policy: &'static str,
    seed: u64,
}

impl Step {
    fn work_us(&self) -> u64 {
        match self {
            Step::Compute { us, .. } | Step::Critical { us, .. } => *us,
            Step::Barrier => 0,
        }
    }
}

impl GroupGen {
    /// Every thread of the group runs the same script, so this is also each thread's work.
    fn thread_work_us(&self) -> u64 {
        self.iters as u64 * self.body.iter().map(Step::work_us).sum::<u64>()
    }
}

impl PipeGen {
    fn total_us(&self) -> u64 {
        self.items * (self.produce_us + self.consume_us)
    }
    /// The last item is consumed after the producer's last compute; some
    /// consumer takes at least ceil(items / consumers) items.
    fn critical_path_us(&self) -> u64 {
        let per_consumer = self.items.div_ceil(self.consumers as u64) * self.consume_us;
        (self.items * self.produce_us + self.consume_us).max(per_consumer)
    }
}

impl ProgGen {
    fn threads(&self) -> u32 {
        1 + self.groups.iter().map(|g| g.size).sum::<u32>()
            + self.pipe.as_ref().map_or(0, |p| 1 + p.consumers)
    }

    fn total_work_us(&self) -> u64 {
        self.pre_us
            + self.post_us
            + self
                .groups
                .iter()
                .map(|g| g.size as u64 * g.thread_work_us())
                .sum::<u64>()
            + self.pipe.as_ref().map_or(0, PipeGen::total_us)
    }

    /// main's work before spawning, the longest spawned chain, main's work after joining.
    fn critical_path_us(&self) -> u64 {
        let workers = self.groups.iter().map(GroupGen::thread_work_us).max();
        let pipe = self.pipe.as_ref().map(PipeGen::critical_path_us);
        self.pre_us + workers.unwrap_or(0).max(pipe.unwrap_or(0)) + self.post_us
    }

    fn toml(&self, name: &str) -> String {
        let mut s = format!("name = \"{name}\"\n");
        writeln!(s, "[mutex]\nm = {}", self.mutexes).unwrap();
        s.push_str("[barrier]\n");
        for (i, g) in self.groups.iter().enumerate() {
            writeln!(s, "b{i} = {}", g.size).unwrap();
        }
        if let Some(p) = &self.pipe {
            writeln!(
                s,
                "[queue]\nq = {{ capacity = {}, producers = 1 }}",
                p.capacity
            )
            .unwrap();
        }
        let sp = speedup_text(self.sp);
        let mut main = Vec::new();
        if self.pre_us > 0 {
            main.push(format!("{{ compute = {}, speedup = {sp} }}", self.pre_us));
        }
        for (i, g) in self.groups.iter().enumerate() {
            main.push(format!("{{ spawn = \"g{i}\", count = {} }}", g.size));
        }
        if let Some(p) = &self.pipe {
            main.push("{ spawn = \"prod\" }".into());
            main.push(format!("{{ spawn = \"cons\", count = {} }}", p.consumers));
        }
        for i in 0..self.groups.len() {
            main.push(format!("{{ join = \"g{i}\" }}"));
        }
        if self.pipe.is_some() {
            main.push("{ join = \"prod\" }".into());
            main.push("{ join = \"cons\" }".into());
        }
        if self.post_us > 0 {
            main.push(format!("{{ compute = {}, speedup = {sp} }}", self.post_us));
        }
        writeln!(s, "[thread.main]\nops = [ {} ]", main.join(", ")).unwrap();
        for (i, g) in self.groups.iter().enumerate() {
            let body: Vec<String> = g
                .body
                .iter()
                .map(|st| match st {
                    Step::Compute { us, sp } => {
                        format!("{{ compute = {us}, speedup = {} }}", speedup_text(*sp))
                    }
                    Step::Critical { us, sp, index } => {
                        let idx = match index {
                            Index::First => String::new(),
                            Index::Random => ", index = \"random\"".into(),
                            Index::Thread => ", index = \"thread\"".into(),
                        };
                        format!(
                            "{{ critical = \"m\", compute = {us}, speedup = {}{idx} }}",
                            speedup_text(*sp)
                        )
                    }
                    Step::Barrier => format!("{{ barrier = \"b{i}\" }}"),
                })
                .collect();
            writeln!(
                s,
                "[thread.g{i}]\nops = [ {{ loop = {}, body = [ {} ] }} ]",
                g.iters,
                body.join(", ")
            )
            .unwrap();
        }
        if let Some(p) = &self.pipe {
            let sp = speedup_text(p.sp);
            writeln!(
                s,
                "[thread.prod]\nops = [ {{ loop = {}, body = [ {{ compute = {}, speedup = {sp} }}, {{ push = \"q\" }} ] }}, {{ close = \"q\" }} ]",
                p.items, p.produce_us
            )
            .unwrap();
            let work = if p.consume_locked {
                format!(
                    "{{ critical = \"m\", index = \"random\", compute = {}, speedup = {sp} }}",
                    p.consume_us
                )
            } else {
                format!("{{ compute = {}, speedup = {sp} }}", p.consume_us)
            };
            writeln!(
                s,
                "[thread.cons]\nops = [ {{ loop = \"until-closed\", body = [ {{ pop = \"q\" }}, {work} ] }} ]"
            )
            .unwrap();
        }
        s
    }
}

impl Case {
    fn workload(&self) -> Workload {
        let mut lib = Library::default();
        let mut programs = Vec::new();
        for (i, p) in self.programs.iter().enumerate() {
            let text = p.toml(&format!("p{i}"));
            let name = lib
                .add_program_text(&format!("p{i}.toml"), &text)
                .unwrap_or_else(|e| panic!("generated program does not compile: {e}\n{text}"));
            programs.push(lib.program(&name, None).unwrap());
        }
        Workload {
            name: "generated".into(),
            classes: Vec::new(),
            source: String::new(),
            programs,
        }
    }

    fn topology(&self) -> Topology {
        Topology::named(self.topo, self.order).unwrap()
    }

    fn run(&self, w: &Workload) -> SimResult {
        let mut pol = colab_policies::by_name(self.policy).unwrap();
        let cfg = SimConfig {
            seed: self.seed,
            ..SimConfig::default()
        };
        simulate(w, &self.topology(), pol.as_mut(), &cfg).unwrap_or_else(|e| {
            let texts: Vec<String> = (0..self.programs.len())
                .map(|i| self.programs[i].toml(&format!("p{i}")))
                .collect();
            panic!("simulation failed: {e}\n{}", texts.join("\n"))
        })
    }
}

fn speedup() -> impl Strategy<Value = u32> {
    12u32..=31
}

fn step() -> impl Strategy<Value = Step> {
    let index = prop_oneof![Just(Index::First), Just(Index::Random), Just(Index::Thread)];
    prop_oneof![
        3 => (1u64..=3000, speedup()).prop_map(|(us, sp)| Step::Compute { us, sp }),
        2 => (1u64..=800, speedup(), index).prop_map(|(us, sp, index)| Step::Critical { us, sp, index }),
        1 => Just(Step::Barrier),
    ]
}

fn group() -> impl Strategy<Value = GroupGen> {
    (1u32..=4, 1u32..=4, prop::collection::vec(step(), 1..=4))
        .prop_map(|(size, iters, body)| GroupGen { size, iters, body })
}

fn pipe() -> impl Strategy<Value = PipeGen> {
    (
        1u64..=12,
        1u32..=4,
        1u32..=3,
        1u64..=1500,
        1u64..=1500,
        speedup(),
        any::<bool>(),
    )
        .prop_map(
            |(items, capacity, consumers, produce_us, consume_us, sp, consume_locked)| PipeGen {
                items,
                capacity,
                consumers,
                produce_us,
                consume_us,
                sp,
                consume_locked,
            },
        )
}

fn program() -> impl Strategy<Value = ProgGen> {
    (
        1u32..=4,
        0u64..=3000,
        0u64..=3000,
        speedup(),
        prop::collection::vec(group(), 1..=4),
        prop::option::of(pipe()),
    )
        .prop_map(|(mutexes, pre_us, post_us, sp, groups, pipe)| ProgGen {
            mutexes,
            pre_us,
            post_us,
            sp,
            groups,
            pipe,
        })
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec(program(), 1..=3),
        prop::sample::select(TOPOLOGIES.to_vec()),
        prop::sample::select(CoreOrder::BOTH.to_vec()),
        prop::sample::select(policies()),
        any::<u64>(),
    )
        .prop_map(|(programs, topo, order, policy, seed)| Case {
            programs,
            topo,
            order,
            policy,
            seed,
        })
}

/// Float slack for bounds derived from rates: the big core's rate(m) is 1.0
/// only up to rounding, and preempted segments are accounted in f64.
fn slack(ns: f64) -> f64 {
    ns * 1e-9 + 2.0
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn generated_workloads_satisfy_the_invariants(c in case()) {
        let w = c.workload();
        let topo = c.topology();
        // Property 1: the run finishes (run() panics with the spec on any error).
        let r = c.run(&w);

        // Property 2: same inputs, same bytes.
        let again = c.run(&w);
        prop_assert_eq!(
            serde_json::to_string(&r).unwrap(),
            serde_json::to_string(&again).unwrap()
        );

        // The compiler agrees with the generator on thread counts.
        for (p, res) in c.programs.iter().zip(&r.programs) {
            prop_assert_eq!(res.threads, p.threads(), "{}", res.name);
        }

        // Property 3: no core is faster than the reference big core, so the
        // cores were busy at least as long as the work takes there.
        prop_assert_eq!(r.core_busy_ns.len(), topo.num_cores());
        let work_ns: f64 = c.programs.iter().map(|p| p.total_work_us() as f64 * 1e3).sum();
        let busy: f64 = r.core_busy_ns.iter().map(|&b| b as f64).sum();
        prop_assert!(
            busy + slack(work_ns) >= work_ns,
            "busy {} ns < work {} ns", busy, work_ns
        );
        for (i, &b) in r.core_busy_ns.iter().enumerate() {
            prop_assert!(b <= r.makespan_ns, "core {} busy {} > makespan {}", i, b, r.makespan_ns);
        }

        // Property 4: a program cannot beat its critical path at full speed.
        for (p, res) in c.programs.iter().zip(&r.programs) {
            let cp = p.critical_path_us() as f64 * 1e3;
            prop_assert!(
                res.turnaround_ns as f64 + slack(cp) >= cp,
                "{}: turnaround {} < critical path {}", res.name, res.turnaround_ns, cp
            );
        }

        // Property 5: makespan is the last program end; ends follow starts.
        let last = r.programs.iter().map(|p| p.end_ns).max().unwrap();
        prop_assert_eq!(r.makespan_ns, last);
        for p in &r.programs {
            prop_assert!(p.end_ns >= p.start_ns, "{}: end {} < start {}", p.name, p.end_ns, p.start_ns);
            prop_assert_eq!(p.turnaround_ns, p.end_ns - p.start_ns);
        }

        // Property 6: energy lies between all-idle and all-active power.
        let cores: Vec<_> = (0..topo.num_cores()).map(|i| topo.core_type(CoreId(i as u16))).collect();
        let idle: f64 = cores.iter().map(|t| t.idle_power_w).sum();
        let active: f64 = cores.iter().map(|t| t.active_power_w).sum();
        let secs = r.makespan_ns as f64 * 1e-9;
        prop_assert!(r.energy_j > 0.0, "energy {}", r.energy_j);
        prop_assert!(
            r.energy_j >= secs * idle * (1.0 - 1e-12) && r.energy_j <= secs * active * (1.0 + 1e-12),
            "energy {} J outside [{}, {}]", r.energy_j, secs * idle, secs * active
        );

        // Every futex wait ends in a wake-up once everything has finished
        // (the generator never sleeps, and sleeps are not futex waits anyway).
        prop_assert_eq!(r.stats.futex_waits, r.stats.futex_wakes);
    }

    #[test]
    fn expression_evaluator_never_panics(
        src in prop_oneof![any::<String>(), "[0-9n+*/(). -]{0,40}"],
        n in any::<i64>(),
    ) {
        // Any outcome is fine as long as it is a value, not a panic.
        let _ = colab_workload::expr::eval(&src, n);
    }
}

/// Property 7: a barrier that cannot fill up is a compile error, not a hang.
#[test]
fn oversized_barrier_is_rejected_at_compile_time() {
    let text = r#"
name = "x"
[barrier]
b = 5
[thread.main]
ops = [ { spawn = "w", count = 3 }, { join = "w" } ]
[thread.w]
ops = [ { compute = 100, speedup = 2.0 }, { barrier = "b" } ]
"#;
    let e = Library::default()
        .add_program_text("x.toml", text)
        .unwrap_err();
    let msg = e.to_string();
    assert!(
        matches!(e, colab_workload::WorkloadError::Invalid { .. }) && msg.contains("barrier.b"),
        "{msg}"
    );
    // The same barrier with a count the workers can reach compiles.
    let ok = text.replace("b = 5", "b = 3");
    Library::default().add_program_text("x.toml", &ok).unwrap();
}

/// Property 8: two threads on one lock with a long critical section must
/// contend. main exits without joining so its join cannot be the wait counted.
#[test]
fn contended_mutex_counts_futex_waits() {
    let text = r#"
name = "x"
[mutex]
m = 1
[thread.main]
ops = [ { spawn = "w", count = 2 } ]
[thread.w]
ops = [ { critical = "m", compute = 20000, speedup = 2.0 } ]
"#;
    let mut lib = Library::default();
    let name = lib.add_program_text("x.toml", text).unwrap();
    let w = lib.single(&name, None).unwrap();
    for topo in TOPOLOGIES {
        for order in CoreOrder::BOTH {
            for policy in policies() {
                let t = Topology::named(topo, order).unwrap();
                let mut p = colab_policies::by_name(policy).unwrap();
                let r = simulate(&w, &t, p.as_mut(), &SimConfig::default())
                    .unwrap_or_else(|e| panic!("{topo} {order:?} {policy}: {e}"));
                let s = &r.stats;
                assert!(s.futex_waits >= 1, "{topo} {order:?} {policy}: {s:?}");
                assert_eq!(s.futex_waits, s.futex_wakes, "{topo} {order:?} {policy}");
                // The two 20 ms sections are serialised.
                assert!(
                    r.programs[0].turnaround_ns >= 40_000_000,
                    "{topo} {order:?} {policy}: {}",
                    r.programs[0].turnaround_ns
                );
            }
        }
    }
}

/// Found while writing the evaluator property: the parser recursed once per
/// '(' or unary '-' without a bound, so a long enough expression overflowed
/// the stack. Now nesting is capped and reported.
#[test]
fn deeply_nested_expression_is_an_error_not_a_crash() {
    let depth = 100_000;
    let parens = "(".repeat(depth) + "1" + &")".repeat(depth);
    let e = colab_workload::expr::eval(&parens, 1).unwrap_err();
    assert!(e.contains("nested more than"), "{e}");
    let minus = "-".repeat(depth) + "1";
    assert!(colab_workload::expr::eval(&minus, 1).is_err());
    // Reasonable nesting still works.
    assert_eq!(colab_workload::expr::eval("((((n))))", 3), Ok(3));
}
