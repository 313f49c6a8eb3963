//! Tiny arithmetic expressions over the thread-count parameter `n`, so that one
//! benchmark model serves every thread count: `"n"`, `"3*n+3"`, `"400000/n"`, `8`.
//! Evaluation is in real arithmetic; counts truncate the result toward zero.

use serde::{Deserialize, Serialize};

/// A number or an expression string in `n`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Count {
    Int(i64),
    Float(f64),
    Expr(String),
}

impl Count {
    /// Integer value (truncated toward zero).
    pub fn eval(&self, n: i64) -> Result<i64, String> {
        let v = self.eval_f64(n)?;
        if v.abs() > 1e15 {
            return Err(format!("value {v} is too large"));
        }
        Ok(v.trunc() as i64)
    }
    pub fn eval_f64(&self, n: i64) -> Result<f64, String> {
        match self {
            Count::Int(v) => Ok(*v as f64),
            Count::Float(v) => Ok(*v),
            Count::Expr(s) => eval_f64(s, n),
        }
    }
}

/// Integer value of an expression (truncated toward zero).
pub fn eval(src: &str, n: i64) -> Result<i64, String> {
    Count::Expr(src.to_string()).eval(n)
}

/// Evaluates `+ - * / ( )`, numbers and `n`.
pub fn eval_f64(src: &str, n: i64) -> Result<f64, String> {
    let toks: Vec<char> = src.chars().filter(|c| !c.is_whitespace()).collect();
    let mut p = Parser {
        t: &toks,
        i: 0,
        n,
        depth: 0,
    };
    let v = p.sum()?;
    if p.i != toks.len() {
        return Err(format!(
            "unexpected '{}' at position {} in expression '{src}'",
            toks[p.i], p.i
        ));
    }
    Ok(v)
}

struct Parser<'a> {
    t: &'a [char],
    i: usize,
    n: i64,
    /// Nesting of parentheses and unary minus, bounded so that hostile input
    /// gives an error instead of overflowing the stack.
    depth: u32,
}

type V = f64;
const MAX_DEPTH: u32 = 64;

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.t.get(self.i).copied()
    }
    fn sum(&mut self) -> Result<V, String> {
        let mut v = self.product()?;
        while let Some(op @ ('+' | '-')) = self.peek() {
            self.i += 1;
            let r = self.product()?;
            v = if op == '+' { v + r } else { v - r };
        }
        Ok(v)
    }
    fn product(&mut self) -> Result<V, String> {
        let mut v = self.atom()?;
        while let Some(op @ ('*' | '/')) = self.peek() {
            self.i += 1;
            let r = self.atom()?;
            v = if op == '*' {
                v * r
            } else {
                if r == 0.0 {
                    return Err("division by zero".into());
                }
                v / r
            };
        }
        Ok(v)
    }
    fn atom(&mut self) -> Result<V, String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(format!(
                "expression nested more than {MAX_DEPTH} levels deep"
            ));
        }
        let v = self.atom_inner();
        self.depth -= 1;
        v
    }
    fn atom_inner(&mut self) -> Result<V, String> {
        match self.peek() {
            Some('n') => {
                self.i += 1;
                Ok(self.n as f64)
            }
            Some('(') => {
                self.i += 1;
                let v = self.sum()?;
                if self.peek() != Some(')') {
                    return Err("missing ')'".into());
                }
                self.i += 1;
                Ok(v)
            }
            Some('-') => {
                self.i += 1;
                Ok(-self.atom()?)
            }
            Some(c) if c.is_ascii_digit() || c == '.' => {
                let start = self.i;
                while self.peek().is_some_and(|c| c.is_ascii_digit() || c == '.') {
                    self.i += 1;
                }
                let s: String = self.t[start..self.i].iter().collect();
                s.parse().map_err(|_| format!("bad number '{s}'"))
            }
            Some(c) => Err(format!(
                "unexpected '{c}' (expressions use n, integers, + - * / and parentheses)"
            )),
            None => Err("expression ends too early".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn evaluates() {
        assert_eq!(eval("3+3*n", 4), Ok(15));
        assert_eq!(eval("(n+1)/2", 4), Ok(2));
        assert_eq!(eval_f64("400000/n", 8), Ok(50000.0));
        assert_eq!(eval_f64("2.5*n", 2), Ok(5.0));
        assert_eq!(eval(" 2 * ( n - 1 ) ", 5), Ok(8));
        assert_eq!(eval("-n+10", 3), Ok(7));
        assert!(eval("n/0", 3).is_err());
        assert!(eval("m+1", 3).unwrap_err().contains("unexpected 'm'"));
        assert!(eval("(n", 3).unwrap_err().contains("missing"));
        assert!(eval("n n", 3).is_err());
    }
}
