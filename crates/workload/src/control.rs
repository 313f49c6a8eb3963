//! Loop bookkeeping shared by the two interpreters of compiled programs (the
//! simulator and the native runner), so both walk a program identically.

use crate::{LoopCount, Op};

const UNTIL_CLOSED: u32 = u32::MAX;

/// Open loops of one thread: (index of the `Loop` op, iterations left).
#[derive(Clone, Debug, Default)]
pub struct Loops(Vec<(u32, u32)>);

impl Loops {
    /// At `Op::Loop { count, end }` (index `pc`): the next op to run.
    pub fn enter(&mut self, pc: u32, count: LoopCount, end: u32) -> u32 {
        let left = match count {
            LoopCount::Times(k) => k,
            LoopCount::UntilClosed => UNTIL_CLOSED,
        };
        if left == 0 {
            end + 1
        } else {
            self.0.push((pc, left));
            pc + 1
        }
    }

    /// At `Op::EndLoop { start }` (index `pc`): the next op to run.
    pub fn end(&mut self, pc: u32, start: u32) -> u32 {
        match self.0.last_mut() {
            Some(top) if top.1 == UNTIL_CLOSED => start + 1,
            Some(top) => {
                top.1 -= 1;
                if top.1 > 0 {
                    start + 1
                } else {
                    self.0.pop();
                    pc + 1
                }
            }
            // Compiled programs always match loops; be safe anyway.
            None => pc + 1,
        }
    }

    /// A `pop` found its queue closed and empty: the op after the innermost
    /// until-closed loop (None only for a program the compiler would reject).
    pub fn break_until_closed(&mut self, ops: &[Op]) -> Option<u32> {
        while let Some((start, left)) = self.0.pop() {
            if left == UNTIL_CLOSED {
                if let Op::Loop { end, .. } = ops[start as usize] {
                    return Some(end + 1);
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counted_and_until_closed_loops() {
        // 0: Loop x2 { 1: Loop until-closed { 2: Pop } 3: EndLoop } 4: EndLoop
        let ops = vec![
            Op::Loop {
                count: LoopCount::Times(2),
                end: 4,
            },
            Op::Loop {
                count: LoopCount::UntilClosed,
                end: 3,
            },
            Op::Pop(0),
            Op::EndLoop { start: 1 },
            Op::EndLoop { start: 0 },
        ];
        let mut l = Loops::default();
        assert_eq!(l.enter(0, LoopCount::Times(2), 4), 1);
        assert_eq!(l.enter(1, LoopCount::UntilClosed, 3), 2);
        assert_eq!(l.end(3, 1), 2, "until-closed loops go round");
        assert_eq!(l.break_until_closed(&ops), Some(4));
        assert_eq!(l.end(4, 0), 1, "first of two iterations done");
        assert_eq!(l.enter(1, LoopCount::UntilClosed, 3), 2);
        assert_eq!(l.break_until_closed(&ops), Some(4));
        assert_eq!(l.end(4, 0), 5, "both iterations done");
        assert_eq!(
            l.enter(7, LoopCount::Times(0), 9),
            10,
            "zero-trip loop is skipped"
        );
    }
}
