//! Expansion: variables, defaults, arrays, arithmetic and word
//! splitting, with the source of every byte kept.

use std::ops::Range;

use super::arith::Arith;
use super::lex::{Part, Word};
use super::limits::{Limit, MAX_NESTING};
use super::{Field, Script, Value, value_len};

impl Script {
    /// A word expanded without splitting (an assignment's value).
    pub(super) fn expand_one(&mut self, word: &Word) -> Field {
        let mut fields = self.expand(word, false);
        let mut first = fields.drain(..).reduce(|mut a, b| {
            a.text.push(' ');
            a.offs.push(None);
            a.extend(&b);
            a
        });
        first.take().unwrap_or(Field::empty(word.range.clone()))
    }

    /// Expands a word into fields; `split` splits unquoted expansions on
    /// blanks (command words), as the shell does.
    pub(super) fn expand(&mut self, word: &Word, split: bool) -> Vec<Field> {
        let mut b = Builder {
            fields: Vec::new(),
            cur: Field::empty(word.range.clone()),
            solid: false,
            word_range: word.range.clone(),
        };
        self.parts(&word.parts, split, &mut b, 0);
        b.finish()
    }

    pub(super) fn parts(&mut self, parts: &[Part], split: bool, b: &mut Builder, depth: usize) {
        if depth > MAX_NESTING {
            self.limit
                .get_or_insert_with(|| Limit::nesting("`${…}` expansions", b.word_range.clone()));
            return;
        }
        for part in parts {
            if self.limit.is_some() {
                return;
            }
            match part {
                Part::Lit { text, offs, .. } => {
                    if !self.spend(text.len()) {
                        return;
                    }
                    b.solid = true;
                    b.cur.text.push_str(text);
                    b.cur.offs.extend(offs.iter().map(|&o| Some(o)));
                }
                Part::Arith { expr, range } => {
                    b.solid = true;
                    match self.arith(expr) {
                        Ok(v) => {
                            let t = v.to_string();
                            b.cur.offs.extend(std::iter::repeat_n(None, t.len()));
                            b.cur.text.push_str(&t);
                            if b.cur.text.len() == t.len() {
                                // The whole field is the arithmetic: point at it.
                                b.cur.word_range = range.clone();
                            }
                        }
                        Err(unknown) => {
                            let shown = format!("$(({expr}))");
                            for (k, u) in unknown.into_iter().enumerate() {
                                b.cur.mark(u, if k == 0 { &shown } else { "" });
                            }
                        }
                    }
                }
                Part::Output { range } => {
                    b.solid = true;
                    b.cur.mark("the output of a command".to_owned(), "$(…)");
                    b.cur.word_range = range.clone();
                }
                Part::Param {
                    name,
                    index,
                    op,
                    quoted,
                    range,
                } => {
                    let value = self.lookup(name, index.as_deref());
                    let value = match (op, value) {
                        (Some((sigil, default)), v) => {
                            let unset = match &v {
                                None => true,
                                Some(Value::Str(f)) => sigil.starts_with(':') && f.text.is_empty(),
                                Some(_) => false,
                            };
                            match sigil.as_str() {
                                ":-" | "-" | ":=" | "=" if unset => {
                                    let mut inner = Builder {
                                        fields: Vec::new(),
                                        cur: Field::empty(range.clone()),
                                        solid: false,
                                        word_range: range.clone(),
                                    };
                                    self.parts(default, false, &mut inner, depth + 1);
                                    let mut f = inner
                                        .finish()
                                        .into_iter()
                                        .next()
                                        .unwrap_or(Field::empty(range.clone()));
                                    if v.is_none() {
                                        f.defaults.push(name.clone());
                                    }
                                    if sigil.contains('=') {
                                        self.env.insert(name.clone(), Value::Str(f.clone()));
                                    }
                                    Some(Value::Str(f))
                                }
                                ":+" | "+" if unset => None,
                                ":+" | "+" => {
                                    let mut f = Field::empty(range.clone());
                                    f.mark(
                                        format!("`${{{name}{sigil}…}}`"),
                                        &format!("${{{name}{sigil}…}}"),
                                    );
                                    Some(Value::Str(f))
                                }
                                _ => v,
                            }
                        }
                        (None, v) => v,
                    };
                    match value {
                        None if self.unset_is_empty => {
                            if *quoted {
                                b.solid = true;
                            }
                        }
                        None => {
                            // An unset variable: a stand-in, unknown where it matters.
                            b.solid = true;
                            if b.cur.text.is_empty() {
                                b.cur.word_range = range.clone();
                            }
                            b.cur.mark(format!("`${name}`"), &format!("${name}"));
                        }
                        Some(Value::Unknown(reason)) => {
                            b.solid = true;
                            b.cur.mark(reason, &format!("${name}"));
                            b.cur.word_range = range.clone();
                        }
                        Some(Value::Str(f)) => {
                            if *quoted || !split {
                                b.solid = true;
                                b.append(&f);
                            } else {
                                b.split_append(&f);
                            }
                        }
                        Some(Value::Array(items)) => {
                            let all = matches!(index.as_deref(), Some("@" | "*"));
                            if !all {
                                // `$ARR` is its first element.
                                if let Some(f) = items.first() {
                                    b.solid = true;
                                    b.append(f);
                                }
                            } else {
                                for (k, f) in items.iter().enumerate() {
                                    if k > 0 {
                                        b.end_field();
                                    }
                                    if *quoted || !split {
                                        b.solid = true;
                                        b.append(f);
                                    } else {
                                        b.split_append(f);
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// A variable's value (an element for `${ARR[3]}`); the copy counts
    /// against the expansion budget, and past it the value is `None`.
    pub(super) fn lookup(&mut self, name: &str, index: Option<&str>) -> Option<Value> {
        let cost = value_len(self.env.get(name)?);
        if !self.spend(cost) {
            return None;
        }
        let v = self.env.get(name)?.clone();
        match (v, index) {
            (Value::Array(items), Some(i)) if i.parse::<usize>().is_ok() => {
                let i: usize = i.parse().ok()?;
                items.get(i).cloned().map(Value::Str)
            }
            (v, _) => Some(v),
        }
    }

    /// `$(( … ))` with integers, `+ - * / %`, parentheses and variables.
    pub(super) fn arith(&mut self, expr: &str) -> Result<i128, Vec<String>> {
        // Expand `$X` and `${X}` first, then evaluate.
        let mut p = Arith {
            text: expr.as_bytes(),
            pos: 0,
            unknown: Vec::new(),
            script: self,
        };
        let v = p.sum();
        p.skip_ws();
        if p.script.limit.is_some() {
            return Err(Vec::new());
        }
        if !p.unknown.is_empty() {
            return Err(p.unknown);
        }
        match v {
            Some(v) if p.pos >= p.text.len() => Ok(v),
            _ => Err(vec![format!("the arithmetic `$(({expr}))`")]),
        }
    }
}

/// `NAME=rest` or `NAME+=rest`: the name, whether it appends, and the value word.
pub(super) fn assignment(w: &Word) -> Option<(String, bool, Word)> {
    let Some(Part::Lit {
        text,
        offs,
        quoted: false,
    }) = w.parts.first()
    else {
        return None;
    };
    let eq = text.find('=')?;
    let (name, append) = match text[..eq].strip_suffix('+') {
        Some(n) => (n, true),
        None => (&text[..eq], false),
    };
    let valid = name
        .chars()
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric());
    if !valid {
        return None;
    }
    let mut parts = Vec::new();
    if eq + 1 < text.len() {
        parts.push(Part::Lit {
            text: text[eq + 1..].to_owned(),
            offs: offs[eq + 1..].to_vec(),
            quoted: false,
        });
    }
    parts.extend(w.parts[1..].iter().cloned());
    let start = offs.get(eq + 1).copied().unwrap_or(w.range.end);
    Some((
        name.to_owned(),
        append,
        Word {
            parts,
            range: start..w.range.end,
        },
    ))
}

pub(super) struct Builder {
    fields: Vec<Field>,
    cur: Field,
    /// Whether the current field has text that makes it a word even when empty.
    solid: bool,
    word_range: Range<usize>,
}

impl Builder {
    pub(super) fn append(&mut self, f: &Field) {
        if self.cur.text.is_empty() && self.cur.unknown.is_empty() {
            self.cur.word_range = f.word_range.clone();
        }
        self.cur.extend(f);
    }

    pub(super) fn split_append(&mut self, f: &Field) {
        let mut pieces = Vec::new();
        let mut start = None;
        for (i, c) in f.text.char_indices() {
            if c.is_whitespace() {
                if let Some(s) = start.take() {
                    pieces.push((s, i));
                }
            } else if start.is_none() {
                start = Some(i);
            }
        }
        if let Some(s) = start {
            pieces.push((s, f.text.len()));
        }
        let leading_blank = f.text.starts_with(char::is_whitespace);
        let trailing_blank = f.text.ends_with(char::is_whitespace);
        if pieces.is_empty() {
            if leading_blank {
                self.end_field();
            }
            return;
        }
        for (k, (a, b)) in pieces.iter().enumerate() {
            if k > 0 || leading_blank {
                self.end_field();
            }
            let piece = f.slice(*a, *b);
            self.solid = true;
            self.append(&piece);
        }
        if trailing_blank {
            self.end_field();
        }
    }

    pub(super) fn end_field(&mut self) {
        let next = Field::empty(self.word_range.clone());
        let done = std::mem::replace(&mut self.cur, next);
        if self.solid || !done.text.is_empty() {
            self.fields.push(done);
        }
        self.solid = false;
    }

    pub(super) fn finish(mut self) -> Vec<Field> {
        self.end_field();
        self.fields
    }
}
