//! ROTA's parameters: the switches ablations vary ([`SWITCHES`], one table
//! from which the parser, `--help`, `colab list rota` and the book's switch
//! list come) and the freezes results cite ([`PRESETS`], `rota@N`).

use crate::cfs::NewStart;
use colab_labels::LabelParams;

/// What ROTA runs: the default is the twentieth freeze.
#[derive(Clone, Debug, PartialEq)]
pub struct RotaParams {
    pub rotate: bool,
    pub remote: bool,
    pub prev_first: bool,
    pub serial_first: bool,
    pub order: Order,
    pub share_fast: ShareFast,
    pub pull_min: PullMin,
    pub pull_from: PullFrom,
    pub stay: bool,
    pub hold: bool,
    pub new_start: NewStart,
    pub quantum: Quantum,
    pub sibling_turns: bool,
    pub full_wait: bool,
    pub gang: bool,
    pub gang_fit: bool,
    pub split_prior: bool,
    pub reclaim: Reclaim,
    pub slow_balance: bool,
    pub tiers: bool,
    pub local: Local,
    /// The cross-cluster migration cost ROTA's constants derive from (as
    /// scx_colab's `--migration-us`); None: the topology's. The engine
    /// still charges the topology's cost for every migration.
    pub migration_ns: Option<u64>,
    /// The labeller's period (speedups are read at it).
    pub labels: LabelParams,
}

impl Default for RotaParams {
    fn default() -> Self {
        RotaParams {
            rotate: true,
            remote: true,
            prev_first: true,
            serial_first: true,
            order: Order::NttSeen,
            share_fast: ShareFast::Short,
            pull_min: PullMin::Siblings,
            pull_from: PullFrom::Sync,
            stay: true,
            hold: true,
            new_start: NewStart::DebitFifo,
            quantum: Quantum::Age,
            sibling_turns: true,
            full_wait: true,
            gang: true,
            gang_fit: true,
            split_prior: true,
            reclaim: Reclaim::Barrier,
            slow_balance: true,
            tiers: true,
            local: Local::Cfs,
            migration_ns: None,
            labels: LabelParams::default(),
        }
    }
}

/// The freeze `rota` is.
pub const DEFAULT_FREEZE: u32 = 20;

/// The freezes results cite, each a complete setting of every switch (a
/// test checks that each sets each switch once, and that the default's is
/// [`RotaParams::default`]). The book's design-history appendix tells how
/// each was chosen and its held-out results; freezes not here, and the
/// switches tried and left off, left the code after commit `e397692`.
pub const PRESETS: &[(u32, &str)] = &[
    (20, "rotate=on:remote=on:prev-first=on:serial-first=on:order=ntt-seen:share-fast=short:pull-min=siblings:pull-from=sync:stay=on:hold=on:new-start=debit-fifo:quantum=age:sibling-turns=on:full-wait=on:gang=on:gang-fit=on:split-prior=on:reclaim=barrier:slow-balance=on:tiers=on:local=cfs:migration-us=topology"),
    (19, "rotate=on:remote=on:prev-first=on:serial-first=on:order=ntt-seen:share-fast=short:pull-min=siblings:pull-from=sync:stay=on:hold=on:new-start=debit-fifo:quantum=age:sibling-turns=on:full-wait=on:gang=on:gang-fit=on:split-prior=on:reclaim=barrier:slow-balance=on:tiers=off:local=cfs:migration-us=topology"),
    (18, "rotate=on:remote=on:prev-first=on:serial-first=on:order=ntt-seen:share-fast=on:pull-min=siblings:pull-from=sync:stay=on:hold=on:new-start=debit-fifo:quantum=age:sibling-turns=on:full-wait=on:gang=on:gang-fit=on:split-prior=on:reclaim=barrier:slow-balance=on:tiers=off:local=cfs:migration-us=topology"),
    (16, "rotate=on:remote=on:prev-first=on:serial-first=on:order=ntt-seen:share-fast=on:pull-min=on:pull-from=sync:stay=on:hold=on:new-start=debit-fifo:quantum=age:sibling-turns=on:full-wait=on:gang=on:gang-fit=on:split-prior=on:reclaim=barrier:slow-balance=on:tiers=off:local=cfs:migration-us=topology"),
    (15, "rotate=on:remote=on:prev-first=on:serial-first=on:order=ntt-seen:share-fast=on:pull-min=on:pull-from=sync:stay=on:hold=on:new-start=debit-fifo:quantum=age:sibling-turns=on:full-wait=on:gang=on:gang-fit=on:split-prior=on:reclaim=barrier-oracle:slow-balance=on:tiers=off:local=cfs:migration-us=topology"),
    (14, "rotate=on:remote=on:prev-first=on:serial-first=on:order=ntt-seen:share-fast=on:pull-min=on:pull-from=sync:stay=on:hold=on:new-start=debit-fifo:quantum=age:sibling-turns=on:full-wait=on:gang=on:gang-fit=on:split-prior=off:reclaim=on:slow-balance=on:tiers=off:local=cfs:migration-us=topology"),
    (13, "rotate=on:remote=on:prev-first=on:serial-first=on:order=ntt-pr:share-fast=on:pull-min=on:pull-from=sync:stay=on:hold=on:new-start=debit-fifo:quantum=age:sibling-turns=on:full-wait=on:gang=on:gang-fit=on:split-prior=on:reclaim=off:slow-balance=on:tiers=off:local=cfs:migration-us=topology"),
    (12, "rotate=on:remote=on:prev-first=on:serial-first=on:order=ntt-pr:share-fast=on:pull-min=on:pull-from=sync:stay=on:hold=on:new-start=debit-fifo:quantum=age:sibling-turns=on:full-wait=on:gang=on:gang-fit=off:split-prior=on:reclaim=off:slow-balance=on:tiers=off:local=cfs:migration-us=topology"),
    (11, "rotate=on:remote=on:prev-first=on:serial-first=on:order=ntt-pr:share-fast=on:pull-min=on:pull-from=sync:stay=on:hold=on:new-start=debit-fifo:quantum=age:sibling-turns=on:full-wait=on:gang=off:gang-fit=on:split-prior=on:reclaim=off:slow-balance=on:tiers=off:local=cfs:migration-us=topology"),
    // What scx_colab's BPF implements.
    (3, "rotate=on:remote=on:prev-first=on:serial-first=off:order=capped:share-fast=off:pull-min=on:pull-from=core:stay=off:hold=off:new-start=debit:quantum=migrations:sibling-turns=on:full-wait=on:gang=off:gang-fit=on:split-prior=on:reclaim=off:slow-balance=on:tiers=off:local=cfs:migration-us=topology"),
];

/// One switch of `rota:KEY=VALUE:...`.
pub struct Switch {
    pub key: &'static str,
    /// What it does, one line.
    pub help: &'static str,
    values: fn() -> Vec<&'static str>,
    set: fn(&mut RotaParams, &str) -> Result<(), String>,
    get: fn(&RotaParams) -> String,
}

impl Switch {
    /// The values it takes, the default's first (`US`: a number).
    pub fn values(&self) -> Vec<&'static str> {
        (self.values)()
    }
}

/// A switch over a field whose type names its values ([`Named`]).
macro_rules! switch {
    ($field:ident: $ty:ty, $key:literal, $help:literal) => {
        Switch {
            key: $key,
            values: || <$ty as Named>::NAMES.iter().map(|(n, _)| *n).collect(),
            help: $help,
            set: |p, v| {
                p.$field = <$ty as Named>::parse($key, v)?;
                Ok(())
            },
            get: |p| Named::name(&p.$field).to_string(),
        }
    };
}

/// Every switch, in the order `--help`, `colab list rota` and the book give them.
pub const SWITCHES: &[Switch] = &[
    switch!(rotate: bool, "rotate", "an occupant gives its fast core to a waiting thread that ranks before it, at the quantum"),
    switch!(remote: bool, "remote", "an idle fast core takes over a thread running on a slow core"),
    switch!(prev_first: bool, "prev-first", "a waking thread goes back to its idle previous core first"),
    switch!(serial_first: bool, "serial-first", "a program's only runnable thread goes first for fast cores"),
    switch!(order: Order, "order", "whom fast cores take: the largest gain in slowdown per thread until a program is seen again (ntt-seen), always per thread (ntt), always per program (ntt-pr), capped FIFO (capped, the third freeze's), shortest program first (sjf-oracle: program lengths handed over, an oracle ablation)"),
    switch!(share_fast: ShareFast, "share-fast", "where a waking thread queues when no core is idle: any cluster's shortest queue if its bursts are short (short), always (on), slow cores only (off)"),
    switch!(pull_min: PullMin, "pull-min", "a slow core's thread is taken over only after a minimum run: only a sibling of the core's last thread (siblings), every one (on), none (off)"),
    switch!(pull_from: PullFrom, "pull-from", "the minimum run counts from the thread's last synchronisation (sync) or from getting on its core (core)"),
    switch!(stay: bool, "stay", "a waking thread whose bursts are shorter than a migration stays in its cluster"),
    switch!(hold: bool, "hold", "an idle fast core whose last thread sleeps briefly waits a migration's time before taking any program's thread"),
    switch!(new_start: NewStart, "new-start", "where a new thread starts in its core's queue: a slice behind, never ahead of the previous new thread (debit-fifo), CFS's START_DEBIT (debit)"),
    switch!(quantum: Quantum, "quantum", "how long an occupant keeps a fast core: as long as the waiting thread has run, 2.25-20 ms (age), 200 migrations (migrations), CFS's minimum slice (slice)"),
    switch!(sibling_turns: bool, "sibling-turns", "an occupant no one outranks gives way after the quantum to its own program's thread on a slow core"),
    switch!(full_wait: bool, "full-wait", "runnable time counts from the wake-up across preemptions (off: from the last queueing)"),
    switch!(gang: bool, "gang", "an idle fast core waits up to CFS's minimum slice for its thread when the rest of its program runs on fast cores"),
    switch!(gang_fit: bool, "gang-fit", "gang only for a program whose live threads fit the fast cores"),
    switch!(split_prior: bool, "split-prior", "a program's one-quantum prior is shared by its live threads"),
    switch!(reclaim: Reclaim, "reclaim", "a waking thread leaves an idle core to a sibling that blocked after it: at a barrier as the futex calls show (barrier), any sibling (on), never (off), at a barrier by the simulator's wait kinds (barrier-oracle, an ablation)"),
    switch!(slow_balance: bool, "slow-balance", "a slow core with an empty queue pulls, at its tick, the longest-waiting thread of a slow core two or more threads longer (off: an ablation; scx_colab's BPF has no such move)"),
    switch!(tiers: bool, "tiers", "on a machine of three or more core types, an idle fast core with nothing else to take takes over the best-ranked thread running on a slower fast core, and a fast core's tick wakes an idle faster one (off: every fast core alike)"),
    switch!(local: Local, "local", "the rules each core shares its own queue by: CFS's (cfs) or EEVDF's (eevdf)"),
    Switch {
        key: "migration-us",
        values: || vec!["topology", "US"],
        help: "the migration cost the constants derive from, 0 < US <= 100000 (as scx_colab's --migration-us)",
        set: |p, v| {
            p.migration_ns = parse_migration_us(v)?;
            Ok(())
        },
        get: |p| match p.migration_ns {
            None => "topology".to_string(),
            Some(ns) => format!("{}", ns as f64 / 1000.0),
        },
    },
];

fn parse_migration_us(v: &str) -> Result<Option<u64>, String> {
    if v == "topology" {
        return Ok(None);
    }
    let us: f64 = v
        .parse()
        .ok()
        .filter(|u: &f64| u.is_finite() && *u > 0.0 && *u <= 100_000.0)
        .ok_or_else(|| {
            format!("'migration-us' takes microseconds, above 0 and up to 100000, or topology, not '{v}'")
        })?;
    Ok(Some(((us * 1000.0).round() as u64).max(1)))
}

impl RotaParams {
    /// The parameters of `rota@N` (None: no such preset).
    pub fn preset(freeze: u32) -> Option<RotaParams> {
        let (_, spelling) = PRESETS.iter().find(|(n, _)| *n == freeze)?;
        let mut p = RotaParams::default();
        p.parse_options(spelling).expect("a preset parses");
        Some(p)
    }

    /// The parameters a policy name spells: `rota[@N][:KEY=VALUE...]`.
    pub fn by_name(name: &str) -> Result<RotaParams, String> {
        let rest = name
            .strip_prefix("rota")
            .ok_or_else(|| format!("'{name}' is not rota[@N][:KEY=VALUE...]"))?;
        let (preset, opts) = match rest.strip_prefix('@') {
            Some(r) => r.split_once(':').unwrap_or((r, "")),
            None => ("", rest.strip_prefix(':').unwrap_or(rest)),
        };
        let mut params = if preset.is_empty() {
            RotaParams::default()
        } else {
            let freezes: Vec<String> = PRESETS.iter().map(|(n, _)| n.to_string()).collect();
            preset
                .parse()
                .ok()
                .and_then(RotaParams::preset)
                .ok_or_else(|| {
                    format!(
                        "no preset '@{preset}': the presets are @{}",
                        freezes.join(", @")
                    )
                })?
        };
        params.parse_options(opts)?;
        Ok(params)
    }

    /// Applies `KEY=VALUE` options separated by `:` (after `rota:`).
    pub fn parse_options(&mut self, text: &str) -> Result<(), String> {
        for opt in text.split(':').filter(|o| !o.is_empty()) {
            let (k, v) = opt
                .split_once('=')
                .ok_or_else(|| format!("option '{opt}' is not KEY=VALUE ({})", keys()))?;
            let s = SWITCHES
                .iter()
                .find(|s| s.key == k)
                .ok_or_else(|| format!("unknown option '{k}' ({})", keys()))?;
            (s.set)(self, v)?;
        }
        Ok(())
    }

    /// Every switch's value, as `KEY=VALUE:...` (a preset's spelling).
    pub fn spelling(&self) -> String {
        let kv: Vec<String> = SWITCHES
            .iter()
            .map(|s| format!("{}={}", s.key, (s.get)(self)))
            .collect();
        kv.join(":")
    }
}

fn keys() -> String {
    let k: Vec<&str> = SWITCHES.iter().map(|s| s.key).collect();
    format!(
        "options: {}; `colab list rota` says what each does",
        k.join(", ")
    )
}

/// The switches in one line each, `KEY = VALUES: what it does`, for
/// `--help` and `colab list rota`.
pub fn options_help() -> String {
    let mut s = String::new();
    for sw in SWITCHES {
        s.push_str(&format!(
            "  {} = {}: {}\n",
            sw.key,
            sw.values().join("|"),
            sw.help
        ));
    }
    s
}

/// The book's switch list (book/src/guide/policies.md, checked by a test).
pub fn options_markdown() -> String {
    let mut s = String::from("| switch | values (default first) | what it does |\n|---|---|---|\n");
    for sw in SWITCHES {
        let vals: Vec<String> = sw.values().iter().map(|v| format!("`{v}`")).collect();
        s.push_str(&format!(
            "| `{}` | {} | {} |\n",
            sw.key,
            vals.join(", "),
            sw.help
        ));
    }
    s.push_str("\nPresets (each sets every switch):\n\n");
    for (n, spelling) in PRESETS {
        let name = if *n == DEFAULT_FREEZE {
            format!("`rota@{n}` (= `rota`)")
        } else {
            format!("`rota@{n}`")
        };
        s.push_str(&format!("- {name}: `{spelling}`\n"));
    }
    s
}

/// A type whose values have names in options.
trait Named: Sized + Copy + PartialEq + 'static {
    /// (name, value), the default's value first.
    const NAMES: &'static [(&'static str, Self)];
    fn parse(key: &str, v: &str) -> Result<Self, String> {
        crate::one_of(key, v, Self::NAMES)
    }
    fn name(&self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(_, x)| x == self)
            .map(|(n, _)| *n)
            .expect("every value is named")
    }
}

/// An enum whose values have names, with [`Named`] for it.
macro_rules! named {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum $name { $($(#[$vm])* $variant),+ }
        impl Named for $name {
            const NAMES: &'static [(&'static str, Self)] = &[$(($text, $name::$variant)),+];
        }
    };
}

impl Named for bool {
    const NAMES: &'static [(&'static str, Self)] = &[("on", true), ("off", false)];
}

impl Named for NewStart {
    const NAMES: &'static [(&'static str, Self)] = &[
        ("debit-fifo", NewStart::DebitFifo),
        ("debit", NewStart::Debit),
    ];
}

// What each value does: the switch's help in [`SWITCHES`].
named! {
    /// Whom a fast core takes from the threads that want one.
    Order { NttSeen = "ntt-seen", Ntt = "ntt", NttPr = "ntt-pr", Capped = "capped", SjfOracle = "sjf-oracle" }
}
named! {
    /// Where a waking thread queues when no core is idle (a new one: `On`).
    ShareFast { Short = "short", On = "on", Off = "off" }
}
named! {
    /// Whose threads an idle fast core takes over only after a minimum run.
    PullMin { Siblings = "siblings", On = "on", Off = "off" }
}
named! {
    /// Where the minimum run starts.
    PullFrom { Sync = "sync", Core = "core" }
}
named! {
    /// How long an occupant keeps a fast core before a rotation.
    Quantum { Age = "age", Migrations = "migrations", Slice = "slice" }
}
named! {
    /// Which blocked siblings' idle cores a waking thread leaves to them.
    Reclaim { Barrier = "barrier", On = "on", Off = "off", BarrierOracle = "barrier-oracle" }
}
named! {
    /// The rules each core shares its own queue by.
    Local { Cfs = "cfs", Eevdf = "eevdf" }
}

impl PullMin {
    /// Whether the minimum run holds for any thread (and `hold` with it).
    pub fn on(self) -> bool {
        self != PullMin::Off
    }
}
