//! Counts written on a command line, read by one parser for every option
//! that takes one: digits (`7000000000`), the suffixes of spans (`7B`,
//! `1.3B`, `350M`, `1_000`) or scientific notation (`7e9`, `1.3e9`),
//! always exactly. Byte sizes (`140GiB`, `1.5e9`) are `ByteSize`'s.

/// Parses a whole count above 0 (every option that takes one counts
/// parameters or examples, which a run has at least one of); a sign, a
/// fraction (`1.5`, `1.2345k`) or a count past 64 bits is refused with the
/// forms that are read.
pub(crate) fn parse_count(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    if trimmed.starts_with('-') {
        return Err(format!(
            "`{text}` is negative; a count is a whole number above 0, e.g. 7000000000, 7B, 1.3B or 7e9"
        ));
    }
    let count = read_count(trimmed).ok_or_else(|| {
        format!(
            "`{text}` is not a whole count; write digits, a suffix k, M, B (or G) or T, or scientific notation, e.g. 7000000000, 7B, 1.3B or 7e9"
        )
    })?;
    if count == 0 {
        return Err(format!(
            "`{text}` is a count of 0; give a whole number above 0, e.g. 7000000000, 7B, 1.3B or 7e9"
        ));
    }
    Ok(count)
}

/// The count `text` writes, if it is one.
fn read_count(trimmed: &str) -> Option<u64> {
    if let Ok(count) = accum_core::command_line::parse_count(trimmed) {
        return Some(count);
    }
    // Scientific notation, exactly: 1.3e9 is 1300000000, 1.5e0 is no count.
    if trimmed.contains(['e', 'E'])
        && let Ok(value) = trimmed.parse::<f64>()
        && value.is_finite()
        && value >= 0.0
        && value.fract() == 0.0
        && value < 18_446_744_073_709_551_616.0
    {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        return Some(value as u64);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_of_a_count_reads_the_same() {
        for (text, count) in [
            ("7000000000", 7_000_000_000),
            ("7B", 7_000_000_000),
            ("7G", 7_000_000_000),
            ("7e9", 7_000_000_000),
            ("7E9", 7_000_000_000),
            ("1.3B", 1_300_000_000),
            ("1.3e9", 1_300_000_000),
            ("350M", 350_000_000),
            ("125k", 125_000),
            ("1_000", 1_000),
            (" 12 ", 12),
        ] {
            assert_eq!(parse_count(text), Ok(count), "{text}");
        }
    }

    #[test]
    fn fractions_and_words_are_refused_with_the_forms() {
        for text in [
            "1.5",
            "1.2345k",
            "1.5e0",
            "-7e9",
            "7 billion",
            "7GiB",
            "1e30",
            "",
            "0x10",
            "0",
            "0e0",
            "-0",
            "-0e0",
            " -5",
        ] {
            let err = parse_count(text).expect_err(text);
            assert!(err.contains("e.g. 7000000000, 7B, 1.3B or 7e9"), "{err}");
        }
        assert!(parse_count("-0e0").expect_err("sign").contains("negative"));
        assert!(parse_count("0").expect_err("zero").contains("a count of 0"));
    }
}
