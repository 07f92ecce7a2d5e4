//! JSON numbers and values as JSON Schema compares them: exactly, across
//! integers and floats (`1` and `1.0` are the same value), never through a
//! lossy cast.

use std::cmp::Ordering;

use serde_json::{Number, Value};

/// A number as an exact integer when it is one (`8`, `8.0`, `1e3`), else a float.
#[derive(Clone, Copy, Debug)]
enum Exact {
    Integer(i128),
    Float(f64),
}

fn exact(number: &Number) -> Exact {
    if let Some(n) = number.as_u64() {
        return Exact::Integer(i128::from(n));
    }
    if let Some(n) = number.as_i64() {
        return Exact::Integer(i128::from(n));
    }
    let float = number.as_f64().unwrap_or(f64::NAN);
    whole(float).map_or(Exact::Float(float), Exact::Integer)
}

/// A float without a fraction as the integer it is, when an `i128` holds it.
fn whole(float: f64) -> Option<i128> {
    // 2^127 is exact in f64: the bound is compared exactly.
    const BOUND: f64 = 170_141_183_460_469_231_731_687_303_715_884_105_728.0;
    #[allow(clippy::cast_possible_truncation)]
    (float.fract() == 0.0 && (-BOUND..BOUND).contains(&float)).then_some(float as i128)
}

/// `a` against `b`, exactly; `None` for a NaN, which JSON cannot hold.
pub(super) fn compare(a: &Number, b: &Number) -> Option<Ordering> {
    match (exact(a), exact(b)) {
        (Exact::Integer(a), Exact::Integer(b)) => Some(a.cmp(&b)),
        (Exact::Float(a), Exact::Float(b)) => a.partial_cmp(&b),
        (Exact::Integer(i), Exact::Float(f)) => float_against(f, i).map(Ordering::reverse),
        (Exact::Float(f), Exact::Integer(i)) => float_against(f, i),
    }
}

/// A float with a fraction, or beyond `i128`, against an integer.
fn float_against(float: f64, integer: i128) -> Option<Ordering> {
    if float.is_nan() {
        return None;
    }
    // A float beyond `i128` is beyond every integer here; within, its floor
    // decides: floor < i means float < i, and floor ≥ i means float > i
    // (the float has a fraction, so it is not i).
    match whole(float.floor()) {
        Some(floor) if floor < integer => Some(Ordering::Less),
        Some(_) => Some(Ordering::Greater),
        None if float > 0.0 => Some(Ordering::Greater),
        None => Some(Ordering::Less),
    }
}

/// Whether a JSON number is an integer, as JSON Schema's `integer` has it
/// (`8.0` is one).
pub(super) fn is_integer(number: &Number) -> bool {
    number.is_u64() || number.is_i64() || number.as_f64().is_some_and(|f| f.fract() == 0.0)
}

/// Whether two values are equal as JSON Schema has it (`enum`, `const`,
/// `uniqueItems`): numbers by value, objects by their members.
pub(super) fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(a), Value::Number(b)) => compare(a, b) == Some(Ordering::Equal),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| equal(a, b))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(key, value)| b.get(key).is_some_and(|other| equal(value, other)))
        }
        _ => a == b,
    }
}

/// A text that two values share exactly when they are [`equal`]: the
/// key that finds repeated items in one pass.
pub(super) fn canonical(value: &Value, out: &mut String) {
    use std::fmt::Write as _;
    match value {
        Value::Number(n) => match exact(n) {
            Exact::Integer(i) => {
                let _ = write!(out, "{i}");
            }
            Exact::Float(f) => {
                let _ = write!(out, "{f:?}");
            }
        },
        Value::Array(items) => {
            out.push('[');
            for item in items {
                canonical(item, out);
                out.push(',');
            }
            out.push(']');
        }
        Value::Object(members) => {
            // serde_json's map keeps its keys sorted: one order for equal objects.
            out.push('{');
            for (key, member) in members {
                let _ = write!(out, "{key:?}:");
                canonical(member, out);
                out.push(',');
            }
            out.push('}');
        }
        other => {
            let _ = write!(out, "{other}");
        }
    }
}

/// Whether `value` divided by `divisor` is an integer, in decimal as the
/// numbers are written (`0.3` is a multiple of `0.1`), exactly where the
/// digits fit, else in floating point.
pub(super) fn is_multiple_of(value: &Number, divisor: f64) -> bool {
    let Some(value) = value.as_f64() else {
        return false;
    };
    if value == 0.0 {
        return true;
    }
    if let (Some((vm, ve)), Some((dm, de))) = (decimal(value), decimal(divisor))
        && dm != 0
    {
        // value / divisor = (vm / dm) · 10^(ve − de).
        let shift = ve - de;
        let (numerator, denominator) = if shift >= 0 {
            (
                u32::try_from(shift)
                    .ok()
                    .and_then(|s| 10u128.checked_pow(s))
                    .and_then(|p| vm.checked_mul(p)),
                Some(dm),
            )
        } else {
            (
                Some(vm),
                u32::try_from(-shift)
                    .ok()
                    .and_then(|s| 10u128.checked_pow(s))
                    .and_then(|p| dm.checked_mul(p)),
            )
        };
        if let (Some(n), Some(d)) = (numerator, denominator) {
            return n % d == 0;
        }
    }
    (value / divisor).fract() == 0.0
}

/// A finite float's shortest decimal form as digits and a power of ten
/// (`0.25` is 25·10⁻²), without its sign.
fn decimal(float: f64) -> Option<(u128, i32)> {
    if !float.is_finite() {
        return None;
    }
    let text = format!("{:e}", float.abs());
    let (mantissa, exponent) = text.split_once('e')?;
    let exponent: i32 = exponent.parse().ok()?;
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits: u128 = format!("{whole}{fraction}").parse().ok()?;
    let places = i32::try_from(fraction.len()).ok()?;
    Some((digits, exponent - places))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(text: &str) -> Number {
        serde_json::from_str(text).expect("a number")
    }

    #[test]
    fn numbers_compare_exactly_across_kinds() {
        for (a, b, order) in [
            ("1", "1.0", Ordering::Equal),
            (
                "18446744073709551615",
                "1.8446744073709552e19",
                Ordering::Less,
            ),
            (
                "-9223372036854775808",
                "-9.223372036854775808e18",
                Ordering::Equal,
            ),
            ("2", "2.5", Ordering::Less),
            ("-3", "-2.5", Ordering::Less),
            ("3", "1e300", Ordering::Less),
            ("-3", "-1e300", Ordering::Greater),
            ("0.5", "0.25", Ordering::Greater),
        ] {
            assert_eq!(compare(&n(a), &n(b)), Some(order), "{a} against {b}");
            assert_eq!(
                compare(&n(b), &n(a)),
                Some(order.reverse()),
                "{b} against {a}"
            );
        }
    }

    #[test]
    fn equal_values_share_their_canonical_text() {
        let pairs = [
            (serde_json::json!(1), serde_json::json!(1.0), true),
            (
                serde_json::json!([1, {"a": 2.0}]),
                serde_json::json!([1.0, {"a": 2}]),
                true,
            ),
            (
                serde_json::json!({"a": 1}),
                serde_json::json!({"a": 1, "b": 2}),
                false,
            ),
            (serde_json::json!("1"), serde_json::json!(1), false),
            (serde_json::json!(0.5), serde_json::json!(0.25), false),
        ];
        for (a, b, same) in pairs {
            assert_eq!(equal(&a, &b), same, "{a} and {b}");
            let (mut ka, mut kb) = (String::new(), String::new());
            canonical(&a, &mut ka);
            canonical(&b, &mut kb);
            assert_eq!(ka == kb, same, "{ka} and {kb}");
        }
    }

    #[test]
    fn multiples_are_decimal() {
        for (value, divisor, yes) in [
            ("0.3", 0.1, true),
            ("0.07", 0.01, true),
            ("10", 2.0, true),
            ("7", 2.0, false),
            ("7.5", 2.5, true),
            ("7.6", 2.5, false),
            ("0", 3.0, true),
            ("1e20", 5.0, true),
            ("1e20", 3.0, false),
        ] {
            assert_eq!(
                is_multiple_of(&n(value), divisor),
                yes,
                "{value} / {divisor}"
            );
        }
    }
}
