//! Words and separators of a script: quotes, escapes, `$…` forms,
//! continuations, comments and here-documents.

use std::ops::Range;

use super::limits::{Limit, MAX_NESTING, MAX_TOKENS};

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Part {
    /// Literal text with the source offset of each byte.
    Lit {
        text: String,
        offs: Vec<usize>,
        quoted: bool,
    },
    /// `$X`, `${X}`, `${X:-w}`, `${X[@]}`.
    Param {
        name: String,
        index: Option<String>,
        op: Option<(String, Vec<Part>)>,
        quoted: bool,
        range: Range<usize>,
    },
    /// `$(( … ))`.
    Arith { expr: String, range: Range<usize> },
    /// `$( … )` or a backquoted command: its output is unknown.
    Output { range: Range<usize> },
}

#[derive(Clone, Debug, PartialEq)]
pub(super) struct Word {
    pub(super) parts: Vec<Part>,
    pub(super) range: Range<usize>,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Tok {
    Word(Word),
    /// `;`, `&&`, `||`, `|`, `&`, or a newline.
    Sep,
    /// `;;`, the end of a `case` branch.
    CaseEnd,
    Open,
    Close,
}

pub(super) struct Lexer<'a> {
    pub(super) text: &'a str,
    pub(super) pos: usize,
    /// Here-document delimiters waiting for the next newline.
    pub(super) heredocs: Vec<String>,
    /// How many `${X:-…}` the cursor is inside.
    pub(super) depth: usize,
    /// The nesting limit, once reached: the rest of the text is not read.
    pub(super) limit: Option<Limit>,
}

impl<'a> Lexer<'a> {
    pub(super) fn peek(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }

    pub(super) fn peek_at(&self, n: usize) -> Option<char> {
        self.text[self.pos..].chars().nth(n)
    }

    pub(super) fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    pub(super) fn tokens(&mut self) -> Vec<Tok> {
        let mut out = Vec::new();
        while let Some(c) = self.peek() {
            if out.len() >= MAX_TOKENS {
                // The reader's memory grows with the tokens: stop here.
                let at = self.pos..self.pos;
                self.limit.get_or_insert_with(|| Limit::tokens(at));
                break;
            }
            match c {
                '\n' => {
                    self.bump();
                    out.push(Tok::Sep);
                    self.skip_heredocs();
                }
                ' ' | '\t' | '\r' => {
                    self.bump();
                }
                '\\' if matches!(self.peek_at(1), Some('\n')) => {
                    self.bump();
                    self.bump();
                }
                '\\' if matches!(self.peek_at(1), Some('\r')) && self.peek_at(2) == Some('\n') => {
                    self.pos += 3;
                }
                '#' => {
                    while let Some(c) = self.peek() {
                        if c == '\n' {
                            break;
                        }
                        self.bump();
                    }
                }
                ';' if self.peek_at(1) == Some(';') => {
                    self.pos += 2;
                    out.push(Tok::CaseEnd);
                }
                ';' | '&' | '|' => {
                    self.bump();
                    if matches!(self.peek(), Some('&' | '|')) {
                        self.bump();
                    }
                    out.push(Tok::Sep);
                }
                '(' => {
                    self.bump();
                    out.push(Tok::Open);
                }
                ')' => {
                    self.bump();
                    out.push(Tok::Close);
                }
                '<' if self.peek_at(1) == Some('<') && self.peek_at(2) != Some('<') => {
                    self.pos += 2;
                    if self.peek() == Some('-') {
                        self.bump();
                    }
                    while matches!(self.peek(), Some(' ' | '\t')) {
                        self.bump();
                    }
                    if let Some(w) = self.word() {
                        let delim: String = w
                            .parts
                            .iter()
                            .map(|p| match p {
                                Part::Lit { text, .. } => text.as_str(),
                                _ => "",
                            })
                            .collect();
                        if !delim.is_empty() {
                            self.heredocs.push(delim);
                        }
                    }
                }
                _ => {
                    if let Some(w) = self.word() {
                        // `NAME=(`: an array assignment opens here.
                        out.push(Tok::Word(w));
                    } else {
                        // A character no word takes (a stray `>`): skip it.
                        self.bump();
                    }
                }
            }
        }
        out
    }

    pub(super) fn skip_heredocs(&mut self) {
        while let Some(delim) = self.heredocs.first().cloned() {
            self.heredocs.remove(0);
            loop {
                let rest = &self.text[self.pos..];
                if rest.is_empty() {
                    return;
                }
                let (line, len) = match rest.find('\n') {
                    Some(i) => (&rest[..i], i + 1),
                    None => (rest, rest.len()),
                };
                self.pos += len;
                if line.trim() == delim {
                    break;
                }
            }
        }
    }

    /// One word, or `None` at a character that ends words.
    pub(super) fn word(&mut self) -> Option<Word> {
        let start = self.pos;
        let mut parts: Vec<Part> = Vec::new();
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' | '\r' | '\n' | ';' | '&' | '|' | ')' => break,
                '(' => {
                    // Only after `NAME=` (or `NAME+=`) does `(` open an array.
                    break;
                }
                '<' | '>' => break,
                '\\' => {
                    self.bump();
                    match self.peek() {
                        Some('\n') => {
                            self.bump();
                        }
                        Some(n) => {
                            let at = self.pos;
                            self.bump();
                            push_lit(&mut parts, n, at, false);
                        }
                        None => {}
                    }
                }
                '\'' => {
                    self.bump();
                    // An empty quoted string is still a word.
                    push_empty(&mut parts, true);
                    while let Some(n) = self.peek() {
                        let at = self.pos;
                        self.bump();
                        if n == '\'' {
                            break;
                        }
                        push_lit(&mut parts, n, at, true);
                    }
                }
                '"' => {
                    self.bump();
                    push_empty(&mut parts, true);
                    while let Some(n) = self.peek() {
                        match n {
                            '"' => {
                                self.bump();
                                break;
                            }
                            '\\' => {
                                self.bump();
                                match self.peek() {
                                    Some('\n') => {
                                        self.bump();
                                    }
                                    Some(e @ ('"' | '\\' | '$' | '`')) => {
                                        let at = self.pos;
                                        self.bump();
                                        push_lit(&mut parts, e, at, true);
                                    }
                                    _ => push_lit(&mut parts, '\\', self.pos - 1, true),
                                }
                            }
                            '$' => self.dollar(&mut parts, true),
                            '`' => self.backquote(&mut parts),
                            _ => {
                                let at = self.pos;
                                self.bump();
                                push_lit(&mut parts, n, at, true);
                            }
                        }
                    }
                }
                '$' => self.dollar(&mut parts, false),
                '`' => self.backquote(&mut parts),
                '#' if self.pos == start => break,
                _ => {
                    let at = self.pos;
                    self.bump();
                    push_lit(&mut parts, c, at, false);
                }
            }
        }
        (self.pos > start).then_some(Word {
            parts,
            range: start..self.pos,
        })
    }

    pub(super) fn backquote(&mut self, parts: &mut Vec<Part>) {
        let start = self.pos;
        self.bump();
        while let Some(c) = self.bump() {
            if c == '`' {
                break;
            }
        }
        parts.push(Part::Output {
            range: start..self.pos,
        });
    }

    /// `$…` at the cursor.
    pub(super) fn dollar(&mut self, parts: &mut Vec<Part>, quoted: bool) {
        let start = self.pos;
        if self.depth >= MAX_NESTING {
            // `${X:-${X:-…` deeper than any script writes: stop reading.
            self.limit
                .get_or_insert_with(|| Limit::nesting("`${…}` expansions", start..start + 2));
            self.pos = self.text.len();
            return;
        }
        self.depth += 1;
        self.dollar_form(parts, quoted, start);
        self.depth -= 1;
    }

    fn dollar_form(&mut self, parts: &mut Vec<Part>, quoted: bool, start: usize) {
        self.bump();
        match self.peek() {
            Some('(') if self.peek_at(1) == Some('(') => {
                self.pos += 2;
                let inner = self.pos;
                let mut depth = 0usize;
                while let Some(c) = self.peek() {
                    if c == '(' {
                        depth += 1;
                    } else if c == ')' {
                        if depth == 0 && self.peek_at(1) == Some(')') {
                            break;
                        }
                        depth = depth.saturating_sub(1);
                    }
                    self.bump();
                }
                let expr = self.text[inner..self.pos].to_owned();
                if self.peek() == Some(')') {
                    self.pos += 2.min(self.text.len() - self.pos);
                }
                parts.push(Part::Arith {
                    expr,
                    range: start..self.pos,
                });
            }
            Some('(') => {
                let mut depth = 0usize;
                while let Some(c) = self.bump() {
                    if c == '(' {
                        depth += 1;
                    } else if c == ')' {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            break;
                        }
                    }
                }
                parts.push(Part::Output {
                    range: start..self.pos,
                });
            }
            Some('{') => {
                self.bump();
                let name = self.ident();
                let mut index = None;
                if self.peek() == Some('[') {
                    self.bump();
                    let i = self.pos;
                    while let Some(c) = self.peek() {
                        if c == ']' {
                            break;
                        }
                        self.bump();
                    }
                    index = Some(self.text[i..self.pos].to_owned());
                    self.bump();
                }
                let mut op = None;
                let rest = &self.text[self.pos..];
                let sigil = [":-", ":=", ":+", "-", "=", "+"]
                    .into_iter()
                    .find(|s| rest.starts_with(s));
                let known_form = name.is_some() && (sigil.is_some() || rest.starts_with('}'));
                if let Some(s) = sigil.filter(|_| name.is_some()) {
                    self.pos += s.len();
                    op = Some((s.to_owned(), self.until_brace(quoted)));
                } else {
                    // `${#X}`, `${X%…}`, …: not evaluated.
                    let mut depth = 0usize;
                    while let Some(c) = self.peek() {
                        if c == '{' {
                            depth += 1;
                        } else if c == '}' {
                            if depth == 0 {
                                break;
                            }
                            depth -= 1;
                        }
                        self.bump();
                    }
                }
                if self.peek() == Some('}') {
                    self.bump();
                }
                match name.filter(|_| known_form) {
                    Some(name) => parts.push(Part::Param {
                        name,
                        index,
                        op,
                        quoted,
                        range: start..self.pos,
                    }),
                    None => parts.push(Part::Output {
                        range: start..self.pos,
                    }),
                }
            }
            Some(c) if c == '_' || c.is_ascii_alphabetic() => {
                let name = self.ident().unwrap_or_default();
                parts.push(Part::Param {
                    name,
                    index: None,
                    op: None,
                    quoted,
                    range: start..self.pos,
                });
            }
            Some(c) if c.is_ascii_digit() || c == '@' || c == '*' || c == '#' => {
                self.bump();
                parts.push(Part::Param {
                    name: c.to_string(),
                    index: None,
                    op: None,
                    quoted,
                    range: start..self.pos,
                });
            }
            _ => push_lit(parts, '$', start, quoted),
        }
    }

    /// The default word of `${X:-…}` up to its `}`.
    pub(super) fn until_brace(&mut self, quoted: bool) -> Vec<Part> {
        let mut parts = Vec::new();
        while let Some(c) = self.peek() {
            match c {
                '}' => break,
                '$' => self.dollar(&mut parts, quoted),
                '"' | '\'' => {
                    self.bump();
                    while let Some(n) = self.peek() {
                        if n == c {
                            self.bump();
                            break;
                        }
                        if c == '"' && n == '$' {
                            self.dollar(&mut parts, true);
                            continue;
                        }
                        let at = self.pos;
                        self.bump();
                        push_lit(&mut parts, n, at, true);
                    }
                }
                _ => {
                    let at = self.pos;
                    self.bump();
                    push_lit(&mut parts, c, at, quoted);
                }
            }
        }
        parts
    }

    pub(super) fn ident(&mut self) -> Option<String> {
        let start = self.pos;
        while let Some(c) = self.peek() {
            if c == '_' || c.is_ascii_alphanumeric() {
                self.bump();
            } else {
                break;
            }
        }
        (self.pos > start).then(|| self.text[start..self.pos].to_owned())
    }
}

pub(super) fn push_lit(parts: &mut Vec<Part>, c: char, at: usize, quoted: bool) {
    if let Some(Part::Lit {
        text,
        offs,
        quoted: q,
    }) = parts.last_mut()
        && *q == quoted
    {
        text.push(c);
        offs.extend((0..c.len_utf8()).map(|i| at + i));
        return;
    }
    parts.push(Part::Lit {
        text: c.to_string(),
        offs: (0..c.len_utf8()).map(|i| at + i).collect(),
        quoted,
    });
}

pub(super) fn push_empty(parts: &mut Vec<Part>, quoted: bool) {
    parts.push(Part::Lit {
        text: String::new(),
        offs: Vec::new(),
        quoted,
    });
}
