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
//! range of each word (or of the value it came from).

use std::collections::HashMap;
use std::ops::Range;

mod arith;
mod expand;
mod lex;
mod limits;
mod parse;
#[cfg(test)]
mod tests;

pub(crate) use self::limits::Limit;

use self::expand::assignment;
use self::lex::{Lexer, Tok, Word};
use self::parse::{Node, literal, parse_block, simple_commands};

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
    /// The range of the word in the command, for when the text has no source.
    word_range: Range<usize>,
    /// Variables the text took a default for (`${SLURM_NNODES:-1}` with
    /// `SLURM_NNODES` set neither by the script nor by `--env`).
    pub(crate) defaults: Vec<String>,
}

impl Field {
    /// A value read from elsewhere (a YAML file), located at `range`.
    pub(crate) fn at(text: String, range: Range<usize>, unknown: Vec<String>) -> Field {
        Field {
            offs: vec![None; text.len()],
            unknown_at: vec![0; unknown.len()],
            text,
            unknown,
            word_range: range,
            defaults: Vec::new(),
        }
    }

    fn empty(range: Range<usize>) -> Field {
        Field {
            text: String::new(),
            offs: Vec::new(),
            unknown: Vec::new(),
            unknown_at: Vec::new(),
            word_range: range,
            defaults: Vec::new(),
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
        // Each name once: a variable doubled many times would otherwise
        // carry a copy of its defaults per doubling into every piece.
        for name in &f.defaults {
            if !self.defaults.contains(name) {
                self.defaults.push(name.clone());
            }
        }
    }

    /// Appends a blank that no source wrote (between the words `eval` joins).
    fn blank(&mut self) {
        self.text.push(' ');
        self.offs.push(None);
    }

    /// The best range for the text: its source if all of it has one, else the
    /// word in the command.
    pub(crate) fn range(&self) -> Range<usize> {
        self.range_of(0, self.text.len())
    }

    /// The range of `text[a..b]`.
    pub(crate) fn range_of(&self, a: usize, b: usize) -> Range<usize> {
        if a < b
            && let (Some(Some(s)), Some(Some(e))) = (self.offs.get(a), self.offs.get(b - 1))
            && s <= e
        {
            return *s..*e + 1;
        }
        self.word_range.clone()
    }

    /// The field as a variable of a script run from a string (`bash -c
    /// "…"`): its sources are marked as this script's, so that
    /// [`Field::through`] keeps them.
    fn exported(&self) -> Field {
        let mut f = self.clone();
        for o in f.offs.iter_mut().flatten() {
            *o = o.saturating_add(OUTER);
        }
        f.word_range =
            f.word_range.start.saturating_add(OUTER)..f.word_range.end.saturating_add(OUTER);
        f
    }

    /// A field of a script run from this field's text (`bash -c "…"`),
    /// with its sources taken back through this field's: a source in the
    /// string is where the string's text came from, a source marked by
    /// [`Field::exported`] is already this script's.
    fn through(&self, inner: &Field) -> Field {
        let back = |o: usize| {
            if o >= OUTER {
                Some(o - OUTER)
            } else {
                self.offs.get(o).copied().flatten()
            }
        };
        let offs: Vec<Option<usize>> = inner.offs.iter().map(|o| o.and_then(back)).collect();
        let (a, b) = (inner.word_range.start, inner.word_range.end);
        let word_range = if a >= OUTER {
            a - OUTER..b.saturating_sub(OUTER)
        } else if a < b && b <= self.text.len() {
            self.range_of(a, b)
        } else {
            self.word_range.clone()
        };
        // What is unknown in the text is unknown again when the inner
        // script reads its stand-in (`$SLURM_JOBID`, `$(…)`).
        let mut defaults = inner.defaults.clone();
        defaults.extend(self.defaults.iter().cloned());
        Field {
            text: inner.text.clone(),
            offs,
            unknown: inner.unknown.clone(),
            unknown_at: inner.unknown_at.clone(),
            word_range,
            defaults,
        }
    }

    /// A part of the field (`--key=value` split at `=`).
    ///
    /// `unknown_at` is in ascending order (stand-ins are only appended), so
    /// the unknowns inside `a..b` are found by binary search: a word split
    /// into many pieces costs each piece its own unknowns, not all of them
    /// (a doubled variable full of stand-ins, split at every blank, was
    /// quadratic).
    pub(crate) fn slice(&self, a: usize, b: usize) -> Field {
        let end = b.max(a + 1);
        let first = self.unknown_at.partition_point(|&p| p < a);
        let last = self.unknown_at.partition_point(|&p| p < end);
        let keep = first..last.max(first);
        Field {
            text: self.text.get(a..b).unwrap_or("").to_owned(),
            offs: self.offs.get(a..b).map(<[_]>::to_vec).unwrap_or_default(),
            unknown: self.unknown[keep.clone()].to_vec(),
            unknown_at: self.unknown_at[keep].iter().map(|&p| p - a).collect(),
            word_range: self.word_range.clone(),
            defaults: self.defaults.clone(),
        }
    }
}

/// One command the script runs, expanded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Command {
    pub(crate) words: Vec<Field>,
    /// The range of the whole command in the script.
    pub(crate) range: Range<usize>,
}

/// A value the shell knows a variable by.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Value {
    Str(Field),
    Array(Vec<Field>),
    /// Why it is not known.
    Unknown(String),
}

impl Script {
    /// A variable the script assigned (not one given with `--env`), as a
    /// plain value: its text, and the variables it depends on when unknown.
    pub(crate) fn assigned(&self, name: &str) -> Option<Field> {
        match self.env.get(name)? {
            Value::Str(field) if field.word_range != (0..0) => Some(field.clone()),
            Value::Unknown(why) => Some(Field::at(String::new(), 0..0, vec![why.clone()])),
            _ => None,
        }
    }
}

/// A script read as the shell runs it.
pub(crate) struct Script {
    env: HashMap<String, Value>,
    /// In a `test` condition an unset variable is the empty string, as in
    /// the shell (`[ -z "$X" ]`); in a command it is a value to name.
    unset_is_empty: bool,
    /// Every command run, expanded, in order; those in `if` branches that
    /// cannot be decided are all kept, marked with the branch.
    pub(crate) commands: Vec<Command>,
    /// How many `bash -c` strings this script runs inside.
    nested: usize,
    /// The first limit the script reached; the reader stops there, and what
    /// it read so far is not a run to trust.
    pub(crate) limit: Option<Limit>,
    /// Bytes expanded so far, against `budget`.
    expanded: usize,
    /// Bytes all expansions may produce ([`limits::expansion_budget`] of
    /// the script's size).
    budget: usize,
    /// The variables whose text `$(( … ))` is evaluating, outermost first.
    arith_stack: Vec<String>,
    /// How deep `$(( … ))` evaluation is, across variables' texts.
    arith_depth: usize,
    /// The command being run, where a limit reached inside it is reported.
    at: Range<usize>,
}

/// Runs `text` in a shell that starts with `env` (name, value).
pub(crate) fn run(text: &str, env: &[(String, String)]) -> Script {
    let (tree, limit) = match parse(text) {
        Ok(tree) => (tree, None),
        Err(limit) => (Vec::new(), Some(limit)),
    };
    let mut vars: HashMap<String, Value> = env
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                Value::Str(Field::at(v.clone(), 0..0, Vec::new())),
            )
        })
        .collect();
    // `$#`: the positional arguments given (`--env 1=…`, `2=…`), in order.
    let positional = (1..)
        .take_while(|i: &usize| vars.contains_key(&i.to_string()))
        .count();
    let all: Vec<String> = (1..=positional)
        .filter_map(|i| match vars.get(&i.to_string()) {
            Some(Value::Str(f)) => Some(f.text.clone()),
            _ => None,
        })
        .collect();
    vars.entry("#".to_owned())
        .or_insert_with(|| Value::Str(Field::at(positional.to_string(), 0..0, Vec::new())));
    // `$@` and `$*`: the same arguments, as words (empty without any).
    for name in ["@", "*"] {
        vars.entry(name.to_owned())
            .or_insert_with(|| Value::Str(Field::at(all.join(" "), 0..0, Vec::new())));
    }
    let mut script = Script {
        env: vars,
        commands: Vec::new(),
        unset_is_empty: false,
        nested: 0,
        limit,
        expanded: 0,
        budget: limits::expansion_budget(text.len()),
        arith_stack: Vec::new(),
        arith_depth: 0,
        at: 0..0,
    };
    script.block(&tree, 0);
    script
}

/// Reads `text` into the tree of its commands, within the lexer's and the
/// compound commands' nesting limits.
fn parse(text: &str) -> Result<Vec<Node>, Limit> {
    let mut lexer = Lexer {
        text,
        pos: 0,
        heredocs: Vec::new(),
        depth: 0,
        limit: None,
    };
    let tokens = lexer.tokens();
    let commands = simple_commands(tokens);
    if let Some(limit) = lexer.limit {
        return Err(limit);
    }
    parse::compound_nesting(&commands, |cmd| tokens_range(cmd, text.len()))?;
    Ok(parse_block(&mut commands.into_iter().peekable(), &[]))
}

/// Sources of a script's variables, marked in a script run from a string.
const OUTER: usize = usize::MAX / 2;

/// `bash -c` strings inside `bash -c` strings read at most this deep.
const MAX_NESTED: usize = 4;

/// Where a command runs a shell on a string: `bash -c "…"`, `sh -c '…'`,
/// `bash -lc "…"`, also after a launcher (`srun … bash -c "$CMD"`). The
/// index of the string.
fn shell_string(words: &[Field]) -> Option<usize> {
    words.iter().enumerate().find_map(|(i, w)| {
        let base = w.text.rsplit('/').next().unwrap_or(&w.text);
        let shell = matches!(base, "bash" | "sh" | "zsh" | "dash");
        let flag = words.get(i + 1).map(|f| f.text.as_str())?;
        let c = flag.len() > 1
            && flag.starts_with('-')
            && !flag.starts_with("--")
            && flag[1..].bytes().all(|b| b.is_ascii_alphabetic())
            && flag.contains('c');
        (shell && c && i + 2 < words.len()).then_some(i + 2)
    })
}

/// The range of a command's words (`end` when it has none).
fn tokens_range(tokens: &[Tok], end: usize) -> Range<usize> {
    let mut words = tokens.iter().filter_map(|t| match t {
        Tok::Word(w) => Some(w.range.clone()),
        _ => None,
    });
    match words.next() {
        Some(first) => {
            let last = words.next_back().unwrap_or_else(|| first.clone());
            first.start..last.end
        }
        None => end..end,
    }
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

    /// Counts `bytes` of expansion against the budget; `false` once the
    /// budget (or another limit) is reached, when the caller stops.
    pub(super) fn spend(&mut self, bytes: usize) -> bool {
        if self.limit.is_some() {
            return false;
        }
        self.expanded = self.expanded.saturating_add(bytes);
        if self.expanded > self.budget {
            self.limit = Some(Limit::expansion(self.budget, self.at.clone()));
            return false;
        }
        true
    }

    fn block(&mut self, nodes: &[Node], depth: usize) {
        if depth > limits::MAX_NESTING {
            self.limit
                .get_or_insert_with(|| Limit::nesting("`if`, loops and `case`", self.at.clone()));
        }
        for node in nodes {
            if self.limit.is_some() {
                return;
            }
            match node {
                Node::Cmd(tokens) => self.command(tokens),
                Node::If(branches) => self.branches(branches, depth),
                Node::Loop(cond, body) => self.repeat(cond.as_ref(), body, depth),
                Node::Case(subject, arms) => self.case(subject.as_ref(), arms, depth),
            }
        }
    }

    /// A loop's body runs once (what it sets is what one pass sets), unless
    /// its condition is known not to hold at the start: `while [[ $# -gt 0
    /// ]]` with no positional arguments runs nothing, as in bash.
    fn repeat(&mut self, cond: Option<&(Vec<Tok>, bool)>, body: &[Node], depth: usize) {
        if let Some((tokens, until)) = cond
            && self.test(tokens) == Some(*until)
        {
            return;
        }
        self.block(body, depth + 1);
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
        // Each body starts from a copy of the variables: the copies count.
        let size: usize = self.env.iter().map(|(k, v)| k.len() + value_len(v)).sum();
        if !self.spend(size.saturating_mul(open.len() + 1)) {
            return;
        }
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
        self.at = tokens_range(tokens, self.at.end);
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
            if append && let Some(Value::Str(old)) = self.env.get(&name) {
                let mut joined = old.clone();
                joined.extend(&value);
                value = joined;
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
        let range = match (tokens.get(i), tokens.last()) {
            (Some(Tok::Word(a)), Some(Tok::Word(b))) => a.range.start..b.range.end,
            _ => words[0].word_range.clone(),
        };
        // `eval WORDS`: the words joined by blanks, run as a script.
        if words.len() > 1 && words[0].text == "eval" && self.nested < MAX_NESTED {
            let mut joined = words[1].clone();
            for w in &words[2..] {
                joined.blank();
                joined.extend(w);
            }
            self.string(&joined, &range);
            return;
        }
        if let Some(k) = shell_string(&words)
            && self.nested < MAX_NESTED
        {
            // The shell runs the string as a script of its own, with the
            // variables exported to it: its commands are the run's.
            self.string(&words[k], &range);
            return;
        }
        self.commands.push(Command { words, range });
    }

    /// Runs `bash -c`'s string as a script that starts with this one's
    /// variables; its commands are kept, located in this script.
    fn string(&mut self, field: &Field, range: &Range<usize>) {
        let text = field.text.clone();
        // The string is read under the same limits as the script, and
        // its expansions count against the same budget; a limit reached
        // inside it is reported at the command that runs it.
        let tree = match parse(&text) {
            Ok(tree) => tree,
            Err(limit) => {
                self.limit.get_or_insert(Limit {
                    range: range.clone(),
                    ..limit
                });
                return;
            }
        };
        let env = self
            .env
            .iter()
            .map(|(k, v)| {
                let v = match v {
                    Value::Str(f) => Value::Str(f.exported()),
                    Value::Array(items) => {
                        Value::Array(items.iter().map(Field::exported).collect())
                    }
                    Value::Unknown(why) => Value::Unknown(why.clone()),
                };
                (k.clone(), v)
            })
            .collect();
        let mut inner = Script {
            env,
            unset_is_empty: false,
            commands: Vec::new(),
            nested: self.nested + 1,
            limit: None,
            expanded: self.expanded,
            budget: self.budget,
            arith_stack: Vec::new(),
            arith_depth: 0,
            at: range.clone(),
        };
        inner.block(&tree, 0);
        self.expanded = inner.expanded;
        if let Some(limit) = inner.limit {
            self.limit.get_or_insert(Limit {
                range: range.clone(),
                ..limit
            });
        }
        for cmd in inner.commands {
            self.commands.push(Command {
                words: cmd.words.iter().map(|w| field.through(w)).collect(),
                range: range.clone(),
            });
        }
    }
}

/// A `case` pattern with `*` and `?` against a text. Backtracks only to
/// the last `*`, so the work is at most the product of the lengths (a
/// recursive match is exponential in the number of `*`).
fn glob(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    if p.len() + t.len() >= 2_000 {
        return false;
    }
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < t.len() {
        if i < p.len() && (p[i] == '?' || (p[i] != '*' && p[i] == t[j])) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some((i, j));
            i += 1;
        } else if let Some((si, sj)) = star {
            // Let the last `*` take one more character.
            i = si + 1;
            j = sj + 1;
            star = Some((si, sj + 1));
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

/// The bytes of a value's text.
fn value_len(v: &Value) -> usize {
    match v {
        Value::Str(f) => f.text.len(),
        Value::Array(items) => items.iter().map(|f| f.text.len() + 1).sum(),
        Value::Unknown(why) => why.len(),
    }
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
