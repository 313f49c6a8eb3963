//! Random multi-programmed mixes drawn deterministically from a seed: held-out
//! test workloads in the manner of the random mixes of colab-cgo20-evaluation
//! Table WC ("We randomly mix our selected benchmarks"), but broader: 2 to 6
//! programs per mix instead of 2 or 4, and a thread parameter `n` drawn per
//! program instead of n = 4 everywhere.
//!
//! Mix `i` of seed `S` (named `Rand-S-i`) is drawn as follows, from a random
//! stream that depends only on `(S, i)`, so the first N mixes of a seed are
//! the same whatever N is:
//!
//! 1. the program count k, uniform in [`MIN_PROGRAMS`]`..=`[`MAX_PROGRAMS`];
//! 2. k distinct programs of the pool, uniformly without replacement (a
//!    partial Fisher-Yates shuffle of the pool in the order given);
//! 3. each program's `n` from its [`valid_n`] values, uniform over the
//!    combinations whose total thread count is at most [`MAX_THREADS`]: the
//!    same distribution as drawing every `n` uniformly and redrawing them all
//!    while the mix has too many threads, computed by counting instead of
//!    looping, so it always ends.
//!
//! Every draw uses [`below`] on the raw 64-bit output of `Pcg64Mcg` (not
//! `rand`'s range sampling, whose algorithm may change between versions), so
//! the mixes are the same on every machine and build.

use crate::spec::{MixProgram, MixSpec};
use crate::{Library, WorkloadError};
use rand::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// The report class of every random mix.
pub const RANDOM_CLASS: &str = "random";
/// Fewest programs in a random mix.
pub const MIN_PROGRAMS: usize = 2;
/// Most programs in a random mix (colab-cgo20's largest mixes have six).
pub const MAX_PROGRAMS: usize = 6;
/// Most threads a random mix may create over its life (assumption: four per
/// core of the study's largest machine, 4B4S; the papers' largest mix,
/// colab-tpds Large-4, has 29).
pub const MAX_THREADS: u32 = 32;
/// Most random mixes one request may draw (assumption: enough for any
/// held-out set; each mix adds a few thousand simulations to a campaign).
pub const MAX_MIXES: u32 = 1000;
/// Largest `n` drawn for any program (assumption: the core count of the
/// study's largest machine, 4B4S; the splits of workloads/mixes/tpds.toml give
/// no program a larger n except swaptions in Large-2).
pub const MAX_N: i64 = 8;

/// The values of `n` a benchmark may be drawn with, and where they come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ValidN {
    pub values: &'static [i64],
    pub source: &'static str,
}

const POWERS_OF_2: &[i64] = &[1, 2, 4, 8];
const ONE_TO_MAX: &[i64] = &[1, 2, 3, 4, 5, 6, 7, 8];
const SINGLE: &[i64] = &[1];

/// The values of `n` random mixes draw for `bench`, with their source; `None`
/// for a benchmark without a documented range (the CAMP and Prop-SP models,
/// user programs). Every range stops at [`MAX_N`]; the thread cap
/// ([`MAX_THREADS`]) can exclude more (ferret at n = 8 has 35 threads and is
/// never drawn).
pub fn valid_n(bench: &str) -> Option<ValidN> {
    let any = "any n >= 1: neither its model file nor rule 2 of \
               workloads/mixes/tpds.toml restricts it (assumption: the real program \
               accepts any thread count)";
    let (values, source) = match bench {
        "fft" => (
            POWERS_OF_2,
            "power of 2: the real program needs it (SPLASH-2 README.fft; \
             workloads/benchmarks/fft.toml, tpds.toml rule 2)",
        ),
        "ocean_cp" => (
            POWERS_OF_2,
            "power of 2: main.C rejects other values (workloads/benchmarks/ocean_cp.toml, \
             tpds.toml rule 2)",
        ),
        "fluidanimate" => (
            POWERS_OF_2,
            "power of 2: the PARSEC program needs it \
             (workloads/benchmarks/fluidanimate.toml, tpds.toml rule 2)",
        ),
        "swaptions" => (
            ONE_TO_MAX,
            "1 to 16: the simsmall input has 16 swaptions (tpds.toml rule 2); \
             capped at MAX_N",
        ),
        "mcf" | "bzip2" => (
            SINGLE,
            "1: single-threaded SPEC CPU2006 program (threads_formula \"1\", \
             default_n 1 in its model file)",
        ),
        "blackscholes" | "bodytrack" | "dedup" | "ferret" | "freqmine" | "fmm" | "lu_cb"
        | "lu_ncb" | "radix" | "water_nsquared" | "water_spatial" => (ONE_TO_MAX, any),
        _ => return None,
    };
    Some(ValidN { values, source })
}

/// The name of mix `index` (from 1) of seed `seed`.
pub fn mix_name(seed: u64, index: u32) -> String {
    format!("Rand-{seed}-{index}")
}

/// The `source` field of the mixes of seed `seed`.
pub fn mix_source(seed: u64) -> String {
    format!("random (seed {seed})")
}

/// A uniform integer in `0..n` (`n > 0`) from the generator's raw output,
/// without modulo bias: values at or above the largest multiple of `n` that
/// fits are redrawn.
pub fn below(rng: &mut impl RngCore, n: u64) -> u64 {
    assert!(n > 0, "below(0)");
    let limit = u64::MAX - u64::MAX % n;
    loop {
        let x = rng.next_u64();
        if x < limit {
            return x % n;
        }
    }
}

/// SplitMix64's output function: spreads nearby inputs over the whole range.
fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The random stream of mix `index` of seed `seed`.
fn mix_rng(seed: u64, index: u32) -> Pcg64Mcg {
    Pcg64Mcg::seed_from_u64(splitmix64(splitmix64(seed) ^ u64::from(index)))
}

fn error(problem: impl Into<String>) -> WorkloadError {
    WorkloadError::Random {
        problem: problem.into(),
    }
}

/// Checks a request for `count` mixes before anything is drawn.
pub fn check_count(count: u32) -> Result<(), WorkloadError> {
    if count == 0 || count > MAX_MIXES {
        return Err(error(format!(
            "the number of mixes must be from 1 to {MAX_MIXES}, not {count}"
        )));
    }
    Ok(())
}

/// One program of the pool: its name and, per valid `n`, the threads it creates.
struct Candidate<'a> {
    bench: &'a str,
    options: Vec<(i64, u32)>,
}

fn candidates<'a>(lib: &Library, pool: &[&'a str]) -> Result<Vec<Candidate<'a>>, WorkloadError> {
    let mut out: Vec<Candidate> = Vec::new();
    for &bench in pool {
        if out.iter().any(|c| c.bench == bench) {
            return Err(error(format!("'{bench}' is in the pool twice")));
        }
        let valid = valid_n(bench).ok_or_else(|| {
            error(format!(
                "'{bench}' has no documented range of n (random::valid_n)"
            ))
        })?;
        let mut options = Vec::new();
        for &n in valid.values {
            let threads = lib.program(bench, Some(n))?.total_threads;
            options.push((n, threads));
        }
        out.push(Candidate { bench, options });
    }
    if out.len() < MAX_PROGRAMS {
        return Err(error(format!(
            "the pool has {} programs; mixes of up to {MAX_PROGRAMS} need at least that many",
            out.len()
        )));
    }
    Ok(out)
}

/// Mix `index` (from 1) of seed `seed`, drawn from `pool` (benchmark names
/// of `lib`, each with a [`valid_n`] range).
pub fn random_mix(
    lib: &Library,
    pool: &[&str],
    seed: u64,
    index: u32,
) -> Result<MixSpec, WorkloadError> {
    let cands = candidates(lib, pool)?;
    draw(&cands, seed, index)
}

/// Mixes 1 to `count` of seed `seed` (see [`random_mix`]).
pub fn random_mixes(
    lib: &Library,
    pool: &[&str],
    count: u32,
    seed: u64,
) -> Result<Vec<MixSpec>, WorkloadError> {
    check_count(count)?;
    let cands = candidates(lib, pool)?;
    (1..=count).map(|i| draw(&cands, seed, i)).collect()
}

fn draw(cands: &[Candidate], seed: u64, index: u32) -> Result<MixSpec, WorkloadError> {
    let mut rng = mix_rng(seed, index);
    let span = (MAX_PROGRAMS - MIN_PROGRAMS + 1) as u64;
    let k = MIN_PROGRAMS + below(&mut rng, span) as usize;
    // Partial Fisher-Yates: the first k places end up a uniform k-subset in
    // uniform order.
    let mut order: Vec<usize> = (0..cands.len()).collect();
    for j in 0..k {
        let r = j + below(&mut rng, (order.len() - j) as u64) as usize;
        order.swap(j, r);
    }
    let chosen: Vec<&Candidate> = order[..k].iter().map(|&c| &cands[c]).collect();

    // ways[j][b]: combinations of n for chosen[j..] creating at most b threads.
    let cap = MAX_THREADS as usize;
    let mut ways = vec![vec![0u64; cap + 1]; k + 1];
    ways[k].iter_mut().for_each(|w| *w = 1);
    for j in (0..k).rev() {
        for b in 0..=cap {
            ways[j][b] = chosen[j]
                .options
                .iter()
                .filter(|&&(_, t)| t as usize <= b)
                .map(|&(_, t)| ways[j + 1][b - t as usize])
                .sum();
        }
    }
    let name = mix_name(seed, index);
    if ways[0][cap] == 0 {
        let names: Vec<&str> = chosen.iter().map(|c| c.bench).collect();
        return Err(error(format!(
            "{name}: {} cannot fit in {MAX_THREADS} threads with any valid n",
            names.join(", ")
        )));
    }
    let mut budget = cap;
    let mut programs = Vec::with_capacity(k);
    let mut total = 0u32;
    for (j, c) in chosen.iter().enumerate() {
        let mut r = below(&mut rng, ways[j][budget]);
        let (n, t) = c
            .options
            .iter()
            .filter(|&&(_, t)| t as usize <= budget)
            .find(|&&(_, t)| {
                let w = ways[j + 1][budget - t as usize];
                if r < w {
                    true
                } else {
                    r -= w;
                    false
                }
            })
            .copied()
            .expect("the counts cover every draw");
        budget -= t as usize;
        total += t;
        programs.push(MixProgram {
            bench: c.bench.to_string(),
            n: Some(n),
        });
    }
    Ok(MixSpec {
        name,
        source: mix_source(seed),
        classes: vec![RANDOM_CLASS.to_string()],
        threads: Some(i64::from(total)),
        machines: Vec::new(),
        programs,
    })
}

/// `ferret n=2 (11) + mcf n=1 (1)`: each program with its n and the threads
/// it creates.
pub fn composition(lib: &Library, m: &MixSpec) -> Result<String, WorkloadError> {
    let mut parts = Vec::new();
    for p in &m.programs {
        let prog = lib.program(&p.bench, p.n)?;
        parts.push(format!("{} n={} ({})", p.bench, prog.n, prog.total_threads));
    }
    Ok(parts.join(" + "))
}

/// The mixes as a mix file (`[[mix]]` entries, each with a comment giving its
/// composition), which `colab sim FILE` and the library read back.
pub fn mixes_toml(lib: &Library, mixes: &[MixSpec]) -> Result<String, WorkloadError> {
    let quote = |s: &str| toml::Value::String(s.to_string()).to_string();
    let mut out = String::new();
    for (i, m) in mixes.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let w = lib.mix_workload("<listing>", m)?;
        out.push_str(&format!(
            "# {} = {} threads\n",
            composition(lib, m)?,
            w.total_threads()
        ));
        out.push_str("[[mix]]\n");
        out.push_str(&format!("name = {}\n", quote(&m.name)));
        out.push_str(&format!("source = {}\n", quote(&m.source)));
        let classes: Vec<String> = m.classes.iter().map(|c| quote(c)).collect();
        out.push_str(&format!("classes = [{}]\n", classes.join(", ")));
        if let Some(t) = m.threads {
            out.push_str(&format!("threads = {t}\n"));
        }
        if !m.machines.is_empty() {
            let ms: Vec<String> = m.machines.iter().map(|c| quote(c)).collect();
            out.push_str(&format!("machines = [{}]\n", ms.join(", ")));
        }
        out.push_str("programs = [\n");
        for p in &m.programs {
            match p.n {
                Some(n) => {
                    out.push_str(&format!("  {{ bench = {}, n = {n} }},\n", quote(&p.bench)))
                }
                None => out.push_str(&format!("  {{ bench = {} }},\n", quote(&p.bench))),
            }
        }
        out.push_str("]\n");
    }
    Ok(out)
}

#[cfg(test)]
#[path = "random_tests.rs"]
mod tests;
