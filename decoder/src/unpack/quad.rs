//! Animated sub-tracks four at a time (4.0, `format-spec/segments.md`, Quads): a
//! quad's lanes keep their own bit rates, and each component of the four is read
//! together, as one vector ("structure of arrays": lane `j` is sub-track
//! `first + j`). Every value goes through the lane-wise arithmetic of
//! [`crate::unpack::values`] in the order the spec writes it, so a lane gives the
//! bits a single sub-track decoded alone gives.

use crate::format::bytes::{bits_from, u32_at, u64_at_or_zero};
use crate::format::QUAD_LANES;
use crate::simd::Lanes;
use crate::unpack::values::{BYTE_SCALE, RECIPROCALS, WORD_SCALE};

/// The bits one 8-byte load guarantees from any bit position.
const ONE_LOAD_BITS: u32 = 57;

/// A lane's field mask by bit rate, 0 to 32: `2^rate − 1`, every bit for a raw lane.
// Evaluated at compile time: an index out of range or an overflow would fail the
// build, not panic.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
const FIELD_MASKS: [u32; 33] = {
    let mut t = [0u32; 33];
    let mut r = 1;
    while r <= 32 {
        t[r] = u32::MAX >> (32 - r);
        r += 1;
    }
    t
};

/// A lane's scale by bit rate, 0 to 32, as bits: [`RECIPROCALS`] for the quantised
/// rates, 0 for the others (whose values are replaced).
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
const SCALE_BITS: [u32; 33] = {
    let mut t = [0u32; 33];
    let mut r = 1;
    while r <= 24 {
        t[r] = RECIPROCALS[r].to_bits();
        r += 1;
    }
    t
};

/// A quad's bit rates in one segment, and what reading its lanes needs of them:
/// looked up once per quad and segment (and shared by both key frames when they lie
/// in the same segment).
#[derive(Clone, Copy)]
pub(crate) struct QuadRates<V: Lanes> {
    /// Each lane's first bit in a component's run: the rates of the lanes before it.
    places: [u32; 4],
    /// Each lane's `2^rate − 1` (all ones for raw lanes, 0 for rate 0 and for the
    /// lanes past the quad's last), as bits.
    masks: V,
    /// The bits of one component of the quad: the sum of the rates.
    pub width: u32,
    /// [`RECIPROCALS`] of each lane's rate.
    scale: V,
    /// All ones in the lanes of rate 0 (constant in the segment), if any.
    flat: Option<V>,
    /// All ones in the lanes of rate 32 (raw `f32`), if any.
    raw: Option<V>,
}

impl<V: Lanes> QuadRates<V> {
    /// The rates of the `lanes` (1 to 4) sub-tracks whose bit rates start at byte `at`
    /// of `bytes`.
    #[inline(always)]
    pub(crate) fn new(bytes: &[u8], at: usize, lanes: usize) -> Self {
        // Four rate bytes in one load; the lanes past the quad's last read as 0.
        let word = match u32_at(bytes, at) {
            Some(w) => w,
            None => rates_at_end(bytes, at),
        };
        // The bytes of the quad's lanes; the lanes past its last read as rate 0.
        let live =
            if lanes == 0 { 0 } else { u32::MAX >> (QUAD_LANES.saturating_sub(lanes).min(3).wrapping_mul(8) & 31) };
        let word = word & live;
        let [r0, r1, r2, r3] = word.to_le_bytes().map(usize::from);
        // Byte `k` of the product is the sum of bytes `0 .. k`: the rates are at most
        // 32, so no sum carries into the next byte.
        let places = word.wrapping_mul(0x0101_0100).to_le_bytes().map(u32::from);
        let width = word.wrapping_mul(0x0101_0101) >> 24;
        let table = |t: &[u32; 33], r: usize| t.get(r).copied().unwrap_or(0);
        let scale = V::from_bits([r0, r1, r2, r3].map(|r| table(&SCALE_BITS, r)));
        let masks = V::from_bits([r0, r1, r2, r3].map(|r| table(&FIELD_MASKS, r)));
        // Whether a live lane has rate 0, or rate 32 (bit 7 of each byte where it is
        // zero: exact for the lowest such byte, and a byte above one is live too).
        let zero_bytes = |w: u32| w.wrapping_sub(0x0101_0101) & !w & 0x8080_8080 & live;
        let rates = V::from_bytes(word);
        let flat = (zero_bytes(word) != 0).then(|| rates.lt(V::splat(0.5)));
        let raw = (zero_bytes(word ^ 0x2020_2020) != 0).then(|| rates.gt(V::splat(31.5)));
        QuadRates { places, masks, width, scale, flat, raw }
    }

    /// The stored integers of component `m` of the four lanes at the key frame whose
    /// quad starts at bit `bit` of `samples`, as bit patterns (raw lanes: the `f32`
    /// bits; rate-0 lanes and lanes past the quad's last: 0). One 8-byte load serves
    /// the four while their bits fit in the 57 it guarantees.
    #[inline(always)]
    pub(crate) fn integers(&self, samples: &[u8], bit: u64, m: u32) -> V {
        let start = bit.wrapping_add(u64::from(m.wrapping_mul(self.width)));
        if self.width <= ONE_LOAD_BITS {
            V::fields(bits_from(samples, start), self.places, self.masks)
        } else {
            self.integers_apart(samples, start)
        }
    }

    /// [`QuadRates::integers`] of a component whose bits do not fit in one load: a
    /// load per lane (rates above 14 in every lane, or raw lanes).
    #[inline(never)]
    fn integers_apart(&self, samples: &[u8], start: u64) -> V {
        let masks = self.masks.to_array().map(f32::to_bits);
        V::from_bits(core::array::from_fn(|j| {
            let place = self.places.get(j).copied().unwrap_or(0);
            bits_from(samples, start.wrapping_add(u64::from(place))) as u32 & masks.get(j).copied().unwrap_or(0)
        }))
    }

    /// The value of component `m` of the quad's rate-0 lanes (constant in the
    /// segment), with the mask of those lanes, if it has any: the same at every key
    /// frame of the segment, so computed once for both keys when they share it.
    #[inline(always)]
    pub(crate) fn flat(&self, segment: Option<&QuadSegment<V>>, min: V, extent: V) -> Option<(V, V)> {
        self.flat.map(|mask| {
            let n = match segment {
                Some(s) => s.lo.add(s.hi.mul(V::splat(256.0))).mul(V::splat(WORD_SCALE)),
                None => V::splat(0.0),
            };
            (mask, n.mul(extent).add(min))
        })
    }

    /// The values of component `m` of the four lanes at the key frame whose quad
    /// starts at bit `bit` of `samples`: each lane's integer through the segment range
    /// (`None` in a single-segment clip) and the clip range `min`, `extent`
    /// (format-spec/decoding.md); the rate-0 lanes take `flat` ([`QuadRates::flat`]).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn component(
        &self,
        samples: &[u8],
        bit: u64,
        m: u32,
        segment: Option<&QuadSegment<V>>,
        min: V,
        extent: V,
        flat: Option<(V, V)>,
    ) -> V {
        let q = self.integers(samples, bit, m);
        // Raw lanes hold more than 24 bits: their conversion is inexact, and replaced.
        let n = q.integers_to_floats().mul(self.scale);
        let n = match segment {
            Some(s) => n.mul(s.hi_scaled).add(s.lo_scaled),
            None => n,
        };
        let mut v = n.mul(extent).add(min);
        if let Some((mask, value)) = flat {
            v = V::select(mask, value, v);
        }
        if let Some(raw) = self.raw {
            v = V::select(raw, q, v);
        }
        v
    }
}

/// The rate bytes at `at` when fewer than four follow in the buffer (zero past it).
#[cold]
#[inline(never)]
fn rates_at_end(bytes: &[u8], at: usize) -> u32 {
    let byte = |k: usize| u32::from(bytes.get(at.wrapping_add(k)).copied().unwrap_or(0));
    byte(0) | byte(1) << 8 | byte(2) << 16 | byte(3) << 24
}

/// One component's segment range bytes of a quad's four lanes, `lo` and `hi`, and
/// the forms the quantised lanes use, `lo · K8` and `hi · K8`.
#[derive(Clone, Copy)]
pub(crate) struct QuadSegment<V: Lanes> {
    lo: V,
    hi: V,
    lo_scaled: V,
    hi_scaled: V,
}

impl<V: Lanes> QuadSegment<V> {
    /// Component `m` of a quad of `lanes` lanes and `c` components whose segment
    /// range bytes start at byte `at` of `bytes`: the lanes' `lo[m]` at
    /// `at + m·lanes`, their `hi[m]` at `at + (c + m)·lanes`.
    #[inline(always)]
    pub(crate) fn new(bytes: &[u8], at: usize, lanes: usize, c: usize, m: usize) -> Self {
        let word = |from: usize| match u32_at(bytes, from) {
            Some(w) => w,
            None => rates_at_end(bytes, from),
        };
        let lo = V::from_bytes(word(at.wrapping_add(m.wrapping_mul(lanes))));
        let hi = V::from_bytes(word(at.wrapping_add(c.wrapping_add(m).wrapping_mul(lanes))));
        let scale = V::splat(BYTE_SCALE);
        QuadSegment { lo, hi, lo_scaled: lo.mul(scale), hi_scaled: hi.mul(scale) }
    }
}

/// The 16-bit integers of four lanes at byte `at` of `bytes` (zero past the end), as
/// `f32` lanes: a component's clip-range minimums or extents in a quad.
#[inline(always)]
pub(crate) fn halves<V: Lanes>(bytes: &[u8], at: usize) -> V {
    V::from_halves(u64_at_or_zero(bytes, at))
}
