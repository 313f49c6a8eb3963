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
