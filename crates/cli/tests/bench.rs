//! `colab bench`: the scaling benchmarks.

mod common;

use common::{fails, ok};

#[test]
fn bench_scaling_reports_events_per_second_at_both_sizes() {
    for (flag, header) in [
        ("--threads", ["64 threads", "4096 threads"]),
        ("--cores", ["8 cores", "1024 cores"]),
    ] {
        let r = ok(&["bench", flag, "--policies", "cfs"]);
        assert!(
            r.stdout.contains(header[0]) && r.stdout.contains(header[1]),
            "{}",
            r.stdout
        );
        let line = r
            .stdout
            .lines()
            .find(|l| l.starts_with("cfs "))
            .unwrap_or_else(|| panic!("no cfs row:\n{}", r.stdout));
        let cols: Vec<&str> = line.split_whitespace().collect();
        // cfs, rate, M, rate, M, ratio
        assert_eq!(cols.len(), 6, "{line}");
        let (a, b, ratio): (f64, f64, f64) = (
            cols[1].parse().unwrap(),
            cols[3].parse().unwrap(),
            cols[5].parse().unwrap(),
        );
        assert!(a > 0.0 && b > 0.0, "{line}");
        // The rates are printed to 0.01 M: the ratio lies within what
        // that rounding allows (debug builds run well under 1 M events/s).
        let (lo, hi) = ((b - 0.005) / (a + 0.005), (b + 0.005) / (a - 0.005));
        assert!(ratio >= lo - 0.001 && ratio <= hi + 0.001, "{line}");
        fails(&["bench", flag, "--full"], &["--full"]);
    }
    fails(&["bench", "--threads", "--cores"], &["--cores"]);
}
