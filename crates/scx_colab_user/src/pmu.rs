//! Performance counters for the speedup model (colab-tpds 5.1): which perf
//! event counts each event a colab-model model reads. Pure: opening the
//! per-CPU counters (perf_event_open, pid -1) whose file descriptors the BPF
//! side reads at every context switch is scx_colab's pmu.rs.
//!
//! Model events are named as colab-model canonicalises them: the ARMv8
//! common events (`L1D_CACHE_REFILL`, `CPU_CYCLES`) for models trained on
//! ARM, perf's generic names upper-cased (`BRANCH_MISSES`, `PAGE_FAULTS`) for
//! models trained from `perf stat` elsewhere. On arm64 an ARMv8 event is
//! programmed by its number (perf's raw type, which the kernel routes to the
//! PMU of the CPU it is opened on, big or little); everywhere, perf's generic
//! hardware, cache and software events are known by name. `--event
//! NAME=SPEC` maps anything else.

use colab_model::events;

/// The constants of perf_event_open(2) that the generic events use, as
/// `linux/perf_event.h` numbers them (kernel ABI, never renumbered); here
/// rather than from perf-event-open-sys so that this crate needs no system
/// bindings. scx_colab's tests check every one against perf-event-open-sys.
pub mod sys {
    // enum perf_type_id
    pub const PERF_TYPE_HARDWARE: u32 = 0;
    pub const PERF_TYPE_SOFTWARE: u32 = 1;
    pub const PERF_TYPE_HW_CACHE: u32 = 3;
    pub const PERF_TYPE_RAW: u32 = 4;
    // enum perf_hw_id
    pub const PERF_COUNT_HW_CPU_CYCLES: u32 = 0;
    pub const PERF_COUNT_HW_INSTRUCTIONS: u32 = 1;
    pub const PERF_COUNT_HW_CACHE_REFERENCES: u32 = 2;
    pub const PERF_COUNT_HW_CACHE_MISSES: u32 = 3;
    pub const PERF_COUNT_HW_BRANCH_INSTRUCTIONS: u32 = 4;
    pub const PERF_COUNT_HW_BRANCH_MISSES: u32 = 5;
    pub const PERF_COUNT_HW_BUS_CYCLES: u32 = 6;
    pub const PERF_COUNT_HW_STALLED_CYCLES_FRONTEND: u32 = 7;
    pub const PERF_COUNT_HW_STALLED_CYCLES_BACKEND: u32 = 8;
    pub const PERF_COUNT_HW_REF_CPU_CYCLES: u32 = 9;
    // enum perf_hw_cache_id, perf_hw_cache_op_id, perf_hw_cache_op_result_id
    pub const PERF_COUNT_HW_CACHE_L1D: u32 = 0;
    pub const PERF_COUNT_HW_CACHE_L1I: u32 = 1;
    pub const PERF_COUNT_HW_CACHE_LL: u32 = 2;
    pub const PERF_COUNT_HW_CACHE_DTLB: u32 = 3;
    pub const PERF_COUNT_HW_CACHE_ITLB: u32 = 4;
    pub const PERF_COUNT_HW_CACHE_BPU: u32 = 5;
    pub const PERF_COUNT_HW_CACHE_OP_READ: u32 = 0;
    pub const PERF_COUNT_HW_CACHE_OP_WRITE: u32 = 1;
    pub const PERF_COUNT_HW_CACHE_RESULT_ACCESS: u32 = 0;
    pub const PERF_COUNT_HW_CACHE_RESULT_MISS: u32 = 1;
    // enum perf_sw_ids
    pub const PERF_COUNT_SW_CPU_CLOCK: u32 = 0;
    pub const PERF_COUNT_SW_TASK_CLOCK: u32 = 1;
    pub const PERF_COUNT_SW_PAGE_FAULTS: u32 = 2;
    pub const PERF_COUNT_SW_CONTEXT_SWITCHES: u32 = 3;
    pub const PERF_COUNT_SW_CPU_MIGRATIONS: u32 = 4;
    pub const PERF_COUNT_SW_PAGE_FAULTS_MIN: u32 = 5;
    pub const PERF_COUNT_SW_PAGE_FAULTS_MAJ: u32 = 6;
}

/// One perf event: `perf_event_attr.type` and `.config`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PerfEvent {
    pub type_: u32,
    pub config: u64,
}

impl PerfEvent {
    pub const fn hw(config: u32) -> PerfEvent {
        PerfEvent {
            type_: sys::PERF_TYPE_HARDWARE,
            config: config as u64,
        }
    }
    pub const fn sw(config: u32) -> PerfEvent {
        PerfEvent {
            type_: sys::PERF_TYPE_SOFTWARE,
            config: config as u64,
        }
    }
    /// A generalised cache event: cache | op << 8 | result << 16 (perf_event_open(2)).
    pub const fn cache(cache: u32, op: u32, result: u32) -> PerfEvent {
        PerfEvent {
            type_: sys::PERF_TYPE_HW_CACHE,
            config: (cache | op << 8 | result << 16) as u64,
        }
    }
    pub const fn raw(config: u64) -> PerfEvent {
        PerfEvent {
            type_: sys::PERF_TYPE_RAW,
            config,
        }
    }

    /// Whether the event needs a hardware PMU (software events do not).
    pub fn is_hardware(&self) -> bool {
        self.type_ != sys::PERF_TYPE_SOFTWARE
    }
}

const READ: u32 = sys::PERF_COUNT_HW_CACHE_OP_READ;
const WRITE: u32 = sys::PERF_COUNT_HW_CACHE_OP_WRITE;
const ACCESS: u32 = sys::PERF_COUNT_HW_CACHE_RESULT_ACCESS;
const MISS: u32 = sys::PERF_COUNT_HW_CACHE_RESULT_MISS;

/// perf's generic events by their canonical names (perf list's spellings
/// upper-cased, `-` as `_`; `cycles` and `instructions` canonicalise to
/// CPU_CYCLES and INST_RETIRED). BR_MIS_PRED is what perf's `branch-misses`
/// counts on ARMv8 (the armv8 PMU driver's generic event map).
const GENERIC: &[(&str, PerfEvent)] = &[
    (
        events::CPU_CYCLES,
        PerfEvent::hw(sys::PERF_COUNT_HW_CPU_CYCLES),
    ),
    (
        "INST_RETIRED",
        PerfEvent::hw(sys::PERF_COUNT_HW_INSTRUCTIONS),
    ),
    (
        "BR_MIS_PRED",
        PerfEvent::hw(sys::PERF_COUNT_HW_BRANCH_MISSES),
    ),
    (
        "BRANCH_MISSES",
        PerfEvent::hw(sys::PERF_COUNT_HW_BRANCH_MISSES),
    ),
    (
        "BRANCH_INSTRUCTIONS",
        PerfEvent::hw(sys::PERF_COUNT_HW_BRANCH_INSTRUCTIONS),
    ),
    (
        "BRANCHES",
        PerfEvent::hw(sys::PERF_COUNT_HW_BRANCH_INSTRUCTIONS),
    ),
    (
        "CACHE_REFERENCES",
        PerfEvent::hw(sys::PERF_COUNT_HW_CACHE_REFERENCES),
    ),
    (
        "CACHE_MISSES",
        PerfEvent::hw(sys::PERF_COUNT_HW_CACHE_MISSES),
    ),
    ("BUS_CYCLES", PerfEvent::hw(sys::PERF_COUNT_HW_BUS_CYCLES)),
    (
        "REF_CYCLES",
        PerfEvent::hw(sys::PERF_COUNT_HW_REF_CPU_CYCLES),
    ),
    (
        "STALLED_CYCLES_FRONTEND",
        PerfEvent::hw(sys::PERF_COUNT_HW_STALLED_CYCLES_FRONTEND),
    ),
    (
        "STALLED_CYCLES_BACKEND",
        PerfEvent::hw(sys::PERF_COUNT_HW_STALLED_CYCLES_BACKEND),
    ),
    (
        "L1_DCACHE_LOADS",
        PerfEvent::cache(sys::PERF_COUNT_HW_CACHE_L1D, READ, ACCESS),
    ),
    (
        "L1_DCACHE_LOAD_MISSES",
        PerfEvent::cache(sys::PERF_COUNT_HW_CACHE_L1D, READ, MISS),
    ),
    (
        "L1_DCACHE_STORES",
        PerfEvent::cache(sys::PERF_COUNT_HW_CACHE_L1D, WRITE, ACCESS),
    ),
    (
        "L1_ICACHE_LOADS",
        PerfEvent::cache(sys::PERF_COUNT_HW_CACHE_L1I, READ, ACCESS),
    ),
    (
        "L1_ICACHE_LOAD_MISSES",
        PerfEvent::cache(sys::PERF_COUNT_HW_CACHE_L1I, READ, MISS),
    ),
    (
        "LLC_LOADS",
        PerfEvent::cache(sys::PERF_COUNT_HW_CACHE_LL, READ, ACCESS),
    ),
    (
        "LLC_LOAD_MISSES",
        PerfEvent::cache(sys::PERF_COUNT_HW_CACHE_LL, READ, MISS),
    ),
    (
        "LLC_STORES",
        PerfEvent::cache(sys::PERF_COUNT_HW_CACHE_LL, WRITE, ACCESS),
    ),
    (
        "LLC_STORE_MISSES",
        PerfEvent::cache(sys::PERF_COUNT_HW_CACHE_LL, WRITE, MISS),
    ),
    (
        "DTLB_LOADS",
        PerfEvent::cache(sys::PERF_COUNT_HW_CACHE_DTLB, READ, ACCESS),
    ),
    (
        "DTLB_LOAD_MISSES",
        PerfEvent::cache(sys::PERF_COUNT_HW_CACHE_DTLB, READ, MISS),
    ),
    (
        "ITLB_LOADS",
        PerfEvent::cache(sys::PERF_COUNT_HW_CACHE_ITLB, READ, ACCESS),
    ),
    (
        "ITLB_LOAD_MISSES",
        PerfEvent::cache(sys::PERF_COUNT_HW_CACHE_ITLB, READ, MISS),
    ),
    (
        "BRANCH_LOADS",
        PerfEvent::cache(sys::PERF_COUNT_HW_CACHE_BPU, READ, ACCESS),
    ),
    (
        "BRANCH_LOAD_MISSES",
        PerfEvent::cache(sys::PERF_COUNT_HW_CACHE_BPU, READ, MISS),
    ),
    ("CPU_CLOCK", PerfEvent::sw(sys::PERF_COUNT_SW_CPU_CLOCK)),
    ("TASK_CLOCK", PerfEvent::sw(sys::PERF_COUNT_SW_TASK_CLOCK)),
    ("PAGE_FAULTS", PerfEvent::sw(sys::PERF_COUNT_SW_PAGE_FAULTS)),
    ("FAULTS", PerfEvent::sw(sys::PERF_COUNT_SW_PAGE_FAULTS)),
    (
        "MINOR_FAULTS",
        PerfEvent::sw(sys::PERF_COUNT_SW_PAGE_FAULTS_MIN),
    ),
    (
        "MAJOR_FAULTS",
        PerfEvent::sw(sys::PERF_COUNT_SW_PAGE_FAULTS_MAJ),
    ),
    (
        "CONTEXT_SWITCHES",
        PerfEvent::sw(sys::PERF_COUNT_SW_CONTEXT_SWITCHES),
    ),
    ("CS", PerfEvent::sw(sys::PERF_COUNT_SW_CONTEXT_SWITCHES)),
    (
        "CPU_MIGRATIONS",
        PerfEvent::sw(sys::PERF_COUNT_SW_CPU_MIGRATIONS),
    ),
    (
        "MIGRATIONS",
        PerfEvent::sw(sys::PERF_COUNT_SW_CPU_MIGRATIONS),
    ),
];

fn generic(canonical: &str) -> Option<PerfEvent> {
    GENERIC
        .iter()
        .find(|(n, _)| *n == canonical)
        .map(|&(_, e)| e)
}

/// A number in decimal or `0x` hex.
fn number(s: &str) -> Option<u64> {
    let s = s.trim();
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// The SPEC of `--event NAME=SPEC`: `raw:0x11` (the PMU's event number),
/// `TYPE:CONFIG` (a PMU from /sys/bus/event_source/devices/*/type), or one
/// of perf's generic event names (`cycles`, `L1-dcache-load-misses`,
/// `page-faults`).
pub fn parse_spec(spec: &str) -> Result<PerfEvent, String> {
    let spec = spec.trim();
    if let Some(code) = spec.strip_prefix("raw:") {
        let hex = code
            .trim()
            .trim_start_matches("0x")
            .trim_start_matches("0X");
        return u64::from_str_radix(hex, 16)
            .map(PerfEvent::raw)
            .map_err(|_| {
                format!("`{spec}`: raw:HEX wants the event number in hex, e.g. raw:0x11")
            });
    }
    if let Some((t, c)) = spec.split_once(':') {
        if let (Some(t), Some(c)) = (number(t), number(c)) {
            let type_ = u32::try_from(t).map_err(|_| format!("`{spec}`: type {t} is too large"))?;
            return Ok(PerfEvent { type_, config: c });
        }
    }
    generic(&events::canonical(spec)).ok_or_else(|| {
        format!(
            "`{spec}` is not an event perf knows by name; use raw:HEX (event number), \
             TYPE:CONFIG, or a name from `perf list` (cycles, cache-misses, page-faults, ...)"
        )
    })
}

/// `NAME=SPEC` of `--event`: the model event (canonical name) and its event.
pub fn parse_mapping(s: &str) -> Result<(String, PerfEvent), String> {
    let (name, spec) = s
        .split_once('=')
        .ok_or_else(|| format!("`{s}`: expected MODEL_EVENT=SPEC, e.g. L2D_CACHE=raw:0x16"))?;
    if name.trim().is_empty() {
        return Err(format!("`{s}`: the model event name is empty"));
    }
    Ok((events::canonical(name), parse_spec(spec)?))
}

/// The perf event that counts model event `name` on this architecture
/// (`arch` as std::env::consts::ARCH): `--event` mappings first, then the
/// ARMv8 event number on arm64, then perf's generic events.
pub fn resolve(
    name: &str,
    mappings: &[(String, PerfEvent)],
    arch: &str,
) -> Result<PerfEvent, String> {
    let name = events::canonical(name);
    if let Some((_, e)) = mappings.iter().find(|(n, _)| *n == name) {
        return Ok(*e);
    }
    if arch == "aarch64" {
        if let Some(info) = events::info(&name) {
            return Ok(PerfEvent::raw(u64::from(info.code)));
        }
    }
    if let Some(e) = generic(&name) {
        return Ok(e);
    }
    let why = if events::info(&name).is_some() {
        format!("{name} is an ARMv8 PMU event and this machine is {arch}")
    } else {
        format!("perf has no generic event called {name}")
    };
    Err(format!(
        "model event {name}: {why}; map it with --event {name}=raw:HEX (this PMU's event number) \
         or train a model on this machine's own events (colab train --perf DIR)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse() {
        assert_eq!(parse_spec("raw:0x11"), Ok(PerfEvent::raw(0x11)));
        assert_eq!(parse_spec("raw:16"), Ok(PerfEvent::raw(0x16)));
        assert_eq!(
            parse_spec("8:0x1b"),
            Ok(PerfEvent {
                type_: 8,
                config: 0x1b
            })
        );
        assert_eq!(
            parse_spec("cycles"),
            Ok(PerfEvent::hw(sys::PERF_COUNT_HW_CPU_CYCLES))
        );
        assert_eq!(
            parse_spec("L1-dcache-load-misses"),
            Ok(PerfEvent {
                type_: sys::PERF_TYPE_HW_CACHE,
                config: 0x10000 // L1D | READ << 8 | MISS << 16
            })
        );
        assert_eq!(
            parse_spec("page-faults"),
            Ok(PerfEvent::sw(sys::PERF_COUNT_SW_PAGE_FAULTS))
        );
        for bad in ["raw:zz", "frobs", "", "raw:"] {
            assert!(parse_spec(bad).is_err(), "{bad}");
        }
        let (n, e) = parse_mapping("l2d_cache=raw:0x16").unwrap();
        assert_eq!((n.as_str(), e), ("L2D_CACHE", PerfEvent::raw(0x16)));
        assert!(parse_mapping("L2D_CACHE")
            .unwrap_err()
            .contains("MODEL_EVENT=SPEC"));
        assert!(parse_mapping("=cycles").is_err());
    }

    #[test]
    fn model_events_resolve_per_architecture() {
        // ARMv8 events by number on arm64, generic names elsewhere.
        assert_eq!(
            resolve("L2D_CACHE", &[], "aarch64"),
            Ok(PerfEvent::raw(0x16))
        );
        assert_eq!(
            resolve("CPU_CYCLES", &[], "aarch64"),
            Ok(PerfEvent::raw(0x11))
        );
        assert_eq!(
            resolve("CPU_CYCLES", &[], "x86_64"),
            Ok(PerfEvent::hw(sys::PERF_COUNT_HW_CPU_CYCLES))
        );
        assert_eq!(
            resolve("branch-misses", &[], "x86_64"),
            Ok(PerfEvent::hw(sys::PERF_COUNT_HW_BRANCH_MISSES))
        );
        let e = resolve("L2D_CACHE", &[], "x86_64").unwrap_err();
        assert!(
            e.contains("ARMv8 PMU event") && e.contains("--event L2D_CACHE="),
            "{e}"
        );
        let e = resolve("FROBS", &[], "aarch64").unwrap_err();
        assert!(e.contains("no generic event called FROBS"), "{e}");
        // A mapping wins over both.
        let m = vec![("CPU_CYCLES".to_string(), PerfEvent::sw(0))];
        assert_eq!(resolve("cycles", &m, "aarch64"), Ok(PerfEvent::sw(0)));
    }
}
