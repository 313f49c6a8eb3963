//! BPF maps as a kernel keeps them, for one simulation: hash maps
//! (preallocated up to `max_entries`), arrays, per-CPU arrays, task storage,
//! and perf event arrays (present, never readable: no counters here).
//! Values live in 8-byte-aligned heap blocks that stay put while they
//! exist, so the pointers a lookup hands to the BPF code stay valid, as the
//! kernel's do.

use std::collections::BTreeMap;

use crate::ffi::MapDef;

/// Map types by their `enum bpf_map_type` values (Linux uapi).
pub mod ty {
    pub const HASH: u32 = 1;
    pub const ARRAY: u32 = 2;
    pub const PERF_EVENT_ARRAY: u32 = 4;
    pub const PERCPU_HASH: u32 = 5;
    pub const PERCPU_ARRAY: u32 = 6;
    pub const LRU_HASH: u32 = 9;
    pub const TASK_STORAGE: u32 = 29;

    /// The name of a map type, for messages.
    pub fn name(t: u32) -> String {
        let known = [
            (1, "HASH"),
            (2, "ARRAY"),
            (3, "PROG_ARRAY"),
            (4, "PERF_EVENT_ARRAY"),
            (5, "PERCPU_HASH"),
            (6, "PERCPU_ARRAY"),
            (7, "STACK_TRACE"),
            (8, "CGROUP_ARRAY"),
            (9, "LRU_HASH"),
            (10, "LRU_PERCPU_HASH"),
            (11, "LPM_TRIE"),
            (12, "ARRAY_OF_MAPS"),
            (13, "HASH_OF_MAPS"),
            (22, "QUEUE"),
            (23, "STACK"),
            (27, "RINGBUF"),
            (29, "TASK_STORAGE"),
            (30, "BLOOM_FILTER"),
            (31, "USER_RINGBUF"),
            (32, "CGRP_STORAGE"),
            (33, "ARENA"),
        ];
        known
            .iter()
            .find(|(v, _)| *v == t)
            .map_or(format!("map type {t}"), |(_, n)| {
                format!("BPF_MAP_TYPE_{n}")
            })
    }

    /// The types the host implements.
    pub fn supported(t: u32) -> bool {
        matches!(
            t,
            HASH | ARRAY | PERF_EVENT_ARRAY | PERCPU_HASH | PERCPU_ARRAY | LRU_HASH | TASK_STORAGE
        )
    }
}

const EEXIST: i64 = 17;
const ENOENT: i64 = 2;
const E2BIG: i64 = 7;
const EINVAL: i64 = 22;

const BPF_NOEXIST: u64 = 1;
const BPF_EXIST: u64 = 2;

/// A zeroed, 8-byte-aligned value block.
fn block(size: usize) -> Box<[u64]> {
    vec![0u64; size.div_ceil(8).max(1)].into_boxed_slice()
}

/// One map's contents.
pub struct Map {
    pub def: MapDef,
    /// Hash maps (per-CPU ones keep `ncpu` values a key, one after another).
    hash: BTreeMap<Vec<u8>, Box<[u64]>>,
    /// Arrays (per-CPU: `ncpu` blocks per index), and task storage by task index.
    slots: Vec<Option<Box<[u64]>>>,
    ncpu: usize,
}

impl Map {
    pub fn new(def: MapDef, ncpu: usize) -> Map {
        let mut m = Map {
            def,
            hash: BTreeMap::new(),
            slots: Vec::new(),
            ncpu,
        };
        match m.def.type_ {
            ty::ARRAY => {
                m.slots = (0..m.def.max_entries)
                    .map(|_| Some(block(m.def.value_size as usize)))
                    .collect()
            }
            ty::PERCPU_ARRAY => {
                m.slots = (0..m.def.max_entries as usize * ncpu)
                    .map(|_| Some(block(m.def.value_size as usize)))
                    .collect()
            }
            _ => {}
        }
        m
    }

    fn per_cpu(&self) -> bool {
        matches!(self.def.type_, ty::PERCPU_ARRAY | ty::PERCPU_HASH)
    }

    fn stride(&self) -> usize {
        (self.def.value_size as usize).div_ceil(8).max(1)
    }

    fn key_index(&self, key: &[u8]) -> Option<usize> {
        let k = u32::from_ne_bytes(key.get(..4)?.try_into().ok()?) as usize;
        (k < self.def.max_entries as usize).then_some(k)
    }

    /// The value of `key` (as the BPF side sees it on `cpu`), or null.
    pub fn lookup(&mut self, key: &[u8], cpu: usize) -> *mut u8 {
        match self.def.type_ {
            ty::ARRAY => self
                .key_index(key)
                .and_then(|i| self.slots[i].as_mut())
                .map_or(std::ptr::null_mut(), |b| b.as_mut_ptr() as *mut u8),
            ty::PERCPU_ARRAY => {
                let n = self.ncpu;
                self.key_index(key)
                    .and_then(|i| self.slots[i * n + cpu.min(n - 1)].as_mut())
                    .map_or(std::ptr::null_mut(), |b| b.as_mut_ptr() as *mut u8)
            }
            ty::HASH | ty::LRU_HASH | ty::PERCPU_HASH => {
                let stride = self.stride();
                let per_cpu = self.per_cpu();
                self.hash.get_mut(key).map_or(std::ptr::null_mut(), |b| {
                    let off = if per_cpu { cpu * stride } else { 0 };
                    b[off..].as_mut_ptr() as *mut u8
                })
            }
            _ => std::ptr::null_mut(),
        }
    }

    /// `bpf_map_update_elem`: 0 or a negative errno.
    pub fn update(&mut self, key: &[u8], value: &[u8], flags: u64, cpu: usize) -> i64 {
        let vs = self.def.value_size as usize;
        match self.def.type_ {
            ty::ARRAY | ty::PERCPU_ARRAY => {
                if flags == BPF_NOEXIST {
                    return -EEXIST;
                }
                let p = self.lookup(key, cpu);
                if p.is_null() {
                    return -E2BIG;
                }
                // SAFETY: p is a live block of at least vs bytes.
                unsafe { std::ptr::copy_nonoverlapping(value.as_ptr(), p, vs) };
                0
            }
            ty::HASH | ty::LRU_HASH | ty::PERCPU_HASH => {
                let exists = self.hash.contains_key(key);
                if flags == BPF_NOEXIST && exists {
                    return -EEXIST;
                }
                if flags == BPF_EXIST && !exists {
                    return -ENOENT;
                }
                if !exists && self.hash.len() >= self.def.max_entries as usize {
                    if self.def.type_ != ty::LRU_HASH {
                        return -E2BIG;
                    }
                    // LRU: the kernel evicts a not-recently-used entry; the
                    // first key here (a deterministic choice).
                    let first = self.hash.keys().next().cloned();
                    if let Some(k) = first {
                        self.hash.remove(&k);
                    }
                }
                let stride = self.stride();
                let copies = if self.per_cpu() { self.ncpu } else { 1 };
                let b = self
                    .hash
                    .entry(key.to_vec())
                    .or_insert_with(|| block(stride * 8 * copies));
                let off = if copies > 1 { cpu * stride } else { 0 };
                // SAFETY: b holds copies * stride u64s; vs <= stride * 8.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        value.as_ptr(),
                        b[off..].as_mut_ptr() as *mut u8,
                        vs,
                    )
                };
                0
            }
            _ => -EINVAL,
        }
    }

    pub fn delete(&mut self, key: &[u8]) -> i64 {
        match self.def.type_ {
            ty::HASH | ty::LRU_HASH | ty::PERCPU_HASH => {
                if self.hash.remove(key).is_some() {
                    0
                } else {
                    -ENOENT
                }
            }
            _ => -EINVAL,
        }
    }

    /// Task storage of task `idx`, created (zeroed, or a copy of `init`) if asked.
    pub fn task_storage(&mut self, idx: usize, init: Option<&[u8]>, create: bool) -> *mut u8 {
        if self.slots.len() <= idx {
            if !create {
                return std::ptr::null_mut();
            }
            self.slots.resize_with(idx + 1, || None);
        }
        let vs = self.def.value_size as usize;
        let slot = &mut self.slots[idx];
        if slot.is_none() {
            if !create {
                return std::ptr::null_mut();
            }
            let mut b = block(vs);
            if let Some(v) = init {
                // SAFETY: b has at least vs bytes; v is vs bytes.
                unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), b.as_mut_ptr() as *mut u8, vs) };
            }
            *slot = Some(b);
        }
        slot.as_mut().unwrap().as_mut_ptr() as *mut u8
    }

    pub fn task_storage_delete(&mut self, idx: usize) -> i64 {
        match self.slots.get_mut(idx).and_then(Option::take) {
            Some(_) => 0,
            None => -ENOENT,
        }
    }

    /// Every (key, value) of a hash map in key order (what user space reads
    /// with a batch lookup); per-CPU values as the first CPU's.
    pub fn entries(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        let vs = self.def.value_size as usize;
        self.hash
            .iter()
            .map(|(k, v)| {
                // SAFETY: v holds at least vs bytes.
                let bytes = unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, vs) };
                (k.clone(), bytes.to_vec())
            })
            .collect()
    }
}
