//! `$(( … ))`: integers, `+ - * / %`, parentheses and variables.

use super::limits::{Limit, MAX_NESTING};
use super::{Script, Value};

pub(super) struct Arith<'a, 'b> {
    pub(super) text: &'a [u8],
    pub(super) pos: usize,
    pub(super) unknown: Vec<String>,
    pub(super) script: &'b mut Script,
}

impl Arith<'_, '_> {
    pub(super) fn skip_ws(&mut self) {
        while self.text.get(self.pos).is_some_and(u8::is_ascii_whitespace) {
            self.pos += 1;
        }
    }

    pub(super) fn sum(&mut self) -> Option<i128> {
        let mut v = self.product()?;
        loop {
            self.skip_ws();
            match self.text.get(self.pos) {
                Some(b'+') => {
                    self.pos += 1;
                    v = v.checked_add(self.product()?)?;
                }
                Some(b'-') => {
                    self.pos += 1;
                    v = v.checked_sub(self.product()?)?;
                }
                _ => return Some(v),
            }
        }
    }

    pub(super) fn product(&mut self) -> Option<i128> {
        let mut v = self.atom()?;
        loop {
            self.skip_ws();
            match self.text.get(self.pos) {
                Some(b'*') if self.text.get(self.pos + 1) != Some(&b'*') => {
                    self.pos += 1;
                    v = v.checked_mul(self.atom()?)?;
                }
                Some(b'/') => {
                    self.pos += 1;
                    v = v.checked_div(self.atom()?)?;
                }
                Some(b'%') => {
                    self.pos += 1;
                    v = v.checked_rem(self.atom()?)?;
                }
                _ => return Some(v),
            }
        }
    }

    pub(super) fn atom(&mut self) -> Option<i128> {
        // Parentheses, signs and variables' texts, across the variables
        // being evaluated: one depth for all.
        if self.script.arith_depth >= MAX_NESTING || self.script.limit.is_some() {
            let at = self.script.at.clone();
            self.script.limit.get_or_insert_with(|| {
                Limit::nesting("parentheses, signs and variables in `$(( … ))`", at)
            });
            return None;
        }
        self.script.arith_depth += 1;
        let v = self.atom_form();
        self.script.arith_depth -= 1;
        v
    }

    fn atom_form(&mut self) -> Option<i128> {
        self.skip_ws();
        match self.text.get(self.pos)? {
            b'(' => {
                self.pos += 1;
                let v = self.sum()?;
                self.skip_ws();
                (self.text.get(self.pos) == Some(&b')')).then(|| {
                    self.pos += 1;
                    v
                })
            }
            b'-' => {
                self.pos += 1;
                self.atom()?.checked_neg()
            }
            b'+' => {
                self.pos += 1;
                self.atom()
            }
            b'0'..=b'9' => {
                let start = self.pos;
                while self.text.get(self.pos).is_some_and(u8::is_ascii_digit) {
                    self.pos += 1;
                }
                std::str::from_utf8(&self.text[start..self.pos])
                    .ok()?
                    .parse()
                    .ok()
            }
            _ => {
                // A variable: `X`, `$X` or `${X}`.
                if self.text.get(self.pos) == Some(&b'$') {
                    self.pos += 1;
                }
                let braced = self.text.get(self.pos) == Some(&b'{');
                if braced {
                    self.pos += 1;
                }
                let start = self.pos;
                while self
                    .text
                    .get(self.pos)
                    .is_some_and(|b| *b == b'_' || b.is_ascii_alphanumeric())
                {
                    self.pos += 1;
                }
                let name = std::str::from_utf8(&self.text[start..self.pos])
                    .ok()?
                    .to_owned();
                if braced && self.text.get(self.pos) == Some(&b'}') {
                    self.pos += 1;
                }
                if name.is_empty() {
                    return None;
                }
                match self.script.lookup(&name, None) {
                    Some(Value::Str(f)) if f.unknown.is_empty() => {
                        // Bash evaluates a variable's text as an expression.
                        let text = f.text.trim().to_owned();
                        if text.is_empty() {
                            return Some(0);
                        }
                        let stack = &mut self.script.arith_stack;
                        if stack.contains(&name) {
                            let mut chain = stack.clone();
                            chain.push(name);
                            let at = self.script.at.clone();
                            self.script
                                .limit
                                .get_or_insert_with(|| Limit::cycle(&chain, at));
                            return None;
                        }
                        stack.push(name);
                        let v = self.script.arith(&text);
                        self.script.arith_stack.pop();
                        if self.script.limit.is_some() {
                            return None;
                        }
                        match v {
                            Ok(v) => Some(v),
                            Err(u) => {
                                self.unknown.extend(u);
                                Some(0)
                            }
                        }
                    }
                    Some(Value::Str(f)) => {
                        self.unknown.extend(f.unknown);
                        Some(0)
                    }
                    Some(Value::Unknown(reason)) => {
                        self.unknown.push(reason);
                        Some(0)
                    }
                    Some(Value::Array(_)) | None => {
                        self.unknown.push(format!("`${name}`"));
                        Some(0)
                    }
                }
            }
        }
    }
}
