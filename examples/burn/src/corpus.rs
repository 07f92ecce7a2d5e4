//! The examples: the lines of the text examples/candle ships, as character
//! ids, and each one's supervised tokens.

/// Leading positions of each example whose labels are not supervised (a
/// "prompt"): they weigh 0, like padding.
pub const PROMPT: usize = 2;

/// The text the model learns: the corpus of examples/candle, one short
/// sentence per line, of different lengths.
pub const CORPUS: &str = include_str!("../../candle/data/corpus.txt");

/// The examples, one per line of the corpus, as character ids.
#[derive(Clone, Debug)]
pub struct Corpus {
    /// Each example's character ids (inputs are `[..n-1]`, labels `[1..]`).
    pub examples: Vec<Vec<u32>>,
    /// Distinct characters.
    pub vocab: usize,
}

impl Corpus {
    /// Reads `text`: one example per non-empty line that does not start
    /// with `#`, at most `max_len + 1` characters.
    pub fn parse(text: &str, max_len: usize) -> Corpus {
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .collect();
        let mut chars: Vec<char> = lines.iter().flat_map(|l| l.chars()).collect();
        chars.sort_unstable();
        chars.dedup();
        let id = |c: char| {
            let at = chars
                .binary_search(&c)
                .expect("every character of the text is in its vocabulary");
            u32::try_from(at).expect("a vocabulary of characters fits in u32")
        };
        let examples = lines
            .iter()
            .map(|l| l.chars().take(max_len + 1).map(id).collect())
            .collect();
        Corpus {
            examples,
            vocab: chars.len(),
        }
    }

    /// The shipped corpus, examples of at most 48 positions.
    pub fn shipped() -> Corpus {
        Corpus::parse(CORPUS, 48)
    }

    /// Positions of example `id` (its characters less one: the last has no
    /// next character).
    pub fn positions(&self, id: usize) -> usize {
        self.examples[id].len().saturating_sub(1)
    }

    /// Supervised tokens of example `id`: its positions less the prompt.
    pub fn supervised(&self, id: usize) -> u64 {
        self.positions(id).saturating_sub(PROMPT) as u64
    }

    /// Supervised tokens of the examples `ids`.
    pub fn supervised_of(&self, ids: &[usize]) -> u64 {
        ids.iter().map(|&id| self.supervised(id)).sum()
    }
}
