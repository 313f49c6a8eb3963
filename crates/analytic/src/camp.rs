//! CAMP's utility factor (UF): Saez, Fedorova, Koufaty, Prieto, "Leveraging
//! Core Specialization via OS Scheduling to Improve Performance on Asymmetric
//! Multicore Systems", ACM TOCS 30(2), 2012, Section 3 and the Appendix.
//!
//! The UF approximates the speedup of an application when `N_FC` of its
//! threads run on fast cores (the rest on slow ones) relative to running all
//! of them on slow cores, under the *BusyFCs* scheduler. The paper derives an
//! analytical form (eq. 1, repeated as eq. 10 in the Appendix) and proposes a
//! cheaper approximation (eq. 2) with an exponent `k`, choosing `k = 2` from
//! the comparison of its Fig. 8.

use std::ops::RangeInclusive;
use std::path::Path;

use crate::output::{md_table, prepare_dir, text_table, write_atomic, StudyFiles};
use crate::plot::{self, Series};
use crate::AnalyticError;

/// Fast cores of Fig. 8: Section 3.2, "an AMP system consisting of two fast
/// cores and eight slow cores" (said of Fig. 8(a); the text does not name the
/// platform of Fig. 8(b): assumption, the same 2FC-8SC system).
pub const FIG8_FAST_CORES: u32 = 2;
/// Lowest SF_avg of Fig. 8(b): Section 3.2, "we have explored an SF_avg range
/// between 1.0 and 2.0".
pub const FIG8_SF_MIN: f64 = 1.0;
/// Highest SF_avg of Fig. 8(b): Section 3.2 (see [`FIG8_SF_MIN`]).
pub const FIG8_SF_MAX: f64 = 2.0;
/// SF_avg steps per unit. Assumption: the text gives no step (the figure is
/// missing from our copy); 0.1 gives 11 points over 1.0..2.0.
pub const FIG8_SF_STEPS_PER_UNIT: u32 = 10;
/// Thread counts of Fig. 8(b): Section 3.2, "the average absolute error
/// obtained for N_threads ranging from 1 to 8". Fig. 8(a)'s thread range is
/// not stated: assumption, the same 1..8 (also the range of Fig. 9 on the
/// same 2FC-8SC system).
pub const FIG8_THREADS: RangeInclusive<u32> = 1..=8;
/// The exponent the paper uses: Section 3.2, "using k = 2".
pub const PAPER_K: u32 = 2;
/// Exponents compared as in Fig. 8 ("different values of k"). Assumption:
/// the text does not list them; 1..4 brackets the chosen k = 2.
pub const FIG8_KS: [u32; 4] = [1, 2, 3, 4];
/// SF_avg of Fig. 8(a): Section 3.2, "a hypothetical balanced application
/// with SF_avg = 1.8".
pub const FIG8A_SF: f64 = 1.8;

/// Iterations of the paper's Algorithm 1: `floor((N_threads - 1) / N_FC) + 1`
/// (Section 3.1; `N_iter` in the Appendix, after eq. 9).
///
/// # Panics
/// If `n_threads` or `n_fc` is 0.
pub fn n_iter(n_threads: u32, n_fc: u32) -> u32 {
    assert!(
        n_threads > 0 && n_fc > 0,
        "need at least one thread and one fast core"
    );
    (n_threads - 1) / n_fc + 1
}

/// Analytical UF, eq. 1 (Section 3.1) = eq. 10 (Appendix):
///
/// ```text
/// UF = SF / ((1 - 1/SF)^floor((N_threads - 1) / N_FC) * (1 - SF) + SF)
/// ```
///
/// Eq. 10 as printed uses a ceiling in the exponent; eq. 1 and the last step
/// of the Appendix's derivation (exponent `N_iter - 1`, with `N_iter` defined
/// after eq. 9 with a floor) use a floor, so the floor is the faithful
/// reading and is what this function computes.
///
/// # Panics
/// If `n_threads` or `n_fc` is 0.
pub fn uf_analytical(sf: f64, n_threads: u32, n_fc: u32) -> f64 {
    n_iter(n_threads, n_fc); // the same preconditions
                             // One implementation of the formula: the CAMP scheduler's.
    colab_policies::uf_analytical(sf, n_threads as usize, n_fc as usize)
}

/// Eq. 10 exactly as printed (ceiling in the exponent), only to report how
/// much the apparent typo would change the comparison.
pub(crate) fn uf_analytical_eq10_as_printed(sf: f64, n_threads: u32, n_fc: u32) -> f64 {
    assert!(n_threads > 0 && n_fc > 0);
    let exponent = (n_threads - 1).div_ceil(n_fc);
    // F_fc(N_iter) = (1 - 1/SF)^(N_iter - 1), eq. 7, with the printed exponent.
    let f_fc = (1.0 - 1.0 / sf).powi(exponent as i32);
    sf / (f_fc * (1.0 - sf) + sf)
}

/// Approximate UF, eq. 2 (Section 3.2):
///
/// ```text
/// UF = (SF - 1) / (floor((N_threads - 1) / N_FC) + 1)^k + 1
/// ```
///
/// The paper uses `k = 2` ([`PAPER_K`]).
///
/// # Panics
/// If `n_threads` or `n_fc` is 0.
pub fn uf_approx(sf: f64, n_threads: u32, n_fc: u32, k: u32) -> f64 {
    n_iter(n_threads, n_fc); // the same preconditions
    colab_policies::uf_approx(sf, n_threads as usize, n_fc as usize, k)
}

/// One (SF, thread count) point of the comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct UfRow {
    pub sf: f64,
    pub n_threads: u32,
    pub n_iter: u32,
    /// Eq. 1 / eq. 10.
    pub analytical: f64,
    /// Eq. 2 with `k` = [`CampUfStudy::k`].
    pub approx: f64,
    /// |analytical - approx|.
    pub abs_error: f64,
}

/// Fig. 8(b): the absolute error for one (k, SF_avg), over the thread counts.
#[derive(Debug, Clone, PartialEq)]
pub struct KError {
    pub k: u32,
    pub sf: f64,
    /// Mean over [`FIG8_THREADS`] (what each point of Fig. 8(b) shows).
    pub mean_abs_error: f64,
    pub max_abs_error: f64,
}

/// The whole study.
#[derive(Debug, Clone)]
pub struct CampUfStudy {
    pub n_fc: u32,
    pub k: u32,
    pub sfs: Vec<f64>,
    pub threads: Vec<u32>,
    /// For `k`, every SF x thread count, SF-major.
    pub rows: Vec<UfRow>,
    /// For every k of [`FIG8_KS`] and every SF.
    pub by_k: Vec<KError>,
    pub max_abs_error: f64,
    pub mean_abs_error: f64,
}

/// SF_avg grid of Fig. 8(b), 1.0, 1.1, ..., 2.0 (computed as i / 10 so every
/// value is the nearest double to the decimal).
pub fn fig8_sfs() -> Vec<f64> {
    let lo = (FIG8_SF_MIN * f64::from(FIG8_SF_STEPS_PER_UNIT)).round() as u32;
    let hi = (FIG8_SF_MAX * f64::from(FIG8_SF_STEPS_PER_UNIT)).round() as u32;
    (lo..=hi)
        .map(|i| f64::from(i) / f64::from(FIG8_SF_STEPS_PER_UNIT))
        .collect()
}

/// Computes the comparison over the given grid.
///
/// # Panics
/// If `n_fc` is 0 or `threads` contains 0.
pub fn camp_uf_study_with(sfs: &[f64], threads: &[u32], n_fc: u32, k: u32) -> CampUfStudy {
    let rows: Vec<UfRow> = sfs
        .iter()
        .flat_map(|&sf| {
            threads.iter().map(move |&n| {
                let analytical = uf_analytical(sf, n, n_fc);
                let approx = uf_approx(sf, n, n_fc, k);
                UfRow {
                    sf,
                    n_threads: n,
                    n_iter: n_iter(n, n_fc),
                    analytical,
                    approx,
                    abs_error: (analytical - approx).abs(),
                }
            })
        })
        .collect();
    let by_k = FIG8_KS
        .iter()
        .flat_map(|&kk| {
            sfs.iter().map(move |&sf| {
                let errs: Vec<f64> = threads
                    .iter()
                    .map(|&n| (uf_analytical(sf, n, n_fc) - uf_approx(sf, n, n_fc, kk)).abs())
                    .collect();
                KError {
                    k: kk,
                    sf,
                    mean_abs_error: mean(&errs),
                    max_abs_error: errs.iter().copied().fold(0.0, f64::max),
                }
            })
        })
        .collect();
    let errs: Vec<f64> = rows.iter().map(|r| r.abs_error).collect();
    CampUfStudy {
        n_fc,
        k,
        sfs: sfs.to_vec(),
        threads: threads.to_vec(),
        max_abs_error: errs.iter().copied().fold(0.0, f64::max),
        mean_abs_error: mean(&errs),
        rows,
        by_k,
    }
}

/// The study over the ranges of Fig. 8 with the paper's k = 2.
pub fn camp_uf_study() -> CampUfStudy {
    let threads: Vec<u32> = FIG8_THREADS.collect();
    camp_uf_study_with(&fig8_sfs(), &threads, FIG8_FAST_CORES, PAPER_K)
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

impl CampUfStudy {
    /// Fig. 8(b) entry for (k, sf).
    pub fn k_error(&self, k: u32, sf: f64) -> Option<&KError> {
        self.by_k.iter().find(|e| e.k == k && e.sf == sf)
    }

    /// The k of [`FIG8_KS`] with the lowest mean error at `sf`.
    pub fn best_k(&self, sf: f64) -> Option<u32> {
        self.by_k
            .iter()
            .filter(|e| e.sf == sf)
            .min_by(|a, b| a.mean_abs_error.total_cmp(&b.mean_abs_error))
            .map(|e| e.k)
    }

    fn rows_for_sf(&self, sf: f64) -> impl Iterator<Item = &UfRow> {
        self.rows.iter().filter(move |r| r.sf == sf)
    }

    /// Max |eq. 1 - eq. 10 as printed| over the grid (the floor/ceiling question).
    fn eq10_ceiling_gap(&self) -> f64 {
        self.rows
            .iter()
            .map(|r| {
                (r.analytical - uf_analytical_eq10_as_printed(r.sf, r.n_threads, self.n_fc)).abs()
            })
            .fold(0.0, f64::max)
    }

    /// The error table as CSV: one row per (SF, thread count).
    pub fn error_csv(&self) -> String {
        let mut s = format!(
            "sf,n_threads,n_fc,n_iter,uf_analytical_eq1,uf_approx_eq2_k{},abs_error\n",
            self.k
        );
        for r in &self.rows {
            s.push_str(&format!(
                "{},{},{},{},{},{},{}\n",
                r.sf, r.n_threads, self.n_fc, r.n_iter, r.analytical, r.approx, r.abs_error
            ));
        }
        s
    }

    /// Fig. 8(b) as CSV: mean and max error over the thread counts per (k, SF).
    pub fn by_k_csv(&self) -> String {
        let mut s = String::from("k,sf,mean_abs_error,max_abs_error\n");
        for e in &self.by_k {
            s.push_str(&format!(
                "{},{},{},{}\n",
                e.k, e.sf, e.mean_abs_error, e.max_abs_error
            ));
        }
        s
    }

    /// Error matrix (SF rows x thread-count columns) with 4 decimals.
    fn error_matrix(&self) -> (Vec<String>, Vec<Vec<String>>) {
        let mut headers = vec!["SF".to_string()];
        headers.extend(self.threads.iter().map(|n| format!("N={n}")));
        headers.push("max".into());
        headers.push("mean".into());
        let rows = self
            .sfs
            .iter()
            .map(|&sf| {
                let errs: Vec<f64> = self.rows_for_sf(sf).map(|r| r.abs_error).collect();
                let mut row = vec![format!("{sf:.1}")];
                row.extend(errs.iter().map(|e| format!("{e:.4}")));
                row.push(format!("{:.4}", errs.iter().copied().fold(0.0, f64::max)));
                row.push(format!("{:.4}", mean(&errs)));
                row
            })
            .collect();
        (headers, rows)
    }

    /// Short summary for the terminal.
    pub fn summary_text(&self) -> String {
        let (headers, rows) = self.error_matrix();
        let h: Vec<&str> = headers.iter().map(String::as_str).collect();
        format!(
            "CAMP utility factor: |eq. 1 - eq. 2 (k = {})| on {} fast cores\n{}overall: max {:.4}, mean {:.4}\n",
            self.k,
            self.n_fc,
            text_table(&h, &rows),
            self.max_abs_error,
            self.mean_abs_error
        )
    }

    /// The Markdown report: parameters with sources, the error table and the
    /// checks against the paper's statements.
    pub fn markdown(&self) -> String {
        let (headers, rows) = self.error_matrix();
        let h: Vec<&str> = headers.iter().map(String::as_str).collect();
        let mut s =
            String::from("# CAMP utility factor: analytical form against the approximation\n\n");
        s.push_str(
            "Source: Saez et al., ACM TOCS 30(2), 2012, Section 3 and the Appendix.\n\n\
             * Analytical UF, eq. 1 / eq. 10: `SF / ((1 - 1/SF)^floor((N-1)/N_FC) * (1 - SF) + SF)`\n\
             * Approximation, eq. 2: `(SF - 1) / (floor((N-1)/N_FC) + 1)^k + 1`\n\n",
        );
        s.push_str("## Parameters\n\n");
        s.push_str(&md_table(
            &["parameter", "value", "source"],
            &[
                vec![
                    "N_FC".into(),
                    self.n_fc.to_string(),
                    "Sec. 3.2, Fig. 8(a): two fast cores and eight slow cores; Fig. 8(b): assumption, same system".into(),
                ],
                vec![
                    "SF_avg".into(),
                    format!("{:.1} to {:.1} step 0.1", FIG8_SF_MIN, FIG8_SF_MAX),
                    "range: Sec. 3.2 (\"between 1.0 and 2.0\"); step: assumption (not stated, figure missing)".into(),
                ],
                vec![
                    "N_threads".into(),
                    format!("{} to {}", FIG8_THREADS.start(), FIG8_THREADS.end()),
                    "Sec. 3.2, Fig. 8(b) (\"ranging from 1 to 8\"); Fig. 8(a): assumption, same".into(),
                ],
                vec![
                    "k".into(),
                    self.k.to_string(),
                    "Sec. 3.2 (\"using k = 2\"); the Fig. 8(b) comparison uses k = 1..4 (assumption)".into(),
                ],
            ],
        ));
        s.push_str(&format!(
            "\n## Absolute error |eq. 1 - eq. 2 (k = {})|\n\n{}\nOver all {} points: **max {:.4}**, **mean {:.4}**. Full precision: `uf_error.csv`.\n\n",
            self.k,
            md_table(&h, &rows),
            self.rows.len(),
            self.max_abs_error,
            self.mean_abs_error
        ));

        s.push_str("## Fig. 8(b): mean absolute error over N_threads = 1..8, per k\n\n");
        let mut kh = vec!["SF".to_string()];
        kh.extend(FIG8_KS.iter().map(|k| format!("k={k}")));
        kh.push("best k".into());
        let kh: Vec<&str> = kh.iter().map(String::as_str).collect();
        let krows: Vec<Vec<String>> = self
            .sfs
            .iter()
            .map(|&sf| {
                let mut r = vec![format!("{sf:.1}")];
                for &k in &FIG8_KS {
                    r.push(
                        self.k_error(k, sf)
                            .map_or("-".into(), |e| format!("{:.4}", e.mean_abs_error)),
                    );
                }
                // At SF = 1 every form is exactly 1: no k is better.
                let tie = FIG8_KS
                    .iter()
                    .all(|&k| self.k_error(k, sf).is_some_and(|e| e.mean_abs_error == 0.0));
                r.push(if tie {
                    "all (0 error)".into()
                } else {
                    self.best_k(sf).map_or("-".into(), |k| k.to_string())
                });
                r
            })
            .collect();
        s.push_str(&md_table(&kh, &krows));
        s.push_str("\nFull precision: `error_by_k.csv`.\n\n");

        s.push_str("## Against the paper's statements\n\n");
        let best18 = self.best_k(FIG8A_SF);
        let errs18: Vec<String> = FIG8_KS
            .iter()
            .filter_map(|&k| self.k_error(k, FIG8A_SF))
            .map(|e| format!("k={}: {:.4}", e.k, e.mean_abs_error))
            .collect();
        s.push_str(&format!(
            "* \"[For SF_avg = 1.8] choosing k = 2 provides the best approximation\" (Sec. 3.2): mean errors {}; best k = {} -> **{}**.\n",
            errs18.join(", "),
            best18.map_or("-".into(), |k| k.to_string()),
            if best18 == Some(2) { "agrees" } else { "disagrees" }
        ));
        let non_trivial: Vec<f64> = self.sfs.iter().copied().filter(|&sf| sf > 1.0).collect();
        let k2_best = non_trivial
            .iter()
            .filter(|&&sf| self.best_k(sf) == Some(2))
            .count();
        // Worst (over SF) mean error of every k: "across the board" read as
        // the k whose worst case is lowest.
        let worst: Vec<(u32, f64)> = FIG8_KS
            .iter()
            .map(|&k| {
                let w = self
                    .by_k
                    .iter()
                    .filter(|e| e.k == k)
                    .map(|e| e.mean_abs_error)
                    .fold(0.0, f64::max);
                (k, w)
            })
            .collect();
        let minimax = worst.iter().min_by(|a, b| a.1.total_cmp(&b.1)).map(|w| w.0);
        s.push_str(&format!(
            "* \"choosing k = 2 leads to low absolute errors across the board\" (Sec. 3.2): k = 2 has the lowest mean error at {k2_best} of {} SF values above 1.0 (smaller k-independent errors at low SF favour k = 3 or 4 there); worst mean error over the SF range: {} -> k = {} has the lowest worst case -> {}.\n",
            non_trivial.len(),
            worst
                .iter()
                .map(|(k, w)| format!("k={k}: {w:.4}"))
                .collect::<Vec<_>>()
                .join(", "),
            minimax.map_or("-".into(), |k| k.to_string()),
            if minimax == Some(2) {
                "**agrees** in that sense (not pointwise)"
            } else {
                "**disagrees**"
            }
        ));
        s.push_str(&format!(
            "* Eq. 10 as printed has a ceiling in the exponent where eq. 1 and the derivation (exponent N_iter - 1) have a floor. We use the floor; the ceiling would differ by up to {:.4} on this grid and would give UF < SF_avg even when every thread has a fast core (e.g. N = 2), against Sec. 3.2 (\"If all threads were running on fast cores ... UF = SF_avg\"), so we read it as a typo.\n",
            self.eq10_ceiling_gap()
        ));
        s.push_str("\nChart: `uf_fig8.svg` / `uf_fig8.png` ((a) UF against N_threads at SF_avg = 1.8, both forms; (b) the table above).\n");
        s
    }

    fn chart_series(&self) -> (Vec<Series>, Vec<Series>) {
        let threads = &self.threads;
        let mut a = vec![Series {
            name: "Analytical UF (eq. 1)".into(),
            points: threads
                .iter()
                .map(|&n| (f64::from(n), uf_analytical(FIG8A_SF, n, self.n_fc)))
                .collect(),
        }];
        for &k in &FIG8_KS {
            a.push(Series {
                name: format!("UF eq. 2, k = {k}"),
                points: threads
                    .iter()
                    .map(|&n| (f64::from(n), uf_approx(FIG8A_SF, n, self.n_fc, k)))
                    .collect(),
            });
        }
        let b = FIG8_KS
            .iter()
            .map(|&k| Series {
                name: format!("k = {k}"),
                points: self
                    .by_k
                    .iter()
                    .filter(|e| e.k == k)
                    .map(|e| (e.sf, e.mean_abs_error))
                    .collect(),
            })
            .collect();
        (a, b)
    }
}

/// Runs the study over Fig. 8's ranges and writes `uf_error.csv`,
/// `error_by_k.csv`, `summary.md` and `uf_fig8.{svg,png}` into `dir`.
pub fn write_camp_uf(dir: &Path) -> Result<StudyFiles, AnalyticError> {
    let study = camp_uf_study();
    colab_report::check_fonts().map_err(|e| AnalyticError::Font(e.to_string()))?;
    prepare_dir(dir)?;
    let mut files = Vec::new();
    for (name, text) in [
        ("uf_error.csv", study.error_csv()),
        ("error_by_k.csv", study.by_k_csv()),
        ("summary.md", study.markdown()),
    ] {
        let p = dir.join(name);
        write_atomic(&p, &text)?;
        files.push(p);
    }
    let (a, b) = study.chart_series();
    let panels = [
        plot::LinePanel {
            title: format!("(a) UF, SF_avg = {FIG8A_SF}, {} fast cores", study.n_fc),
            x_desc: "N_threads".into(),
            y_desc: "utility factor".into(),
            series: a,
            integer_x: true,
            first_color: 0,
        },
        plot::LinePanel {
            title: "(b) mean |Analytical UF - UF| over N_threads 1..8".into(),
            x_desc: "SF_avg".into(),
            y_desc: "mean absolute error".into(),
            series: b,
            integer_x: false,
            // Panel (a) starts with the analytical curve: keep k's colours.
            first_color: 1,
        },
    ];
    files.extend(plot::write_line_panels(
        &dir.join("uf_fig8"),
        "CAMP utility factor: eq. 1 against eq. 2 (cf. TOCS'12 Fig. 8)",
        &panels,
    )?);
    Ok(StudyFiles {
        dir: dir.to_path_buf(),
        files,
        summary: study.summary_text(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn n_iter_follows_algorithm_1() {
        // floor((N-1)/2)+1 for N = 1..8: 1,1,2,2,3,3,4,4.
        let got: Vec<u32> = (1..=8).map(|n| n_iter(n, 2)).collect();
        assert_eq!(got, [1, 1, 2, 2, 3, 3, 4, 4]);
        assert_eq!(n_iter(13, 4), 4); // floor(12/4)+1
    }

    #[test]
    fn analytical_by_hand() {
        // SF = 2, N = 4, N_FC = 2: exponent floor(3/2) = 1; (1 - 1/2)^1 = 0.5;
        // denominator 0.5 * (1 - 2) + 2 = 1.5; UF = 2 / 1.5 = 4/3.
        assert!(close(uf_analytical(2.0, 4, 2), 4.0 / 3.0));
        // SF = 2, N = 5, N_FC = 2: exponent 2; 0.5^2 = 0.25;
        // 0.25 * (1 - 2) + 2 = 1.75; UF = 2 / 1.75 = 8/7.
        assert!(close(uf_analytical(2.0, 5, 2), 8.0 / 7.0));
        // SF = 1.5, N = 8, N_FC = 2: exponent floor(7/2) = 3; (1/3)^3 = 1/27;
        // 1/27 * (1 - 1.5) + 1.5 = 1.5 - 1/54 = 80/54; UF = 1.5 * 54 / 80 = 1.0125.
        assert!(close(uf_analytical(1.5, 8, 2), 1.0125));
        // Threads <= fast cores: exponent 0, UF = SF / ((1 - SF) + SF) = SF.
        assert!(close(uf_analytical(1.8, 2, 2), 1.8));
        // SF = 1: no speedup whatever the thread count.
        assert!(close(uf_analytical(1.0, 7, 2), 1.0));
    }

    #[test]
    fn approx_by_hand() {
        // SF = 2, N = 4, N_FC = 2, k = 2: (2 - 1) / (1 + 1)^2 + 1 = 1.25.
        assert!(close(uf_approx(2.0, 4, 2, 2), 1.25));
        // SF = 1.5, N = 8, k = 2: 0.5 / 4^2 + 1 = 1.03125.
        assert!(close(uf_approx(1.5, 8, 2, 2), 1.03125));
        // SF = 1.8, N = 5, k = 3: 0.8 / 3^3 + 1 = 1 + 0.8/27.
        assert!(close(uf_approx(1.8, 5, 2, 3), 1.0 + 0.8 / 27.0));
        // One thread: UF = SF for every k.
        assert!(close(uf_approx(1.7, 1, 2, 4), 1.7));
    }

    #[test]
    fn eq10_as_printed_differs_only_off_multiples() {
        // N = 4, N_FC = 2: floor(3/2) = 1 but ceil(3/2) = 2: SF = 2 gives
        // 2 / (0.25 * (1 - 2) + 2) = 8/7 instead of 4/3.
        assert!(close(uf_analytical_eq10_as_printed(2.0, 4, 2), 8.0 / 7.0));
        // N = 5: (5-1)/2 = 2 exactly, both agree.
        assert!(close(
            uf_analytical_eq10_as_printed(2.0, 5, 2),
            uf_analytical(2.0, 5, 2)
        ));
    }

    #[test]
    fn study_grid_and_table_values() {
        let s = camp_uf_study();
        assert_eq!(s.sfs.len(), 11);
        assert_eq!(s.sfs[3], 1.3);
        assert_eq!(s.rows.len(), 11 * 8);
        // SF = 2, N = 4 row: |4/3 - 1.25| = 1/12 (hand values above).
        let r = s
            .rows
            .iter()
            .find(|r| r.sf == 2.0 && r.n_threads == 4)
            .unwrap();
        assert!(close(r.abs_error, 1.0 / 12.0));
        // N <= N_FC gives no error; SF = 1 gives no error.
        for r in &s.rows {
            if r.n_threads <= 2 || r.sf == 1.0 {
                assert!(close(r.abs_error, 0.0), "{r:?}");
            }
        }
        let max = s.rows.iter().map(|r| r.abs_error).fold(0.0, f64::max);
        assert_eq!(s.max_abs_error, max);
        assert!(s.mean_abs_error > 0.0 && s.mean_abs_error < s.max_abs_error);
    }

    #[test]
    fn fig8a_k2_is_best_at_sf_1_8() {
        // The paper's claim for Fig. 8(a); checked by hand for SF = 1.8:
        // analytical at exponents 0..3 = 1.8, 1.2461538, 1.0962406, 1.0406027;
        // k = 2 gives 1.8, 1.2, 1.08889, 1.05 (mean error ~0.0157), k = 1
        // 1.8, 1.4, 1.26667, 1.2 (~0.121), k = 3 1.8, 1.1, 1.02963, 1.0125 (~0.060).
        let s = camp_uf_study();
        assert_eq!(s.best_k(1.8), Some(2));
        let e2 = s.k_error(2, 1.8).unwrap().mean_abs_error;
        let by_hand = 2.0
            * ((1.246153846 - 1.2) + (1.096240602 - 1.0 - 0.8 / 9.0) + (1.05 - 1.040602696))
            / 8.0;
        assert!((e2 - by_hand).abs() < 1e-8, "{e2} vs {by_hand}");
    }
}
