//! How a plain YAML scalar (`010`, `on`, `1e3`) is read: by YAML 1.2's core
//! schema, and by PyYAML's YAML 1.1 resolver with the float resolver of the
//! loader that a framework uses. A framework's file is read as its loader
//! reads it; where that differs from YAML 1.2, the reader says so.
//!
//! Checked at the source:
//! - PyYAML, `lib/yaml/resolver.py`: the `Resolver.add_implicit_resolver`
//!   calls for `bool`, `float`, `int` and `null` (a regular expression
//!   each, tried only on plain scalars, `BaseResolver.resolve`);
//!   `lib/yaml/constructor.py`: `SafeConstructor.construct_yaml_bool`
//!   (`bool_values`), `construct_yaml_int` (`_` removed, `0b`, `0x`, a
//!   leading `0` for octal, `:` for base 60), `construct_yaml_float`, and
//!   `BaseConstructor.construct_mapping` (`mapping[key] = value`: the last
//!   of duplicate keys wins).
//! - jsonargparse, `jsonargparse/_loaders_dumpers.py`,
//!   `get_yaml_default_loader`: PyYAML's `SafeLoader` with its float
//!   resolver replaced by one that also takes `1e3` and `1e-5`.
//! - OmegaConf, `omegaconf/_yaml.py`, `get_yaml_loader`: PyYAML's
//!   `SafeLoader` with a second float resolver that takes `1e3`, and a
//!   `flatten_mapping` that refuses duplicate keys ("found duplicate key").

/// Whose reading of a YAML file accum follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum YamlLoader {
    /// accum's own configuration files: YAML 1.2, where a leading-zero
    /// integer (`010`) is refused because YAML 1.1 readers read it as octal.
    Yaml12,
    /// PyYAML's `safe_load` or `FullLoader` (YAML 1.1 scalars): Hugging
    /// Face, accelerate, gpt-neox, axolotl, Megatron-LM's YAML.
    PyYaml11,
    /// jsonargparse (LightningCLI, LitGPT): PyYAML, with `1e3` a float.
    JsonArgParse,
    /// OmegaConf (NeMo): PyYAML, with `1e3` a float and duplicate keys refused.
    OmegaConf,
}

impl YamlLoader {
    /// The loader's name in messages.
    pub(crate) fn name(self) -> &'static str {
        match self {
            YamlLoader::Yaml12 => "YAML 1.2",
            YamlLoader::PyYaml11 => "PyYAML",
            YamlLoader::JsonArgParse => "jsonargparse's PyYAML loader",
            YamlLoader::OmegaConf => "OmegaConf's PyYAML loader",
        }
    }

    /// Whether the loader keeps the last of duplicate keys (else refuses them).
    pub(crate) fn last_key_wins(self) -> bool {
        matches!(self, YamlLoader::PyYaml11 | YamlLoader::JsonArgParse)
    }
}

/// A scalar as resolved.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Scalar {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str,
}

impl Scalar {
    /// The value in words, for a message: "the integer 8", "the string `1e3`".
    pub(crate) fn describe(&self, raw: &str) -> String {
        match self {
            Scalar::Null => "null".to_owned(),
            Scalar::Bool(b) => format!("the boolean {b}"),
            Scalar::Int(i) => format!("the integer {i}"),
            Scalar::Float(f) => format!("the float {}", python_float(*f)),
            Scalar::Str => format!("the string \"{raw}\""),
        }
    }

    fn same(&self, other: &Scalar) -> bool {
        match (self, other) {
            (Scalar::Float(a), Scalar::Float(b)) => a == b || (a.is_nan() && b.is_nan()),
            _ => self == other,
        }
    }
}

/// A float written so that PyYAML reads it back as a float (`1000.0`,
/// `0.5`, `2.5e+20`): a `.`, and a signed exponent where there is one.
pub(crate) fn python_float(f: f64) -> String {
    if f.is_nan() {
        return ".nan".to_owned();
    }
    if f.is_infinite() {
        return if f > 0.0 { ".inf" } else { "-.inf" }.to_owned();
    }
    if f.fract() == 0.0 && f.abs() < 1e16 {
        return format!("{f:.1}");
    }
    let shown = f.to_string();
    if shown.len() <= 16 && shown.contains('.') {
        return shown;
    }
    float_spelling(&format!("{f:e}"), f)
}

/// `raw` (a YAML 1.2 float) spelt so that PyYAML reads it as a float too:
/// `1e3` → `1.0e+3`, `2e-5` → `2.0e-5`, `-.5` → `-0.5`.
fn float_spelling(raw: &str, value: f64) -> String {
    let Some(at) = raw.find(['e', 'E']) else {
        return python_float(value);
    };
    let (mantissa, exponent) = (&raw[..at], &raw[at + 1..]);
    let mantissa = match mantissa.split_once('.') {
        None => format!("{mantissa}.0"),
        Some((int, frac)) => {
            let int = if int.is_empty() || int == "-" || int == "+" {
                format!("{int}0")
            } else {
                int.to_owned()
            };
            let frac = if frac.is_empty() { "0" } else { frac };
            format!("{int}.{frac}")
        }
    };
    let exponent = if exponent.starts_with(['-', '+']) {
        exponent.to_owned()
    } else {
        format!("+{exponent}")
    };
    format!("{mantissa}e{exponent}")
}

fn digits(s: &str, radix: u32, underscores: bool) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_digit(radix) || (underscores && c == '_'))
}

fn split_sign(s: &str) -> (i128, &str) {
    match s.as_bytes().first() {
        Some(b'-') => (-1, &s[1..]),
        Some(b'+') => (1, &s[1..]),
        _ => (1, s),
    }
}

/// A run of `_` and digits that holds at least one digit, as an integer.
fn radix_value(s: &str, radix: u32) -> Option<i128> {
    let plain: String = s.chars().filter(|&c| c != '_').collect();
    if plain.is_empty() {
        return None;
    }
    i128::from_str_radix(&plain, radix).ok()
}

/// `[0-5]?[0-9]`: one base-60 digit group after a `:`.
fn sexagesimal_part(p: &str) -> bool {
    let b = p.as_bytes();
    match b.len() {
        1 => b[0].is_ascii_digit(),
        2 => (b'0'..=b'5').contains(&b[0]) && b[1].is_ascii_digit(),
        _ => false,
    }
}

/// PyYAML's int resolver and `construct_yaml_int`.
fn pyyaml_int(raw: &str) -> Option<Scalar> {
    let (sign, body) = split_sign(raw);
    let value = if let Some(bin) = body.strip_prefix("0b") {
        // `[-+]?0b[0-1_]+`
        if !digits(bin, 2, true) {
            return None;
        }
        radix_value(bin, 2)
    } else if let Some(hex) = body.strip_prefix("0x") {
        // `[-+]?0x[0-9a-fA-F_]+`
        if !digits(hex, 16, true) {
            return None;
        }
        radix_value(hex, 16)
    } else if body == "0" {
        Some(0)
    } else if let Some(oct) = body.strip_prefix('0') {
        // `[-+]?0[0-7_]+`
        if !digits(oct, 8, true) {
            return None;
        }
        radix_value(oct, 8).or(Some(0))
    } else if body.contains(':') {
        // `[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+`
        let mut parts = body.split(':');
        let first = parts.next()?;
        if !first.starts_with(|c: char| ('1'..='9').contains(&c)) || !digits(first, 10, true) {
            return None;
        }
        let mut value = radix_value(first, 10)?;
        for part in parts {
            if !sexagesimal_part(part) {
                return None;
            }
            value = value
                .checked_mul(60)?
                .checked_add(part.parse::<i128>().ok()?)?;
        }
        Some(value)
    } else {
        // `[-+]?[1-9][0-9_]*`
        if !body.starts_with(|c: char| ('1'..='9').contains(&c)) || !digits(body, 10, true) {
            return None;
        }
        radix_value(body, 10)
    };
    // Python's integers have no bound; one past i128 stays visible as text.
    Some(value.map_or(Scalar::Str, |v| Scalar::Int(sign * v)))
}

/// `[eE][-+][0-9]+` (sign required) or, with `optional_sign`, `[eE][-+]?[0-9]+`.
fn exponent(s: &str, optional_sign: bool) -> bool {
    let Some(rest) = s.strip_prefix(['e', 'E']) else {
        return false;
    };
    let rest = match rest.strip_prefix(['-', '+']) {
        Some(r) => r,
        None if optional_sign => rest,
        None => return false,
    };
    digits(rest, 10, false)
}

/// `[0-9][0-9_]*`, then what follows.
fn leading_digits(s: &str) -> Option<(&str, &str)> {
    if !s.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '_'))
        .unwrap_or(s.len());
    Some((&s[..end], &s[end..]))
}

/// The float resolver of each loader: PyYAML's (`resolver.py`), or the
/// replacements of jsonargparse and OmegaConf, which also take `1e3`.
fn float_match(raw: &str, loader: YamlLoader) -> bool {
    let relaxed = matches!(loader, YamlLoader::JsonArgParse | YamlLoader::OmegaConf);
    let (_, body) = split_sign(raw);
    let signed = body.len() != raw.len();
    // `[-+]?\.(?:inf|Inf|INF)` and `\.(?:nan|NaN|NAN)`
    if matches!(body, ".inf" | ".Inf" | ".INF") {
        return true;
    }
    if matches!(raw, ".nan" | ".NaN" | ".NAN") {
        return true;
    }
    if let Some(frac) = body.strip_prefix('.') {
        // `\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?`, unsigned
        if signed {
            return false;
        }
        let Some((_, rest)) = leading_digits(frac) else {
            return false;
        };
        return rest.is_empty() || exponent(rest, false);
    }
    let Some((_, rest)) = leading_digits(body) else {
        return false;
    };
    if let Some(frac) = rest.strip_prefix('.') {
        // `[0-9][0-9_]*\.[0-9_]*(?:[eE][-+][0-9]+)?`
        let end = frac
            .find(|c: char| !(c.is_ascii_digit() || c == '_'))
            .unwrap_or(frac.len());
        let tail = &frac[end..];
        return tail.is_empty() || exponent(tail, relaxed);
    }
    if rest.starts_with(':') {
        // `[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*`
        let Some((groups, frac)) = rest.rsplit_once('.') else {
            return false;
        };
        return groups[1..].split(':').all(sexagesimal_part) && digits_or_empty(frac);
    }
    // `[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+`: jsonargparse and OmegaConf only
    relaxed && exponent(rest, true)
}

fn digits_or_empty(s: &str) -> bool {
    s.chars().all(|c| c.is_ascii_digit() || c == '_')
}

/// `construct_yaml_float`: `_` removed, base 60 after `:`, `.inf`, `.nan`.
fn pyyaml_float(raw: &str) -> Scalar {
    let plain = raw.replace('_', "").to_ascii_lowercase();
    let (sign, body) = match plain.strip_prefix('-') {
        Some(rest) => (-1.0, rest),
        None => (1.0, plain.strip_prefix('+').unwrap_or(&plain)),
    };
    let value = match body {
        ".inf" => f64::INFINITY,
        ".nan" => return Scalar::Float(f64::NAN),
        b if b.contains(':') => {
            // In `construct_yaml_float`'s order: the last group first.
            let (mut value, mut base) = (0.0, 1.0);
            for part in b.rsplit(':') {
                value += part.parse::<f64>().unwrap_or(0.0) * base;
                base *= 60.0;
            }
            value
        }
        b => {
            // Rust does not read `1.` or `.5` with an exponent after a bare `.`:
            // give the fraction its zero.
            let fixed = b.replace(".e", ".0e");
            let fixed = if fixed.starts_with('.') {
                format!("0{fixed}")
            } else {
                fixed
            };
            match fixed.parse::<f64>() {
                Ok(v) => v,
                Err(_) => return Scalar::Str,
            }
        }
    };
    Scalar::Float(sign * value)
}

/// A plain scalar as the loader reads it (the YAML 1.1 loaders; a
/// timestamp stays a string: accum reads no dates).
pub(crate) fn resolve_pyyaml(raw: &str, loader: YamlLoader) -> Scalar {
    match raw {
        "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            return Scalar::Bool(true);
        }
        "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            return Scalar::Bool(false);
        }
        "" | "~" | "null" | "Null" | "NULL" => return Scalar::Null,
        _ => {}
    }
    if float_match(raw, loader) {
        return pyyaml_float(raw);
    }
    pyyaml_int(raw).unwrap_or(Scalar::Str)
}

/// A plain scalar as YAML 1.2's core schema reads it.
pub(crate) fn resolve_core(raw: &str) -> Scalar {
    match raw {
        "true" | "True" | "TRUE" => return Scalar::Bool(true),
        "false" | "False" | "FALSE" => return Scalar::Bool(false),
        "" | "~" | "null" | "Null" | "NULL" => return Scalar::Null,
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return Scalar::Float(f64::INFINITY);
        }
        "-.inf" | "-.Inf" | "-.INF" => return Scalar::Float(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" => return Scalar::Float(f64::NAN),
        _ => {}
    }
    if let Some(oct) = raw.strip_prefix("0o") {
        return if digits(oct, 8, false) {
            radix_value(oct, 8).map_or(Scalar::Str, Scalar::Int)
        } else {
            Scalar::Str
        };
    }
    if let Some(hex) = raw.strip_prefix("0x") {
        return if digits(hex, 16, false) {
            radix_value(hex, 16).map_or(Scalar::Str, Scalar::Int)
        } else {
            Scalar::Str
        };
    }
    let (sign, body) = split_sign(raw);
    if digits(body, 10, false) {
        return body
            .parse::<i128>()
            .map_or(Scalar::Str, |v| Scalar::Int(sign * v));
    }
    // `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`
    let (mantissa, exp) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i..])),
        None => (body, None),
    };
    let mantissa_ok = match mantissa.split_once('.') {
        Some((int, frac)) => {
            (digits(int, 10, false) && digits_or_empty(frac) && !frac.contains('_'))
                || (int.is_empty() && digits(frac, 10, false))
        }
        None => digits(mantissa, 10, false),
    };
    if mantissa_ok && exp.is_none_or(|e| exponent(e, true)) {
        let fixed = if body.starts_with('.') {
            format!("0{body}")
        } else {
            body.replace(".e", ".0e").replace(".E", ".0E")
        };
        if let Ok(v) = fixed.parse::<f64>() {
            return Scalar::Float(if sign < 0 { -v } else { v });
        }
    }
    Scalar::Str
}

/// Whether an integer is written with a leading zero (`010`, `-007`, `00`):
/// YAML 1.1 reads octal there, YAML 1.2 decimal.
pub(crate) fn leading_zero(raw: &str) -> bool {
    let (_, body) = split_sign(raw);
    body.len() > 1 && body.starts_with('0') && digits(&body[1..], 10, true)
}

/// How the loader's reading of `raw` differs from what a reader expects
/// (YAML 1.2's), as a message and a fix; `None` when a reader would not be
/// surprised. `1_000` and `0b101` are numbers to PyYAML and strings to YAML
/// 1.2, but a reader means the number: no note.
pub(crate) fn surprise(raw: &str, read: &Scalar, loader: YamlLoader) -> Option<(String, String)> {
    let expected = resolve_core(raw);
    if read.same(&expected) {
        return None;
    }
    let numeric = matches!(read, Scalar::Int(_) | Scalar::Float(_));
    if numeric && expected == Scalar::Str && !raw.contains(':') {
        return None;
    }
    let name = loader.name();
    let message = format!(
        "`{raw}` is {} to {name}, not {} as YAML 1.2 reads it",
        read.describe(raw),
        expected.describe(raw)
    );
    let help = match (read, &expected) {
        (Scalar::Int(v), Scalar::Int(e)) => format!(
            "write `{v}` if {v} is meant, or `{e}` without the leading zero; a YAML 1.1 reader takes a leading 0 for octal"
        ),
        (Scalar::Str, Scalar::Float(e)) => format!(
            "write `{}` so that {name} reads a float: its floats need a `.` and a signed exponent",
            float_spelling(raw, *e)
        ),
        (Scalar::Str, Scalar::Int(e)) => {
            format!("write `{e}` so that {name} reads the integer, or quote the value for text")
        }
        (Scalar::Bool(_), _) => {
            format!("write `true` or `false` for a boolean, or quote \"{raw}\" for text")
        }
        _ => format!("quote \"{raw}\" for text, or write the number in decimal"),
    };
    Some((message, help))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PY: YamlLoader = YamlLoader::PyYaml11;

    #[test]
    fn integers_as_pyyaml_resolves_and_constructs_them() {
        for (raw, want) in [
            ("010", Scalar::Int(8)),
            ("+010", Scalar::Int(8)),
            ("-010", Scalar::Int(-8)),
            ("00", Scalar::Int(0)),
            ("0", Scalar::Int(0)),
            ("0x1F", Scalar::Int(31)),
            ("-0x10", Scalar::Int(-16)),
            ("0b101", Scalar::Int(5)),
            ("0b1_1", Scalar::Int(3)),
            ("1_000", Scalar::Int(1000)),
            ("1:30", Scalar::Int(90)),
            ("-1:30", Scalar::Int(-90)),
            ("190:20:30", Scalar::Int(685_230)),
            // Not ints in YAML 1.1.
            ("0o10", Scalar::Str),
            ("0X1F", Scalar::Str),
            ("08", Scalar::Str),
            ("1:60", Scalar::Str),
            ("0b", Scalar::Str),
        ] {
            assert_eq!(resolve_pyyaml(raw, PY), want, "{raw}");
        }
    }

    #[test]
    fn floats_follow_each_loaders_resolver() {
        for (raw, py, relaxed) in [
            ("1e3", Scalar::Str, Scalar::Float(1000.0)),
            ("1e-5", Scalar::Str, Scalar::Float(1e-5)),
            ("1.0e3", Scalar::Str, Scalar::Float(1000.0)),
            ("1.0e+3", Scalar::Float(1000.0), Scalar::Float(1000.0)),
            (
                "6.8523015e+5",
                Scalar::Float(685_230.15),
                Scalar::Float(685_230.15),
            ),
            (".5", Scalar::Float(0.5), Scalar::Float(0.5)),
            ("-.5", Scalar::Str, Scalar::Str),
            ("1.", Scalar::Float(1.0), Scalar::Float(1.0)),
            ("1_000.5", Scalar::Float(1000.5), Scalar::Float(1000.5)),
            (
                "-.inf",
                Scalar::Float(f64::NEG_INFINITY),
                Scalar::Float(f64::NEG_INFINITY),
            ),
        ] {
            assert_eq!(resolve_pyyaml(raw, PY), py, "{raw}");
            for loader in [YamlLoader::JsonArgParse, YamlLoader::OmegaConf] {
                assert_eq!(resolve_pyyaml(raw, loader), relaxed, "{raw} {loader:?}");
            }
        }
        assert!(matches!(resolve_pyyaml(".nan", PY), Scalar::Float(f) if f.is_nan()));
        assert!(
            matches!(resolve_pyyaml("190:20:30.15", PY), Scalar::Float(f) if (f - 685_230.15).abs() < 1e-6)
        );
    }

    #[test]
    fn booleans_are_yaml_1_1s_but_not_y_and_n() {
        for raw in ["yes", "Yes", "YES", "on", "On", "ON", "true", "True"] {
            assert_eq!(resolve_pyyaml(raw, PY), Scalar::Bool(true), "{raw}");
        }
        for raw in ["no", "NO", "off", "Off", "false", "FALSE"] {
            assert_eq!(resolve_pyyaml(raw, PY), Scalar::Bool(false), "{raw}");
        }
        for raw in ["y", "n", "Y", "N", "oN", "yEs"] {
            assert_eq!(resolve_pyyaml(raw, PY), Scalar::Str, "{raw}");
        }
    }

    #[test]
    fn core_schema_reads_what_yaml_1_2_reads() {
        assert_eq!(resolve_core("010"), Scalar::Int(10));
        assert_eq!(resolve_core("0o10"), Scalar::Int(8));
        assert_eq!(resolve_core("1e3"), Scalar::Float(1000.0));
        assert_eq!(resolve_core("on"), Scalar::Str);
        assert_eq!(resolve_core("1_000"), Scalar::Str);
        assert_eq!(resolve_core("-.5"), Scalar::Float(-0.5));
    }

    #[test]
    fn surprises_name_both_readings() {
        let note = |raw: &str| surprise(raw, &resolve_pyyaml(raw, PY), PY);
        let (message, help) = note("010").expect("octal");
        assert!(
            message.contains("the integer 8") && message.contains("the integer 10"),
            "{message}"
        );
        assert!(help.contains("`8`") && help.contains("`10`"), "{help}");
        let (message, help) = note("1e3").expect("string");
        assert!(message.contains("the string \"1e3\""), "{message}");
        assert!(help.contains("`1.0e+3`"), "{help}");
        let (_, help) = note("2e-5").expect("string");
        assert!(help.contains("`2.0e-5`"), "{help}");
        let (_, help) = note("-.5").expect("string");
        assert!(help.contains("`-0.5`"), "{help}");
        assert!(note("On").expect("bool").0.contains("the boolean true"));
        assert!(note("1:30").expect("base 60").0.contains("the integer 90"));
        assert!(note("0o10").is_some());
        for quiet in ["1_000", "0b11", "0x10", "10", "1.0e+3", "true", "y", "text"] {
            assert_eq!(note(quiet), None, "{quiet}");
        }
        let relaxed = YamlLoader::JsonArgParse;
        assert_eq!(
            surprise("1e3", &resolve_pyyaml("1e3", relaxed), relaxed),
            None
        );
    }

    #[test]
    fn python_floats_read_back_as_floats() {
        assert_eq!(python_float(1000.0), "1000.0");
        assert_eq!(python_float(1e-5), "0.00001");
        assert_eq!(python_float(2.5e-20), "2.5e-20");
        for f in [1e-5, 2.5e-20, 0.5, 1000.0, 1.5e300] {
            assert_eq!(
                resolve_pyyaml(&python_float(f), PY),
                Scalar::Float(f),
                "{f}"
            );
        }
        for raw in ["1e3", "2e-5", "1.0e3", "1.E5"] {
            let spelt = float_spelling(raw, 0.0);
            assert!(
                matches!(resolve_pyyaml(&spelt, PY), Scalar::Float(_)),
                "{raw} → {spelt}"
            );
        }
    }
}
