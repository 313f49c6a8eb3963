//! A hosted scheduler's user-space side: what its loader writes into the
//! BPF object before loading (the `const volatile` globals), which of its
//! programs it attaches, and what it does every period (scx_colab's
//! labeller), run by the simulator at the same points in simulated time.

use colab_core::{Nanos, Topology};

use crate::ffi::Object;
use crate::maps::Map;

pub trait UserSpace: Send {
    /// How often `period` runs, if the scheduler has a periodic user side.
    fn period_ns(&self) -> Option<Nanos>;
    /// Before loading: set the object's globals for this machine.
    fn configure(&mut self, obj: &mut Object, topo: &Topology) -> Result<(), String>;
    /// Whether program `name` is attached (a loader's set_autoload).
    fn autoload(&self, name: &str) -> bool;
    /// One period of user-space work over the scheduler's maps.
    fn period(&mut self, obj: &Object, maps: &mut [Map]);
}

/// A global of the object, written as the loader writes rodata.
pub fn write_global(obj: &Object, name: &str, bytes: &[u8]) -> Result<(), String> {
    let p = obj
        .global(name)
        .ok_or_else(|| format!("the BPF object has no global '{name}'"))?;
    // SAFETY: p is the global's address in the loaded object (writable: the
    // build makes `const volatile` globals plain data); the caller passes
    // the global's C size.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len()) };
    Ok(())
}

/// Adds one to a u64 global (a generation counter user space bumps).
pub fn bump_global(obj: &Object, name: &str) {
    if let Some(p) = obj.global(name) {
        // SAFETY: a u64 global of the object; no BPF code runs meanwhile.
        unsafe { *(p as *mut u64) = (*(p as *mut u64)).wrapping_add(1) };
    }
}

/// The map called `name`.
pub fn map<'a>(maps: &'a mut [Map], name: &str) -> Option<&'a mut Map> {
    maps.iter_mut().find(|m| m.def.name == name)
}

/// Runs the object's `SEC("syscall")` program `name` with `arg` as its
/// context, as a loader's `BPF_PROG_RUN` with `ctx_in` does (libbpf's
/// `test_run`): the program reads and may write the argument struct, which
/// is copied back; returns the program's return value. It runs unlocked, in
/// the loader's context (kfuncs see no callback).
pub fn run_syscall(obj: &Object, name: &str, arg: &mut [u8]) -> Result<i32, String> {
    let prog = obj
        .progs
        .iter()
        .find(|p| p.section == "syscall" && p.name == name)
        .ok_or_else(|| format!("the BPF object has no SEC(\"syscall\") program '{name}'"))?;
    // The kernel copies ctx_in into its own (aligned) buffer, and back.
    let mut buf = vec![0u64; arg.len().div_ceil(8).max(1)];
    // SAFETY: buf holds at least arg.len() bytes.
    unsafe { std::ptr::copy_nonoverlapping(arg.as_ptr(), buf.as_mut_ptr() as *mut u8, arg.len()) };
    let ctx = buf.as_mut_ptr() as u64;
    // SAFETY: a program of the object taking one pointer argument; no BPF
    // code is running (user space runs between callbacks).
    let r = unsafe { (obj.entry.call_prog)(prog.func, ctx, 0, 0, 0, 0, 0) };
    // SAFETY: as above.
    unsafe {
        std::ptr::copy_nonoverlapping(buf.as_ptr() as *const u8, arg.as_mut_ptr(), arg.len())
    };
    Ok(r)
}

/// A policy's name as `Policy::name` returns it (`&'static str`): each
/// spelling (`scx:colab:--policy=colab`) is kept once for the process.
pub fn policy_name(spec: String) -> &'static str {
    use std::collections::HashSet;
    use std::sync::Mutex;
    static NAMES: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut g = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    let set = g.get_or_insert_with(HashSet::new);
    if let Some(n) = set.get(spec.as_str()) {
        return n;
    }
    let leaked: &'static str = Box::leak(spec.into_boxed_str());
    set.insert(leaked);
    leaked
}

/// A hosted scheduler's options (`--policy=colab:--no-big-pull`: `:` or
/// spaces between them) parsed by its own clap parser, `binary` its argv[0]
/// when the parser expects one; a bad option is clap's first error line.
pub fn parse_options<T: clap::Parser>(
    scheduler: &str,
    args: &str,
    binary: Option<&str>,
) -> Result<T, crate::HostError> {
    let words = args.split([':', ' ']).filter(|a| !a.is_empty());
    T::try_parse_from(binary.into_iter().chain(words)).map_err(|e| {
        let text = e.render().to_string();
        crate::HostError::Args {
            scheduler: scheduler.to_string(),
            args: args.to_string(),
            problem: text
                .lines()
                .next()
                .unwrap_or("")
                .trim_start_matches("error: ")
                .to_string(),
        }
    })
}
