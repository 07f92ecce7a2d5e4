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
    nearest(word, candidates.into_iter().map(|c| (c, fold(c))))
}

/// The one candidate alike enough to `word`, when exactly one is: the
/// did-you-mean a fix may apply without asking (two near candidates, or a
/// spelling that differs from several only in case, leave a choice).
pub(crate) fn only_near<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let folded = fold(word);
    let mut near = candidates.into_iter().filter(|candidate| {
        let candidate_folded = fold(candidate);
        *candidate != word
            && (candidate_folded == folded
                || (may_be_alike(&folded, &candidate_folded)
                    && strsim::jaro_winkler(&folded, &candidate_folded) >= THRESHOLD))
    });
    let first = near.next()?;
    near.next().is_none().then_some(first)
}

/// [`did_you_mean`] over candidates given with their folded spelling.
fn nearest<'a, F: AsRef<str>>(
    word: &str,
    candidates: impl IntoIterator<Item = (&'a str, F)>,
) -> Option<&'a str> {
    let folded = fold(word);
    let mut best: Option<(f64, &'a str)> = None;
    for (candidate, candidate_folded) in candidates {
        if candidate == word {
            continue;
        }
        let candidate_folded = candidate_folded.as_ref();
        let score = if candidate_folded == folded {
            2.0
        } else if swapped(&folded, candidate_folded) {
            // A swap of two neighbours is a typo at any length; the
            // similarity of a short word with one (`mpl`, `mlp`) is low.
            THRESHOLD.max(strsim::jaro_winkler(&folded, candidate_folded))
        } else if !may_be_alike(&folded, candidate_folded) {
            continue;
        } else {
            strsim::jaro_winkler(&folded, candidate_folded)
        };
        if score >= THRESHOLD && best.is_none_or(|(b, _)| score > b) {
            best = Some((score, candidate));
        }
    }
    best.map(|(_, candidate)| candidate)
}

/// Whether `b` is `a` with two neighbouring letters swapped.
fn swapped(a: &str, b: &str) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a.len() != b.len() {
        return false;
    }
    let differ: Vec<usize> = (0..a.len()).filter(|&i| a[i] != b[i]).collect();
    matches!(differ[..], [i, j] if j == i + 1 && a[i] == b[j] && a[j] == b[i])
}

/// Whether two ASCII words share enough letters to reach [`THRESHOLD`]:
/// a bound checked in one pass, without the similarity's allocation, so
/// that thousands of unknown keys each compared with a section's keys stay
/// cheap. Jaro–Winkler is at most `0.4 + 0.6·j` (a prefix of four, scale
/// 0.1), so reaching 0.8 needs Jaro `j ≥ 2/3`; and `j ≤ (m/|a| + m/|b| +
/// 1)/3`, with `m` the matching characters, at most the letters the words
/// share. Words with other characters are always compared.
fn may_be_alike(a: &str, b: &str) -> bool {
    if !a.is_ascii() || !b.is_ascii() {
        return true;
    }
    let mut counts = [0u32; 128];
    for byte in a.bytes() {
        counts[usize::from(byte)] += 1;
    }
    let mut shared = 0usize;
    for byte in b.bytes() {
        let count = &mut counts[usize::from(byte)];
        if *count > 0 {
            *count -= 1;
            shared += 1;
        }
    }
    let (la, lb) = (a.len(), b.len());
    shared * (la + lb) >= la * lb
}

/// The word in lower case with `-` as `_`; borrowed when it already is.
fn fold(word: &str) -> std::borrow::Cow<'_, str> {
    if word.bytes().any(|b| b.is_ascii_uppercase() || b == b'-') || !word.is_ascii() {
        std::borrow::Cow::Owned(word.to_lowercase().replace('-', "_"))
    } else {
        std::borrow::Cow::Borrowed(word)
    }
}

/// Values people write for a choice that no spelling of it is near, from
/// the frameworks they come from, with the values they mean and why:
/// (what is written, the values meant, why).
const DOMAIN: &[(&[&str], &[&str], &str)] = &[
    (
        &[
            "steps",
            "step",
            "iterations",
            "iteration",
            "iters",
            "iter",
            "global_step",
        ],
        &["updates", "microbatches"],
        "\"steps\" is the ambiguity accum exists for: one loop's step is an optimizer update, another's a microbatch (one forward/backward pass), and with accumulation A the two differ A-fold",
    ),
    (
        &[
            "float16",
            "half",
            "f16",
            "16",
            "16-mixed",
            "16_mixed",
            "fp16_mixed",
            "amp",
        ],
        &["fp16"],
        "accum calls 16-bit floats \"fp16\"; they overflow above 65504, so the loss is scaled dynamically",
    ),
    (
        &["bfloat16", "bf16-mixed", "bf16_mixed", "brain_float16"],
        &["bf16"],
        "accum calls bfloat16 \"bf16\"; it has f32's exponent range, so no loss scaling is needed",
    ),
    (
        &["float32", "single", "f32", "32", "32-true", "full", "float"],
        &["fp32"],
        "accum calls 32-bit floats \"fp32\"",
    ),
    (
        &[
            "mean",
            "average",
            "avg",
            "token_mean",
            "mean_per_token",
            "batchmean",
        ],
        &["per_token", "per_example"],
        "\"mean\" does not say of what: per_token divides the group's summed token losses by its supervised tokens (each token weighs the same, whatever the microbatch), per_example averages each example's tokens and divides by the examples (each example weighs the same)",
    ),
    (
        &["summed", "total", "add"],
        &["sum"],
        "\"sum\" adds the token losses and divides by nothing",
    ),
    (
        &["cosine_with_warmup", "cosine_decay", "cos", "warmup_cosine"],
        &["cosine"],
        "every schedule warms up first (schedule.warmup); \"cosine\" then decays to zero at the total",
    ),
    (
        &["linear_with_warmup", "linear_decay", "warmup_linear"],
        &["linear"],
        "every schedule warms up first (schedule.warmup); \"linear\" then decays to zero at the total",
    ),
    (
        &["constant_with_warmup", "const", "fixed", "none"],
        &["constant"],
        "every schedule warms up first (schedule.warmup); \"constant\" then keeps the peak",
    ),
    (
        &["adam"],
        &["adamw"],
        "accum's Adam is AdamW, with decoupled weight decay",
    ),
    (
        &["keep", "include", "pad"],
        &["process"],
        "\"process\" trains on the short last group as one more update, normalized by what it holds",
    ),
    (
        &["discard", "skip", "drop_last"],
        &["drop"],
        "\"drop\" leaves the short last group out and records its examples",
    ),
    (
        &["raise", "fail", "strict", "refuse"],
        &["error"],
        "\"error\" refuses data that does not fill whole groups",
    ),
];

/// The help for a value of a choice that no allowed spelling is near: what
/// it means in the domain, from the values people bring from other
/// frameworks (`"steps"`, `"float16"`, `"mean"`), when the choice has the
/// value they mean.
pub(crate) fn domain_hint(found: &str, allowed: &[String]) -> Option<String> {
    let folded = fold(found);
    DOMAIN.iter().find_map(|(written, meant, why)| {
        if !written.contains(&folded.as_ref()) {
            return None;
        }
        let meant: Vec<String> = meant
            .iter()
            .filter(|m| allowed.iter().any(|a| a == *m))
            .map(|m| format!("\"{m}\""))
            .collect();
        (!meant.is_empty()).then(|| format!("write {}: {why}", or_list(&meant)))
    })
}

/// The unit a misspelt unit word most likely is (`tokns` → `tokens`), in
/// the number it was written with (plural unless it is 1).
pub(crate) fn unit_did_you_mean(number: &str, word: &str) -> Option<String> {
    near_unit(number, word).map(|span| format!("did you mean \"{span}\"?"))
}

/// The span a misspelt unit word most likely means, written out:
/// `500 tokens` for `500 tokns`.
pub(crate) fn near_unit(number: &str, word: &str) -> Option<String> {
    let names: Vec<&str> = accum_core::UnitKind::ALL
        .iter()
        .flat_map(|u| [u.singular(), u.plural()])
        .collect();
    let near = did_you_mean(word, names.iter().copied())?;
    let unit = accum_core::UnitKind::from_name(near)?;
    Some(counted_span(number, unit))
}

/// `500 updates`, `1 update`: a number with a unit, as a span is written.
pub(crate) fn counted_span(number: &str, unit: accum_core::UnitKind) -> String {
    let name = if number == "1" {
        unit.singular()
    } else {
        unit.plural()
    };
    format!("{number} {name}")
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
///
/// A file may hold thousands of unknown keys in one section: what depends
/// only on the section (its keys folded for the comparison, the list of
/// them) is made once and kept for the next key of the same section.
pub(crate) fn unknown_key_help<'a>(
    key: &str,
    known: impl IntoIterator<Item = &'a str>,
    section: &str,
) -> String {
    thread_local! {
        static LAST: std::cell::RefCell<Option<SectionKeys>> = const { std::cell::RefCell::new(None) };
    }
    let known: Vec<&str> = known.into_iter().collect();
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        let keys = match last.take() {
            Some(keys) if keys.section == section && keys.known.iter().eq(known.iter()) => keys,
            _ => SectionKeys::new(&known, section),
        };
        let help = keys.help(key);
        *last = Some(keys);
        help
    })
}

/// The known keys of a section, ready for [`unknown_key_help`].
struct SectionKeys {
    section: String,
    known: Vec<String>,
    folded: Vec<String>,
    /// The help when no key is near.
    otherwise: String,
}

impl SectionKeys {
    fn new(known: &[&str], section: &str) -> SectionKeys {
        let otherwise = if !known.is_empty() && known.len() <= MAX_LISTED_KEYS {
            let mut keys: Vec<String> = known.iter().map(|k| format!("`{k}`")).collect();
            keys.sort();
            format!("{section} takes {}", or_list(&keys))
        } else {
            format!(
                "remove it or fix its spelling; `{} schema` lists every key",
                crate::output::bin_name()
            )
        };
        SectionKeys {
            section: section.to_owned(),
            known: known.iter().map(|k| (*k).to_owned()).collect(),
            folded: known.iter().map(|k| fold(k).into_owned()).collect(),
            otherwise,
        }
    }

    fn help(&self, key: &str) -> String {
        let candidates = self.known.iter().map(String::as_str).zip(&self.folded);
        match nearest(key, candidates) {
            Some(near) => format!("did you mean `{near}`?"),
            None => self.otherwise.clone(),
        }
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
    fn a_swap_of_neighbours_is_a_typo_at_any_length() {
        assert_eq!(did_you_mean("mpl", ["linear", "mlp"]), Some("mlp"));
        assert_eq!(did_you_mean("ab", ["ba"]), Some("ba"));
        assert!(swapped("pari", "pair"));
        assert!(!swapped("mpl", "lpm"));
        assert!(!swapped("mlp", "mlp"));
        assert_eq!(did_you_mean("xyz", ["mlp"]), None);
    }

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
    fn the_shared_letters_bound_never_hides_a_suggestion() {
        // Every pair the bound skips is below the threshold.
        let words = [
            "micro_batch",
            "micro_bach",
            "accumulation",
            "acumulation",
            "replicas",
            "replica",
            "global_batch",
            "glob",
            "lr",
            "seed",
            "u123456",
            "per_token",
            "per_tokens",
            "ab",
            "ba",
            "a",
            "abcd",
            "dcba",
            "steps",
            "updates",
            "x_y_z",
            "zyx",
        ];
        for a in words {
            for b in words {
                if !may_be_alike(a, b) {
                    assert!(strsim::jaro_winkler(a, b) < THRESHOLD, "{a} {b}");
                }
            }
        }
        assert!(!may_be_alike("u123456", "accumulation"));
    }

    #[test]
    fn misses_without_a_near_spelling_get_the_domain() {
        let words = |w: &[&str]| w.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let axis = words(&["updates", "examples", "tokens"]);
        let steps = domain_hint("steps", &axis).expect("steps");
        assert!(
            steps.starts_with("write \"updates\": \"steps\" is the ambiguity"),
            "{steps}"
        );
        assert!(steps.contains("A-fold"), "{steps}");
        let both = domain_hint("Iterations", &words(&["updates", "microbatches"])).expect("iters");
        assert!(
            both.starts_with("write \"updates\" or \"microbatches\":"),
            "{both}"
        );
        let modes = words(&["fp32", "bf16", "fp16"]);
        assert!(domain_hint("float16", &modes).is_some_and(|h| h.starts_with("write \"fp16\":")));
        assert!(domain_hint("bfloat16", &modes).is_some_and(|h| h.starts_with("write \"bf16\":")));
        let norms = words(&["per_token", "per_example", "sum"]);
        let mean = domain_hint("mean", &norms).expect("mean");
        assert!(
            mean.starts_with(
                "write \"per_token\" or \"per_example\": \"mean\" does not say of what"
            ),
            "{mean}"
        );
        let kinds = words(&["constant", "linear", "cosine"]);
        assert!(
            domain_hint("cosine_with_warmup", &kinds).is_some_and(|h| h.contains("\"cosine\""))
        );
        // Only values the choice has are offered; unknown words get nothing.
        assert_eq!(domain_hint("float16", &norms), None);
        assert_eq!(domain_hint("banana", &modes), None);
    }

    #[test]
    fn misspelt_units_are_suggested_in_their_number() {
        assert_eq!(
            unit_did_you_mean("2M", "tokns").as_deref(),
            Some("did you mean \"2M tokens\"?")
        );
        assert_eq!(
            unit_did_you_mean("1", "updat").as_deref(),
            Some("did you mean \"1 update\"?")
        );
        assert_eq!(
            unit_did_you_mean("500", "exmaples").as_deref(),
            Some("did you mean \"500 examples\"?")
        );
        assert_eq!(unit_did_you_mean("3", "epochs"), None);
    }

    #[test]
    fn lists_read_as_prose() {
        let words = |w: &[&str]| w.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(or_list(&words(&["a"])), "a");
        assert_eq!(or_list(&words(&["a", "b", "c"])), "a, b or c");
    }
}
