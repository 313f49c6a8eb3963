//! The kfuncs and helpers added to the host for scx_bpfland 1.1.4, each on
//! a hand-built situation with a hand-computed outcome, through the kfunc
//! test scheduler (tests/bpf/kfuncs.bpf.c): its syscall programs run by the
//! user side before it attaches (as BPF_PROG_RUN), its callbacks in a
//! simulation. Machines have no switch or migration cost and a 4 ms tick;
//! CPU 0 is big on 1B1S.

mod common;
use colab_core::Policy;
use colab_scx_host::testing::{kfuncs, SyscallLog};
use colab_sim::{simulate, SimConfig, SimError, SimResult};
use colab_workload::Workload;
use common::{machine, workload, MS};

const EBUSY: i32 = 16;

/// One thread computing 1 ms.
fn tiny() -> Workload {
    workload("name = \"t\"\n[thread.main]\nops = [ { compute = 1000, mem_frac = 0.0 } ]")
}

fn run(
    w: &Workload,
    topo: &str,
    globals: &[(&str, Vec<u8>)],
    syscalls: &[(&str, Vec<u8>)],
) -> (
    Result<SimResult, SimError>,
    colab_scx_host::Hosted,
    SyscallLog,
) {
    let (mut h, log) = kfuncs(globals, syscalls).unwrap();
    let r = simulate(
        w,
        &machine(topo),
        &mut h as &mut dyn Policy,
        &SimConfig::default(),
    );
    (r, h, log)
}

fn on() -> Vec<u8> {
    vec![1]
}
fn u64v(x: u64) -> Vec<u8> {
    x.to_ne_bytes().to_vec()
}
fn words(v: &[u8]) -> Vec<u32> {
    v.chunks(4)
        .map(|c| u32::from_ne_bytes(c.try_into().unwrap()))
        .collect()
}

/// What the scheduler recorded for one task (struct rec).
#[derive(Debug, Default, Clone, Copy)]
struct Rec {
    enq_total: u32,
    enq_wakeup: u32,
    enq_cpu_selected: u32,
    enq_running: u32,
    sel_ret: i32,
    direct: u32,
    max_tick_slice: u64,
    first_run_ns: u64,
    first_cpu: i32,
    online: u32,
    sel_last: i32,
}

fn rec(h: &colab_scx_host::Hosted, pid: u32) -> Rec {
    let u32_at = |v: &[u8], o: usize| u32::from_ne_bytes(v[o..o + 4].try_into().unwrap());
    let u64_at = |v: &[u8], o: usize| u64::from_ne_bytes(v[o..o + 8].try_into().unwrap());
    h.map_entries("recs")
        .into_iter()
        .find(|(k, _)| u32_at(k, 0) == pid)
        .map(|(_, v)| Rec {
            enq_total: u32_at(&v, 0),
            enq_wakeup: u32_at(&v, 4),
            enq_cpu_selected: u32_at(&v, 8),
            enq_running: u32_at(&v, 12),
            sel_ret: u32_at(&v, 16) as i32,
            direct: u32_at(&v, 20),
            max_tick_slice: u64_at(&v, 24),
            first_run_ns: u64_at(&v, 32),
            first_cpu: u32_at(&v, 40) as i32,
            online: u32_at(&v, 52),
            sel_last: u32_at(&v, 56) as i32,
        })
        .unwrap_or_else(|| panic!("no record of pid {pid}"))
}

fn note(h: &colab_scx_host::Hosted, key: u32) -> Option<u64> {
    h.map_entries("notes")
        .into_iter()
        .find(|(k, _)| u32::from_ne_bytes(k[..4].try_into().unwrap()) == key)
        .map(|(_, v)| u64::from_ne_bytes(v[..8].try_into().unwrap()))
}

/// The one syscall program's (return value, argument words) after the run.
fn syscall(log: &SyscallLog) -> (i32, Vec<u8>) {
    let l = log.lock().unwrap();
    assert_eq!(l.len(), 1, "{l:?}");
    (l[0].1, l[0].2.clone())
}

#[test]
fn cpumask_kfuncs_set_clear_and_or_copy_as_the_kernel() {
    // bpf_cpumask_* (kernel/bpf/cpumask.c): set_cpu / clear_cpu ignore a CPU
    // >= nr_cpu_ids (here 4), and returns whether the result has a CPU.
    let (r, _, log) = run(&tiny(), "2B2S", &[], &[("cpumask_ops", vec![0; 48])]);
    r.unwrap();
    let (ret, out) = syscall(&log);
    assert_eq!(ret, 0);
    let w = words(&out);
    // weight_set, first_set, weight_cleared, empty_after_clear, and_nonempty,
    // and_weight, and_first, and_disjoint, or_weight, copy_first,
    // copy_weight, done
    assert_eq!(w, vec![2, 0, 1, 1, 1, 1, 2, 1, 2, 3, 1, 1]);
}

#[test]
fn a_cpumask_lives_while_it_has_references() {
    // create gives one reference, acquire another: two releases free it, a
    // third is of a mask that no longer exists and ends the run.
    let (r, _, log) = run(&tiny(), "1B", &[], &[("cpumask_refs", vec![0; 4])]);
    r.unwrap();
    assert_eq!(syscall(&log).0, 0);
    let (r, _, _) = run(&tiny(), "1B", &[], &[("cpumask_refs", vec![1, 0, 0, 0])]);
    let e = r.unwrap_err().to_string();
    assert!(e.contains("not a live bpf_cpumask"), "{e}");
}

#[test]
fn kptr_xchg_hands_back_what_the_kptr_held() {
    let (r, _, log) = run(&tiny(), "1B", &[], &[("kptr_xchg", vec![0; 12])]);
    r.unwrap();
    let (ret, out) = syscall(&log);
    assert_eq!(ret, 0);
    assert_eq!(words(&out), vec![1, 1, 1]);
}

#[test]
fn percpu_lookup_reaches_each_cpus_copy() {
    // Each CPU's copy written through bpf_map_lookup_percpu_elem reads back;
    // CPU nr_cpu_ids has none; a plain lookup from CPU 0 (a syscall program
    // runs there here) sees CPU 0's.
    let (r, _, log) = run(&tiny(), "2B2S", &[], &[("percpu_lookup", vec![0; 48])]);
    r.unwrap();
    let (ret, out) = syscall(&log);
    assert_eq!(ret, 0);
    let q: Vec<u64> = out
        .chunks(8)
        .map(|c| u64::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(&q[..4], &[100, 101, 102, 103]);
    assert_eq!(q[4] as u32, 1, "CPU nr_cpu_ids: NULL");
    assert_eq!(q[5], 100);
    // On a map that is not per-CPU the verifier would refuse the program.
    let mut arg = vec![0u8; 48];
    arg[36] = 1;
    let (r, _, _) = run(&tiny(), "2B2S", &[], &[("percpu_lookup", arg)]);
    let e = r.unwrap_err().to_string();
    assert!(e.contains("not per-CPU"), "{e}");
}

#[test]
fn every_cpu_is_online_and_shares_one_llc() {
    let (r, h, log) = run(&tiny(), "2B2S", &[], &[("topology", vec![0; 24])]);
    r.unwrap();
    // Busy CPUs are online too (main was running on one).
    assert_eq!(rec(&h, 1).online, 4);
    let (ret, out) = syscall(&log);
    assert_eq!(ret, 0);
    let w: Vec<i32> = words(&out).into_iter().map(|x| x as i32).collect();
    // online weight 4; LLC ids (the first CPU of the LLC) 0, 0, 0, 0; CPU 4: -EINVAL
    assert_eq!(w, vec![4, 0, 0, 0, 0, -22]);
}

/// Main (pid 1) computes 5 ms on CPU 0 and forks a worker (pid 2) at once,
/// whose select_cpu asks scx_bpf_select_cpu_and with `allowed` (None: its
/// own CPUs): what it answered first for main and for the worker, and the
/// worker's direct dispatches.
fn worker_select(allowed: Option<u64>) -> (i32, i32, u32) {
    let w = workload(
        "name = \"s\"\n[thread.main]\nops = [ { spawn = \"w\" }, \
         { compute = 5000, mem_frac = 0.0 }, { join = \"w\" } ]\n\
         [thread.w]\nops = [ { compute = 1000, mem_frac = 0.0 } ]",
    );
    let mut g = vec![("select_and", on())];
    if let Some(bits) = allowed {
        g.push(("use_allowed", on()));
        g.push(("allowed_bits", u64v(bits)));
    }
    let (r, h, _) = run(&w, "1B1S", &g, &[]);
    r.unwrap();
    let m = rec(&h, 1);
    let wk = rec(&h, 2);
    (m.sel_ret, wk.sel_ret, wk.direct)
}

#[test]
fn select_cpu_and_claims_an_idle_cpu_within_the_mask() {
    // Main: CPU 0 (its previous CPU, idle at start). The worker's previous
    // CPU is its parent's, busy: CPU 1, idle, when allowed.
    assert_eq!(worker_select(None), (0, 1, 1));
    assert_eq!(worker_select(Some(0b11)), (0, 1, 1));
    // Only CPU 0 allowed: busy with main, so none for the worker.
    assert_eq!(worker_select(Some(0b01)), (0, -EBUSY, 0));
    // Only CPU 1: main's previous CPU (0) is not allowed, CPU 1 is idle;
    // the worker's previous CPU is then main's (1), busy.
    assert_eq!(worker_select(Some(0b10)), (1, -EBUSY, 0));
    assert_eq!(worker_select(Some(0)), (-EBUSY, -EBUSY, 0));
}

#[test]
fn select_cpu_and_keeps_an_idle_previous_cpu() {
    // 2B2S. Main computes on CPU 0 and forks two 1 ms workers (pids 2, 3),
    // then a sleeper (pid 4): the idle CPUs are claimed in turn, 1, 2, 3.
    // The sleeper wakes after 2 ms, when CPUs 1-3 are idle: it gets its
    // previous CPU, 3, not the first idle one.
    let w = workload(
        "name = \"p\"\n[thread.main]\nops = [ { spawn = \"w\", count = 2 }, { spawn = \"s\" }, \
         { compute = 10000, mem_frac = 0.0 }, { join = \"w\" }, { join = \"s\" } ]\n\
         [thread.w]\nops = [ { compute = 1000, mem_frac = 0.0 } ]\n\
         [thread.s]\nops = [ { sleep = 2000 }, { compute = 1000, mem_frac = 0.0 } ]",
    );
    let (r, h, _) = run(&w, "2B2S", &[("select_and", on())], &[]);
    r.unwrap();
    let firsts: Vec<i32> = (2..=4).map(|p| rec(&h, p).sel_ret).collect();
    assert_eq!(firsts, vec![1, 2, 3]);
    assert_eq!(rec(&h, 4).sel_last, 3, "{:?}", rec(&h, 4));
}

#[test]
fn select_cpu_and_may_not_be_called_from_dispatch() {
    let w = workload(
        "name = \"d\"\n[thread.main]\nops = [ { compute = 3000, mem_frac = 0.0 }, \
         { sleep = 1000 }, { compute = 1000, mem_frac = 0.0 } ]",
    );
    let (r, _, _) = run(&w, "1B", &[("select_and_in_dispatch", on())], &[]);
    let e = r.unwrap_err().to_string();
    assert!(e.contains("may not select a CPU"), "{e}");
}

#[test]
fn task_running_is_true_for_a_task_put_back_by_its_cpu() {
    // One CPU, two threads computing 10 ms each with 1 ms slices: every
    // re-enqueue at a slice's end (at a tick, with the other waiting) is of
    // the CPU's current task; the first enqueues (main's start, the fork)
    // and wake-ups (main's from the join) are of tasks not running.
    let w = workload(
        "name = \"r\"\n[thread.main]\nops = [ { spawn = \"w\" }, \
         { compute = 10000, mem_frac = 0.0 }, { join = \"w\" } ]\n\
         [thread.w]\nops = [ { compute = 10000, mem_frac = 0.0 } ]",
    );
    let (r, h, _) = run(&w, "1B", &[("slice_ns", u64v(MS))], &[]);
    r.unwrap();
    for pid in [1, 2] {
        let x = rec(&h, pid);
        assert!(x.enq_total >= 3, "{x:?}");
        assert_eq!(
            x.enq_running,
            x.enq_total - 1 - x.enq_wakeup,
            "pid {pid}: {x:?}"
        );
    }
}

#[test]
fn only_a_woken_tasks_enqueue_says_its_cpu_was_selected() {
    // One CPU, 1 ms slices. The worker is forked (no SCX_ENQ_CPU_SELECTED,
    // no WAKEUP), runs when main's slice ends at the first tick, blocks on
    // the mutex main holds, and is woken at the unlock (both flags).
    let w = workload(
        "name = \"k\"\n[mutex]\nm = 1\n[thread.main]\nops = [ { lock = \"m\" }, { spawn = \"w\" }, \
         { compute = 10000, mem_frac = 0.0 }, { unlock = \"m\" }, { join = \"w\" } ]\n\
         [thread.w]\nops = [ { lock = \"m\" }, { compute = 1000, mem_frac = 0.0 }, { unlock = \"m\" } ]",
    );
    let (r, h, _) = run(&w, "1B", &[("slice_ns", u64v(MS))], &[]);
    r.unwrap();
    let x = rec(&h, 2);
    assert_eq!(
        (x.enq_total, x.enq_wakeup, x.enq_cpu_selected),
        (2, 1, 1),
        "{x:?}"
    );
}

#[test]
fn task_set_slice_gives_the_task_that_slice() {
    // Inserted with 5 ms, given 12 ms in ops.running: 8 ms left at the
    // first tick (4 ms).
    let w = workload("name = \"s\"\n[thread.main]\nops = [ { compute = 30000, mem_frac = 0.0 } ]");
    let (r, h, _) = run(&w, "1B", &[("running_slice", u64v(12 * MS))], &[]);
    r.unwrap();
    assert_eq!(rec(&h, 1).max_tick_slice, 8 * MS);
}

#[test]
fn task_set_dsq_vtime_orders_a_vtime_dsq_and_peek_sees_its_head() {
    // One core: main spawns three 1 ms workers (pids 2, 3, 4) and joins;
    // ops.enable gave them vtimes 8000, 7000, 6000, so they run 4, 3, 2, and
    // each dispatch peeked the head it then consumed (main first, at the
    // start, and again when woken from the join). A DSQ that does not exist
    // peeks as NULL.
    let w = workload(
        "name = \"v\"\n[thread.main]\nops = [ { spawn = \"w\", count = 3 }, { join = \"w\" } ]\n\
         [thread.w]\nops = [ { compute = 1000, mem_frac = 0.0 } ]",
    );
    let (r, h, _) = run(&w, "1B", &[("vtime_by_pid", on())], &[]);
    r.unwrap();
    let mut starts: Vec<(u64, u32)> = (2..=4).map(|p| (rec(&h, p).first_run_ns, p)).collect();
    starts.sort();
    let order: Vec<u32> = starts.into_iter().map(|(_, p)| p).collect();
    assert_eq!(order, vec![4, 3, 2]);
    let peeks: Vec<u64> = (100..108).filter_map(|k| note(&h, k)).collect();
    assert_eq!(peeks, vec![1, 4, 3, 2, 1]);
    assert_eq!(note(&h, 1), Some(1));
    assert!(rec(&h, 4).first_cpu == 0);
}

#[test]
fn starting_a_bpf_timer_ends_the_run() {
    let (r, _, _) = run(&tiny(), "1B", &[("arm_timer", on())], &[]);
    let e = r.unwrap_err().to_string();
    assert!(e.contains("bpf_timer is not simulated"), "{e}");
}
