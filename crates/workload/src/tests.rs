use super::*;

fn lib_with(text: &str) -> Result<String, WorkloadError> {
    Library::default().add_program_text("t.toml", text)
}

const OK: &str = r#"
name = "p"
default_n = 2
threads_formula = "1+n"
[mutex]
m = 4
[barrier]
b = "n"
[thread.main]
ops = [ { spawn = "w", count = "n" }, { join = "w" } ]
[thread.w]
ops = [ { loop = 3, body = [
  { compute = 10, speedup = 2.0 },
  { critical = "m", index = "random", compute = 1, mem_frac = 0.5 },
  { barrier = "b" } ] } ]
"#;

#[test]
fn compiles_and_counts_threads() {
    let mut lib = Library::default();
    lib.add_program_text("t.toml", OK).unwrap();
    let p = lib.program("p", Some(5)).unwrap();
    assert_eq!(p.total_threads, 6);
    assert_eq!(p.barriers[0].1, 5);
    assert_eq!(p.num_mutexes, 4);
    // loop, compute, lock, compute, unlock, barrier, endloop
    assert_eq!(p.groups[1].ops.len(), 7);
    assert!(matches!(
        p.groups[1].ops[0],
        Op::Loop {
            count: LoopCount::Times(3),
            end: 6
        }
    ));
    assert!(matches!(p.groups[1].ops[6], Op::EndLoop { start: 0 }));
    match p.groups[1].ops[1] {
        Op::Compute { work, mem_frac, .. } => {
            assert_eq!(work, 10_000.0);
            assert!((reference_speedup(mem_frac) - 2.0).abs() < 1e-9);
        }
        ref o => panic!("{o:?}"),
    }
}

fn problem(text: &str) -> String {
    lib_with(text).unwrap_err().to_string()
}

#[test]
fn rejects_negative_work() {
    let e = problem(&OK.replace("compute = 10,", "compute = -10,"));
    assert!(
        e.contains("t.toml: thread.w.ops[0].body[0]: compute of -10"),
        "{e}"
    );
}

#[test]
fn rejects_unreachable_barrier() {
    let e = problem(&OK.replace("b = \"n\"", "b = \"n+1\""));
    assert!(e.contains("barrier.b") && e.contains("never open"), "{e}");
}

#[test]
fn rejects_unlock_not_held() {
    let text = OK.replace(
        "{ barrier = \"b\" } ] } ]",
        "{ barrier = \"b\" }, { unlock = \"m\" } ] } ]",
    );
    let e = problem(&text);
    assert!(
        e.contains("unlock of mutex 'm' that this thread does not hold"),
        "{e}"
    );
}

#[test]
fn rejects_unknown_names_and_verbs() {
    assert!(problem(&OK.replace("critical = \"m\"", "critical = \"q\""))
        .contains("unknown mutex array 'q' (declared: m)"));
    assert!(
        problem(&OK.replace("spawn = \"w\"", "spawn = \"x\"")).contains("unknown thread group 'x'")
    );
    let e = problem(&OK.replace("{ barrier = \"b\" }", "{ barrier = \"b\", signal = \"c\" }"));
    assert!(e.contains("more than one operation"), "{e}");
    let e = problem(&OK.replace("{ barrier = \"b\" }", "{ }"));
    assert!(e.contains("no operation"), "{e}");
    let e = problem(&OK.replace("speedup = 2.0", "speedup = 9.0"));
    assert!(
        e.contains("outside what the reference cores can show"),
        "{e}"
    );
    let e = problem(&OK.replace("threads_formula = \"1+n\"", "threads_formula = \"2+n\""));
    assert!(e.contains("spec creates 3"), "{e}");
}

#[test]
fn malformed_toml_names_file_and_line() {
    let e = problem("name = \"x\"\n[thread.main\nops = []");
    assert!(e.starts_with("t.toml:") && e.contains("line 2"), "{e}");
    let e = problem("name = \"x\"\nbogus = 1\n[thread.main]\nops=[]");
    assert!(e.contains("unknown field `bogus`"), "{e}");
    let e = problem("name = \"x\"\n[thread.w]\nops=[{compute=1, speedup=2}]");
    assert!(e.contains("no [thread.main]"), "{e}");
}

#[test]
fn pop_needs_until_closed_loop() {
    let text = r#"
name = "pipe"
[queue]
q = { capacity = 2 }
[thread.main]
ops = [ { spawn = "c" }, { push = "q" }, { close = "q" }, { join = "c" } ]
[thread.c]
ops = [ { pop = "q" } ]
"#;
    assert!(problem(text).contains("must be inside a loop = \"until-closed\""));
    let good = text.replace(
        "ops = [ { pop = \"q\" } ]",
        "ops = [ { loop = \"until-closed\", body = [ { pop = \"q\" } ] } ]",
    );
    lib_with(&good).unwrap();
}

#[test]
fn builtin_library_loads_and_every_mix_resolves() {
    let lib = Library::builtin();
    assert!(lib.benchmarks.contains_key("blackscholes"));
    for m in &lib.mixes {
        let w = lib.mix(&m.name).unwrap();
        assert!(!w.programs.is_empty());
    }
}

#[test]
fn resolve_forms() {
    let mut lib = Library::builtin();
    assert_eq!(lib.resolve("blackscholes:3").unwrap().total_threads(), 4);
    assert!(matches!(
        lib.resolve("nonesuch"),
        Err(WorkloadError::Unknown { .. })
    ));
    assert!(lib
        .resolve("blackscholes:x")
        .unwrap_err()
        .to_string()
        .contains("not a thread count"));
    let e = lib
        .resolve("/nonexistent/file.toml")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("/nonexistent/file.toml:"), "{e}");
}
