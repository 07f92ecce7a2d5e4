//! The arguments of the run, as Megatron's argparse reads them: the last
//! of a repeated option, whole numbers as Python's `int()` reads them, and
//! a finding for a value the script does not set.

use std::ops::Range;

use accum_core::Code;

use super::args::{Arg, Invocation};
use super::shell::Field;
use crate::diagnostic::Diagnostic;
use crate::interop::reader::{Number, python_number};

pub(super) struct Args {
    pub(super) inv: Invocation,
    pub(super) findings: Vec<Diagnostic>,
}

/// What a value is: known, unknown (and why), or not a number.
pub(super) enum Got<T> {
    Absent,
    Value(T, Range<usize>),
    /// The finding was pushed.
    Bad,
}

impl Args {
    pub(super) fn get(&self, name: &str) -> Option<&Arg> {
        self.inv.megatron.iter().rev().find(|a| a.name == name)
    }

    pub(super) fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    pub(super) fn path(name: &str) -> Vec<String> {
        vec![name.to_owned()]
    }

    /// A value that depends on something the script does not set.
    pub(super) fn unknown(&mut self, name: &str, field: &Field) {
        let what = crate::output::listed(&field.unknown);
        let vars: Vec<&str> = field
            .unknown
            .iter()
            .filter_map(|u| u.strip_prefix("`$").and_then(|u| u.strip_suffix('`')))
            .map(|u| u.trim_start_matches('{').trim_end_matches('}'))
            .collect();
        let help = if vars.is_empty() {
            format!("write {name} as a number in the script")
        } else {
            format!(
                "set it in the script, or give it: {}",
                vars.iter()
                    .map(|v| format!("--env {v}=N"))
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        };
        self.findings.push(
            Diagnostic::error(
                Code::Missing,
                Args::path(name),
                format!(
                    "{name} is `{}`, which depends on {what}: the script does not say its value",
                    field.text
                ),
            )
            .help(help)
            .at(field.range(), "value unknown"),
        );
    }

    pub(super) fn bad(&mut self, name: &str, field: &Field, what: &str) {
        self.refuse(Code::InteropValue, name, field, what);
    }

    /// A finding of `code` that option `name` is not `what`.
    pub(super) fn refuse(&mut self, code: Code, name: &str, field: &Field, what: &str) {
        self.findings.push(
            Diagnostic::error(
                code,
                Args::path(name),
                format!("{name} is given `{}`, not {what}", field.text),
            )
            .help(format!("write {name} with {what}"))
            .at(field.range(), format!("expected {what}")),
        );
    }

    /// An option's value; an option written without one is a finding (as
    /// argparse refuses it: "expected one argument"), never a silent `None`.
    pub(super) fn value_of(&mut self, arg: &Arg, name: &str) -> Option<Field> {
        if let Some(field) = arg.value() {
            return Some(field.clone());
        }
        self.findings.push(
            Diagnostic::error(
                Code::InteropValue,
                Args::path(name),
                format!("{name} has no value"),
            )
            .help(format!("write {name} VALUE"))
            .at(arg.range.clone(), "value missing"),
        );
        None
    }

    /// A whole number ≥ `min`, as Python's `int()` reads it (`220_000_000`).
    pub(super) fn uint(&mut self, name: &str, min: u64) -> Got<u64> {
        let Some(arg) = self.get(name).cloned() else {
            return Got::Absent;
        };
        let Some(field) = self.value_of(&arg, name) else {
            return Got::Bad;
        };
        let field = &field;
        if !field.unknown.is_empty() {
            self.unknown(name, field);
            return Got::Bad;
        }
        let whole = python_number(&field.text).and_then(|n| match n {
            Number::Int(i) => Some(i),
            Number::Float(_) => None,
        });
        match whole.and_then(|i| u64::try_from(i).ok()) {
            Some(v) if v >= min => Got::Value(v, field.range()),
            _ => {
                let code = crate::interop::census::refused_code(&[name], whole);
                self.refuse(code, name, field, &format!("a whole number ≥ {min}"));
                Got::Bad
            }
        }
    }

    /// `uint` for values that do not matter for the batch: unknown is absent.
    pub(super) fn soft_uint(&mut self, name: &str, min: u64) -> Option<(u64, Range<usize>)> {
        if self
            .get(name)
            .and_then(Arg::value)
            .is_some_and(|f| !f.unknown.is_empty())
        {
            return None;
        }
        match self.uint(name, min) {
            Got::Value(v, s) => Some((v, s)),
            _ => None,
        }
    }

    /// A whole number ≥ 1 when it is one, with no finding (the value's
    /// own reading says what is wrong with it).
    pub(super) fn quiet_uint(&self, name: &str) -> Option<(u64, Range<usize>)> {
        let field = self.get(name)?.value()?;
        if !field.unknown.is_empty() {
            return None;
        }
        match python_number(&field.text)?.whole() {
            Some(v) if v >= 1 => Some((u64::try_from(v).ok()?, field.range())),
            _ => None,
        }
    }

    pub(super) fn float(&mut self, name: &str) -> Option<(f64, Range<usize>)> {
        let arg = self.get(name).cloned()?;
        let field = &self.value_of(&arg, name)?;
        if !field.unknown.is_empty() {
            return None;
        }
        match python_number(&field.text).map(Number::as_f64) {
            Some(v) if v.is_finite() && v >= 0.0 => Some((v, field.range())),
            _ => {
                self.bad(name, field, "a finite number ≥ 0");
                None
            }
        }
    }

    pub(super) fn launcher(&self, names: &[&str]) -> Option<&Arg> {
        self.inv
            .launcher
            .iter()
            .rev()
            .find(|a| names.contains(&a.name.as_str()))
    }
}

/// argparse keeps the last of a repeated option: a warning when the values
/// differ (the same value twice changes nothing).
pub(super) fn duplicates(a: &mut Args) {
    let mut dups = Vec::new();
    for (i, arg) in a.inv.megatron.iter().enumerate() {
        let later = a.inv.megatron[i + 1..].iter().find(|x| x.name == arg.name);
        if let Some(later) = later {
            let texts = |x: &Arg| x.values.iter().map(|v| v.text.clone()).collect::<Vec<_>>();
            if texts(arg) != texts(later) {
                dups.push((arg.clone(), texts(later).join(" ")));
            }
        }
    }
    for (d, kept) in dups {
        a.findings.push(
            Diagnostic::error(
                Code::InteropValue,
                Args::path(&d.name),
                format!(
                    "{} is given more than once with different values; argparse keeps the last one ({kept})",
                    d.name
                ),
            )
            .warning()
            .help("remove the occurrence that is not meant")
            .at(d.range.clone(), "overridden later"),
        );
    }
}
