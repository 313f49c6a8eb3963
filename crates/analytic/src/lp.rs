//! A tiny exact linear-program solver by vertex enumeration, enough for the
//! 4-application problems of the Prop-SP study (4 variables, ~22 constraints,
//! a few thousand 4x4 solves).
//!
//! A bounded, non-empty polytope `{x : A x <= b}` has its maximum of a linear
//! objective at a vertex, and every vertex is the solution of `d` linearly
//! independent constraints taken as equalities. Trying every `d`-subset of
//! rows therefore finds the exact optimum (up to floating point), with no
//! step size or starting point to tune.

/// Slack allowed when checking a candidate vertex against a constraint.
pub(crate) const FEAS_TOL: f64 = 1e-11;

/// One constraint `a . x <= b`.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    pub a: Vec<f64>,
    pub b: f64,
}

/// Most variables [`maximize`] handles (the matrices live on the stack).
pub(crate) const MAX_VARS: usize = 5;

/// Maximises `c . x` subject to `eq` (an equality `a . x = b`, if any) and
/// `rows`, which together must bound every variable. Returns `None` when the
/// constraints have no solution.
///
/// An equality is active at every vertex, so it joins every candidate set
/// instead of being split into two inequalities (6x fewer systems for the
/// 4-application problems).
pub(crate) fn maximize(c: &[f64], eq: Option<&Row>, rows: &[Row]) -> Option<Vec<f64>> {
    let d = c.len();
    assert!(d <= MAX_VARS, "at most {MAX_VARS} variables");
    let ok = |r: &Row, x: &[f64]| dot(&r.a, x) <= r.b + FEAS_TOL * (1.0 + r.b.abs());
    let feasible = |x: &[f64]| rows.iter().all(|r| ok(r, x));
    if d == 0 {
        // With no variables an equality reads `0 = b`.
        let eq_ok = match eq {
            None => true,
            Some(r) => r.b.abs() <= FEAS_TOL,
        };
        return (eq_ok && feasible(&[])).then(Vec::new);
    }
    let free = d - usize::from(eq.is_some());
    if rows.len() < free {
        return None;
    }
    let mut best: Option<(f64, Vec<f64>)> = None;
    let mut pick: Vec<usize> = (0..free).collect();
    loop {
        let chosen = eq.into_iter().chain(pick.iter().map(|&i| &rows[i]));
        if let Some(x) = solve(chosen, d) {
            if feasible(&x) {
                let v = dot(c, &x);
                let better = match &best {
                    None => true,
                    Some((bv, _)) => v > *bv,
                };
                if better {
                    best = Some((v, x));
                }
            }
        }
        if free == 0 || !next_combination(&mut pick, rows.len()) {
            break;
        }
    }
    best.map(|(_, x)| x)
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Advances `pick` (strictly increasing indices below `n`) to the next
/// combination in lexicographic order; false after the last one.
fn next_combination(pick: &mut [usize], n: usize) -> bool {
    let k = pick.len();
    let mut i = k;
    while i > 0 {
        i -= 1;
        if pick[i] < n - k + i {
            pick[i] += 1;
            for j in i + 1..k {
                pick[j] = pick[j - 1] + 1;
            }
            return true;
        }
    }
    false
}

/// Solves the square system of the `d` chosen rows (taken as equalities) by
/// Gaussian elimination with partial pivoting; `None` when (numerically)
/// singular.
fn solve<'a>(chosen: impl Iterator<Item = &'a Row>, d: usize) -> Option<Vec<f64>> {
    let mut m = [[0.0f64; MAX_VARS + 1]; MAX_VARS];
    for (i, r) in chosen.enumerate() {
        m[i][..d].copy_from_slice(&r.a);
        m[i][d] = r.b;
    }
    for col in 0..d {
        let p = (col..d).max_by(|&i, &j| m[i][col].abs().total_cmp(&m[j][col].abs()))?;
        if m[p][col].abs() < 1e-12 {
            return None;
        }
        m.swap(col, p);
        let pivot = m[col];
        for (r, row) in m.iter_mut().enumerate().take(d) {
            if r != col {
                let f = row[col] / pivot[col];
                if f != 0.0 {
                    for (v, p) in row[col..=d].iter_mut().zip(&pivot[col..=d]) {
                        *v -= f * p;
                    }
                }
            }
        }
    }
    Some((0..d).map(|i| m[i][d] / m[i][i]).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(a: &[f64], b: f64) -> Row {
        Row { a: a.to_vec(), b }
    }

    #[test]
    fn small_lp_by_hand() {
        // max x + y, x + 2y <= 4, 3x + y <= 6, x, y >= 0: the vertex
        // x + 2y = 4, 3x + y = 6 gives x = 1.6, y = 1.2, objective 2.8.
        let rows = [
            row(&[1.0, 2.0], 4.0),
            row(&[3.0, 1.0], 6.0),
            row(&[-1.0, 0.0], 0.0),
            row(&[0.0, -1.0], 0.0),
        ];
        let x = maximize(&[1.0, 1.0], None, &rows).unwrap();
        assert!(
            (x[0] - 1.6).abs() < 1e-12 && (x[1] - 1.2).abs() < 1e-12,
            "{x:?}"
        );
    }

    #[test]
    fn infeasible_is_none() {
        // x <= 0 and x >= 1.
        let rows = [row(&[1.0], 0.0), row(&[-1.0], -1.0)];
        assert!(maximize(&[1.0], None, &rows).is_none());
    }

    #[test]
    fn equality_by_hand() {
        // max 2x + y with x + y = 1, 0 <= x <= 0.75, 0 <= y: x = 0.75, y = 0.25.
        let eq = row(&[1.0, 1.0], 1.0);
        let rows = [
            row(&[1.0, 0.0], 0.75),
            row(&[-1.0, 0.0], 0.0),
            row(&[0.0, -1.0], 0.0),
        ];
        let x = maximize(&[2.0, 1.0], Some(&eq), &rows).unwrap();
        assert!(
            (x[0] - 0.75).abs() < 1e-12 && (x[1] - 0.25).abs() < 1e-12,
            "{x:?}"
        );
        // x + y = 3 cannot hold with x <= 0.75 and y <= 1.
        let rows2 = [
            rows[0].clone(),
            rows[1].clone(),
            rows[2].clone(),
            row(&[0.0, 1.0], 1.0),
        ];
        assert!(maximize(&[2.0, 1.0], Some(&row(&[1.0, 1.0], 3.0)), &rows2).is_none());
    }

    #[test]
    fn combinations_are_all_visited() {
        let mut pick = vec![0, 1];
        let mut n = 1;
        while next_combination(&mut pick, 5) {
            n += 1;
        }
        assert_eq!(n, 10); // C(5, 2)
    }
}
