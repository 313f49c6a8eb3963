//! `report.md`: one self-contained file a user can send back (the machine,
//! what the detector and the measurement say about its cores, the results,
//! what failed, and every run as CSV).

use std::fmt::Write as _;

use crate::speeds::{CpuSpeed, TypeSpeed};
use crate::summary::{Cell, Row, CSV_HEADER};

/// One scheduler as run.
pub struct SchedRun {
    pub label: String,
    pub command: String,
    /// Seconds from start to "enabled" (None: the default, or it failed).
    pub attach_s: Option<f64>,
}

pub struct Report<'a> {
    /// `colab-amp-study` and its arguments.
    pub command_line: String,
    /// UTC date and time of the start.
    pub started: String,
    /// This program's version and commit.
    pub version: String,
    /// Kernel release, CPU model, CPU count: `system()`.
    pub system: Vec<(String, String)>,
    /// The detector's one-line description and its warnings.
    pub detected: String,
    pub detect_warnings: &'a [String],
    pub reference_cpus: String,
    pub speeds: &'a [CpuSpeed],
    pub types: &'a [TypeSpeed],
    pub disagreements: &'a [String],
    pub schedulers: &'a [SchedRun],
    pub reps: u32,
    pub cells: &'a [Cell],
    pub geomeans: &'a [(String, f64)],
    pub workloads: &'a [String],
    pub failures: &'a [String],
    pub rows: &'a [Row],
}

/// What the machine says about itself, read under `root` ("/").
pub fn system(root: &std::path::Path) -> Vec<(String, String)> {
    let read = |p: &str| {
        std::fs::read_to_string(root.join(p))
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "(unknown)".into())
    };
    let cpuinfo = std::fs::read_to_string(root.join("proc/cpuinfo")).unwrap_or_default();
    let mut models: Vec<String> = Vec::new();
    for l in cpuinfo.lines() {
        if let Some((k, v)) = l.split_once(':') {
            let k = k.trim();
            if k == "model name" || k == "Hardware" || k == "CPU part" {
                let v = format!("{k}: {}", v.trim());
                if !models.contains(&v) {
                    models.push(v);
                }
            }
        }
    }
    vec![
        ("kernel".into(), read("proc/sys/kernel/osrelease")),
        ("kernel version".into(), read("proc/sys/kernel/version")),
        ("online CPUs".into(), read("sys/devices/system/cpu/online")),
        (
            "CPU model".into(),
            if models.is_empty() {
                "(unknown)".into()
            } else {
                models.join("; ")
            },
        ),
        ("load average at start".into(), read("proc/loadavg")),
    ]
}

impl Report<'_> {
    pub fn render(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "# colab-amp-study report\n");
        let _ = writeln!(
            s,
            "Started {}, `{}` ({}).\n",
            self.started, self.command_line, self.version
        );
        s.push_str("## Machine\n\n");
        for (k, v) in &self.system {
            let _ = writeln!(s, "- {k}: {v}");
        }
        let _ = writeln!(
            s,
            "- core types by sysfs (scx_colab's detector): {}",
            self.detected
        );
        for w in self.detect_warnings {
            let _ = writeln!(s, "  - detector: {w}");
        }
        s.push_str("\nMeasured speed of each core type: the workloads' busy loop pinned to each CPU, relative to the fastest CPU (1.00):\n\n");
        s.push_str("| type (slowest first by sysfs) | CPUs | mean | slowest CPU | fastest CPU |\n|---|---|---|---|---|\n");
        for t in self.types {
            let _ = writeln!(
                s,
                "| {} | {} | {:.2} | {:.2} | {:.2} |",
                t.tier,
                scx_colab_user::detect::format_cpu_list(&t.cpus),
                t.mean,
                t.min,
                t.max
            );
        }
        if self.disagreements.is_empty() {
            let gap = scx_colab_user::detect::TYPE_GAP * 100.0;
            let _ = writeln!(
                s,
                "\nMeasurement and detection agree (each type faster than the one below by more than {gap:.0}%, its CPUs within {gap:.0}% of each other)."
            );
        } else {
            s.push_str("\n**Measurement and detection disagree:**\n\n");
            for d in self.disagreements {
                let _ = writeln!(s, "- {d}");
            }
        }
        let per_cpu: Vec<String> = self
            .speeds
            .iter()
            .map(|c| format!("{}: {:.1}", c.cpu, c.spins_per_us))
            .collect();
        let _ = writeln!(
            s,
            "\nBusy-loop iterations per microsecond, per CPU: {}.\n",
            per_cpu.join(", ")
        );

        s.push_str("## Results\n\n");
        let _ = writeln!(
            s,
            "T_ref: each program alone on CPUs {} under the default scheduler. \
             H_ANTT = mean over a workload's programs of median T_M / median T_ref over {} repetitions (lower is better); \
             in brackets the largest run-to-run spread of a program, (max - min) / median. \
             T_ref is not the simulator's T_SB (alone on an all-big machine of the same size, which a real machine cannot be), \
             so compare the schedulers with each other here, not with the simulator's numbers.\n",
            self.reference_cpus, self.reps
        );
        s.push_str("| workload |");
        for r in self.schedulers {
            let _ = write!(s, " {} |", r.label);
        }
        s.push_str("\n|---|");
        for _ in self.schedulers {
            s.push_str("---|");
        }
        s.push('\n');
        for w in self.workloads {
            let _ = write!(s, "| {w} |");
            for r in self.schedulers {
                match self
                    .cells
                    .iter()
                    .find(|c| &c.workload == w && c.scheduler == r.label)
                {
                    Some(c) => {
                        let _ = write!(s, " {:.3} ({:.0}%) |", c.h_antt, c.max_spread * 100.0);
                    }
                    None => s.push_str(" - |"),
                }
            }
            s.push('\n');
        }
        let default = self
            .geomeans
            .iter()
            .find(|g| g.0 == crate::scheds::DEFAULT)
            .map(|g| g.1);
        s.push_str("| **geomean** |");
        for r in self.schedulers {
            match self.geomeans.iter().find(|g| g.0 == r.label) {
                Some((_, g)) => {
                    let _ = write!(s, " **{g:.3}** |");
                }
                None => s.push_str(" - |"),
            }
        }
        s.push_str("\n| vs default |");
        for r in self.schedulers {
            match (self.geomeans.iter().find(|g| g.0 == r.label), default) {
                (Some((_, g)), Some(d)) if d > 0.0 => {
                    let _ = write!(s, " {:.3} |", g / d);
                }
                _ => s.push_str(" - |"),
            }
        }
        s.push_str("\n\nSchedulers (attach: seconds from start to sched_ext's \"enabled\"):\n\n");
        for r in self.schedulers {
            let attach = r
                .attach_s
                .map(|a| format!(", attached in {a:.1} s"))
                .unwrap_or_default();
            let _ = writeln!(s, "- {}: `{}`{attach}", r.label, r.command);
        }
        s.push('\n');
        if self.failures.is_empty() {
            s.push_str("Every planned run gave a result.\n\n");
        } else {
            s.push_str("## Failures\n\n```\n");
            for f in self.failures {
                let _ = writeln!(s, "{f}");
            }
            s.push_str("```\n\n");
        }
        s.push_str("## Every run (results.csv)\n\nTurnaround of each program, wall clock, ns; `tsb` rows are T_ref.\n\n```csv\n");
        let _ = writeln!(s, "{CSV_HEADER}");
        for r in self.rows {
            let _ = writeln!(s, "{}", r.csv());
        }
        s.push_str("```\n");
        s
    }
}
