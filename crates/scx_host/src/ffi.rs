//! Loading a hosted scheduler's native object: one instance per
//! simulation running at a time, each its own copy of the object (its own
//! globals and maps), taken from a pool and reset to its state at load
//! before every run. Instances come from an in-memory file (memfd), so
//! nothing is written to disk and no instance shares globals with another:
//! simulations run in parallel with no lock held while they run.

use std::ffi::{c_char, c_void, CStr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::Mutex;

use crate::HostError;

/// `struct scx_host_map_def` (shim/scx_host_glue.c).
#[repr(C)]
struct RawMapDef {
    name: *const c_char,
    addr: *mut c_void,
    type_: u32,
    key_size: u32,
    value_size: u32,
    max_entries: u32,
    map_flags: u32,
}

/// `struct scx_host_prog_def`.
#[repr(C)]
struct RawProgDef {
    sec: *const c_char,
    name: *const c_char,
    func: *mut c_void,
}

/// `struct scx_host_desc`.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct Desc {
    pub task_size: u64,
    pub off_pid: u64,
    pub off_tgid: u64,
    pub off_flags: u64,
    pub off_prio: u64,
    pub off_static_prio: u64,
    pub off_normal_prio: u64,
    pub off_nr_cpus_allowed: u64,
    pub off_cpus_ptr: u64,
    pub off_comm: u64,
    pub off_real_parent: u64,
    pub off_group_leader: u64,
    pub off_scx_flags: u64,
    pub off_weight: u64,
    pub off_slice: u64,
    pub off_dsq_vtime: u64,
    pub off_idx: u64,
    maps: *const RawMapDef,
    progs: *const RawProgDef,
    pub ops_mask: u64,
    pub ops_flags: u64,
    pub timeout_ms: u32,
    pub dispatch_max_batch: u32,
    name: *const c_char,
}

/// A map of the object: its address (its identity in kfunc calls) and shape.
#[derive(Clone, Debug)]
pub struct MapDef {
    pub name: String,
    pub addr: usize,
    pub type_: u32,
    pub key_size: u32,
    pub value_size: u32,
    pub max_entries: u32,
}

/// A tracing program of the object: its attach point and entry.
#[derive(Clone, Debug)]
pub struct ProgDef {
    pub section: String,
    pub name: String,
    pub func: usize,
}

/// The callbacks of `struct sched_ext_ops`, by their bit in `ops_mask`.
pub mod op {
    pub const SELECT_CPU: u64 = 1 << 0;
    pub const ENQUEUE: u64 = 1 << 1;
    pub const DISPATCH: u64 = 1 << 3;
    pub const TICK: u64 = 1 << 4;
    pub const RUNNABLE: u64 = 1 << 5;
    pub const RUNNING: u64 = 1 << 6;
    pub const STOPPING: u64 = 1 << 7;
    pub const QUIESCENT: u64 = 1 << 8;
    pub const UPDATE_IDLE: u64 = 1 << 13;
    pub const INIT_TASK: u64 = 1 << 16;
    pub const EXIT_TASK: u64 = 1 << 17;
    pub const ENABLE: u64 = 1 << 18;
    pub const DISABLE: u64 = 1 << 19;
    pub const INIT: u64 = 1 << 31;
    pub const EXIT: u64 = 1 << 32;
}

type TaskPtr = *mut u8;

/// The object's entry points (shim/scx_host_glue.c).
pub(crate) struct Entry {
    pub select_cpu: unsafe extern "C" fn(TaskPtr, i32, u64) -> i32,
    pub enqueue: unsafe extern "C" fn(TaskPtr, u64),
    pub dispatch: unsafe extern "C" fn(i32, TaskPtr),
    pub tick: unsafe extern "C" fn(TaskPtr),
    pub runnable: unsafe extern "C" fn(TaskPtr, u64),
    pub running: unsafe extern "C" fn(TaskPtr),
    pub stopping: unsafe extern "C" fn(TaskPtr, bool),
    pub quiescent: unsafe extern "C" fn(TaskPtr, u64),
    pub update_idle: unsafe extern "C" fn(i32, bool),
    pub init_task: unsafe extern "C" fn(TaskPtr, bool) -> i32,
    pub exit_task: unsafe extern "C" fn(TaskPtr),
    pub enable: unsafe extern "C" fn(TaskPtr),
    pub disable: unsafe extern "C" fn(TaskPtr),
    pub init: unsafe extern "C" fn() -> i32,
    pub exit: unsafe extern "C" fn(i32, i64, *const c_char),
    pub call_prog: unsafe extern "C" fn(usize, u64, u64, u64, u64, u64, u64) -> i32,
}

/// One loaded copy of a scheduler's object.
pub(crate) struct Object {
    lib: libloading::os::unix::Library,
    _fd: OwnedFd,
    /// Its writable segments as they were right after loading.
    pristine: Vec<(usize, Vec<u8>)>,
    pub desc: Desc,
    pub maps: Vec<MapDef>,
    pub progs: Vec<ProgDef>,
    pub vtable: *mut c_void,
    pub entry: Entry,
    scheduler: &'static str,
}

// SAFETY: an Object is used by one simulation at a time (it is taken out of
// the pool and owned by that simulation's policy); nothing in it is tied to
// the thread that loaded it.
unsafe impl Send for Object {}

fn cstr(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: a NUL-terminated string in the loaded object.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

impl Object {
    /// A fresh copy of `bytes` (a shared object) loaded from memory.
    fn load(scheduler: &'static str, bytes: &[u8]) -> Result<Object, HostError> {
        let fail = |what: String| HostError::Load {
            scheduler: scheduler.to_string(),
            problem: what,
        };
        let name = std::ffi::CString::new(format!("scx_{scheduler}")).unwrap();
        // SAFETY: memfd_create with a valid name; the result is checked.
        let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(fail(format!(
                "memfd_create: {}",
                std::io::Error::last_os_error()
            )));
        }
        // SAFETY: fd is a new descriptor we own.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut file = std::fs::File::from(fd.try_clone().map_err(|e| fail(e.to_string()))?);
        std::io::Write::write_all(&mut file, bytes).map_err(|e| fail(e.to_string()))?;
        let path = format!("/proc/self/fd/{}", fd.as_raw_fd());
        // SAFETY: loading our own object, built by build.rs; its
        // initialisers only zero the glue's tables.
        let lib = unsafe {
            libloading::os::unix::Library::open(Some(&path), libc::RTLD_NOW | libc::RTLD_LOCAL)
        }
        .map_err(|e| fail(format!("dlopen: {e}")))?;
        let pristine = writable_segments(&path)
            .ok_or_else(|| fail("its writable segment was not found".into()))?;
        // SAFETY: the symbols are the glue's, with these signatures.
        unsafe {
            let describe: libloading::os::unix::Symbol<unsafe extern "C" fn(*mut Desc)> = lib
                .get(b"scx_host_describe\0")
                .map_err(|e| fail(e.to_string()))?;
            let mut desc = std::mem::MaybeUninit::<Desc>::zeroed();
            describe(desc.as_mut_ptr());
            let desc = desc.assume_init();
            let mut maps = Vec::new();
            let mut m = desc.maps;
            while !(*m).name.is_null() {
                let r = &*m;
                maps.push(MapDef {
                    name: cstr(r.name),
                    addr: r.addr as usize,
                    type_: r.type_,
                    key_size: r.key_size,
                    value_size: r.value_size,
                    max_entries: r.max_entries,
                });
                m = m.add(1);
            }
            let mut progs = Vec::new();
            let mut p = desc.progs;
            while !(*p).sec.is_null() {
                let r = &*p;
                progs.push(ProgDef {
                    section: cstr(r.sec),
                    name: cstr(r.name),
                    func: r.func as usize,
                });
                p = p.add(1);
            }
            macro_rules! sym {
                ($n:literal) => {
                    *lib.get(concat!($n, "\0").as_bytes())
                        .map_err(|e| fail(e.to_string()))?
                };
            }
            let entry = Entry {
                select_cpu: sym!("scx_host_select_cpu"),
                enqueue: sym!("scx_host_enqueue"),
                dispatch: sym!("scx_host_dispatch"),
                tick: sym!("scx_host_tick"),
                runnable: sym!("scx_host_runnable"),
                running: sym!("scx_host_running"),
                stopping: sym!("scx_host_stopping"),
                quiescent: sym!("scx_host_quiescent"),
                update_idle: sym!("scx_host_update_idle"),
                init_task: sym!("scx_host_init_task"),
                exit_task: sym!("scx_host_exit_task"),
                enable: sym!("scx_host_enable"),
                disable: sym!("scx_host_disable"),
                init: sym!("scx_host_init"),
                exit: sym!("scx_host_exit"),
                call_prog: sym!("scx_host_call_prog"),
            };
            let vtable: libloading::os::unix::Symbol<*mut c_void> =
                lib.get(b"scx_host\0").map_err(|e| fail(e.to_string()))?;
            let vtable = *vtable;
            Ok(Object {
                lib,
                _fd: fd,
                pristine,
                desc,
                maps,
                progs,
                vtable,
                entry,
                scheduler,
            })
        }
    }

    /// Back to the state right after loading (globals, the glue's table).
    fn reset(&mut self) {
        for (addr, bytes) in &self.pristine {
            // SAFETY: the segment is mapped writable for the object's life.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), *addr as *mut u8, bytes.len()) };
        }
    }

    /// The address of global `name` (a BPF global variable), if it has one.
    pub fn global(&self, name: &str) -> Option<*mut u8> {
        let mut sym = name.as_bytes().to_vec();
        sym.push(0);
        // SAFETY: we only take the symbol's address.
        unsafe { self.lib.get::<*mut u8>(&sym).ok().map(|s| *s) }
    }
}

/// The writable PT_LOAD segments of the object loaded from `path`, copied.
fn writable_segments(path: &str) -> Option<Vec<(usize, Vec<u8>)>> {
    struct Search<'a> {
        path: &'a str,
        found: Option<Vec<(usize, Vec<u8>)>>,
    }
    unsafe extern "C" fn visit(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut c_void,
    ) -> libc::c_int {
        // SAFETY: dl_iterate_phdr passes a valid info and our Search.
        let (info, search) = unsafe { (&*info, &mut *(data as *mut Search)) };
        if info.dlpi_name.is_null() {
            return 0;
        }
        // SAFETY: a NUL-terminated name.
        let name = unsafe { CStr::from_ptr(info.dlpi_name) };
        if name.to_bytes() != search.path.as_bytes() {
            return 0;
        }
        let mut segs = Vec::new();
        for i in 0..info.dlpi_phnum as usize {
            // SAFETY: dlpi_phnum headers at dlpi_phdr.
            let ph = unsafe { &*info.dlpi_phdr.add(i) };
            if ph.p_type == libc::PT_LOAD && ph.p_flags & libc::PF_W != 0 {
                let addr = info.dlpi_addr as usize + ph.p_vaddr as usize;
                let len = ph.p_memsz as usize;
                // SAFETY: a mapped, readable segment of the loaded object.
                let bytes = unsafe { std::slice::from_raw_parts(addr as *const u8, len) };
                segs.push((addr, bytes.to_vec()));
            }
        }
        search.found = Some(segs);
        1
    }
    let mut search = Search { path, found: None };
    // SAFETY: visit only reads the headers it is given.
    unsafe { libc::dl_iterate_phdr(Some(visit), &mut search as *mut Search as *mut c_void) };
    search.found.filter(|s| !s.is_empty())
}

/// Instances not in use, by scheduler.
static POOL: Mutex<Vec<Object>> = Mutex::new(Vec::new());

/// A reset instance of `scheduler` (from the pool, or newly loaded).
pub(crate) fn take(scheduler: &'static str, bytes: &[u8]) -> Result<Object, HostError> {
    let pooled = {
        let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
        pool.iter()
            .position(|o| o.scheduler == scheduler)
            .map(|i| pool.swap_remove(i))
    };
    match pooled {
        Some(mut o) => {
            o.reset();
            Ok(o)
        }
        None => Object::load(scheduler, bytes),
    }
}

/// Hands an instance back for the next simulation.
pub(crate) fn give_back(o: Object) {
    POOL.lock().unwrap_or_else(|e| e.into_inner()).push(o);
}

// ===== Plug-ins: schedulers built apart from the host =====================
// A plug-in (scripts/build-scx-plugins.sh: scx_bpfland) is a shared object
// built by examples/build-scx-plugin.rs with the same compiler, flags and
// shim as the schedulers built into the host, from source the host's
// binaries never contain. Its instances come from the same pool.

/// A plug-in file read: scheduler, path, bytes (read once).
type PluginFile = (&'static str, std::path::PathBuf, std::sync::Arc<[u8]>);

/// Plug-in files read so far.
static FILES: Mutex<Vec<PluginFile>> = Mutex::new(Vec::new());

/// The hash of the shim this host was built with (build.rs).
fn host_shim_hash() -> u64 {
    u64::from_str_radix(env!("SCX_HOST_SHIM_HASH"), 16).expect("build.rs writes a hex hash")
}

/// The shim hash an object file carries, read by loading it on its own
/// (nothing of it runs but the dynamic loader's relocations).
fn file_shim_hash(path: &std::path::Path) -> Result<Option<u64>, String> {
    // SAFETY: a shared object built by our plug-in builder: it has no
    // initialisers of its own; only a global's bytes are read.
    unsafe {
        let lib =
            libloading::os::unix::Library::open(Some(path), libc::RTLD_NOW | libc::RTLD_LOCAL)
                .map_err(|e| format!("dlopen: {e}"))?;
        let sym: Result<libloading::os::unix::Symbol<*const u64>, _> =
            lib.get(b"scx_host_shim_hash\0");
        Ok(sym.ok().map(|s| std::ptr::read_unaligned(*s)))
    }
}

/// A reset instance of plug-in `scheduler` from the shared object at
/// `path`, read (and its shim checked against the host's) at first use.
pub(crate) fn take_file(
    scheduler: &'static str,
    path: &std::path::Path,
) -> Result<Object, HostError> {
    let fail = |problem: String| HostError::Load {
        scheduler: scheduler.to_string(),
        problem,
    };
    let bytes = {
        let mut files = FILES.lock().unwrap_or_else(|e| e.into_inner());
        match files.iter().find(|f| f.0 == scheduler && f.1 == path) {
            Some(f) => f.2.clone(),
            None => {
                let hash =
                    file_shim_hash(path).map_err(|e| fail(format!("{}: {e}", path.display())))?;
                if hash != Some(host_shim_hash()) {
                    return Err(fail(format!(
                        "the plug-in {} was built against another version of the host's shim \
                         (crates/scx_host/shim); rebuild it with `bash scripts/build-scx-plugins.sh`",
                        path.display()
                    )));
                }
                let b: std::sync::Arc<[u8]> = std::fs::read(path)
                    .map_err(|e| fail(format!("{}: {e}", path.display())))?
                    .into();
                files.push((scheduler, path.to_path_buf(), b.clone()));
                b
            }
        }
    };
    take(scheduler, &bytes)
}

impl Object {
    /// Writes ops.flags, as a loader does between opening and loading the
    /// object (`struct_ops.<ops>.flags = ...`); the host reads the new flags
    /// (the object's description and, once loaded, the kernel state's copy).
    pub(crate) fn set_ops_flags(&mut self, flags: u64) -> Result<(), String> {
        // SAFETY: the shim's `void scx_host_set_ops_flags(u64)`; the vtable
        // global's first word is the kernel state (`Scx`) once loaded, or null.
        unsafe {
            let f: libloading::os::unix::Symbol<unsafe extern "C" fn(u64)> = self
                .lib
                .get(b"scx_host_set_ops_flags\0")
                .map_err(|e| e.to_string())?;
            f(flags);
            self.desc.ops_flags = flags;
            let k = *(self.vtable as *const *mut crate::kernel::Scx);
            if !k.is_null() {
                (*k).desc.ops_flags = flags;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pooled_instance_comes_back_as_loaded() {
        let o = take("colab", crate::colab::OBJECT).unwrap();
        let p = o.global("label_gen").unwrap() as *mut u64;
        // SAFETY: label_gen is a u64 global of the object.
        unsafe { *p = 5 };
        let addr = p as usize;
        give_back(o);
        // The pool may hold other instances (other tests): take until ours.
        let mut held = Vec::new();
        loop {
            let o = take("colab", crate::colab::OBJECT).unwrap();
            let q = o.global("label_gen").unwrap();
            if q as usize == addr {
                // SAFETY: as above.
                assert_eq!(unsafe { *(q as *const u64) }, 0);
                held.push(o);
                break;
            }
            held.push(o);
            assert!(held.len() < 64, "our instance never came back");
        }
        held.into_iter().for_each(give_back);
    }
}
