//! Loss-normalization arithmetic (`accum::run::normalization`): a group's loss is normalized by
//! what was really evaluated in the whole group, once.
//!
//! The per-token mean of a group is `Σ token losses / Σ supervised tokens`
//! over all its microbatches and replicas. The mean of the microbatch means
//! is a different objective whenever the microbatches hold different numbers
//! of supervised tokens:
//!
//! ```
//! use accum_core::norm::{Part, mean_of_means, weighted_mean};
//! use accum_core::Tokens;
//!
//! // `accum::run::normalization`: 512 tokens with mean 2 and 1,536 tokens with mean 4.
//! let parts = [Part::from_mean(2.0, Tokens::new(512)), Part::from_mean(4.0, Tokens::new(1536))];
//! assert_eq!(weighted_mean(&parts), Some(3.5));
//! assert_eq!(mean_of_means(&parts), Some(3.0)); // the wrong objective
//! ```

use crate::units::Tokens;

/// One microbatch's contribution: its summed loss and its supervised tokens.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Part {
    /// Sum of the token losses.
    pub loss_sum: f64,
    /// Supervised tokens (padding and ignored positions excluded).
    pub tokens: Tokens,
}

impl Part {
    /// A part from its mean loss and token count.
    pub fn from_mean(mean: f64, tokens: Tokens) -> Part {
        Part {
            loss_sum: mean * tokens.get() as f64,
            tokens,
        }
    }
}

/// `Σ loss / Σ tokens` over the whole group (`accum::run::normalization`), or `None` for a group
/// without supervised tokens.
pub fn weighted_mean(parts: &[Part]) -> Option<f64> {
    let tokens: u64 = parts.iter().map(|p| p.tokens.get()).sum();
    (tokens > 0).then(|| parts.iter().map(|p| p.loss_sum).sum::<f64>() / tokens as f64)
}

/// The mean of the microbatch means — what a loop computes when it divides
/// each microbatch's mean by `A`. Equal to [`weighted_mean`] only when every
/// part has the same number of tokens. Provided to show the difference.
pub fn mean_of_means(parts: &[Part]) -> Option<f64> {
    let means: Vec<f64> = parts
        .iter()
        .filter(|p| p.tokens.get() > 0)
        .map(|p| p.loss_sum / p.tokens.get() as f64)
        .collect();
    (!means.is_empty()).then(|| means.iter().sum::<f64>() / means.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weighted_mean_is_three_and_a_half() {
        let parts = [
            Part::from_mean(2.0, Tokens::new(512)),
            Part::from_mean(4.0, Tokens::new(1_536)),
        ];
        assert_eq!(weighted_mean(&parts), Some(3.5));
        assert_eq!(mean_of_means(&parts), Some(3.0));
    }

    #[test]
    fn equal_sizes_make_both_means_agree() {
        let parts = [
            Part::from_mean(2.0, Tokens::new(100)),
            Part::from_mean(4.0, Tokens::new(100)),
        ];
        assert_eq!(weighted_mean(&parts), mean_of_means(&parts));
    }

    #[test]
    fn empty_groups_have_no_mean() {
        assert_eq!(weighted_mean(&[]), None);
        assert_eq!(weighted_mean(&[Part::from_mean(1.0, Tokens::ZERO)]), None);
        assert_eq!(mean_of_means(&[]), None);
    }
}
