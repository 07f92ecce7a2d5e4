//! "Did you mean …?": the closest of the known names to a misspelt one.

/// How alike two names must be (Jaro–Winkler similarity) to suggest one for
/// the other: close enough for a dropped, doubled or swapped letter
/// (`micro_bach`, `per_tokens`), far enough not to suggest `seed` for `lr`.
const THRESHOLD: f64 = 0.8;

/// The candidate most like `word`, when one is alike enough; a candidate
/// that differs only in case or in `-`/`_` wins outright.
pub(crate) fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let folded = fold(word);
    let mut best: Option<(f64, &'a str)> = None;
    for candidate in candidates {
        if candidate == word {
            continue;
        }
        let score = if fold(candidate) == folded {
            2.0
        } else {
            strsim::jaro_winkler(&folded, &fold(candidate))
        };
        if score >= THRESHOLD && best.is_none_or(|(b, _)| score > b) {
            best = Some((score, candidate));
        }
    }
    best.map(|(_, candidate)| candidate)
}

fn fold(word: &str) -> String {
    word.to_lowercase().replace('-', "_")
}

/// Up to this many keys are listed in a help; more are left to `schema`.
const MAX_LISTED_KEYS: usize = 12;

/// A table name as a config file shows it: `[batch]`, or `the top level`.
pub(crate) fn section_name(path: &[String]) -> String {
    if path.is_empty() {
        "the top level".to_owned()
    } else {
        format!("[{}]", crate::diagnostic::dotted(path))
    }
}

/// The help for an unknown `key` in `section`: the known key it most likely
/// means, else the known keys when they are few.
pub(crate) fn unknown_key_help<'a>(
    key: &str,
    known: impl IntoIterator<Item = &'a str>,
    section: &str,
) -> String {
    let known: Vec<&str> = known.into_iter().collect();
    match did_you_mean(key, known.iter().copied()) {
        Some(near) => format!("did you mean `{near}`?"),
        None if !known.is_empty() && known.len() <= MAX_LISTED_KEYS => {
            let mut keys: Vec<String> = known.iter().map(|k| format!("`{k}`")).collect();
            keys.sort();
            format!("{section} takes {}", or_list(&keys))
        }
        None => format!(
            "remove it or fix its spelling; `{} schema` lists every key",
            crate::cli::bin_name()
        ),
    }
}

/// `a, b or c` for a list of alternatives.
pub(crate) fn or_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_near_misses_only() {
        let values = ["per_token", "per_example", "sum"];
        assert_eq!(did_you_mean("per_tokens", values), Some("per_token"));
        assert_eq!(did_you_mean("Per-Example", values), Some("per_example"));
        assert_eq!(did_you_mean("mean", values), None);
        let keys = ["micro_batch", "accumulation", "replicas", "global_batch"];
        assert_eq!(did_you_mean("micro_bach", keys), Some("micro_batch"));
        assert_eq!(did_you_mean("acumulation", keys), Some("accumulation"));
        assert_eq!(did_you_mean("lr", keys), None);
        assert_eq!(did_you_mean("replicas", keys), None);
    }

    #[test]
    fn lists_read_as_prose() {
        let words = |w: &[&str]| w.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(or_list(&words(&["a"])), "a");
        assert_eq!(or_list(&words(&["a", "b", "c"])), "a, b or c");
    }
}
