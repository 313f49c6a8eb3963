//! `colab sim` given bad input (unknown names, broken or impossible workload
//! files, deadlocking programs): a non-zero exit and one message naming the
//! file, the place and the problem, never a panic or a hang.

mod common;

use common::{assert_fails_with_usage, fails, ok, run, s, tempdir, write};
use std::path::Path;

#[test]
fn unknown_benchmark() {
    fails(
        &["sim", "nosuchbench"],
        &["unknown workload", "'nosuchbench'", "colab list"],
    );
}

#[test]
fn unknown_policy() {
    fails(
        &["sim", "ferret", "-p", "fifo"],
        &["unknown policy 'fifo'", "cfs", "wash", "colab"],
    );
}

#[test]
fn bad_policy_names_and_weights() {
    fails(
        &["bench", "--policies", "cfs,fifo"],
        &["--policies fifo", "unknown policy 'fifo'"],
    );
    fails(
        &["sim", "ferret", "--policy", "colab-e:1:abc"],
        &[
            "colab-e:1:abc",
            "energy weight 'abc' is not a finite number",
        ],
    );
}

#[test]
fn bad_thread_counts() {
    fails(
        &["sim", "ferret:x"],
        &["ferret:x", "'x' is not a thread count"],
    );
    fails(&["sim", "ferret:"], &["ferret:", "is not a thread count"]);
    fails(&["sim", "ferret:0"], &["ferret", "n = 0", "at least 1"]);
    fails(&["sim", "ferret:-3"], &["ferret", "n = -3", "at least 1"]);
    fails(&["sim", "nosuch:4"], &["unknown workload", "nosuch"]);
}

#[test]
fn negative_compute_work() {
    let dir = tempdir();
    let f = write(
        dir.path(),
        "neg_work.toml",
        r#"
name = "neg"
[thread.main]
ops = [
  { compute = 100, speedup = 2.0 },
  { loop = 2, body = [ { compute = 10, speedup = 2.0 }, { compute = -5, speedup = 2.0 } ] },
]
"#,
    );
    fails(
        &["sim", s(&f)],
        &[
            "neg_work.toml",
            "thread.main.ops[1].body[1]",
            "-5",
            "work must be zero or positive",
        ],
    );
}

#[test]
fn barrier_no_thread_set_can_reach() {
    let dir = tempdir();
    let f = write(
        dir.path(),
        "lonely_barrier.toml",
        r#"
name = "lonely"
default_n = 2
[barrier]
all = "n+1"
[thread.main]
ops = [ { spawn = "w", count = "n" }, { join = "w" } ]
[thread.w]
ops = [ { compute = 100, speedup = 2.0 }, { barrier = "all" } ]
"#,
    );
    fails(
        &["sim", s(&f)],
        &[
            "lonely_barrier.toml",
            "barrier.all",
            "3 threads",
            "never open",
        ],
    );
}

const UNLOCK_NOT_HELD: &str = r#"
name = "bad_unlock"
[mutex]
m = 1
[thread.main]
ops = [
  { critical = "m", compute = 10, speedup = 2.0 },
  { loop = 2, body = [ { compute = 10, speedup = 2.0 }, { unlock = "m" } ] },
]
"#;

#[test]
fn unlock_of_a_mutex_not_held() {
    let dir = tempdir();
    let f = write(dir.path(), "bad_unlock.toml", UNLOCK_NOT_HELD);
    fails(
        &["sim", s(&f)],
        &[
            "bad_unlock.toml",
            "thread.main",
            "unlock of mutex 'm'",
            "does not hold",
        ],
    );
}

#[test]
fn unlock_of_a_mutex_not_held_names_the_step() {
    let dir = tempdir();
    let f = write(dir.path(), "bad_unlock.toml", UNLOCK_NOT_HELD);
    fails(
        &["sim", s(&f)],
        &["bad_unlock.toml", "thread.main.ops[1].body[1]"],
    );
}

#[test]
fn malformed_toml_names_the_file_and_line() {
    let dir = tempdir();
    let f = write(
        dir.path(),
        "broken.toml",
        "name = \"broken\"\n[thread.main]\nops = [ { compute = 10, speedup = 2.0 }\n",
    );
    fails(&["sim", s(&f)], &["broken.toml", "line 3"]);
    let t = write(
        dir.path(),
        "broken_topo.toml",
        "name = \"x\"\n\n[[core_types]\n",
    );
    fails(
        &["sim", "mcf", "-t", s(&t)],
        &["broken_topo.toml", "line 3"],
    );
    fails(&["topology", s(&t)], &["broken_topo.toml", "line 3"]);
    // Valid TOML, but a field the format does not have.
    let f = write(
        dir.path(),
        "typo.toml",
        "name = \"typo\"\n[thread.main]\nops = [ { compute = 10, sppedup = 2.0 } ]\n",
    );
    fails(&["sim", s(&f)], &["typo.toml", "sppedup"]);
}

#[test]
fn too_many_cores() {
    fails(
        &["sim", "mcf", "-t", "600B600S"],
        &["600B600S", "1200 cores", "1024"],
    );
}

#[test]
fn nonexistent_files() {
    let dir = tempdir();
    let w = dir.path().join("missing_workload.toml");
    let r = fails(&["sim", s(&w)], &["missing_workload.toml", "No such file"]);
    assert_eq!(
        r.stderr.matches("No such file").count(),
        1,
        "the cause is repeated:\n{}",
        r.stderr
    );
    let t = dir.path().join("missing_machine.toml");
    let r = fails(
        &["sim", "mcf", "-t", s(&t)],
        &["missing_machine.toml", "No such file"],
    );
    assert_eq!(r.stderr.matches("No such file").count(), 1, "{}", r.stderr);
    fails(
        &["topology", s(&t)],
        &["missing_machine.toml", "No such file"],
    );
    // A directory is not a workload file.
    fails(&["sim", s(dir.path())], &[s(dir.path())]);
}

#[test]
fn mix_file_problems() {
    let dir = tempdir();
    let m = write(
        dir.path(),
        "bad_mix.toml",
        "[[mix]]\nname = \"m\"\nprograms = [ { bench = \"ferret\", n = 1 }, { bench = \"nosuch\" } ]\n",
    );
    fails(
        &["sim", s(&m)],
        &[
            "bad_mix.toml",
            "mix 'm' program 2",
            "unknown benchmark 'nosuch'",
        ],
    );
    let m = write(
        dir.path(),
        "count_mix.toml",
        "[[mix]]\nname = \"c\"\nthreads = 5\nprograms = [ { bench = \"ferret\", n = 1 } ]\n",
    );
    fails(
        &["sim", s(&m)],
        &["count_mix.toml", "mix 'c'", "5 threads", "7"],
    );
}

#[test]
fn lost_signal_deadlock_is_reported_not_hung() {
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sim/tests/fixtures/lost_signal.toml");
    // `run` kills the child and fails after 30 s.
    fails(
        &["sim", s(&f), "-p", "cfs"],
        &[
            "deadlock",
            "lost_signal",
            "lost_signal / waiter#0",
            "condition variable 'ready'",
            "lost_signal / main#0",
            "join of group 'waiter'",
        ],
    );
    // Under the other policies too.
    fails(
        &["sim", s(&f), "-p", "colab"],
        &["deadlock", "condition variable 'ready'"],
    );
    fails(
        &["sim", s(&f), "-p", "wash"],
        &["deadlock", "condition variable 'ready'"],
    );
}

#[test]
fn lock_order_deadlock_names_the_mutexes_and_holders() {
    let dir = tempdir();
    let f = write(
        dir.path(),
        "abba.toml",
        r#"
name = "abba"
[mutex]
a = 1
b = 1
[thread.main]
ops = [ { spawn = "w" }, { lock = "a" }, { compute = 1000, speedup = 2.0 }, { lock = "b" },
        { unlock = "b" }, { unlock = "a" }, { join = "w" } ]
[thread.w]
ops = [ { lock = "b" }, { compute = 1000, speedup = 2.0 }, { lock = "a" }, { unlock = "a" }, { unlock = "b" } ]
"#,
    );
    fails(
        &["sim", s(&f), "-t", "2B2S"],
        &[
            "deadlock",
            "waits on mutex 'a'",
            "waits on mutex 'b'",
            "held by thread",
        ],
    );
}

#[test]
fn near_misses_are_named_and_odd_machines_refused_or_explained() {
    fails(
        &["sim", "ferrett"],
        &["unknown workload 'ferrett' (did you mean 'ferret'?)"],
    );
    fails(&["sim", "Sync2"], &["(did you mean 'Sync-2'?)"]);
    fails(
        &["sim", "fft", "-p", "rotaa"],
        &["unknown policy 'rotaa' (did you mean 'rota'?)"],
    );
    fails(
        &["sim", "fft", "-t", "hikey97"],
        &["(did you mean 'hikey970'?)"],
    );
    // Nothing near: no suggestion.
    let far = fails(&["sim", "zzzzzz"], &["unknown workload 'zzzzzz'"]);
    assert!(!far.stderr.contains("did you mean"), "{}", far.stderr);
    // A cluster of no cores is refused, not dropped.
    let dir = tempdir();
    let zero = write(
        dir.path(),
        "zero.toml",
        "[[core_types]]\nname = \"big\"\ncompute_rate = 1.0\nmemory_rate = 1.0\nactive_power_w = 1.0\nidle_power_w = 0.05\n\
         [[core_types]]\nname = \"little\"\ncompute_rate = 0.5\nmemory_rate = 0.8\nactive_power_w = 0.3\nidle_power_w = 0.02\n\
         [[clusters]]\ncore_type = \"big\"\ncores = 0\n[[clusters]]\ncore_type = \"little\"\ncores = 2\n",
    );
    fails(
        &["sim", "fft", "-t", s(&zero)],
        &["cluster 'big0' has cores = 0"],
    );
    // One core type: what alone-big means there is said.
    let r = ok(&["sim", "fft", "-t", "0B2S"]);
    assert!(
        r.stderr.contains("has one core type: alone-big (T_SB)"),
        "{}",
        r.stderr
    );
    let r = ok(&["sim", "fft", "-t", "2B2S"]);
    assert!(!r.stderr.contains("one core type"), "{}", r.stderr);
}

#[test]
fn negative_numbers_are_values_refused_by_their_option() {
    // Read as the option's value, not as an unknown flag `-1`, and refused
    // naming the option.
    for (args, option) in [
        (&["sim", "fft", "--seed", "-1"][..], "'--seed <SEED>'"),
        (
            &["reproduce", "--quick", "--seeds", "-2"][..],
            "'--seeds <SEEDS>'",
        ),
        (
            &["compare", "fft", "-p", "cfs", "--seeds", "-1"][..],
            "'--seeds <SEEDS>'",
        ),
        (&["mixes", "--random", "-3"][..], "'--random <N>'"),
    ] {
        let r = run(args);
        assert_fails_with_usage(&r, option);
        assert!(!r.stderr.contains("unexpected argument"), "{}", r.stderr);
    }
    let r = run(&["sim", "fft", "--seed", "-1"]);
    assert!(
        r.stderr
            .contains("a negative number, where a whole number (0 or more) is wanted"),
        "{}",
        r.stderr
    );
    fails(
        &["sim", "fft", "--time-limit", "-1"],
        &["--time-limit -1: must be between"],
    );
    // Speedups of replayed compute: refused by the option, before any file
    // is read, and only with the traces they apply to.
    for args in [
        &["sim", "--trace", "nosuch.trace", "--speedup", "-2"][..],
        &["sim", "--trace", "nosuch.trace", "--thread-speedup", "a=-2"][..],
        &["reproduce", "--trace", "nosuch.trace", "--speedup", "-1"][..],
    ] {
        let r = run(args);
        assert_fails_with_usage(&r, "speedup -");
        assert!(
            r.stderr
                .contains("outside what the reference cores can show"),
            "{}",
            r.stderr
        );
    }
    let r = run(&["reproduce", "--quick", "--speedup", "1.5"]);
    assert_fails_with_usage(&r, "--trace <FILE>");
}
