//! State of the synchronization objects. Semantics follow glibc on futexes:
//! uncontended operations never enter the kernel; contended waiters sleep and
//! are woken by the releasing thread, which is charged their waiting time.

use colab_core::ThreadId;
use std::collections::VecDeque;

/// A mutex. Unlock wakes one waiter but does not hand the lock over: the woken
/// thread retries and may find it taken again (barging), as with glibc.
#[derive(Clone, Debug, Default)]
pub struct MutexState {
    pub owner: Option<ThreadId>,
    pub waiters: VecDeque<ThreadId>,
    /// Drawn compute done while holding it, at the best rate, ns: its
    /// critical sections never overlap, so no schedule of these draws runs
    /// them in less (the lower bound reads it).
    pub held_ns: f64,
}

#[derive(Clone, Debug, Default)]
pub struct BarrierState {
    pub needed: u32,
    pub arrived: u32,
    pub waiters: Vec<ThreadId>,
    /// The longest drawn path (ThreadRt::path_ns) of this episode's
    /// arrivals so far: no thread leaves the episode sooner.
    pub path_ns: f64,
    /// The drawn work its arrivals did since they last left a barrier (or
    /// started), and the least path at which one of them left: that work
    /// is done after it, on no more cores than the machine has.
    pub work_ns: f64,
    pub from_ns: f64,
}

impl BarrierState {
    /// A barrier no thread has reached yet.
    pub fn new(needed: u32) -> BarrierState {
        BarrierState {
            needed,
            from_ns: f64::INFINITY,
            ..Default::default()
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct CondState {
    pub waiters: VecDeque<ThreadId>,
}

/// A bounded queue of anonymous items (a pipeline channel).
#[derive(Clone, Debug, Default)]
pub struct QueueState {
    pub capacity: u32,
    pub items: u32,
    pub producers: u32,
    pub closed_by: u32,
    pub push_waiters: VecDeque<ThreadId>,
    pub pop_waiters: VecDeque<ThreadId>,
}

impl QueueState {
    /// An empty, open queue.
    pub fn new(capacity: u32, producers: u32) -> QueueState {
        QueueState {
            capacity,
            producers,
            ..Default::default()
        }
    }
    pub fn is_closed(&self) -> bool {
        self.closed_by >= self.producers
    }
}

/// What a blocked thread waits for (for deadlock reports and retries).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitObj {
    None,
    /// Global mutex index.
    Mutex(u32),
    Barrier(u32),
    Cond(u32),
    QueueFull(u32),
    QueueEmpty(u32),
    Join(u32),
    Sleep,
    /// Global index of a replayed one-shot event.
    Event(u32),
}

/// A one-shot event of a replayed trace.
#[derive(Clone, Debug, Default)]
pub struct EventState {
    pub posted: bool,
    pub waiter: Option<ThreadId>,
}
