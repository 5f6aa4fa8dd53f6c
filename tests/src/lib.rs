//! End-to-end tests live in `tests/`. The library holds what they share with the
//! `generalisation` command: clip variants ([`variants`]) and a deterministic random
//! number generator.

pub mod variants;

/// Deterministic pseudo-random numbers in [0, 1) (xorshift: no dependency, the same
/// numbers on every run and machine).
pub struct Rng(pub u64);

impl Rng {
    /// The next number (an endless stream: not an `Iterator`, whose `next` returns an
    /// `Option`).
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The Hamilton product `a · b` of quaternions `[x, y, z, w]`.
pub fn quat_mul(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
    let [ax, ay, az, aw] = a;
    let [bx, by, bz, bw] = b;
    [
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ]
}
