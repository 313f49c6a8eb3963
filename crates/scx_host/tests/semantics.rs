//! sched_ext semantics of the host, each on a hand-built situation with a
//! hand-computed outcome, through the probe scheduler (tests/bpf/probe.bpf.c).
//! Machines have no switch or migration cost and a 4 ms tick.

mod common;
use colab_core::Policy;
use colab_sim::{simulate, SimConfig, SimError, SimResult};
use colab_workload::Workload;
use common::{machine, workload, MS};

/// What the probe recorded for one task (struct rec).
#[derive(Debug, Default, Clone, Copy)]
struct Rec {
    waker_pid: u32,
    waker_cpu: i32,
    enq_total: u32,
    enq_last: u32,
    runs: u32,
    direct: u32,
    first_run_ns: u64,
    max_tick_slice: u64,
    first_cpu: i32,
}

fn recs(h: &colab_scx_host::Hosted) -> Vec<(u32, Rec)> {
    let u32_at = |v: &[u8], o: usize| u32::from_ne_bytes(v[o..o + 4].try_into().unwrap());
    let u64_at = |v: &[u8], o: usize| u64::from_ne_bytes(v[o..o + 8].try_into().unwrap());
    h.map_entries("recs")
        .into_iter()
        .map(|(k, v)| {
            let pid = u32_at(&k, 0);
            let r = Rec {
                waker_pid: u32_at(&v, 0),
                waker_cpu: u32_at(&v, 4) as i32,
                enq_total: u32_at(&v, 8),
                enq_last: u32_at(&v, 12),
                runs: u32_at(&v, 16),
                direct: u32_at(&v, 20),
                // The BPF clock is ahead of simulated time by CLOCK_AT_START.
                first_run_ns: u64_at(&v, 24)
                    .saturating_sub(colab_scx_host::testing::CLOCK_AT_START),
                max_tick_slice: u64_at(&v, 40),
                first_cpu: u32_at(&v, 48) as i32,
            };
            (pid, r)
        })
        .collect()
}

fn rec(h: &colab_scx_host::Hosted, pid: u32) -> Rec {
    recs(h)
        .into_iter()
        .find(|(p, _)| *p == pid)
        .map(|(_, r)| r)
        .unwrap_or_else(|| panic!("no record of pid {pid}"))
}

fn run(
    w: &Workload,
    topo: &str,
    keep: bool,
    globals: &[(&str, Vec<u8>)],
) -> (Result<SimResult, SimError>, colab_scx_host::Hosted) {
    let mut h = colab_scx_host::testing::probe(keep, globals).unwrap();
    let r = simulate(
        w,
        &machine(topo),
        &mut h as &mut dyn Policy,
        &SimConfig::default(),
    );
    (r, h)
}

fn on() -> Vec<u8> {
    vec![1]
}
fn off() -> Vec<u8> {
    vec![0]
}
fn u64v(x: u64) -> Vec<u8> {
    x.to_ne_bytes().to_vec()
}

/// `pids` in the order they first ran.
fn first_runs(h: &colab_scx_host::Hosted, pids: std::ops::RangeInclusive<u32>) -> Vec<u32> {
    let mut starts: Vec<(u64, u32)> = pids.map(|p| (rec(h, p).first_run_ns, p)).collect();
    starts.sort();
    starts.into_iter().map(|(_, p)| p).collect()
}

/// Thread ids are creation order; pid = id + 1 (the main thread is pid 1).
const MAIN: u32 = 1;

#[test]
fn a_vtime_dsq_runs_the_smallest_vtime_first() {
    // One core: main spawns three 1 ms workers (pids 2, 3, 4) and joins;
    // their vtimes are 30, 20, 10, so they run 4, 3, 2 (FIFO: 2, 3, 4).
    let w = workload(
        "name = \"v\"\n[thread.main]\nops = [ { spawn = \"w\", count = 3 }, { join = \"w\" } ]\n\
         [thread.w]\nops = [ { compute = 1000, mem_frac = 0.0 } ]",
    );
    let mut vt = [0u64; 16];
    vt[2] = 30;
    vt[3] = 20;
    vt[4] = 10;
    let vt: Vec<u8> = vt.iter().flat_map(|x| x.to_ne_bytes()).collect();
    let order = |use_vtime: bool| {
        let (r, h) = run(
            &w,
            "1B",
            false,
            &[
                ("use_vtime", if use_vtime { on() } else { off() }),
                ("vtime_of", vt.clone()),
            ],
        );
        r.unwrap();
        first_runs(&h, 2..=4)
    };
    assert_eq!(order(true), vec![4, 3, 2]);
    assert_eq!(order(false), vec![2, 3, 4]);
}

#[test]
fn the_waker_is_current_inside_select_cpu() {
    // Main (pid 1) spawns a worker (pid 2) that blocks on a mutex main
    // holds; main wakes it at unlock. The fork runs in main's context too.
    let w = workload(
        "name = \"k\"\n[mutex]\nm = 1\n[thread.main]\nops = [ { lock = \"m\" }, { spawn = \"w\" }, \
         { compute = 2000, mem_frac = 0.0 }, { unlock = \"m\" }, { join = \"w\" } ]\n\
         [thread.w]\nops = [ { lock = \"m\" }, { compute = 1000, mem_frac = 0.0 }, { unlock = \"m\" } ]",
    );
    let (r, h) = run(&w, "1B1S", false, &[]);
    r.unwrap();
    let wr = rec(&h, 2);
    assert_eq!(wr.waker_pid, MAIN, "{wr:?}");
    assert_eq!(wr.waker_cpu, rec(&h, MAIN).first_cpu, "{wr:?}");
}

#[test]
fn an_idle_cpu_claimed_in_select_cpu_is_no_longer_idle() {
    // Two cores, main busy on one; two workers forked at once. The first
    // claims the idle core and is dispatched there directly from
    // select_cpu; the second finds no idle core left. Without the claim
    // both would be sent to the same core.
    let w = workload(
        "name = \"c\"\n[thread.main]\nops = [ { spawn = \"w\", count = 2 }, \
         { compute = 5000, mem_frac = 0.0 }, { join = \"w\" } ]\n\
         [thread.w]\nops = [ { compute = 3000, mem_frac = 0.0 } ]",
    );
    let (r, h) = run(&w, "1B1S", false, &[("dfl_select", on())]);
    r.unwrap();
    let direct: Vec<u32> = (2..=3).map(|p| rec(&h, p).direct).collect();
    assert_eq!(
        direct.iter().sum::<u32>(),
        1,
        "exactly one direct dispatch: {direct:?}"
    );
}

#[test]
fn a_task_alone_at_slice_end_is_enqueued_with_enq_last() {
    // One core, one 20 ms thread, 1 ms slices: at each tick (4, 8, ... ms)
    // its slice is out and nothing else waits, so it goes back through
    // ops.enqueue with SCX_ENQ_LAST, and runs on at once from the local DSQ.
    let w = workload("name = \"l\"\n[thread.main]\nops = [ { compute = 20000, mem_frac = 0.0 } ]");
    let (r, h) = run(&w, "1B", false, &[("slice_ns", u64v(MS))]);
    let r = r.unwrap();
    assert_eq!(r.programs[0].turnaround_ns, 20 * MS);
    let m = rec(&h, MAIN);
    // Ticks at 4, 8, 12, 16 ms end a slice; the run ends at 20 ms.
    assert_eq!((m.enq_last, m.runs), (4, 5), "{m:?}");
    // Sent to the shared DSQ instead, it waits there with nobody to
    // dispatch it: the kernel's watchdog ends the scheduler.
    let (r, _) = run(
        &w,
        "1B",
        false,
        &[("slice_ns", u64v(MS)), ("local_on_last", off())],
    );
    let e = r.unwrap_err().to_string();
    assert!(e.contains("runnable task stall"), "{e}");
}

#[test]
fn a_kept_task_gets_the_default_slice_back() {
    // Without SCX_OPS_ENQ_LAST a task alone keeps its CPU when its slice
    // ends, refilled to SCX_SLICE_DFL (20 ms): at the next tick it has
    // 20 - 4 = 16 ms left, and it is never enqueued again.
    let w = workload("name = \"s\"\n[thread.main]\nops = [ { compute = 30000, mem_frac = 0.0 } ]");
    let (r, h) = run(&w, "1B", true, &[("slice_ns", u64v(MS))]);
    r.unwrap();
    let m = rec(&h, MAIN);
    assert_eq!(
        (m.max_tick_slice, m.enq_total, m.runs),
        (16 * MS, 1, 1),
        "{m:?}"
    );
}

#[test]
fn kicks_act_when_issued_not_at_the_next_tick() {
    // Two cores; select_cpu always answers CPU 0, where main computes (its
    // enqueue kicks nobody). A worker forked at 0 joins the shared DSQ and
    // the enqueue kicks CPU 1:
    // idle, it dispatches and runs the worker at once (time 0). With a
    // PREEMPT kick of CPU 0 instead, main gives CPU 0 up at once and the
    // worker runs there, also at 0; with no kick, it waits for main's
    // slice to end at the first tick (4 ms).
    let w = workload(
        "name = \"t\"\n[thread.main]\nops = [ { spawn = \"w\" }, { compute = 10000, mem_frac = 0.0 }, { join = \"w\" } ]\n\
         [thread.w]\nops = [ { compute = 1000, mem_frac = 0.0 } ]",
    );
    let first = |target: i32, flags: u64| {
        let (r, h) = run(
            &w,
            "1B1S",
            false,
            &[
                ("select_zero", on()),
                ("slice_ns", u64v(MS)),
                ("kick_target", target.to_ne_bytes().to_vec()),
                ("kick_flags", u64v(flags)),
            ],
        );
        r.unwrap();
        let wr = rec(&h, 2);
        (wr.first_run_ns, wr.first_cpu)
    };
    assert_eq!(first(1, 1), (0, 1), "SCX_KICK_IDLE");
    assert_eq!(first(0, 2), (0, 0), "SCX_KICK_PREEMPT");
    assert_eq!(first(-1, 0), (4 * MS, 0), "no kick");
}

#[test]
fn sched_switch_fires_at_each_change_of_task_with_the_states_left_in() {
    // One core: main (pid 1) spawns a 1 ms worker (pid 2) and joins it.
    // The switches: idle -> main; main blocks in join (asleep, 1) ->
    // worker; the worker exits (dead, 0x80) -> main; main exits -> idle.
    let w = workload(
        "name = \"s\"\n[thread.main]\nops = [ { spawn = \"w\" }, { join = \"w\" } ]\n\
         [thread.w]\nops = [ { compute = 1000, mem_frac = 0.0 } ]",
    );
    let (r, h) = run(&w, "1B", false, &[]);
    r.unwrap();
    let n = u32::from_ne_bytes(
        h.global_bytes("nr_switches", 4)
            .unwrap()
            .try_into()
            .unwrap(),
    );
    let raw = h.global_bytes("switches", 32 * 12).unwrap();
    let log: Vec<(u32, u32, u32)> = (0..n.min(32) as usize)
        .map(|i| {
            let at = |k: usize| {
                u32::from_ne_bytes(raw[i * 12 + k * 4..i * 12 + k * 4 + 4].try_into().unwrap())
            };
            (at(0), at(1), at(2))
        })
        .collect();
    assert_eq!(log, vec![(0, 1, 0), (1, 2, 1), (2, 1, 0x80), (1, 0, 0x80)]);
}

#[test]
fn a_task_moved_mid_walk_of_a_dsq_runs_from_the_local_dsq() {
    // One core: main spawns three 1 ms workers (pids 2, 3, 4) into the
    // shared FIFO DSQ and joins them. Each dispatch walks the DSQ and moves
    // the largest pid it finds to the local DSQ: 4, 3, 2 (the head: 2, 3, 4).
    let w = workload(
        "name = \"m\"\n[thread.main]\nops = [ { spawn = \"w\", count = 3 }, { join = \"w\" } ]\n\
         [thread.w]\nops = [ { compute = 1000, mem_frac = 0.0 } ]",
    );
    let order = |walk: bool| {
        let (r, h) = run(
            &w,
            "1B",
            false,
            &[("walk_largest", if walk { on() } else { off() })],
        );
        r.unwrap();
        first_runs(&h, 2..=4)
    };
    assert_eq!(order(true), vec![4, 3, 2]);
    assert_eq!(order(false), vec![2, 3, 4]);
}

#[test]
fn a_scheduler_that_keeps_kicking_without_time_passing_ends_the_run() {
    // Every dispatch that finds nothing kicks its own CPU: when the one
    // thread exits, its CPU would reschedule forever at the same instant.
    let w = workload("name = \"k\"\n[thread.main]\nops = [ { compute = 1000, mem_frac = 0.0 } ]");
    let (r, _) = run(&w, "1B1S", false, &[("kick_self", on())]);
    let e = r.unwrap_err().to_string();
    assert!(e.contains("without time passing"), "{e}");
}
