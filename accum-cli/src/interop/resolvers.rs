//! The OmegaConf resolvers a repository registers in its own Python code,
//! and the arithmetic accum evaluates for the two it recognises.
//!
//! OmegaConf evaluates `${name:args}` with the function registered under
//! `name` (`omegaconf/omegaconf.py`, `OmegaConf.register_new_resolver`
//! since OmegaConf 2.1, whose `register_resolver` of 2.0 passed strings;
//! `NEWS.md`; OmegaConf 2.4's development version makes `register_resolver`
//! the name again, with `register_new_resolver` a deprecated alias of it).
//! Research repositories register
//! two for their configs' arithmetic in their entry point, e.g.
//! HazyResearch/safari `train.py`:
//! `OmegaConf.register_new_resolver('eval', eval)` and
//! `OmegaConf.register_new_resolver('div_up', lambda x, y: (x + y - 1) // y)`.
//! Their semantics are the repository's, not OmegaConf's: accum evaluates a
//! resolver only when a Python file of the repository registers it, with a
//! function it recognises (Python's `eval`, or a ceiling division), and
//! names the registration in a warning.
//!
//! The arithmetic is evaluated by hand ([`eval_arithmetic`]): an expression
//! crate would take names, calls or comparisons Python's `eval` means
//! differently, and accum has to refuse those, say why, and keep Python's
//! own rules for `/`, `//`, `%` and `**`.
//!
//! The scan reads only regular `.py` files inside the repository root, never
//! through a link (a link is not followed, to a file or a folder), skips
//! hidden folders, and stops at [`MAX_FILES`] files, [`MAX_BYTES`] bytes
//! and [`MAX_DEPTH`] folders deep.

use std::fs;
use std::path::{Path, PathBuf};

/// Most `.py` files the scan reads.
pub(crate) const MAX_FILES: usize = 2000;
/// Most bytes the scan reads, all files together.
pub(crate) const MAX_BYTES: u64 = 32 * 1024 * 1024;
/// Most bytes of one file.
const MAX_FILE: u64 = 1024 * 1024;
/// Deepest folder the scan enters, below the root.
pub(crate) const MAX_DEPTH: usize = 12;

/// What a registered resolver computes, as far as accum recognises it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Semantics {
    /// Python's `eval` of its one argument, a string.
    Eval,
    /// Ceiling division of two integers, written as the registration
    /// writes it (`(x + y - 1) // y`).
    CeilDiv(String),
    /// A function accum does not evaluate, as written.
    Other(String),
}

/// One registration found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Registered {
    /// The resolver's name (`div_up`).
    pub(crate) name: String,
    /// What it computes.
    pub(crate) semantics: Semantics,
    /// The file, relative to the repository root, and the 1-based line.
    pub(crate) at: String,
}

/// The resolvers the `.py` files under `root` register, in the order of the
/// files (sorted) and of their lines.
pub(crate) fn scan(root: &Path) -> Vec<Registered> {
    let Ok(root) = fs::canonicalize(root) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    let mut files = 0usize;
    let mut bytes = 0u64;
    // Depth-first, each folder's entries sorted, so the order is stable.
    let mut stack: Vec<(PathBuf, usize)> = vec![(root.clone(), 0)];
    while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        entries.sort();
        let mut subdirs = Vec::new();
        for path in entries {
            let Ok(meta) = fs::symlink_metadata(&path) else {
                continue;
            };
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            let hidden = name.as_deref().is_some_and(|n| n.starts_with('.'));
            if meta.file_type().is_symlink() || hidden {
                continue;
            }
            if meta.is_dir() {
                if depth < MAX_DEPTH {
                    subdirs.push(path);
                }
                continue;
            }
            if !meta.is_file() || path.extension().is_none_or(|e| e != "py") {
                continue;
            }
            if files >= MAX_FILES || bytes.saturating_add(meta.len()) > MAX_BYTES {
                return found;
            }
            files += 1;
            bytes = bytes.saturating_add(meta.len());
            let Ok(text) = crate::source::named::read_regular(&path, &path, MAX_FILE) else {
                continue;
            };
            let shown = path
                .strip_prefix(&root)
                .unwrap_or(&path)
                .display()
                .to_string();
            found.extend(registrations(&shown, &text));
        }
        // Popped in reverse: pushed so that the first sorted folder is next.
        stack.extend(subdirs.into_iter().rev().map(|d| (d, depth + 1)));
    }
    found
}

/// The registrations in one file's text.
pub(crate) fn registrations(shown: &str, text: &str) -> Vec<Registered> {
    let mut out = Vec::new();
    for call in ["register_new_resolver(", "register_resolver("] {
        let mut from = 0;
        while let Some(i) = text[from..].find(call) {
            let start = from + i;
            from = start + call.len();
            // `legacy_register_resolver(` holds `register_resolver(` as the
            // end of a longer name (the legacy form passes strings).
            let before = text[..start].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let Some((name, function)) = call_arguments(&text[from..]) else {
                continue;
            };
            let line = text[..start].matches('\n').count() + 1;
            out.push(Registered {
                name,
                semantics: semantics(&function),
                at: format!("{shown}:{line}"),
            });
        }
    }
    out.sort_by_key(|r| {
        r.at.rsplit_once(':')
            .and_then(|(_, l)| l.parse::<usize>().ok())
    });
    out
}

/// The name (a string literal) and the function of a call's arguments:
/// `'div_up', lambda x, y: (x + y - 1) // y)` (up to the closing
/// parenthesis, or a keyword argument after the function).
fn call_arguments(rest: &str) -> Option<(String, String)> {
    let rest = rest.trim_start();
    let quote = rest.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let rest = &rest[1..];
    let end = rest.find(quote)?;
    let name = rest[..end].to_owned();
    if name.is_empty() || name.contains(['\n', '\\']) {
        return None;
    }
    let rest = rest[end + 1..].trim_start().strip_prefix(',')?;
    // The function: up to a comma or closing parenthesis at depth 0.
    let mut depth = 0usize;
    let mut function = String::new();
    for c in rest.chars() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' if depth == 0 => break,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 && !function.trim_start().starts_with("lambda") => break,
            // A lambda's parameters hold commas; its body ends at one too.
            ',' if depth == 0 && function.contains(':') => break,
            _ => {}
        }
        function.push(c);
        if function.len() > 400 {
            return None;
        }
    }
    let function = function.split_whitespace().collect::<Vec<_>>().join(" ");
    (!function.is_empty()).then_some((name, function))
}

/// What a registered function computes: Python's `eval`, a ceiling
/// division of its two parameters, or something accum does not evaluate.
fn semantics(function: &str) -> Semantics {
    if function == "eval" || function == "builtins.eval" {
        return Semantics::Eval;
    }
    let compact: String = function.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(rest) = compact.strip_prefix("lambda") else {
        return Semantics::Other(function.to_owned());
    };
    let Some((params, body)) = rest.split_once(':') else {
        return Semantics::Other(function.to_owned());
    };
    let params: Vec<&str> = params.split(',').collect();
    let [a, b] = params.as_slice() else {
        return Semantics::Other(function.to_owned());
    };
    let ident = |s: &str| {
        !s.is_empty()
            && s.chars().all(|c| c.is_alphanumeric() || c == '_')
            && !s.starts_with(|c: char| c.is_ascii_digit())
    };
    if !ident(a) || !ident(b) || a == b {
        return Semantics::Other(function.to_owned());
    }
    // Ceiling division as it is written: `(a + b - 1) // b`, `(a+b-1)//b`,
    // `-(-a // b)`, `-(a // -b)`, `(a - 1) // b + 1`, `math.ceil(a / b)`.
    let forms = [
        format!("({a}+{b}-1)//{b}"),
        format!("({a}-1+{b})//{b}"),
        format!("-(-{a}//{b})"),
        format!("-({a}//-{b})"),
        format!("({a}-1)//{b}+1"),
        format!("math.ceil({a}/{b})"),
        format!("int(math.ceil({a}/{b}))"),
    ];
    if forms.iter().any(|f| *f == body) {
        let shown = function
            .split_once(':')
            .map_or(function, |(_, body)| body.trim());
        return Semantics::CeilDiv(shown.to_owned());
    }
    Semantics::Other(function.to_owned())
}

/// A Python number: an `int` (kept in 128 bits; beyond is refused) or a
/// `float`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Num {
    Int(i128),
    Float(f64),
}

/// Most tokens an expression may hold.
const MAX_TOKENS: usize = 4096;
/// Deepest nesting of parentheses and unary signs.
const MAX_NESTING: usize = 64;

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Num(Num),
    Op(&'static str),
    Open,
    Close,
}

/// Python's `eval` of `text`, when it is arithmetic only: integer and float
/// literals, `+ - * / // % **`, parentheses and unary signs, with Python's
/// precedence (`-3**2` is -9) and semantics (`/` gives a float, `//` and `%`
/// floor, an `int` to a negative power is a float). Anything else (a name,
/// a call, an attribute, a comparison) is refused with the reason, as are a
/// division by zero (Python raises), an integer beyond 128 bits and a
/// float that overflows.
pub(crate) fn eval_arithmetic(text: &str) -> Result<Num, String> {
    let tokens = tokenize(text)?;
    let mut p = Parser {
        tokens: &tokens,
        at: 0,
        nesting: 0,
    };
    let value = p.expr()?;
    if p.at != tokens.len() {
        return Err(format!("`{text}` is not one arithmetic expression"));
    }
    if let Num::Float(f) = value
        && !f.is_finite()
    {
        return Err(format!("`{text}` overflows a float"));
    }
    Ok(value)
}

fn tokenize(text: &str) -> Result<Vec<Token>, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if out.len() > MAX_TOKENS {
            return Err(format!("the expression has more than {MAX_TOKENS} tokens"));
        }
        let c = bytes[i];
        match c {
            b' ' | b'\t' => i += 1,
            b'(' => {
                out.push(Token::Open);
                i += 1;
            }
            b')' => {
                out.push(Token::Close);
                i += 1;
            }
            b'*' | b'/' => {
                let double = bytes.get(i + 1) == Some(&c);
                out.push(Token::Op(match (c, double) {
                    (b'*', true) => "**",
                    (b'*', false) => "*",
                    (_, true) => "//",
                    (_, false) => "/",
                }));
                i += if double { 2 } else { 1 };
            }
            b'+' | b'-' | b'%' => {
                out.push(Token::Op(match c {
                    b'+' => "+",
                    b'-' => "-",
                    _ => "%",
                }));
                i += 1;
            }
            b'0'..=b'9' | b'.' => {
                let start = i;
                while i < bytes.len()
                    && (bytes[i].is_ascii_alphanumeric() || matches!(bytes[i], b'.' | b'_'))
                {
                    // An exponent's sign belongs to the literal: `1e-5`.
                    if matches!(bytes[i], b'e' | b'E')
                        && matches!(bytes.get(i + 1), Some(b'+' | b'-'))
                    {
                        i += 1;
                    }
                    i += 1;
                }
                let word = &text[start..i];
                out.push(Token::Num(literal(word).ok_or_else(|| {
                    format!("`{word}` is not a decimal number accum reads")
                })?));
            }
            _ => {
                let rest: String = text[i..]
                    .chars()
                    .take_while(|c| !c.is_whitespace())
                    .take(24)
                    .collect();
                return Err(format!(
                    "`{rest}` is not arithmetic (only numbers, + - * / // % ** and parentheses are evaluated)"
                ));
            }
        }
    }
    Ok(out)
}

/// A Python decimal literal: `512`, `1_000`, `0`, `2.5`, `.5`, `5.`, `1e3`,
/// `6e-5`. A leading zero (`010`) is Python's syntax error; hexadecimal,
/// octal and binary literals are not read.
pub(crate) fn literal(word: &str) -> Option<Num> {
    let bytes = word.as_bytes();
    // An underscore only between two digits.
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'_'
            && !(i > 0
                && bytes[i - 1].is_ascii_digit()
                && bytes.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            return None;
        }
    }
    let plain: String = word.chars().filter(|&c| c != '_').collect();
    if plain.bytes().all(|b| b.is_ascii_digit()) {
        if plain.len() > 1 && plain.starts_with('0') && plain.bytes().any(|b| b != b'0') {
            return None;
        }
        return plain.parse().ok().map(Num::Int);
    }
    if !plain
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
        || !plain.bytes().any(|b| b.is_ascii_digit())
    {
        return None;
    }
    plain
        .parse::<f64>()
        .ok()
        .filter(|f| f.is_finite())
        .map(Num::Float)
}

struct Parser<'t> {
    tokens: &'t [Token],
    at: usize,
    nesting: usize,
}

impl Parser<'_> {
    fn peek_op(&self) -> Option<&'static str> {
        match self.tokens.get(self.at) {
            Some(Token::Op(op)) => Some(op),
            _ => None,
        }
    }

    fn deeper(&mut self) -> Result<(), String> {
        self.nesting += 1;
        if self.nesting > MAX_NESTING {
            return Err(format!("the expression nests more than {MAX_NESTING} deep"));
        }
        Ok(())
    }

    /// `term (('+' | '-') term)*`
    fn expr(&mut self) -> Result<Num, String> {
        let mut value = self.term()?;
        while let Some(op @ ("+" | "-")) = self.peek_op() {
            self.at += 1;
            let right = self.term()?;
            value = binary(op, value, right)?;
        }
        Ok(value)
    }

    /// `factor (('*' | '/' | '//' | '%') factor)*`
    fn term(&mut self) -> Result<Num, String> {
        let mut value = self.factor()?;
        while let Some(op @ ("*" | "/" | "//" | "%")) = self.peek_op() {
            self.at += 1;
            let right = self.factor()?;
            value = binary(op, value, right)?;
        }
        Ok(value)
    }

    /// `('+' | '-') factor | power`
    fn factor(&mut self) -> Result<Num, String> {
        match self.peek_op() {
            Some(op @ ("+" | "-")) => {
                self.at += 1;
                self.deeper()?;
                let value = self.factor()?;
                self.nesting -= 1;
                if op == "+" {
                    return Ok(value);
                }
                match value {
                    Num::Int(i) => i.checked_neg().map(Num::Int).ok_or_else(too_large),
                    Num::Float(f) => Ok(Num::Float(-f)),
                }
            }
            _ => self.power(),
        }
    }

    /// `atom ('**' factor)?`
    fn power(&mut self) -> Result<Num, String> {
        let base = self.atom()?;
        if self.peek_op() == Some("**") {
            self.at += 1;
            self.deeper()?;
            let exponent = self.factor()?;
            self.nesting -= 1;
            return binary("**", base, exponent);
        }
        Ok(base)
    }

    /// `number | '(' expr ')'`
    fn atom(&mut self) -> Result<Num, String> {
        match self.tokens.get(self.at) {
            Some(Token::Num(n)) => {
                self.at += 1;
                Ok(*n)
            }
            Some(Token::Open) => {
                self.at += 1;
                self.deeper()?;
                let value = self.expr()?;
                self.nesting -= 1;
                if self.tokens.get(self.at) != Some(&Token::Close) {
                    return Err("a parenthesis is not closed".into());
                }
                self.at += 1;
                Ok(value)
            }
            _ => Err("an operand is missing".into()),
        }
    }
}

fn too_large() -> String {
    "an integer beyond 128 bits".to_owned()
}

/// Python's floor division and modulo of two floats (CPython's
/// `float_divmod`).
fn float_divmod(x: f64, y: f64) -> (f64, f64) {
    let mut m = x % y;
    let mut div = (x - m) / y;
    if m != 0.0 {
        if (y < 0.0) != (m < 0.0) {
            m += y;
            div -= 1.0;
        }
    } else {
        m = 0.0_f64.copysign(y);
    }
    let floordiv = if div != 0.0 {
        let f = div.floor();
        if div - f > 0.5 { f + 1.0 } else { f }
    } else {
        0.0_f64.copysign(x / y)
    };
    (floordiv, m)
}

/// One binary operation, as Python computes it.
fn binary(op: &str, a: Num, b: Num) -> Result<Num, String> {
    use Num::{Float, Int};
    let zero = || Err("a division by zero (Python raises ZeroDivisionError)".to_owned());
    match (a, b) {
        (Int(x), Int(y)) => match op {
            "+" => x.checked_add(y).map(Int).ok_or_else(too_large),
            "-" => x.checked_sub(y).map(Int).ok_or_else(too_large),
            "*" => x.checked_mul(y).map(Int).ok_or_else(too_large),
            "/" if y == 0 => zero(),
            "/" => Ok(Float(x as f64 / y as f64)),
            "//" | "%" if y == 0 => zero(),
            "//" => {
                let q = x.checked_div(y).ok_or_else(too_large)?;
                // Floor, not truncation: Python rounds toward −∞.
                let floor = if (x % y != 0) && ((x < 0) != (y < 0)) {
                    q - 1
                } else {
                    q
                };
                Ok(Int(floor))
            }
            "%" => {
                let r = x.checked_rem(y).ok_or_else(too_large)?;
                // The sign of the divisor, as Python's.
                Ok(Int(if r != 0 && ((r < 0) != (y < 0)) {
                    r + y
                } else {
                    r
                }))
            }
            "**" if y < 0 => {
                if x == 0 {
                    return zero();
                }
                binary("**", Float(x as f64), Float(y as f64))
            }
            "**" => {
                let e = u32::try_from(y).map_err(|_| too_large())?;
                x.checked_pow(e).map(Int).ok_or_else(too_large)
            }
            _ => Err(format!("`{op}` is not evaluated")),
        },
        _ => {
            let x = as_float(a);
            let y = as_float(b);
            let value = match op {
                "+" => x + y,
                "-" => x - y,
                "*" => x * y,
                "/" | "//" | "%" if y == 0.0 => return zero(),
                "/" => x / y,
                "//" => float_divmod(x, y).0,
                "%" => float_divmod(x, y).1,
                "**" if x == 0.0 && y < 0.0 => return zero(),
                // A negative base to a fractional power is complex in Python.
                "**" if x < 0.0 && y.fract() != 0.0 => {
                    return Err("a negative number to a fractional power".into());
                }
                "**" => x.powf(y),
                _ => return Err(format!("`{op}` is not evaluated")),
            };
            if value.is_finite() {
                Ok(Float(value))
            } else {
                // Python raises OverflowError.
                Err("a float beyond its range (Python raises OverflowError)".into())
            }
        }
    }
}

fn as_float(n: Num) -> f64 {
    match n {
        Num::Int(i) => i as f64,
        Num::Float(f) => f,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::any;

    #[test]
    fn registrations_are_read_with_their_functions_and_lines() {
        let text = "import math\nfrom omegaconf import OmegaConf\n\nOmegaConf.register_new_resolver('eval', eval)\nOmegaConf.register_new_resolver(\n    \"div_up\", lambda x, y: (x + y - 1) // y, replace=True\n)\nOmegaConf.register_resolver(\"ceil\", lambda a,b: -(-a // b))\nOmegaConf.legacy_register_resolver(\"x\", lambda a: a)\nOmegaConf.register_new_resolver(\"mul\", lambda a, b: a * b)\n";
        let found = registrations("train.py", text);
        let got: Vec<(&str, &Semantics, &str)> = found
            .iter()
            .map(|r| (r.name.as_str(), &r.semantics, r.at.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("eval", &Semantics::Eval, "train.py:4"),
                (
                    "div_up",
                    &Semantics::CeilDiv("(x + y - 1) // y".into()),
                    "train.py:5"
                ),
                (
                    "ceil",
                    &Semantics::CeilDiv("-(-a // b)".into()),
                    "train.py:8"
                ),
                (
                    "mul",
                    &Semantics::Other("lambda a, b: a * b".into()),
                    "train.py:10"
                ),
            ]
        );
    }

    fn eval(text: &str) -> Result<Num, String> {
        eval_arithmetic(text)
    }

    #[test]
    fn arithmetic_is_evaluated_as_python_evaluates_it() {
        use Num::{Float, Int};
        for (text, expected) in [
            ("512 // 8 // 4", Int(16)),
            ("(512 + 63) // 64", Int(8)),
            ("-3**2", Int(-9)),
            ("2**-1", Float(0.5)),
            ("2**3**2", Int(512)),
            ("-7 // 2", Int(-4)),
            ("-7 % 3", Int(2)),
            ("7 % -3", Int(-2)),
            ("512 / 64", Float(8.0)),
            ("1_000 * 2", Int(2000)),
            ("2.5 * 4", Float(10.0)),
            ("-7.0 // 2", Float(-4.0)),
            ("((((1))))+1", Int(2)),
            ("6e-5 * 1e5", Float(6e-5 * 1e5)),
            ("- - 3", Int(3)),
        ] {
            assert_eq!(eval(text), Ok(expected), "{text}");
        }
    }

    #[test]
    fn anything_but_arithmetic_is_refused_with_the_reason() {
        for (text, reason) in [
            ("int(512 / 3)", "is not arithmetic"),
            ("x * 2", "is not arithmetic"),
            ("__import__('os')", "is not arithmetic"),
            ("4 if 1 else 2", "is not arithmetic"),
            ("a.b", "is not arithmetic"),
            ("1 / 0", "division by zero"),
            ("5 // 0", "division by zero"),
            ("2 ** 200", "beyond 128 bits"),
            ("2 ** 99999999999", "beyond 128 bits"),
            ("10.0 ** 400", "beyond its range"),
            ("010", "not a decimal number"),
            ("0x10", "not a decimal number"),
            ("(1 + 2", "not closed"),
            ("1 +", "operand is missing"),
            ("1 2", "not one arithmetic expression"),
        ] {
            let err = eval(text).expect_err(text);
            assert!(err.contains(reason), "{text}: {err}");
        }
        let deep = format!("{}1{}", "(".repeat(100), ")".repeat(100));
        assert!(eval(&deep).expect_err("deep").contains("nests"));
        let long = vec!["1"; 5000].join("+");
        assert!(eval(&long).expect_err("long").contains("tokens"));
    }

    proptest::proptest! {
        /// Any text of digits, operators, parentheses and blanks is
        /// evaluated or refused, never a panic: no overflow, no division by
        /// zero, no exponent that runs away.
        #[test]
        fn any_arithmetic_text_is_evaluated_or_refused(text in "[0-9 .e_+*/%()-]{0,48}") {
            let _ = eval_arithmetic(&text);
        }

        /// Sums and products of integers are Python's, exactly, or refused
        /// past 128 bits.
        #[test]
        fn integer_arithmetic_is_exact(a in any::<i64>(), b in any::<i64>(), c in 1i64..1000) {
            let text = format!("({a}) * ({b}) + ({a}) // {c} - ({b}) % {c}");
            let (a, b, c) = (i128::from(a), i128::from(b), i128::from(c));
            let expected = a * b + a.div_euclid(c) - b.rem_euclid(c);
            proptest::prop_assert_eq!(eval_arithmetic(&text), Ok(Num::Int(expected)));
        }
    }

    #[test]
    fn a_division_that_is_not_the_ceiling_is_not_recognised() {
        for f in [
            "lambda x, y: x // y",
            "lambda x, y: (x + y) // y",
            "lambda x, y: (x + x - 1) // y",
            "lambda x, x: (x + x - 1) // x",
            "my_div_up",
        ] {
            assert!(matches!(semantics(f), Semantics::Other(_)), "{f}");
        }
    }
}
