//! The ARMv8 PMU event vocabulary and the mapping from perf's spellings to it.
//!
//! Event names are the architectural ones (Arm ARM, "PMU common events").
//! Tables and perf output may spell them as perf does (`l1d_cache_refill`,
//! `cycles`, `r03`, `armv8_cortex_a53/l1d_cache_refill/`); [`canonical`]
//! maps every spelling to one name. Events outside the list are allowed and
//! keep their (upper-cased) name: a user's machine may count others.

/// The clock cycle counter. Every feature is an event count divided by it
/// (colab-tpds Fig. 5b divides by G, the cycle count), so it is required.
pub const CPU_CYCLES: &str = "CPU_CYCLES";

/// One architectural event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventInfo {
    pub name: &'static str,
    /// The event number perf's raw syntax uses (`r03`).
    pub code: u16,
    pub description: &'static str,
}

const fn ev(name: &'static str, code: u16, description: &'static str) -> EventInfo {
    EventInfo {
        name,
        code,
        description,
    }
}

/// The ARMv8 common events 0x00-0x1D.
pub const ARMV8_EVENTS: &[EventInfo] = &[
    ev(
        "SW_INCR",
        0x00,
        "software increment (architecturally executed)",
    ),
    ev("L1I_CACHE_REFILL", 0x01, "L1 instruction cache refill"),
    ev("L1I_TLB_REFILL", 0x02, "L1 instruction TLB refill"),
    ev("L1D_CACHE_REFILL", 0x03, "L1 data cache refill"),
    ev("L1D_CACHE", 0x04, "L1 data cache access"),
    ev("L1D_TLB_REFILL", 0x05, "L1 data TLB refill"),
    ev(
        "LD_RETIRED",
        0x06,
        "load instruction architecturally executed",
    ),
    ev(
        "ST_RETIRED",
        0x07,
        "store instruction architecturally executed",
    ),
    ev("INST_RETIRED", 0x08, "instruction architecturally executed"),
    ev("EXC_TAKEN", 0x09, "exception taken"),
    ev(
        "EXC_RETURN",
        0x0A,
        "exception return architecturally executed",
    ),
    ev("CID_WRITE_RETIRED", 0x0B, "write to CONTEXTIDR"),
    ev("PC_WRITE_RETIRED", 0x0C, "software change of the PC"),
    ev(
        "BR_IMMED_RETIRED",
        0x0D,
        "immediate branch architecturally executed",
    ),
    ev(
        "BR_RETURN_RETIRED",
        0x0E,
        "procedure return architecturally executed",
    ),
    ev("UNALIGNED_LDST_RETIRED", 0x0F, "unaligned load or store"),
    ev("BR_MIS_PRED", 0x10, "branch mispredicted or not predicted"),
    ev(CPU_CYCLES, 0x11, "processor clock cycle"),
    ev("BR_PRED", 0x12, "predictable branch speculatively executed"),
    ev("MEM_ACCESS", 0x13, "data memory access"),
    ev("L1I_CACHE", 0x14, "L1 instruction cache access"),
    ev("L1D_CACHE_WB", 0x15, "L1 data cache write-back"),
    ev("L2D_CACHE", 0x16, "L2 data cache access"),
    ev("L2D_CACHE_REFILL", 0x17, "L2 data cache refill"),
    ev("L2D_CACHE_WB", 0x18, "L2 data cache write-back"),
    ev("BUS_ACCESS", 0x19, "bus access"),
    ev("MEMORY_ERROR", 0x1A, "local memory error"),
    ev("INST_SPEC", 0x1B, "operation speculatively executed"),
    ev("TTBR_WRITE_RETIRED", 0x1C, "write to TTBR"),
    ev("BUS_CYCLES", 0x1D, "bus cycle"),
];

/// The architectural event named `name` (canonical spelling), if it is one.
pub fn info(name: &str) -> Option<&'static EventInfo> {
    ARMV8_EVENTS.iter().find(|e| e.name == name)
}

fn by_code(code: u16) -> Option<&'static EventInfo> {
    ARMV8_EVENTS.iter().find(|e| e.code == code)
}

/// Hex digits after `r` (perf's raw syntax `r03`) or after `event=0x`.
fn raw_code(s: &str) -> Option<u16> {
    let hex = s
        .strip_prefix("event=0x")
        .or_else(|| s.strip_prefix("event=0X"))
        .or_else(|| s.strip_prefix('r').filter(|h| h.len() <= 4))?;
    if hex.is_empty() || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    u16::from_str_radix(hex, 16).ok()
}

/// The canonical name of an event however perf or a table spells it:
/// the PMU prefix (`armv8_pmuv3_0/.../`) and modifiers (`:u`) are dropped,
/// raw codes map to their names, perf's generic `cycles` and `instructions`
/// map to CPU_CYCLES and INST_RETIRED (what they count on ARMv8), the
/// paper's `L2_CACHE` (Fig. 5a) to L2D_CACHE, and the rest is upper-cased
/// with `-` as `_`.
pub fn canonical(name: &str) -> String {
    let mut s = name.trim();
    // `pmu/event/` or `pmu/event/modifiers`: keep the event.
    if let Some((_, rest)) = s.split_once('/') {
        s = rest.rsplit_once('/').map_or(rest, |(inner, _)| inner);
    }
    let s = s.split(':').next().unwrap_or(s).trim();
    if let Some(e) = raw_code(s).and_then(by_code) {
        return e.name.to_string();
    }
    if let Some(code) = raw_code(s) {
        return format!("R{code:02X}");
    }
    let up = s.to_ascii_uppercase().replace('-', "_");
    match up.as_str() {
        "CYCLES" | "CPU_CYCLES" => CPU_CYCLES.to_string(),
        "INSTRUCTIONS" => "INST_RETIRED".to_string(),
        "L2_CACHE" => "L2D_CACHE".to_string(),
        _ => up,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perf_spellings_map_to_architectural_names() {
        for (spelling, name) in [
            ("cycles", CPU_CYCLES),
            ("cpu-cycles", CPU_CYCLES),
            ("cycles:u", CPU_CYCLES),
            ("instructions", "INST_RETIRED"),
            ("l1d_cache_refill", "L1D_CACHE_REFILL"),
            ("armv8_cortex_a53/l1d_tlb_refill/", "L1D_TLB_REFILL"),
            ("armv8_pmuv3_0/event=0x19/", "BUS_ACCESS"),
            ("r03", "L1D_CACHE_REFILL"),
            ("r0011", CPU_CYCLES),
            ("L2_CACHE", "L2D_CACHE"),
            (" SW_INCR ", "SW_INCR"),
            ("r1f", "R1F"),
            ("task-clock", "TASK_CLOCK"),
            ("my_vendor_event", "MY_VENDOR_EVENT"),
        ] {
            assert_eq!(canonical(spelling), name, "{spelling}");
        }
    }

    #[test]
    fn codes_and_names_are_unique() {
        for (i, a) in ARMV8_EVENTS.iter().enumerate() {
            for b in &ARMV8_EVENTS[..i] {
                assert_ne!(a.name, b.name);
                assert_ne!(a.code, b.code);
            }
            assert_eq!(canonical(a.name), a.name);
        }
        assert_eq!(info("BUS_ACCESS").map(|e| e.code), Some(0x19));
    }
}
