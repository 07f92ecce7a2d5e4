//! Enough of the shell to read a launch script as bash would run it:
//! words with quotes, escapes and `\` continuations, `#` comments,
//! variables (`MBS=1`, `export TP=2`, arrays `ARGS=( … )`, `+=`), their
//! expansion (`$X`, `${X}`, `${X:-1}`, `${X:=1}`, `${ARR[@]}`, word
//! splitting of unquoted values), arithmetic `$((A*B))`, `if`/`elif`/`else`
//! with the `test` conditions scripts use, and here-documents. What cannot
//! be known (a command's output, a variable from the environment) stays
//! unknown and is named when a value the batch needs depends on it.
//!
//! The result is every command the script runs, expanded, with the source
//! span of each word (or of the value it came from).

use std::collections::HashMap;
use std::ops::Range;

/// A word after expansion, with where its text came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Field {
    pub(crate) text: String,
    /// Source offset of each byte of `text`, where it comes from the source.
    offs: Vec<Option<usize>>,
    /// The variables (or `$(…)`) whose value is unknown and that the text
    /// depends on.
    pub(crate) unknown: Vec<String>,
    /// Where in `text` each unknown's stand-in starts.
    unknown_at: Vec<usize>,
    /// The span of the word in the command, for when the text has no source.
    word_span: Range<usize>,
}

impl Field {
    /// A value read from elsewhere (a YAML file), located at `span`.
    pub(crate) fn at(text: String, span: Range<usize>, unknown: Vec<String>) -> Field {
        Field {
            offs: vec![None; text.len()],
            unknown_at: vec![0; unknown.len()],
            text,
            unknown,
            word_span: span,
        }
    }

    fn empty(span: Range<usize>) -> Field {
        Field {
            text: String::new(),
            offs: Vec::new(),
            unknown: Vec::new(),
            unknown_at: Vec::new(),
            word_span: span,
        }
    }

    /// Appends a stand-in `shown` for something unknown (`what`).
    fn mark(&mut self, what: String, shown: &str) {
        self.unknown.push(what);
        self.unknown_at.push(self.text.len());
        self.text.push_str(shown);
        self.offs.extend(std::iter::repeat_n(None, shown.len()));
    }

    /// Appends another field's text, unknowns and sources.
    fn extend(&mut self, f: &Field) {
        let shift = self.text.len();
        self.text.push_str(&f.text);
        self.offs.extend(f.offs.iter().copied());
        self.unknown.extend(f.unknown.iter().cloned());
        self.unknown_at
            .extend(f.unknown_at.iter().map(|p| p + shift));
    }

    /// The best span for the text: its source if all of it has one, else the
    /// word in the command.
    pub(crate) fn span(&self) -> Range<usize> {
        self.span_of(0, self.text.len())
    }

    /// The span of `text[a..b]`.
    pub(crate) fn span_of(&self, a: usize, b: usize) -> Range<usize> {
        if a < b
            && let (Some(Some(s)), Some(Some(e))) = (self.offs.get(a), self.offs.get(b - 1))
            && s <= e
        {
            return *s..*e + 1;
        }
        self.word_span.clone()
    }

    /// A part of the field (`--key=value` split at `=`).
    pub(crate) fn slice(&self, a: usize, b: usize) -> Field {
        let keep: Vec<usize> = (0..self.unknown.len())
            .filter(|&i| (a..b.max(a + 1)).contains(&self.unknown_at[i]))
            .collect();
        Field {
            text: self.text.get(a..b).unwrap_or("").to_owned(),
            offs: self.offs.get(a..b).map(<[_]>::to_vec).unwrap_or_default(),
            unknown: keep.iter().map(|&i| self.unknown[i].clone()).collect(),
            unknown_at: keep.iter().map(|&i| self.unknown_at[i] - a).collect(),
            word_span: self.word_span.clone(),
        }
    }
}

/// One command the script runs, expanded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Command {
    pub(crate) words: Vec<Field>,
    /// The span of the whole command in the script.
    pub(crate) span: Range<usize>,
}

/// A value the shell knows a variable by.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Value {
    Str(Field),
    Array(Vec<Field>),
    /// Why it is not known.
    Unknown(String),
}

// ---------------------------------------------------------------------------
// Lexing.

#[derive(Clone, Debug, PartialEq)]
enum Part {
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
        span: Range<usize>,
    },
    /// `$(( … ))`.
    Arith { expr: String, span: Range<usize> },
    /// `$( … )` or a backquoted command: its output is unknown.
    Output { span: Range<usize> },
}

#[derive(Clone, Debug, PartialEq)]
struct Word {
    parts: Vec<Part>,
    span: Range<usize>,
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Word(Word),
    /// `;`, `&&`, `||`, `|`, `&`, or a newline.
    Sep,
    /// `;;`, the end of a `case` branch.
    CaseEnd,
    Open,
    Close,
}

struct Lexer<'a> {
    text: &'a str,
    pos: usize,
    /// Here-document delimiters waiting for the next newline.
    heredocs: Vec<String>,
}

impl<'a> Lexer<'a> {
    fn peek(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }

    fn peek_at(&self, n: usize) -> Option<char> {
        self.text[self.pos..].chars().nth(n)
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn tokens(mut self) -> Vec<Tok> {
        let mut out = Vec::new();
        while let Some(c) = self.peek() {
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

    fn skip_heredocs(&mut self) {
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
    fn word(&mut self) -> Option<Word> {
        let start = self.pos;
        let mut parts: Vec<Part> = Vec::new();
        loop {
            let Some(c) = self.peek() else { break };
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
        (self.pos > start).then(|| Word {
            parts,
            span: start..self.pos,
        })
    }

    fn backquote(&mut self, parts: &mut Vec<Part>) {
        let start = self.pos;
        self.bump();
        while let Some(c) = self.bump() {
            if c == '`' {
                break;
            }
        }
        parts.push(Part::Output {
            span: start..self.pos,
        });
    }

    /// `$…` at the cursor.
    fn dollar(&mut self, parts: &mut Vec<Part>, quoted: bool) {
        let start = self.pos;
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
                    span: start..self.pos,
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
                    span: start..self.pos,
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
                        span: start..self.pos,
                    }),
                    None => parts.push(Part::Output {
                        span: start..self.pos,
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
                    span: start..self.pos,
                });
            }
            Some(c) if c.is_ascii_digit() || c == '@' || c == '*' || c == '#' => {
                self.bump();
                parts.push(Part::Param {
                    name: c.to_string(),
                    index: None,
                    op: None,
                    quoted,
                    span: start..self.pos,
                });
            }
            _ => push_lit(parts, '$', start, quoted),
        }
    }

    /// The default word of `${X:-…}` up to its `}`.
    fn until_brace(&mut self, quoted: bool) -> Vec<Part> {
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

    fn ident(&mut self) -> Option<String> {
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

fn push_lit(parts: &mut Vec<Part>, c: char, at: usize, quoted: bool) {
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

fn push_empty(parts: &mut Vec<Part>, quoted: bool) {
    parts.push(Part::Lit {
        text: String::new(),
        offs: Vec::new(),
        quoted,
    });
}

// ---------------------------------------------------------------------------
// Structure: commands, `if`, loops, `case`.

#[derive(Clone, Debug)]
enum Node {
    Cmd(Vec<Tok>),
    If(Vec<(Option<Vec<Tok>>, Vec<Node>)>),
    Loop(Vec<Node>),
    /// `case WORD in PATTERN) … ;; esac`.
    Case(Option<Word>, Vec<(Vec<Word>, Vec<Node>)>),
}

/// Splits tokens into simple commands at separators, keeping `( … )`
/// groups (array values) inside their command.
fn simple_commands(tokens: Vec<Tok>) -> Vec<Vec<Tok>> {
    let mut out = Vec::new();
    let mut cur = Vec::new();
    let mut depth = 0usize;
    for t in tokens {
        match t {
            Tok::Sep if depth == 0 => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            Tok::Sep => {}
            Tok::CaseEnd => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                out.push(vec![Tok::CaseEnd]);
            }
            Tok::Open => {
                depth += 1;
                cur.push(t);
            }
            Tok::Close => {
                depth = depth.saturating_sub(1);
                cur.push(t);
            }
            t => cur.push(t),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn keyword(cmd: &[Tok]) -> Option<&str> {
    match cmd.first() {
        Some(Tok::Word(w)) => match w.parts.as_slice() {
            [
                Part::Lit {
                    text,
                    quoted: false,
                    ..
                },
            ] => Some(text.as_str()),
            _ => None,
        },
        _ => None,
    }
}

/// Parses commands into a tree until one of `stop` opens a command.
fn parse_block(
    cmds: &mut std::iter::Peekable<std::vec::IntoIter<Vec<Tok>>>,
    stop: &[&str],
) -> Vec<Node> {
    let mut out = Vec::new();
    while let Some(cmd) = cmds.peek() {
        let kw = keyword(cmd).map(str::to_owned);
        if let Some(k) = &kw
            && stop.contains(&k.as_str())
        {
            return out;
        }
        let mut cmd = cmds.next().expect("peeked");
        match kw.as_deref() {
            Some("if") => {
                cmd.remove(0);
                let mut branches = Vec::new();
                let mut cond = Some(cmd);
                loop {
                    // The condition may run on to `then` on its own line.
                    let body = parse_block(cmds, &["then", "elif", "else", "fi"]);
                    if let (Some(c), false) = (cond.as_mut(), body.is_empty()) {
                        // Commands between `if` and `then` are part of the condition.
                        for node in body {
                            if let Node::Cmd(t) = node {
                                c.extend(t);
                            }
                        }
                    }
                    match cmds
                        .peek()
                        .and_then(|c| keyword(c))
                        .map(str::to_owned)
                        .as_deref()
                    {
                        Some("then") => {
                            let mut then = cmds.next().expect("peeked");
                            then.remove(0);
                            let mut body = Vec::new();
                            if !then.is_empty() {
                                body.push(Node::Cmd(then));
                            }
                            body.extend(parse_block(cmds, &["elif", "else", "fi"]));
                            branches.push((cond.take(), body));
                        }
                        _ => {}
                    }
                    match cmds
                        .peek()
                        .and_then(|c| keyword(c))
                        .map(str::to_owned)
                        .as_deref()
                    {
                        Some("elif") => {
                            let mut c = cmds.next().expect("peeked");
                            c.remove(0);
                            cond = Some(c);
                        }
                        Some("else") => {
                            let mut e = cmds.next().expect("peeked");
                            e.remove(0);
                            let mut body = Vec::new();
                            if !e.is_empty() {
                                body.push(Node::Cmd(e));
                            }
                            body.extend(parse_block(cmds, &["fi"]));
                            branches.push((None, body));
                            cmds.next();
                            break;
                        }
                        Some("fi") => {
                            cmds.next();
                            break;
                        }
                        _ => break,
                    }
                }
                out.push(Node::If(branches));
            }
            Some("for" | "while" | "until" | "select") => {
                let _head = parse_block(cmds, &["do"]);
                let mut body = Vec::new();
                if let Some(mut d) = cmds.next() {
                    d.remove(0);
                    if !d.is_empty() {
                        body.push(Node::Cmd(d));
                    }
                }
                body.extend(parse_block(cmds, &["done"]));
                cmds.next();
                out.push(Node::Loop(body));
            }
            Some("case") => {
                let subject = match cmd.get(1) {
                    Some(Tok::Word(w)) => Some(w.clone()),
                    _ => None,
                };
                let mut arms: Vec<(Vec<Word>, Vec<Vec<Tok>>)> = Vec::new();
                // An arm may start on the `case … in` line itself.
                let mut pending: Option<Vec<Tok>> = cmd
                    .iter()
                    .position(|t| matches!(t, Tok::Word(w) if literal(w).as_deref() == Some("in")))
                    .map(|k| cmd[k + 1..].to_vec())
                    .filter(|rest| !rest.is_empty());
                loop {
                    let next = match pending.take() {
                        Some(p) => p,
                        None => {
                            let Some(peeked) = cmds.peek() else { break };
                            if keyword(peeked) == Some("esac") {
                                cmds.next();
                                break;
                            }
                            cmds.next().expect("peeked")
                        }
                    };
                    if next == [Tok::CaseEnd] {
                        continue;
                    }
                    let close = next.iter().position(|t| *t == Tok::Close);
                    let is_pattern = close.is_some_and(|k| {
                        k > 0
                            && next[..k]
                                .iter()
                                .all(|t| matches!(t, Tok::Word(_) | Tok::Open))
                    });
                    match (is_pattern, close) {
                        (true, Some(k)) => {
                            let patterns = next[..k]
                                .iter()
                                .filter_map(|t| match t {
                                    Tok::Word(w) => Some(w.clone()),
                                    _ => None,
                                })
                                .collect();
                            let rest: Vec<Tok> = next[k + 1..].to_vec();
                            let body = if rest.is_empty() {
                                Vec::new()
                            } else {
                                vec![rest]
                            };
                            arms.push((patterns, body));
                        }
                        _ => {
                            if let Some(arm) = arms.last_mut() {
                                arm.1.push(next);
                            }
                        }
                    }
                }
                let arms = arms
                    .into_iter()
                    .map(|(p, body)| {
                        let mut it = body.into_iter().peekable();
                        (p, parse_block(&mut it, &[]))
                    })
                    .collect();
                out.push(Node::Case(subject, arms));
            }
            Some("then" | "do" | "else" | "elif" | "fi" | "done" | "esac" | "{" | "}") => {
                // A stray keyword (unbalanced script): the rest of its command runs.
                cmd.remove(0);
                if !cmd.is_empty() {
                    out.push(Node::Cmd(cmd));
                }
            }
            _ => out.push(Node::Cmd(cmd)),
        }
    }
    out
}

// ---------------------------------------------------------------------------
// Evaluation.

/// A script read as the shell runs it.
pub(crate) struct Script {
    env: HashMap<String, Value>,
    /// In a `test` condition an unset variable is the empty string, as in
    /// the shell (`[ -z "$X" ]`); in a command it is a value to name.
    unset_is_empty: bool,
    /// Every command run, expanded, in order; those in `if` branches that
    /// cannot be decided are all kept, marked with the branch.
    pub(crate) commands: Vec<Command>,
}

/// Runs `text` in a shell that starts with `env` (name, value).
pub(crate) fn run(text: &str, env: &[(String, String)]) -> Script {
    let tokens = Lexer {
        text,
        pos: 0,
        heredocs: Vec::new(),
    }
    .tokens();
    let mut cmds = simple_commands(tokens).into_iter().peekable();
    let tree = parse_block(&mut cmds, &[]);
    let mut script = Script {
        env: env
            .iter()
            .map(|(k, v)| {
                (
                    k.clone(),
                    Value::Str(Field::at(v.clone(), 0..0, Vec::new())),
                )
            })
            .collect(),
        commands: Vec::new(),
        unset_is_empty: false,
    };
    script.block(&tree, 0);
    script
}

impl Script {
    /// The value of a variable after the script ran, as text.
    #[cfg(test)]
    pub(crate) fn var(&self, name: &str) -> Option<String> {
        match self.env.get(name)? {
            Value::Str(f) if f.unknown.is_empty() => Some(f.text.clone()),
            _ => None,
        }
    }

    fn block(&mut self, nodes: &[Node], depth: usize) {
        if depth > 64 {
            return;
        }
        for node in nodes {
            match node {
                Node::Cmd(tokens) => self.command(tokens),
                Node::If(branches) => self.branches(branches, depth),
                Node::Loop(body) => self.block(body, depth + 1),
                Node::Case(subject, arms) => self.case(subject.as_ref(), arms, depth),
            }
        }
    }

    /// Runs the arm whose pattern matches the subject; when the subject is
    /// unknown, every arm, and what they set differently is unknown.
    fn case(&mut self, subject: Option<&Word>, arms: &[(Vec<Word>, Vec<Node>)], depth: usize) {
        self.unset_is_empty = true;
        let subject = subject.map(|w| self.expand_one(w));
        let patterns: Vec<Vec<Field>> = arms
            .iter()
            .map(|(p, _)| p.iter().map(|w| self.expand_one(w)).collect())
            .collect();
        self.unset_is_empty = false;
        match subject.filter(|s| s.unknown.is_empty()) {
            Some(s) => {
                for ((_, body), pats) in arms.iter().zip(&patterns) {
                    if pats.iter().any(|p| glob(&p.text, &s.text)) {
                        self.block(body, depth + 1);
                        return;
                    }
                }
            }
            None => {
                let bodies: Vec<&Vec<Node>> = arms.iter().map(|(_, b)| b).collect();
                self.merge(
                    &bodies,
                    true,
                    depth,
                    "is set in a `case` arm that cannot be chosen",
                );
            }
        }
    }

    fn branches(&mut self, branches: &[(Option<Vec<Tok>>, Vec<Node>)], depth: usize) {
        // Take the first branch whose condition is known to hold; stop at
        // one that cannot be decided.
        let mut open: Vec<&Vec<Node>> = Vec::new();
        let mut has_else = false;
        for (cond, body) in branches {
            match cond {
                None => {
                    has_else = true;
                    if open.is_empty() {
                        self.block(body, depth + 1);
                        return;
                    }
                    open.push(body);
                }
                Some(c) => match self.test(c) {
                    Some(true) if open.is_empty() => {
                        self.block(body, depth + 1);
                        return;
                    }
                    Some(true) => {
                        open.push(body);
                        has_else = true;
                        break;
                    }
                    Some(false) => {}
                    None => open.push(body),
                },
            }
        }
        if open.is_empty() {
            return;
        }
        self.merge(
            &open,
            !has_else,
            depth,
            "depends on which branch of an `if` runs",
        );
    }

    /// Undecided: runs each body from the same state; a variable the bodies
    /// leave different is unknown (`why`), and every body's commands are kept.
    fn merge(&mut self, open: &[&Vec<Node>], keep_before: bool, depth: usize, why: &str) {
        let before = self.env.clone();
        let mut after: Vec<HashMap<String, Value>> = Vec::new();
        for body in open {
            self.env = before.clone();
            self.block(body, depth + 1);
            after.push(std::mem::take(&mut self.env));
        }
        if keep_before {
            after.push(before.clone());
        }
        let mut names: Vec<&String> = after.iter().flat_map(|e| e.keys()).collect();
        names.sort();
        names.dedup();
        let mut merged = HashMap::new();
        for name in names {
            let values: Vec<Option<&Value>> = after.iter().map(|e| e.get(name)).collect();
            let first = values[0];
            let value = if values.iter().all(|v| same(*v, first)) {
                match first {
                    Some(v) => v.clone(),
                    None => continue,
                }
            } else {
                Value::Unknown(format!("`{name}` {why}"))
            };
            merged.insert(name.clone(), value);
        }
        self.env = merged;
    }

    /// The truth of a `test`/`[`/`[[` condition, when it can be known.
    fn test(&mut self, tokens: &[Tok]) -> Option<bool> {
        self.unset_is_empty = true;
        let words = self.expand_all(tokens);
        self.unset_is_empty = false;
        if words.iter().any(|w| !w.unknown.is_empty()) {
            return None;
        }
        let mut args: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
        let mut negate = false;
        if args.first() == Some(&"!") {
            negate = true;
            args.remove(0);
        }
        match args.first().copied() {
            Some("[") if args.last() == Some(&"]") => {
                args = args[1..args.len() - 1].to_vec();
            }
            Some("[[") if args.last() == Some(&"]]") => {
                args = args[1..args.len() - 1].to_vec();
            }
            Some("test") => {
                args.remove(0);
            }
            _ => return None,
        }
        if args.first() == Some(&"!") {
            negate = !negate;
            args.remove(0);
        }
        let truth = match args.as_slice() {
            [] => false,
            [s] => !s.is_empty(),
            ["-z", s] => s.is_empty(),
            ["-n", s] => !s.is_empty(),
            [a, "=" | "==", b] => a == b,
            [a, "!=", b] => a != b,
            [a, op, b] => {
                let a: i64 = a.trim().parse().ok()?;
                let b: i64 = b.trim().parse().ok()?;
                match *op {
                    "-eq" => a == b,
                    "-ne" => a != b,
                    "-lt" => a < b,
                    "-le" => a <= b,
                    "-gt" => a > b,
                    "-ge" => a >= b,
                    _ => return None,
                }
            }
            _ => return None,
        };
        Some(truth != negate)
    }

    fn expand_all(&mut self, tokens: &[Tok]) -> Vec<Field> {
        let mut out = Vec::new();
        for t in tokens {
            if let Tok::Word(w) = t {
                out.extend(self.expand(w, true));
            }
        }
        out
    }

    fn command(&mut self, tokens: &[Tok]) {
        let mut i = 0;
        // `export`, `declare -a`, `local`, `readonly` before assignments.
        let mut decl = false;
        while let Some(Tok::Word(w)) = tokens.get(i) {
            let lit = literal(w);
            match lit.as_deref() {
                Some("export" | "declare" | "local" | "readonly" | "typeset") => {
                    decl = true;
                    i += 1;
                }
                Some(flag) if decl && flag.starts_with('-') => i += 1,
                _ => break,
            }
        }
        let mut assigned = false;
        while let Some(Tok::Word(w)) = tokens.get(i) {
            let Some((name, append, rest)) = assignment(w) else {
                break;
            };
            i += 1;
            assigned = true;
            if rest.parts.is_empty() && tokens.get(i) == Some(&Tok::Open) {
                // NAME=( … )
                let mut items = Vec::new();
                i += 1;
                while let Some(t) = tokens.get(i) {
                    i += 1;
                    match t {
                        Tok::Close => break,
                        Tok::Word(w) => items.extend(self.expand(w, true)),
                        _ => {}
                    }
                }
                let value = match (append, self.env.get(&name)) {
                    (true, Some(Value::Array(old))) => {
                        let mut all = old.clone();
                        all.extend(items);
                        Value::Array(all)
                    }
                    _ => Value::Array(items),
                };
                self.env.insert(name, value);
                continue;
            }
            let mut value = self.expand_one(&rest);
            if append {
                if let Some(Value::Str(old)) = self.env.get(&name) {
                    let mut joined = old.clone();
                    joined.extend(&value);
                    value = joined;
                }
            }
            self.env.insert(name, Value::Str(value));
        }
        if i >= tokens.len() {
            return;
        }
        let _ = assigned;
        let words = self.expand_all(&tokens[i..]);
        if words.is_empty() {
            return;
        }
        let span = match (tokens.get(i), tokens.last()) {
            (Some(Tok::Word(a)), Some(Tok::Word(b))) => a.span.start..b.span.end,
            _ => words[0].word_span.clone(),
        };
        self.commands.push(Command { words, span });
    }

    /// A word expanded without splitting (an assignment's value).
    fn expand_one(&mut self, word: &Word) -> Field {
        let mut fields = self.expand(word, false);
        let mut first = fields.drain(..).reduce(|mut a, b| {
            a.text.push(' ');
            a.offs.push(None);
            a.extend(&b);
            a
        });
        first.take().unwrap_or(Field::empty(word.span.clone()))
    }

    /// Expands a word into fields; `split` splits unquoted expansions on
    /// blanks (command words), as the shell does.
    fn expand(&mut self, word: &Word, split: bool) -> Vec<Field> {
        let mut b = Builder {
            fields: Vec::new(),
            cur: Field::empty(word.span.clone()),
            solid: false,
            word_span: word.span.clone(),
        };
        self.parts(&word.parts, split, &mut b, 0);
        b.finish()
    }

    fn parts(&mut self, parts: &[Part], split: bool, b: &mut Builder, depth: usize) {
        if depth > 16 {
            return;
        }
        for part in parts {
            match part {
                Part::Lit { text, offs, .. } => {
                    b.solid = true;
                    b.cur.text.push_str(text);
                    b.cur.offs.extend(offs.iter().map(|&o| Some(o)));
                }
                Part::Arith { expr, span } => {
                    b.solid = true;
                    match self.arith(expr) {
                        Ok(v) => {
                            let t = v.to_string();
                            b.cur.offs.extend(std::iter::repeat_n(None, t.len()));
                            b.cur.text.push_str(&t);
                            if b.cur.text.len() == t.len() {
                                // The whole field is the arithmetic: point at it.
                                b.cur.word_span = span.clone();
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
                Part::Output { span } => {
                    b.solid = true;
                    b.cur.mark("the output of a command".to_owned(), "$(…)");
                    b.cur.word_span = span.clone();
                }
                Part::Param {
                    name,
                    index,
                    op,
                    quoted,
                    span,
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
                                        cur: Field::empty(span.clone()),
                                        solid: false,
                                        word_span: span.clone(),
                                    };
                                    self.parts(default, false, &mut inner, depth + 1);
                                    let f = inner
                                        .finish()
                                        .into_iter()
                                        .next()
                                        .unwrap_or(Field::empty(span.clone()));
                                    if sigil.contains('=') {
                                        self.env.insert(name.clone(), Value::Str(f.clone()));
                                    }
                                    Some(Value::Str(f))
                                }
                                ":+" | "+" if unset => None,
                                ":+" | "+" => {
                                    let mut f = Field::empty(span.clone());
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
                                b.cur.word_span = span.clone();
                            }
                            b.cur.mark(format!("`${name}`"), &format!("${name}"));
                        }
                        Some(Value::Unknown(reason)) => {
                            b.solid = true;
                            b.cur.mark(reason, &format!("${name}"));
                            b.cur.word_span = span.clone();
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

    fn lookup(&self, name: &str, index: Option<&str>) -> Option<Value> {
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
    fn arith(&mut self, expr: &str) -> Result<i128, Vec<String>> {
        // Expand `$X` and `${X}` first, then evaluate.
        let mut p = Arith {
            text: expr.as_bytes(),
            pos: 0,
            unknown: Vec::new(),
            script: self,
        };
        let v = p.sum();
        p.skip_ws();
        if !p.unknown.is_empty() {
            return Err(p.unknown);
        }
        match v {
            Some(v) if p.pos >= p.text.len() => Ok(v),
            _ => Err(vec![format!("the arithmetic `$(({expr}))`")]),
        }
    }
}

/// A `case` pattern with `*` and `?` against a text.
fn glob(pattern: &str, text: &str) -> bool {
    fn go(p: &[char], t: &[char]) -> bool {
        match (p.first(), t.first()) {
            (None, None) => true,
            (Some('*'), _) => go(&p[1..], t) || (!t.is_empty() && go(p, &t[1..])),
            (Some('?'), Some(_)) => go(&p[1..], &t[1..]),
            (Some(a), Some(b)) if a == b => go(&p[1..], &t[1..]),
            _ => false,
        }
    }
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    p.len() + t.len() < 2_000 && go(&p, &t)
}

/// Whether two values read the same (where they were written may differ).
fn same(a: Option<&Value>, b: Option<&Value>) -> bool {
    let text = |f: &Field| (f.text.clone(), f.unknown.clone());
    match (a, b) {
        (Some(Value::Str(x)), Some(Value::Str(y))) => text(x) == text(y),
        (Some(Value::Array(x)), Some(Value::Array(y))) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| text(p) == text(q))
        }
        (x, y) => x == y,
    }
}

/// The literal text of a word with no quotes or expansions.
fn literal(w: &Word) -> Option<String> {
    match w.parts.as_slice() {
        [
            Part::Lit {
                text,
                quoted: false,
                ..
            },
        ] => Some(text.clone()),
        _ => None,
    }
}

/// `NAME=rest` or `NAME+=rest`: the name, whether it appends, and the value word.
fn assignment(w: &Word) -> Option<(String, bool, Word)> {
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
    let start = offs.get(eq + 1).copied().unwrap_or(w.span.end);
    Some((
        name.to_owned(),
        append,
        Word {
            parts,
            span: start..w.span.end,
        },
    ))
}

struct Builder {
    fields: Vec<Field>,
    cur: Field,
    /// Whether the current field has text that makes it a word even when empty.
    solid: bool,
    word_span: Range<usize>,
}

impl Builder {
    fn append(&mut self, f: &Field) {
        if self.cur.text.is_empty() && self.cur.unknown.is_empty() {
            self.cur.word_span = f.word_span.clone();
        }
        self.cur.extend(f);
    }

    fn split_append(&mut self, f: &Field) {
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

    fn end_field(&mut self) {
        let next = Field::empty(self.word_span.clone());
        let done = std::mem::replace(&mut self.cur, next);
        if self.solid || !done.text.is_empty() {
            self.fields.push(done);
        }
        self.solid = false;
    }

    fn finish(mut self) -> Vec<Field> {
        self.end_field();
        self.fields
    }
}

struct Arith<'a, 'b> {
    text: &'a [u8],
    pos: usize,
    unknown: Vec<String>,
    script: &'b mut Script,
}

impl Arith<'_, '_> {
    fn skip_ws(&mut self) {
        while self.text.get(self.pos).is_some_and(u8::is_ascii_whitespace) {
            self.pos += 1;
        }
    }

    fn sum(&mut self) -> Option<i128> {
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

    fn product(&mut self) -> Option<i128> {
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

    fn atom(&mut self) -> Option<i128> {
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
                        match self.script.arith(&text) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(script: &Script, n: usize) -> Vec<String> {
        script.commands[n]
            .words
            .iter()
            .map(|w| w.text.clone())
            .collect()
    }

    #[test]
    fn variables_quotes_and_arithmetic_expand() {
        let text = "MBS=1\nTP_SIZE=2  # comment\nGPUS=${GPUS:-8}\nNODES=2\nWORLD=$((GPUS*$NODES))\n\
                    ARGS=\"--micro-batch-size $MBS --tensor-model-parallel-size ${TP_SIZE}\"\n\
                    python pretrain_gpt.py $ARGS --world $WORLD \"--x y\"\n";
        let s = run(text, &[]);
        assert_eq!(s.var("GPUS").as_deref(), Some("8"));
        assert_eq!(s.var("WORLD").as_deref(), Some("16"));
        assert_eq!(
            texts(&s, 0),
            [
                "python",
                "pretrain_gpt.py",
                "--micro-batch-size",
                "1",
                "--tensor-model-parallel-size",
                "2",
                "--world",
                "16",
                "--x y"
            ]
        );
        // The value's span is where the script wrote it.
        let one = &s.commands[0].words[3];
        assert_eq!(&text[one.span()], "1");
        assert_eq!(one.span(), 4..5);
    }

    #[test]
    fn arrays_continuations_and_heredocs() {
        let text = "A=(\n  --micro-batch-size 4 \\\n  --fp16 # half\n)\nA+=(--bf16)\ncat <<EOF\n--global-batch-size 9\nEOF\ntorchrun ${A[@]} \"${A[@]}\"\n";
        let s = run(text, &[]);
        let cmds: Vec<Vec<String>> = (0..s.commands.len()).map(|i| texts(&s, i)).collect();
        assert_eq!(cmds.len(), 2, "{cmds:?}");
        assert_eq!(cmds[0], ["cat"]);
        assert_eq!(
            cmds[1],
            [
                "torchrun",
                "--micro-batch-size",
                "4",
                "--fp16",
                "--bf16",
                "--micro-batch-size",
                "4",
                "--fp16",
                "--bf16"
            ]
        );
    }

    #[test]
    fn branches_are_decided_or_marked_unknown() {
        let text = "PREC=bf16\nif [ \"$PREC\" = \"fp16\" ]; then\n  P=--fp16\nelse\n  P=--bf16\nfi\n\
                    if [ -z \"$X\" ]; then X=3; fi\n\
                    if [ $1 == a ]; then Y=1; else Y=2; fi\n\
                    if [ $2 == a ]; then Z=1; else Z=1; fi\n";
        let s = run(text, &[]);
        assert_eq!(s.var("P").as_deref(), Some("--bf16"));
        assert_eq!(s.var("X").as_deref(), Some("3"));
        assert_eq!(s.var("Y"), None);
        assert!(matches!(s.env.get("Y"), Some(Value::Unknown(r)) if r.contains("branch")));
        assert_eq!(s.var("Z").as_deref(), Some("1"));
    }

    #[test]
    fn case_arms_are_chosen_by_their_pattern() {
        let text = "MODEL_SCALE=\"800M\"\ncase \"${MODEL_SCALE}\" in\n  \"800M\")\n    TP=1\n    GBS=32\n    ;;\n  \"8B\") TP=4 ;;\n  *) TP=9;;\nesac\ncase $UNSET_X in a) Q=1;; b) Q=2;; esac\n";
        let s = run(text, &[]);
        assert_eq!(s.var("TP").as_deref(), Some("1"));
        assert_eq!(s.var("GBS").as_deref(), Some("32"));
        assert_eq!(s.var("Q"), None);
        let s = run("case x8B in *8B) Z=big;; esac\n", &[]);
        assert_eq!(s.var("Z").as_deref(), Some("big"));
    }

    #[test]
    fn unknown_values_are_named() {
        let s = run(
            "torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $(hostname) x.py\n",
            &[],
        );
        let w = &s.commands[0].words;
        assert_eq!(w[2].unknown, ["`$GPUS_PER_NODE`"]);
        assert_eq!(w[4].unknown, ["the output of a command"]);
        let s = run(
            "torchrun --nproc_per_node $GPUS\n",
            &[("GPUS".into(), "4".into())],
        );
        assert_eq!(s.commands[0].words[2].text, "4");
    }

    #[test]
    fn odd_text_never_panics() {
        for text in [
            "\\",
            "'",
            "\"abc",
            "$",
            "${",
            "${X:-",
            "$((",
            "$((1+",
            "$(",
            "`",
            "A=(",
            "if",
            "fi",
            "then else",
            "case x in a) A=1;; esac",
            "<<",
            "<<EOF\n",
            "é=1 $é",
            "$((1/0))",
            "$((99999999999999999999999999999999999999*99999999999999999))",
            "x=${y[",
            "${#x}",
        ] {
            let _ = run(text, &[]);
        }
    }
}
