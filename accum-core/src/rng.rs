//! The seedable generator of the data, the initial parameters and the
//! driver's epoch order: its own module so that the driver, which shuffles
//! without any tensor, has it without the `engine` feature.
#![cfg_attr(
    not(feature = "engine"),
    allow(unreachable_pub, reason = "public as `engine::Rng`")
)]

/// A small, fast, seedable generator (SplitMix64). Deterministic across
/// platforms, which keeps data and initial parameters reproducible.
#[derive(Clone, Debug)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator from a seed and a stream number (different streams of one
    /// seed are independent for practical purposes).
    pub fn new(seed: u64, stream: u64) -> Rng {
        let mut rng = Rng {
            state: seed ^ stream.wrapping_mul(0xA076_1D64_78BD_642F),
        };
        // Decorrelate nearby seeds.
        rng.next_u64();
        rng.next_u64();
        rng
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    #[cfg_attr(
        not(feature = "engine"),
        allow(dead_code, reason = "the engine's data and initial parameters")
    )]
    pub fn next_f64(&mut self) -> f64 {
        // 53 random mantissa bits.
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `0..n` (`n > 0`), without modulo bias worth noting for
    /// the sizes used here (multiply-shift).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// A standard normal sample (Box–Muller).
    #[cfg_attr(
        not(feature = "engine"),
        allow(dead_code, reason = "the engine's initial parameters")
    )]
    pub fn normal(&mut self) -> f64 {
        let u1 = self.next_f64().max(f64::MIN_POSITIVE);
        let u2 = self.next_f64();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    /// Shuffles `items` in place (Fisher–Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            items.swap(i, j);
        }
    }
}
