//! The queued EEVDF entities of each core, ordered by (deadline, vruntime,
//! thread), every subtree knowing its smallest (vruntime, thread): the
//! kernel's augmented rbtree (fair.c since 6.8: `__pick_eevdf` over a tree
//! sorted by deadline with `min_vruntime` kept per node), so that the
//! eligible entity with the earliest deadline, and the leftmost entity by
//! vruntime, cost O(log n) instead of a pass over the queue.
//!
//! A treap on an arena indexed by thread (a thread is queued on one core at
//! most); priorities are a fixed hash of the thread id, so the shape, like
//! everything else in the simulator, is deterministic. Nodes know their
//! parent, so a removal starts at the node and climbs only while the
//! removed entity was the smallest below; insert and split are loops.

use colab_core::{CoreId, ThreadId};

const NIL: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Node {
    /// (deadline, vruntime, thread): the order of the kernel's tree, ties
    /// broken by thread id like the scan it replaces.
    key: (i64, i64, u32),
    prio: u32,
    left: u32,
    right: u32,
    parent: u32,
    /// Smallest (vruntime, thread) in this subtree.
    min_v: (i64, u32),
    /// The core whose tree holds it, or NIL.
    on: u32,
}

impl Default for Node {
    fn default() -> Node {
        Node {
            key: (0, 0, 0),
            prio: 0,
            left: NIL,
            right: NIL,
            parent: NIL,
            min_v: (0, 0),
            on: NIL,
        }
    }
}

/// One tree of queued entities per core.
#[derive(Clone, Debug, Default)]
pub struct EntityTrees {
    nodes: Vec<Node>,
    roots: Vec<u32>,
}

/// A fixed mixing of the thread id (splitmix32-style): treap priorities
/// that are deterministic and spread evenly.
fn prio_of(t: u32) -> u32 {
    let mut x = t.wrapping_add(0x9e37_79b9);
    x = (x ^ (x >> 16)).wrapping_mul(0x85eb_ca6b);
    x = (x ^ (x >> 13)).wrapping_mul(0xc2b2_ae35);
    x ^ (x >> 16)
}

impl EntityTrees {
    pub fn new(cores: usize) -> EntityTrees {
        EntityTrees {
            nodes: Vec::new(),
            roots: vec![NIL; cores],
        }
    }

    /// Makes room for threads up to `t`.
    pub fn grow(&mut self, t: ThreadId) {
        if self.nodes.len() <= t.idx() {
            self.nodes.resize(t.idx() + 1, Node::default());
        }
    }

    /// The core whose tree holds `t`, if any.
    pub fn core_of(&self, t: ThreadId) -> Option<CoreId> {
        match self.nodes.get(t.idx()) {
            Some(n) if n.on != NIL => Some(CoreId(n.on as u16)),
            _ => None,
        }
    }

    fn pull(&mut self, i: u32) {
        let n = self.nodes[i as usize];
        let mut m = (n.key.1, n.key.2);
        for child in [n.left, n.right] {
            if child != NIL {
                m = m.min(self.nodes[child as usize].min_v);
            }
        }
        self.nodes[i as usize].min_v = m;
    }

    /// Splits subtree `i` into keys < `key` and keys >= `key`, top down:
    /// the left part's nodes are chained by their right links, the right
    /// part's by their left links, then each chain is pulled bottom up.
    /// The parents of the two roots are the caller's to set.
    fn split(&mut self, mut i: u32, key: (i64, i64, u32)) -> (u32, u32) {
        let (mut l_root, mut l_tail, mut r_root, mut r_tail) = (NIL, NIL, NIL, NIL);
        while i != NIL {
            let next;
            if self.nodes[i as usize].key < key {
                next = self.nodes[i as usize].right;
                if l_tail == NIL {
                    l_root = i;
                } else {
                    self.nodes[l_tail as usize].right = i;
                    self.nodes[i as usize].parent = l_tail;
                }
                l_tail = i;
            } else {
                next = self.nodes[i as usize].left;
                if r_tail == NIL {
                    r_root = i;
                } else {
                    self.nodes[r_tail as usize].left = i;
                    self.nodes[i as usize].parent = r_tail;
                }
                r_tail = i;
            }
            i = next;
        }
        if l_tail != NIL {
            self.nodes[l_tail as usize].right = NIL;
            self.pull_up(l_tail, l_root);
        }
        if r_tail != NIL {
            self.nodes[r_tail as usize].left = NIL;
            self.pull_up(r_tail, r_root);
        }
        (l_root, r_root)
    }

    /// Pulls `i` and its ancestors up to `top`.
    fn pull_up(&mut self, mut i: u32, top: u32) {
        loop {
            self.pull(i);
            if i == top {
                return;
            }
            i = self.nodes[i as usize].parent;
        }
    }

    /// Makes `x` the child of `p` on the given side (the root of core
    /// `c`'s tree if `p` is NIL).
    fn link(&mut self, c: usize, p: u32, left: bool, x: u32) {
        match p {
            NIL => self.roots[c] = x,
            _ if left => self.nodes[p as usize].left = x,
            _ => self.nodes[p as usize].right = x,
        }
        if x != NIL {
            self.nodes[x as usize].parent = p;
        }
    }

    /// Joins two subtrees whose keys are all in order (`a` before `b`).
    fn merge(&mut self, a: u32, b: u32) -> u32 {
        if a == NIL {
            return b;
        }
        if b == NIL {
            return a;
        }
        if self.nodes[a as usize].prio >= self.nodes[b as usize].prio {
            let r = self.merge(self.nodes[a as usize].right, b);
            self.nodes[a as usize].right = r;
            self.nodes[r as usize].parent = a;
            self.pull(a);
            a
        } else {
            let l = self.merge(a, self.nodes[b as usize].left);
            self.nodes[b as usize].left = l;
            self.nodes[l as usize].parent = b;
            self.pull(b);
            b
        }
    }

    /// Queues `t` on `c` with its deadline and vruntime. `t` must not be
    /// queued anywhere.
    pub fn insert(&mut self, c: CoreId, t: ThreadId, deadline: i64, vruntime: i64) {
        self.grow(t);
        debug_assert_eq!(self.nodes[t.idx()].on, NIL, "thread {t} queued twice");
        let (n, key, prio, m) = (
            t.0,
            (deadline, vruntime, t.0),
            prio_of(t.0),
            (vruntime, t.0),
        );
        self.nodes[t.idx()] = Node {
            key,
            prio,
            left: NIL,
            right: NIL,
            parent: NIL,
            min_v: m,
            on: u32::from(c.0),
        };
        // Down by key to where `n`'s priority puts it, each subtree on the
        // way taking its smallest; what is below there is split.
        let (mut p, mut left, mut i) = (NIL, false, self.roots[c.idx()]);
        while i != NIL && self.nodes[i as usize].prio >= prio {
            let node = &mut self.nodes[i as usize];
            node.min_v = node.min_v.min(m);
            (p, left) = (i, key < node.key);
            i = if left { node.left } else { node.right };
        }
        if i != NIL {
            let (l, r) = self.split(i, key);
            self.link(c.idx(), n, true, l);
            self.link(c.idx(), n, false, r);
            self.pull(n);
        }
        self.link(c.idx(), p, left, n);
    }

    /// Takes `t` out of whichever tree holds it; false if none does. Its
    /// children merged take its place, and its ancestors whose smallest
    /// it was take another.
    pub fn remove(&mut self, t: ThreadId) -> bool {
        let Some(c) = self.core_of(t) else {
            return false;
        };
        let n = self.nodes[t.idx()];
        let m = self.merge(n.left, n.right);
        let p = n.parent;
        let left = p != NIL && self.nodes[p as usize].left == t.0;
        self.link(c.idx(), p, left, m);
        let mut a = p;
        while a != NIL && self.nodes[a as usize].min_v == (n.key.1, n.key.2) {
            self.pull(a);
            a = self.nodes[a as usize].parent;
        }
        self.nodes[t.idx()] = Node::default();
        true
    }

    /// The queued entity of `c` with the smallest (vruntime, thread).
    pub fn min_vruntime(&self, c: CoreId) -> Option<(i64, ThreadId)> {
        let r = self.roots[c.idx()];
        (r != NIL).then(|| {
            let (v, t) = self.nodes[r as usize].min_v;
            (v, ThreadId(t))
        })
    }

    /// The first entity of `c` in (deadline, vruntime, thread) order whose
    /// vruntime `eligible` accepts; `eligible` must be monotone (true for
    /// every vruntime below one it accepts), as `v <= V` is.
    pub fn first_eligible(&self, c: CoreId, eligible: impl Fn(i64) -> bool) -> Option<ThreadId> {
        let mut i = self.roots[c.idx()];
        if i == NIL || !eligible(self.nodes[i as usize].min_v.0) {
            return None;
        }
        // Invariant: subtree `i` holds an eligible entity.
        loop {
            let n = &self.nodes[i as usize];
            if n.left != NIL && eligible(self.nodes[n.left as usize].min_v.0) {
                i = n.left;
            } else if eligible(n.key.1) {
                return Some(ThreadId(n.key.2));
            } else {
                i = n.right;
            }
        }
    }

    /// Entities queued on `c`, in key order (tests).
    #[cfg(test)]
    pub fn in_order(&self, c: CoreId) -> Vec<ThreadId> {
        fn walk(tr: &EntityTrees, i: u32, out: &mut Vec<ThreadId>) {
            if i != NIL {
                let n = tr.nodes[i as usize];
                walk(tr, n.left, out);
                out.push(ThreadId(n.key.2));
                walk(tr, n.right, out);
            }
        }
        let mut out = Vec::new();
        walk(self, self.roots[c.idx()], &mut out);
        out
    }

    /// Panics unless every node of `c`'s tree links back to its parent,
    /// has a priority no higher than it and knows its subtree's smallest.
    #[cfg(test)]
    pub fn check_links(&self, c: CoreId) {
        fn walk(tr: &EntityTrees, i: u32, parent: u32) -> Option<(i64, u32)> {
            if i == NIL {
                return None;
            }
            let n = tr.nodes[i as usize];
            assert_eq!(n.parent, parent, "parent of {i}");
            if parent != NIL {
                assert!(
                    n.prio <= tr.nodes[parent as usize].prio,
                    "heap order at {i}"
                );
            }
            let below = [walk(tr, n.left, i), walk(tr, n.right, i)];
            let m = below
                .into_iter()
                .flatten()
                .fold((n.key.1, n.key.2), |a, b| a.min(b));
            assert_eq!(n.min_v, m, "smallest below {i}");
            Some(m)
        }
        walk(self, self.roots[c.idx()], NIL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Reference: the queue as a list, searched the way the scan did.
    fn scan_first(q: &[(i64, i64, u32)], v_max: i64) -> Option<u32> {
        q.iter().filter(|e| e.1 <= v_max).min().map(|e| e.2)
    }

    #[test]
    fn earliest_deadline_among_eligible() {
        let mut tr = EntityTrees::new(2);
        let c = CoreId(1);
        // (thread, deadline, vruntime)
        for (t, d, v) in [(0, 50, 40), (1, 30, 25), (2, 20, 18), (3, 35, 10)] {
            tr.insert(c, ThreadId(t), d, v);
        }
        assert_eq!(tr.first_eligible(c, |v| v <= 100), Some(ThreadId(2)));
        // V = 15: only thread 3 (v 10) is eligible.
        assert_eq!(tr.first_eligible(c, |v| v <= 15), Some(ThreadId(3)));
        assert_eq!(tr.first_eligible(c, |v| v <= 5), None);
        assert_eq!(tr.min_vruntime(c), Some((10, ThreadId(3))));
        assert!(tr.remove(ThreadId(3)));
        assert!(!tr.remove(ThreadId(3)));
        assert_eq!(tr.min_vruntime(c), Some((18, ThreadId(2))));
        assert_eq!(tr.first_eligible(c, |v| v <= 20), Some(ThreadId(2)));
        assert_eq!(tr.min_vruntime(CoreId(0)), None);
        assert_eq!(tr.core_of(ThreadId(1)), Some(c));
    }

    proptest! {
        /// Any sequence of inserts and removes on two cores: the tree's
        /// answers equal a scan of the same queue.
        #[test]
        fn matches_a_scan(ops in proptest::collection::vec((0u32..40, 0u16..2, -50i64..50, 0i64..30, -60i64..60), 1..200)) {
            let mut tr = EntityTrees::new(2);
            let mut q: [Vec<(i64, i64, u32)>; 2] = [Vec::new(), Vec::new()];
            for (t, c, v, slice, vmax) in ops {
                let tid = ThreadId(t);
                if let Some(on) = tr.core_of(tid) {
                    prop_assert!(tr.remove(tid));
                    q[on.idx()].retain(|e| e.2 != t);
                } else {
                    tr.insert(CoreId(c), tid, v + slice, v);
                    q[c as usize].push((v + slice, v, t));
                }
                for (k, queue) in q.iter().enumerate() {
                    let core = CoreId(k as u16);
                    prop_assert_eq!(tr.first_eligible(core, |v| v <= vmax).map(|x| x.0), scan_first(queue, vmax));
                    let min = queue.iter().map(|e| (e.1, e.2)).min();
                    prop_assert_eq!(tr.min_vruntime(core).map(|(v, x)| (v, x.0)), min);
                    let mut sorted = queue.clone();
                    sorted.sort();
                    prop_assert_eq!(tr.in_order(core), sorted.iter().map(|e| ThreadId(e.2)).collect::<Vec<_>>());
                    tr.check_links(core);
                }
            }
        }
    }
}
