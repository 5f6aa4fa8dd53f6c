//! The decoding arithmetic of `format-spec/decoding.md`, written once over the
//! [`Lanes`] API so that every backend runs the same operations in the same order.
//!
//! A sub-track value travels in one four-lane vector: `x, y, z` (and `w` for
//! rotations), unused lanes zero. Rotations are finished four at a time, transposed
//! to one vector per component ("structure of arrays"), so rebuilding `w`, the
//! shorter-arc test, interpolation and normalisation are plain lane-wise operations
//! in the order the spec writes them.

use crate::bytes::bits_from;
use crate::format::RAW_BITS;
use crate::simd::Lanes;

/// The `C` little-endian `f32` at the start of `b` (at least `4·C` bytes; lanes
/// past `C` zero). One 16-byte load when `b` has sixteen bytes.
#[inline(always)]
pub(crate) fn floats<V: Lanes, const C: usize>(b: &[u8]) -> V {
    let v = match b.first_chunk::<16>() {
        Some(chunk) if C == 4 => Some(V::from_le_bytes(chunk)),
        Some(chunk) => Some(V::from_le_bytes(chunk).and(V::from_bits([u32::MAX, u32::MAX, u32::MAX, 0]))),
        None if C == 4 => None,
        None => b.first_chunk::<12>().map(V::from_le_bytes12),
    };
    v.unwrap_or(V::splat(0.0))
}

/// The segment-range bytes of a sub-track of `C` components at the start of `b`:
/// `C` bytes `lo`, then as many `hi`, as two little-endian words (bytes past `C`
/// zero). One 8-byte load when `b` has eight bytes.
#[inline(always)]
pub(crate) fn range_words<const C: usize>(b: &[u8]) -> (u32, u32) {
    let word = match b.first_chunk::<8>() {
        Some(w) => u64::from_le_bytes(*w),
        None => match b.first_chunk::<6>() {
            Some(&[l0, l1, l2, h0, h1, h2]) if C == 3 => u64::from_le_bytes([l0, l1, l2, h0, h1, h2, 0, 0]),
            _ => 0,
        },
    };
    if C == 4 {
        (word as u32, (word >> 32) as u32)
    } else {
        ((word & 0x00ff_ffff) as u32, ((word >> 24) & 0x00ff_ffff) as u32)
    }
}

/// `2^b − 1` for `b` bits, by `b & 31` (a table: one load instead of a shift, a
/// conversion and a broadcast per key).
// Evaluated at compile time: an index out of range would fail the build, not panic.
#[allow(clippy::indexing_slicing)]
const MASKS: [u32; 32] = {
    let mut t = [0u32; 32];
    let mut b = 0;
    while b < 32 {
        t[b] = (1u32 << b).wrapping_sub(1);
        b += 1;
    }
    t
};

/// [`MASKS`] as `f32` (exact up to 24 bits, the widest quantised rate).
#[allow(clippy::indexing_slicing)]
pub(crate) const MAXIMA: [f32; 32] = {
    let mut t = [0.0f32; 32];
    let mut b = 0;
    while b < 32 {
        t[b] = MASKS[b] as f32;
        b += 1;
    }
    t
};

/// The `C` unsigned integers of `bits` bits (1 to 24) each, packed from bit `bit` on.
/// One 8-byte load serves all of them when they fit in the 57 bits it guarantees.
#[inline(always)]
fn quantized<const C: usize>(bytes: &[u8], bit: u64, bits: u8) -> [u32; 4] {
    let b = u32::from(bits & 31);
    let mask = u64::from(MASKS.get((bits & 31) as usize).copied().unwrap_or(0));
    let mut q = [0u32; 4];
    if (C as u32).wrapping_mul(b) <= 57 {
        let word = bits_from(bytes, bit);
        for (c, v) in q.iter_mut().enumerate().take(C) {
            *v = (word.wrapping_shr((c as u32).wrapping_mul(b)) & mask) as u32;
        }
    } else {
        for (c, v) in q.iter_mut().enumerate().take(C) {
            *v = (bits_from(bytes, bit.wrapping_add(u64::from((c as u32).wrapping_mul(b)))) & mask) as u32;
        }
    }
    q
}

/// The stored components of an animated sub-track of `C` components at one key
/// frame: `bits` per component from bit `bit` on, the segment range bytes `lo`, `hi`
/// (see [`range_words`]; `None` in a single-segment clip), then the clip range
/// `min`, `extent`.
#[inline(always)]
pub(crate) fn key_value<V: Lanes, const C: usize>(
    bytes: &[u8],
    bits: u8,
    bit: u64,
    segment_range: Option<(u32, u32)>,
    min: V,
    extent: V,
) -> V {
    if bits == RAW_BITS {
        let mut q = [0u32; 4];
        for (c, v) in q.iter_mut().enumerate().take(C) {
            *v = bits_from(bytes, bit.wrapping_add((c as u64) << 5)) as u32;
        }
        return V::from_bits(q);
    }
    let segment = || segment_range.map(|(lo, hi)| (V::from_bytes(lo), V::from_bytes(hi)));
    if bits == 0 {
        flat(segment(), min, extent)
    } else {
        // 1 ≤ bits ≤ 24: the divisor and the integers are exact in f32.
        let max = MAXIMA.get((bits & 31) as usize).copied().unwrap_or(1.0);
        let q = V::from_u32(quantized::<C>(bytes, bit, bits));
        dequantize(q, V::splat(max), segment(), min, extent)
    }
}

/// The value of quantised components, lane by lane: `q / max` (`max` = 2^b − 1),
/// then the segment range `lo`, `hi` (bytes 0 to 255, `None` in a single-segment
/// clip): `n · (hi / 255) + lo / 255`, then the clip range: `n · extent + min`.
#[inline(always)]
pub(crate) fn dequantize<V: Lanes>(q: V, max: V, segment: Option<(V, V)>, min: V, extent: V) -> V {
    let n = q.div(max);
    let n = match segment {
        Some((lo, hi)) => {
            let scale = V::splat(255.0);
            n.mul(hi.div(scale)).add(lo.div(scale))
        }
        None => n,
    };
    n.mul(extent).add(min)
}

/// The value of components of bit rate 0, lane by lane: the segment's constant, the
/// `u16` `lo + 256 · hi` over 65535 (0 in a single-segment clip), then the clip range.
#[inline(always)]
pub(crate) fn flat<V: Lanes>(segment: Option<(V, V)>, min: V, extent: V) -> V {
    let n = match segment {
        Some((lo, hi)) => lo.add(hi.mul(V::splat(256.0))).div(V::splat(65535.0)),
        None => V::splat(0.0),
    };
    n.mul(extent).add(min)
}

/// Up to four rotations being finished together.
pub(crate) struct Rotations<V: Lanes> {
    /// Key 0 and key 1 of each, `x, y, z, w` (w zero when it is to be rebuilt).
    keys: [[V; 4]; 2],
    /// The bone each belongs to.
    pub bones: [usize; 4],
    /// How many of the four are in use.
    pub len: usize,
}

impl<V: Lanes> Rotations<V> {
    pub(crate) fn new() -> Self {
        Rotations { keys: [[V::splat(0.0); 4]; 2], bones: [0; 4], len: 0 }
    }

    /// Adds a rotation; true when the batch is full.
    #[inline(always)]
    pub(crate) fn push(&mut self, bone: usize, q0: V, q1: V) -> bool {
        let [k0, k1] = &mut self.keys;
        if let (Some(a), Some(b), Some(slot)) =
            (k0.get_mut(self.len), k1.get_mut(self.len), self.bones.get_mut(self.len))
        {
            *a = q0;
            *b = q1;
            *slot = bone;
            self.len = self.len.wrapping_add(1);
        }
        self.len >= 4
    }

    /// The finished rotations (in the order pushed; lanes past `len` are meaningless):
    /// see [`finish_rotations`].
    #[inline(always)]
    pub(crate) fn finish(&mut self, rebuild: bool, alpha: f32) -> [V; 4] {
        self.len = 0;
        let [k0, k1] = self.keys;
        V::transpose(finish_rotations(rebuild, V::transpose(k0), V::transpose(k1), alpha))
    }
}

/// Rotations finished lane by lane, given as one vector per component (`x`, `y`,
/// `z`, `w` of key 0 in `k0`, of key 1 in `k1`): `w` rebuilt when `rebuild` (the
/// given `w` is then ignored), key 1 negated where the dot product is negative,
/// interpolated by `alpha` (key 0 alone when it is 0), normalised. Returned in the
/// same layout.
#[inline(always)]
pub(crate) fn finish_rotations<V: Lanes>(rebuild: bool, k0: [V; 4], k1: [V; 4], alpha: f32) -> [V; 4] {
    let [x0, y0, z0, w0] = k0;
    let w0 = if rebuild { rebuild_w(x0, y0, z0) } else { w0 };
    let (x, y, z, w) = if alpha == 0.0 {
        (x0, y0, z0, w0)
    } else {
        let [x1, y1, z1, w1] = k1;
        let w1 = if rebuild { rebuild_w(x1, y1, z1) } else { w1 };
        // Shorter arc: key 1's sign bits flipped where the dot product is negative.
        let dot = x0.mul(x1).add(y0.mul(y1)).add(z0.mul(z1)).add(w0.mul(w1));
        let flip = dot.lt(V::splat(0.0)).and(V::splat(-0.0));
        let a = V::splat(alpha);
        let lerp = |v0: V, v1: V| v0.add(v1.xor(flip).sub(v0).mul(a));
        (lerp(x0, x1), lerp(y0, y1), lerp(z0, z1), lerp(w0, w1))
    };
    // Normalise: multiply by 1 / sqrt(d) where d is positive and finite, else the
    // identity.
    let d = x.mul(x).add(y.mul(y)).add(z.mul(z)).add(w.mul(w));
    let ok = d.gt(V::splat(0.0)).and(d.lt(V::splat(f32::INFINITY)));
    let inv = V::splat(1.0).div(d.sqrt());
    let zero = V::splat(0.0);
    [
        V::select(ok, x.mul(inv), zero),
        V::select(ok, y.mul(inv), zero),
        V::select(ok, z.mul(inv), zero),
        V::select(ok, w.mul(inv), V::splat(1.0)),
    ]
}

/// `w = sqrt(1 − ((x·x + y·y) + z·z))` where that argument is positive, else 0.
#[inline(always)]
pub(crate) fn rebuild_w<V: Lanes>(x: V, y: V, z: V) -> V {
    let t = V::splat(1.0).sub(x.mul(x).add(y.mul(y)).add(z.mul(z)));
    t.sqrt().and(t.gt(V::splat(0.0)))
}

/// `v0 + (v1 − v0) · α`, lane by lane.
#[inline(always)]
pub(crate) fn lerp<V: Lanes>(v0: V, v1: V, alpha: f32) -> V {
    v0.add(v1.sub(v0).mul(V::splat(alpha)))
}
