//! What `accum run`'s progress bar says, like cargo's: how far (updates,
//! digit-grouped, and a percentage), how long is left, and the numbers of
//! the last update a person watches: loss, learning rate, gradient norm,
//! throughput, and the loss scale where there is one (fp16).

use accum_core::group_digits;
use accum_core::report::{Counters, UpdateStats};

/// The bar's template: `[=====>    ] 1,234/3,000 updates (41%)  2s elapsed,
/// 6s left  {msg}`. The message is indicatif's `wide_msg`: cut to what is
/// left of the terminal's width, so that the line is redrawn in place and
/// never wraps, at 80 columns as at 200.
pub(crate) const TEMPLATE: &str = "{bar:20} {human_pos}/{human_len} updates ({percent}%)  {elapsed} elapsed, {eta} left  {wide_msg}";

/// A rate, digit-grouped and whole (`12,345`).
pub(super) fn per_second(count: u64, secs: f64) -> String {
    #[allow(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss
    )]
    let rate = (count as f64 / secs.max(1e-9)).round() as u64;
    group_digits(rate)
}

/// The message after the bar for the last update: `loss 1.2345  lr 3.00e-3
/// grad norm 0.7436  1,234 ex/s  45,678 tok/s`, with `scale 65,536` when
/// the loss is scaled (fp16) and the skipped updates when there are some.
pub(crate) fn message(
    stats: &UpdateStats,
    counters: &Counters,
    secs: f64,
    loss_scaled: bool,
) -> String {
    let mut out = format!(
        "loss {:.4}  lr {:.2e}  grad norm {:.4}  {} ex/s  {} tok/s",
        stats.loss,
        stats.lr,
        stats.grad_norm,
        per_second(counters.examples.get(), secs),
        per_second(counters.supervised_tokens.get(), secs),
    );
    if loss_scaled {
        out.push_str(&format!("  scale {}", scale(stats.loss_scale)));
    }
    if counters.skipped_updates > 0 {
        out.push_str(&format!(
            "  skipped {}",
            group_digits(counters.skipped_updates)
        ));
    }
    out
}

/// A loss scale: whole powers of two digit-grouped (`65,536`), others as
/// they are.
fn scale(value: f64) -> String {
    if value.fract() == 0.0 && (1.0..1e18).contains(&value) {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        return group_digits(value as u64);
    }
    format!("{value}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(loss_scale: f64) -> UpdateStats {
        UpdateStats {
            attempt: 1,
            epoch: 0,
            stage: 0,
            applied: true,
            updates: accum_core::Updates::new(1),
            loss: 1.23456,
            denominator: 100.0,
            examples: accum_core::Examples::new(64),
            tokens: accum_core::Tokens::new(2_000),
            microbatches: accum_core::Microbatches::new(4),
            partial: false,
            lr: 0.003,
            grad_norm: 0.74363,
            clipped: false,
            loss_scale,
        }
    }

    fn counters(skipped: u64) -> Counters {
        Counters {
            examples: accum_core::Examples::new(123_456),
            supervised_tokens: accum_core::Tokens::new(4_567_890),
            skipped_updates: skipped,
            ..Counters::default()
        }
    }

    #[test]
    fn fp32_shows_no_scale_and_groups_its_digits() {
        assert_eq!(
            message(&stats(1.0), &counters(0), 10.0, false),
            "loss 1.2346  lr 3.00e-3  grad norm 0.7436  12,346 ex/s  456,789 tok/s"
        );
    }

    #[test]
    fn fp16_shows_its_scale_and_skipped_updates() {
        assert_eq!(
            message(&stats(65536.0), &counters(13), 1.0, true),
            "loss 1.2346  lr 3.00e-3  grad norm 0.7436  123,456 ex/s  4,567,890 tok/s  scale 65,536  skipped 13"
        );
        assert_eq!(scale(0.5), "0.5");
    }
}
