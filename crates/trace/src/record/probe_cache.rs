//! The recording-overhead probe kept between recordings (for a day, per
//! boot, kernel, perf version and CPU count).

use super::write_atomically;
use crate::overhead::Overhead;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Where recordings keep their last overhead probe by default:
/// $XDG_CACHE_HOME/colab or ~/.cache/colab (none without either variable).
pub fn default_probe_cache() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("colab").join("trace-overhead.json"))
}

/// How long a cached probe result stays valid (assumption: a day; the
/// overhead depends on the kernel, perf and the machine, all in the key).
pub const PROBE_CACHE_SECS: u64 = 24 * 3600;

/// A probe result kept between recordings.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct CachedProbe {
    /// boot id, kernel, perf version, CPU count, colab version.
    key: String,
    measured_unix_s: u64,
    overhead: Overhead,
}

/// Minutes since `at` (unix seconds).
pub fn age_min(at: u64) -> u64 {
    now_unix_s().saturating_sub(at) / 60
}

pub(super) fn now_unix_s() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// What a cached probe result must match to be reused.
pub(super) fn probe_key(tool: &str) -> String {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    format!(
        "boot {} | kernel {} | {} | {} cpus | colab-trace {}",
        read("/proc/sys/kernel/random/boot_id").trim(),
        read("/proc/sys/kernel/osrelease").trim(),
        tool,
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        env!("CARGO_PKG_VERSION")
    )
}

/// The cached overhead in `file` if it matches `key` and is recent enough.
pub(super) fn cached_probe(file: &Path, key: &str, now: u64) -> Option<(Overhead, u64)> {
    let c: CachedProbe = serde_json::from_str(&std::fs::read_to_string(file).ok()?).ok()?;
    (c.key == key && now.saturating_sub(c.measured_unix_s) < PROBE_CACHE_SECS)
        .then_some((c.overhead, c.measured_unix_s))
}

/// Keeps a probe result; a cache that cannot be written only costs the
/// next recording a probe.
pub(super) fn store_probe(file: &Path, key: &str, now: u64, overhead: Overhead) {
    let c = CachedProbe {
        key: key.to_string(),
        measured_unix_s: now,
        overhead,
    };
    if let Some(dir) = file.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let _ = write_atomically(file, &serde_json::to_string(&c).expect("serializes"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_probe_is_reused_only_for_the_same_machine_state_and_a_day() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("sub").join("probe.json");
        let o = Overhead {
            switch: 500.0,
            syscall: 1400.0,
        };
        assert_eq!(cached_probe(&f, "k", 1000), None, "nothing kept yet");
        store_probe(&f, "k", 1000, o);
        assert_eq!(cached_probe(&f, "k", 1000), Some((o, 1000)));
        assert_eq!(
            cached_probe(&f, "k", 1000 + PROBE_CACHE_SECS - 1),
            Some((o, 1000))
        );
        assert_eq!(
            cached_probe(&f, "k", 1000 + PROBE_CACHE_SECS),
            None,
            "stale"
        );
        assert_eq!(cached_probe(&f, "other boot", 1000), None, "another key");
        std::fs::write(&f, "{not json").unwrap();
        assert_eq!(
            cached_probe(&f, "k", 1000),
            None,
            "a corrupt file is ignored"
        );
        let key = probe_key("perf version 6.1");
        assert!(
            key.contains("perf version 6.1") && key.contains("cpus"),
            "{key}"
        );
    }
}
