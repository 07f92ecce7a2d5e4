//! The built-in synthetic data and its sharding (`accum::plan::partial-group`, `accum::run::data-parallel`).
//!
//! Sequences come from a fixed random Markov chain over `V` tokens drawn from
//! a seed, so a model can learn the transitions and the loss falls. Each
//! example has a stable id (its index in the data set) and a length uniform in
//! `min_len..=max_len`; its labels are the next tokens.
//!
//! A [`PackedMicrobatch`] stores its examples *packed*: the real positions of all its
//! examples one after the other, no padding. The padded `[m_i, L_i]` form
//! that other frameworks expect is produced only for dumps
//! ([`PackedMicrobatch::padded`]).
//!
//! Which examples form a group and which replica gets them is the loop
//! driver's walk ([`crate::driver`]); its tests check that no
//! example reaches two replicas in one epoch (`accum::run::data-parallel`: the same examples on every
//! replica add no information).

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use ndarray::Array2;

use crate::settings::DataSection;

pub use crate::rng::Rng;

/// Examples given to [`Dataset::from_examples`] are inconsistent.
#[derive(Clone, PartialEq, Eq)]
pub enum DataError {
    /// Two examples share an id.
    DuplicateId {
        /// The id.
        id: u64,
    },
    /// An example has a different number of tokens and labels.
    LengthMismatch {
        /// The example.
        id: u64,
        /// Its tokens.
        tokens: usize,
        /// Its labels.
        labels: usize,
    },
    /// A token id or label is not below the vocabulary size.
    OutOfVocab {
        /// The example.
        id: u64,
        /// The value.
        value: i64,
        /// The vocabulary size.
        vocab: usize,
    },
}

impl fmt::Display for DataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            DataError::DuplicateId { id } => write!(
                f,
                "example id {id} appears twice; ids must be unique so shards and dumps can name examples"
            ),
            DataError::LengthMismatch { id, tokens, labels } => write!(
                f,
                "example {id} has {tokens} tokens but {labels} labels; give one label per token (the ignore index where none)"
            ),
            DataError::OutOfVocab { id, value, vocab } => write!(
                f,
                "example {id} holds {value}, not below the vocabulary size {vocab}; raise vocab or fix the data"
            ),
        }
    }
}

impl std::error::Error for DataError {}

/// One example of the data, as the engine reads it: a sequence of input
/// tokens and their labels (the next token), same length. (The unit it
/// counts as is [`Example`](crate::Example).)
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sequence {
    /// Stable id: the example's index in the data set.
    pub id: u64,
    /// Input token ids.
    pub tokens: Vec<u32>,
    /// Target token ids (or the ignore index), one per input token.
    pub labels: Vec<i64>,
}

/// A data set of examples with stable ids. Cloning it shares the examples:
/// the engines a check compares read one copy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dataset {
    examples: Arc<[Sequence]>,
    vocab: usize,
}

/// Successors per token in the synthetic Markov chain: few, so the chain is
/// learnable and the loss visibly falls below `ln V`.
const SUCCESSORS: usize = 4;

impl Dataset {
    /// The synthetic Markov-chain data set described by `section`. Every
    /// position is supervised. Expects a validated section
    /// (`1 ≤ min_len ≤ max_len`, `vocab ≥ 2`).
    pub fn synthetic(section: &DataSection) -> Dataset {
        let vocab = section.vocab.max(2) as usize;
        let min_len = section.min_len.max(1);
        let max_len = section.max_len.max(min_len);
        let mut chain_rng = Rng::new(section.seed, 1);
        // Each token has SUCCESSORS likely next tokens with skewed weights.
        let mut next = Vec::with_capacity(vocab * SUCCESSORS);
        for _ in 0..vocab {
            for _ in 0..SUCCESSORS {
                next.push(chain_rng.below(vocab as u64) as u32);
            }
        }
        let weights = [0.55, 0.25, 0.12, 0.08];
        let mut rng = Rng::new(section.seed, 2);
        let examples: Arc<[Sequence]> = (0..section.examples)
            .map(|id| {
                let len = (min_len + rng.below(max_len - min_len + 1)) as usize;
                let mut seq = Vec::with_capacity(len + 1);
                let mut state = rng.below(vocab as u64) as u32;
                seq.push(state);
                for _ in 0..len {
                    let u = rng.next_f64();
                    let mut acc = 0.0;
                    let mut pick = SUCCESSORS - 1;
                    for (k, w) in weights.iter().enumerate() {
                        acc += w;
                        if u < acc {
                            pick = k;
                            break;
                        }
                    }
                    state = next[state as usize * SUCCESSORS + pick];
                    seq.push(state);
                }
                Sequence {
                    id,
                    tokens: seq[..len].to_vec(),
                    labels: seq[1..].iter().map(|&t| i64::from(t)).collect(),
                }
            })
            .collect();
        Dataset { examples, vocab }
    }

    /// A data set from given examples (tests, user data): ids unique,
    /// one label per token, token ids below `vocab`, labels below `vocab` or
    /// negative (an ignore index).
    pub fn from_examples(examples: Vec<Sequence>, vocab: usize) -> Result<Dataset, DataError> {
        let mut seen = std::collections::HashSet::with_capacity(examples.len());
        for e in &examples {
            if !seen.insert(e.id) {
                return Err(DataError::DuplicateId { id: e.id });
            }
            if e.tokens.len() != e.labels.len() {
                return Err(DataError::LengthMismatch {
                    id: e.id,
                    tokens: e.tokens.len(),
                    labels: e.labels.len(),
                });
            }
            if let Some(&token) = e.tokens.iter().find(|&&t| t as usize >= vocab) {
                return Err(DataError::OutOfVocab {
                    id: e.id,
                    value: i64::from(token),
                    vocab,
                });
            }
            if let Some(&label) = e
                .labels
                .iter()
                .find(|&&l| usize::try_from(l).is_ok_and(|l| l >= vocab))
            {
                return Err(DataError::OutOfVocab {
                    id: e.id,
                    value: label,
                    vocab,
                });
            }
        }
        Ok(Dataset {
            examples: examples.into(),
            vocab,
        })
    }

    /// All examples, in id order.
    pub fn examples(&self) -> &[Sequence] {
        &self.examples
    }

    /// Number of examples.
    pub fn len(&self) -> usize {
        self.examples.len()
    }

    /// Whether the data set is empty.
    pub fn is_empty(&self) -> bool {
        self.examples.is_empty()
    }

    /// Vocabulary size.
    pub fn vocab(&self) -> usize {
        self.vocab
    }

    /// Longest example, in tokens.
    pub fn max_len(&self) -> usize {
        self.examples
            .iter()
            .map(|e| e.tokens.len())
            .max()
            .unwrap_or(0)
    }

    /// Supervised tokens of the whole data set.
    pub fn supervised_tokens(&self, ignore_index: i64) -> u64 {
        self.examples
            .iter()
            .map(|e| e.labels.iter().filter(|&&l| l != ignore_index).count() as u64)
            .sum()
    }
}

/// The examples of one microbatch, packed: positions of all examples one
/// after the other, no padding (padding is not work).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PackedMicrobatch {
    /// Example ids, in batch order.
    pub ids: Vec<u64>,
    /// Input tokens of all examples, concatenated.
    pub tokens: Vec<u32>,
    /// Labels of all examples, concatenated (may hold the ignore index).
    pub labels: Vec<i64>,
    /// Example `i` spans `offsets[i]..offsets[i + 1]` of `tokens` and `labels`.
    pub offsets: Vec<usize>,
}

impl PackedMicrobatch {
    /// Empties the batch, keeping its buffers.
    pub fn clear(&mut self) {
        self.ids.clear();
        self.tokens.clear();
        self.labels.clear();
        self.offsets.clear();
    }

    /// Appends one example.
    pub fn push(&mut self, example: &Sequence) {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        self.ids.push(example.id);
        self.tokens.extend_from_slice(&example.tokens);
        self.labels.extend_from_slice(&example.labels);
        self.offsets.push(self.tokens.len());
    }

    /// A batch of the given examples.
    pub fn of<'a>(examples: impl IntoIterator<Item = &'a Sequence>) -> PackedMicrobatch {
        let mut batch = PackedMicrobatch::default();
        for e in examples {
            batch.push(e);
        }
        batch
    }

    /// Examples in the batch.
    pub fn examples(&self) -> usize {
        self.ids.len()
    }

    /// Positions (real, unpadded) in the batch.
    pub fn positions(&self) -> usize {
        self.tokens.len()
    }

    /// The positions of example `i` in the batch, as a range.
    pub fn positions_of(&self, i: usize) -> Range<usize> {
        self.offsets[i]..self.offsets[i + 1]
    }

    /// Supervised tokens: positions whose label is not `ignore_index` (`accum::run::normalization`).
    pub fn supervised(&self, ignore_index: i64) -> u64 {
        self.labels.iter().filter(|&&l| l != ignore_index).count() as u64
    }

    /// Examples with at least one supervised token (what `per_example`
    /// normalization counts; an example with none contributes nothing).
    pub fn supervised_examples(&self, ignore_index: i64) -> u64 {
        (0..self.examples())
            .filter(|&i| {
                self.labels[self.positions_of(i)]
                    .iter()
                    .any(|&l| l != ignore_index)
            })
            .count() as u64
    }

    /// The padded `[m_i, L_i]` token ids (padding 0) and labels (padding and
    /// ignored positions = `ignore_index`), as docs/dump-format.md specifies.
    pub fn padded(&self, ignore_index: i64) -> (Array2<i64>, Array2<i64>) {
        let rows = self.examples();
        let cols = (0..rows)
            .map(|i| self.positions_of(i).len())
            .max()
            .unwrap_or(0);
        let mut tokens = Array2::<i64>::zeros((rows, cols));
        let mut labels = Array2::<i64>::from_elem((rows, cols), ignore_index);
        for i in 0..rows {
            for (j, p) in self.positions_of(i).enumerate() {
                tokens[[i, j]] = i64::from(self.tokens[p]);
                labels[[i, j]] = self.labels[p];
            }
        }
        (tokens, labels)
    }
}

/// The same example was given to two replicas in one epoch (`accum::run::data-parallel`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OverlapError {
    /// The example id.
    pub id: u64,
    /// The first replica that had it.
    pub first: usize,
    /// The replica that had it again.
    pub second: usize,
}

impl fmt::Display for OverlapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "example {} reached replica {} and replica {} in one epoch; shards must be disjoint, \
             the same examples on every replica add no information: shard by replica rank",
            self.id, self.first, self.second
        )
    }
}

impl std::error::Error for OverlapError {}

/// Tracks which replica processed each example id within an epoch: the
/// driver's tests check their walks with it.
#[cfg(test)]
#[derive(Clone, Debug, Default)]
pub(crate) struct ShardCheck {
    seen: std::collections::HashMap<u64, usize>,
}

#[cfg(test)]
impl ShardCheck {
    /// Starts a new epoch.
    pub(crate) fn reset(&mut self) {
        self.seen.clear();
    }

    /// Records that `replica` processed `id`; an id on a second replica is
    /// an [`OverlapError`]. (The same replica seeing an id twice in one epoch
    /// is allowed here; the epoch order never does it.)
    pub(crate) fn record(&mut self, id: u64, replica: usize) -> Result<(), OverlapError> {
        match self.seen.insert(id, replica) {
            Some(first) if first != replica => Err(OverlapError {
                id,
                first,
                second: replica,
            }),
            _ => Ok(()),
        }
    }
}

// `?` in `main` prints the sentence, not the fields.
crate::code::debug_as_display!(DataError);

#[cfg(test)]
mod tests {
    use super::*;

    fn section() -> DataSection {
        DataSection {
            examples: 50,
            min_len: 3,
            max_len: 9,
            vocab: 16,
            seed: 42,
            ..DataSection::default()
        }
    }

    #[test]
    fn synthetic_data_is_seeded_and_within_bounds() {
        let a = Dataset::synthetic(&section());
        let b = Dataset::synthetic(&section());
        assert_eq!(a, b);
        let c = Dataset::synthetic(&DataSection {
            seed: 43,
            ..section()
        });
        assert_ne!(a, c);
        assert_eq!(a.len(), 50);
        let mut lengths = std::collections::BTreeSet::new();
        for (i, e) in a.examples().iter().enumerate() {
            assert_eq!(e.id, i as u64);
            assert!((3..=9).contains(&e.tokens.len()));
            assert_eq!(e.tokens.len(), e.labels.len());
            assert!(e.tokens.iter().all(|&t| t < 16));
            // Labels are the next tokens.
            for k in 1..e.tokens.len() {
                assert_eq!(e.labels[k - 1], i64::from(e.tokens[k]));
            }
            lengths.insert(e.tokens.len());
        }
        assert!(lengths.len() > 3, "lengths vary: {lengths:?}");
    }

    #[test]
    fn batch_packs_and_pads() {
        let data = Dataset::synthetic(&section());
        let mut batch = PackedMicrobatch::of(&data.examples()[..3]);
        batch.labels[0] = -100;
        let lens: Vec<usize> = (0..3).map(|i| batch.positions_of(i).len()).collect();
        assert_eq!(batch.positions(), lens.iter().sum::<usize>());
        assert_eq!(batch.supervised(-100), batch.positions() as u64 - 1);
        let (tokens, labels) = batch.padded(-100);
        let cols = *lens.iter().max().unwrap();
        assert_eq!(tokens.dim(), (3, cols));
        assert_eq!(labels[[0, 0]], -100);
        for (i, &len) in lens.iter().enumerate() {
            for j in len..cols {
                assert_eq!(tokens[[i, j]], 0);
                assert_eq!(labels[[i, j]], -100);
            }
        }
        batch.clear();
        assert_eq!((batch.examples(), batch.positions()), (0, 0));
    }

    #[test]
    fn shard_check_names_the_example_on_two_replicas() {
        let mut check = ShardCheck::default();
        check.record(0, 0).unwrap();
        check.record(1, 0).unwrap();
        check.record(0, 0).unwrap(); // the same replica again is allowed
        let err = check.record(1, 1).unwrap_err();
        assert_eq!(
            (err.id, err.first, err.second),
            (1, 0, 1),
            "example 1 on both replicas"
        );
        assert!(err.to_string().contains("shard by replica rank"), "{err}");
        check.reset();
        assert_eq!(check.record(1, 1), Ok(()), "a new epoch starts clean");
    }

    #[test]
    fn user_examples_are_checked() {
        let ex = |id, tokens: Vec<u32>, labels: Vec<i64>| Sequence { id, tokens, labels };
        let ok = Dataset::from_examples(vec![ex(0, vec![1, 2], vec![2, -100])], 4).unwrap();
        assert_eq!(ok.len(), 1);
        let dup = Dataset::from_examples(vec![ex(0, vec![1], vec![2]), ex(0, vec![1], vec![2])], 4);
        assert_eq!(dup, Err(DataError::DuplicateId { id: 0 }));
        let len = Dataset::from_examples(vec![ex(3, vec![1, 2], vec![2])], 4).unwrap_err();
        assert!(len.to_string().contains("2 tokens but 1 labels"), "{len}");
        let tok = Dataset::from_examples(vec![ex(1, vec![9], vec![2])], 4).unwrap_err();
        assert_eq!(
            tok,
            DataError::OutOfVocab {
                id: 1,
                value: 9,
                vocab: 4
            }
        );
        let lab = Dataset::from_examples(vec![ex(1, vec![0], vec![4])], 4).unwrap_err();
        assert!(
            lab.to_string()
                .contains("holds 4, not below the vocabulary size 4"),
            "{lab}"
        );
    }
}
