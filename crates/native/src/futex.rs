//! Synchronization objects built directly on futexes (via `atomic-wait`), so
//! that contended waiters really sleep in the kernel, as in glibc: an
//! uncontended operation is one atomic instruction, a contended one a
//! FUTEX_WAIT / FUTEX_WAKE system call.

use atomic_wait::{wait, wake_all, wake_one};
use std::sync::atomic::{AtomicU32, Ordering::*};

/// Drepper's three-state mutex ("Futexes are tricky", mutex3):
/// 0 unlocked, 1 locked, 2 locked with (possible) waiters.
#[derive(Default)]
pub struct Mutex {
    state: AtomicU32,
}

impl Mutex {
    pub fn lock(&self) {
        if self.state.compare_exchange(0, 1, Acquire, Relaxed).is_ok() {
            return;
        }
        let mut c = self.state.swap(2, Acquire);
        while c != 0 {
            wait(&self.state, 2);
            c = self.state.swap(2, Acquire);
        }
    }
    pub fn unlock(&self) {
        if self.state.fetch_sub(1, Release) != 1 {
            self.state.store(0, Release);
            wake_one(&self.state);
        }
    }
    #[cfg(test)]
    pub fn is_locked(&self) -> bool {
        self.state.load(Relaxed) != 0
    }
}

/// Condition variable as a sequence counter: a waiter sleeps until the
/// counter moves. A signal sent before anyone waits is lost, as with pthreads.
#[derive(Default)]
pub struct Cond {
    seq: AtomicU32,
}

impl Cond {
    /// Releases `m`, sleeps until signalled, re-acquires `m`.
    pub fn wait(&self, m: &Mutex) {
        let s = self.seq.load(Relaxed);
        m.unlock();
        wait(&self.seq, s);
        m.lock();
    }
    pub fn signal(&self) {
        self.seq.fetch_add(1, Release);
        wake_one(&self.seq);
    }
    pub fn broadcast(&self) {
        self.seq.fetch_add(1, Release);
        wake_all(&self.seq);
    }
}

/// Reusable barrier: the last of `n` arrivals bumps the generation and wakes all.
pub struct Barrier {
    n: u32,
    arrived: AtomicU32,
    generation: AtomicU32,
}

impl Barrier {
    pub fn new(n: u32) -> Barrier {
        Barrier {
            n,
            arrived: AtomicU32::new(0),
            generation: AtomicU32::new(0),
        }
    }
    pub fn wait(&self) {
        let gen = self.generation.load(Acquire);
        if self.arrived.fetch_add(1, AcqRel) + 1 == self.n {
            // Nobody of this generation can leave before the bump below, so
            // resetting first is safe.
            self.arrived.store(0, Relaxed);
            self.generation.fetch_add(1, Release);
            wake_all(&self.generation);
        } else {
            while self.generation.load(Acquire) == gen {
                wait(&self.generation, gen);
            }
        }
    }
}

/// Bounded queue of anonymous items (a pipeline channel), closed once all of
/// its producers have closed it.
pub struct Queue {
    lock: Mutex,
    not_empty: Cond,
    not_full: Cond,
    // Guarded by `lock`; atomics only to share them without UnsafeCell.
    items: AtomicU32,
    closed_by: AtomicU32,
    capacity: u32,
    producers: u32,
}

impl Queue {
    pub fn new(capacity: u32, producers: u32) -> Queue {
        Queue {
            lock: Mutex::default(),
            not_empty: Cond::default(),
            not_full: Cond::default(),
            items: AtomicU32::new(0),
            closed_by: AtomicU32::new(0),
            capacity,
            producers,
        }
    }
    pub fn push(&self) {
        self.lock.lock();
        while self.items.load(Relaxed) >= self.capacity {
            self.not_full.wait(&self.lock);
        }
        self.items.fetch_add(1, Relaxed);
        self.not_empty.signal();
        self.lock.unlock();
    }
    /// Takes an item; false when the queue is closed and empty.
    pub fn pop(&self) -> bool {
        self.lock.lock();
        loop {
            if self.items.load(Relaxed) > 0 {
                self.items.fetch_sub(1, Relaxed);
                self.not_full.signal();
                self.lock.unlock();
                return true;
            }
            if self.closed_by.load(Relaxed) >= self.producers {
                self.lock.unlock();
                return false;
            }
            self.not_empty.wait(&self.lock);
        }
    }
    pub fn close(&self) {
        self.lock.lock();
        self.closed_by.fetch_add(1, Relaxed);
        if self.closed_by.load(Relaxed) >= self.producers {
            self.not_empty.broadcast();
        }
        self.lock.unlock();
    }
}

/// Counts live threads of a group; `join` sleeps until it reaches zero.
#[derive(Default)]
pub struct Group {
    live: AtomicU32,
}

impl Group {
    pub fn add(&self, n: u32) {
        self.live.fetch_add(n, AcqRel);
    }
    pub fn exit(&self) {
        if self.live.fetch_sub(1, AcqRel) == 1 {
            wake_all(&self.live);
        }
    }
    pub fn join(&self) {
        loop {
            let v = self.live.load(Acquire);
            if v == 0 {
                return;
            }
            wait(&self.live, v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::thread;

    #[test]
    fn mutex_excludes() {
        let m = Arc::new(Mutex::default());
        let counter = Arc::new(AtomicU32::new(0));
        let hs: Vec<_> = (0..4)
            .map(|_| {
                let (m, c) = (m.clone(), counter.clone());
                thread::spawn(move || {
                    for _ in 0..2000 {
                        m.lock();
                        // Non-atomic read-modify-write under the lock.
                        let v = c.load(Relaxed);
                        std::hint::spin_loop();
                        c.store(v + 1, Relaxed);
                        m.unlock();
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(counter.load(Relaxed), 8000);
        assert!(!m.is_locked());
    }

    #[test]
    fn barrier_is_reusable() {
        let b = Arc::new(Barrier::new(3));
        let phase = Arc::new(AtomicU32::new(0));
        let hs: Vec<_> = (0..3)
            .map(|_| {
                let (b, p) = (b.clone(), phase.clone());
                thread::spawn(move || {
                    for round in 0..50 {
                        p.fetch_add(1, AcqRel);
                        b.wait();
                        // Everyone has arrived for this round.
                        assert!(p.load(Acquire) >= 3 * (round + 1));
                        b.wait();
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
    }

    #[test]
    fn queue_delivers_every_item_then_closes() {
        let q = Arc::new(Queue::new(2, 2));
        let got = Arc::new(AtomicU32::new(0));
        let consumers: Vec<_> = (0..3)
            .map(|_| {
                let (q, g) = (q.clone(), got.clone());
                thread::spawn(move || {
                    while q.pop() {
                        g.fetch_add(1, Relaxed);
                    }
                })
            })
            .collect();
        let producers: Vec<_> = (0..2)
            .map(|_| {
                let q = q.clone();
                thread::spawn(move || {
                    for _ in 0..100 {
                        q.push();
                    }
                    q.close();
                })
            })
            .collect();
        for h in producers.into_iter().chain(consumers) {
            h.join().unwrap();
        }
        assert_eq!(got.load(Relaxed), 200);
    }

    #[test]
    fn cond_wakes_waiter_and_join_waits() {
        let m = Arc::new(Mutex::default());
        let c = Arc::new(Cond::default());
        let ready = Arc::new(AtomicU32::new(0));
        let g = Arc::new(Group::default());
        g.add(1);
        let h = {
            let (m, c, r, g) = (m.clone(), c.clone(), ready.clone(), g.clone());
            thread::spawn(move || {
                m.lock();
                while r.load(Relaxed) == 0 {
                    c.wait(&m);
                }
                m.unlock();
                g.exit();
            })
        };
        thread::sleep(std::time::Duration::from_millis(5));
        m.lock();
        ready.store(1, Relaxed);
        c.signal();
        m.unlock();
        g.join();
        h.join().unwrap();
    }
}
