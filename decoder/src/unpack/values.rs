//! Stored values to numbers (`format-spec/decoding.md`, Values): raw `f32`s, 16-bit
//! integers on a grid, and packed samples dequantised through their segment and clip
//! ranges. Written once over the [`Lanes`] API so that every backend runs the same
//! operations in the same order; a sub-track value travels in one four-lane vector,
//! `x, y, z` (and `w` for rotations), unused lanes zero.

use crate::format::{ROTATION_BASE, ROTATION_STEP};
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

/// The `C` (3 or 4) little-endian `u16` at byte `at` of `bytes` as `f32` lanes (lanes
/// past `C` zero), with one 8-byte load that never reaches past them: for three, the
/// load starts two bytes before `at` and shifts them out (a section may start at
/// offset 0 of a crafted buffer: then the six bytes are read alone). Zero if the
/// integers are not inside `bytes`, which a validated clip never asks for.
#[inline(always)]
pub(crate) fn integers<V: Lanes, const C: usize>(bytes: &[u8], at: usize) -> V {
    let load = |from: usize| bytes.get(from..).and_then(|b| b.first_chunk::<8>()).map(|w| u64::from_le_bytes(*w));
    let word = if C == 4 {
        load(at).unwrap_or(0)
    } else {
        match at.checked_sub(2).and_then(load) {
            Some(word) => word >> 16,
            None => six_bytes(bytes, at),
        }
    };
    V::from_halves(word)
}

/// How to read a list's packed constants (4.1, format-spec/tracks.md): `C` integers
/// of `width` bits (even, 2 to 24) per constant, laid out like the animated
/// samples, by quads of four constants and by component, every component starting
/// on a byte. One 8-byte load and one field split read a component of a whole quad
/// up to 16 bits; wider ones take two loads, a pair of lanes each.
#[derive(Clone, Copy)]
pub(crate) struct PackedList<V: Lanes> {
    width: usize,
    mask: u32,
    /// `4 · width ≤ 64`: a full quad's component is one load.
    one_load: bool,
    places: V::Places,
    masks: V,
    /// For two loads: lanes 0 and 1 from the first, at places 0 and `width`, …
    low_places: V::Places,
    low_masks: V,
    /// … lanes 2 and 3 from the second, `2 · width` bits further, at the same places.
    high_places: V::Places,
    high_masks: V,
}

impl<V: Lanes> PackedList<V> {
    #[inline(always)]
    pub(crate) fn new(width: u8) -> Self {
        let w = u32::from(width);
        let mask = crate::format::field_mask(w);
        // Widths are at most 24 in a validated clip: places below 72, masked to 6 bits
        // (only used when below 64).
        let place = |j: u32| (j.wrapping_mul(w) & 63) as u8;
        PackedList {
            width: usize::from(width),
            mask,
            one_load: w <= 16,
            places: V::places(u32::from_le_bytes([place(0), place(1), place(2), place(3)])),
            masks: V::splat(f32::from_bits(mask)),
            low_places: V::places(u32::from_le_bytes([0, place(1), 0, 0])),
            low_masks: V::from_bits([mask, mask, 0, 0]),
            high_places: V::places(u32::from_le_bytes([0, 0, 0, place(1)])),
            high_masks: V::from_bits([0, 0, mask, mask]),
        }
    }

    /// Bytes of one component of a full quad (`4 · width / 8`, whole since the width
    /// is even): quad `g`'s component `m` starts `C·g + m` of these after the list's
    /// first byte.
    #[inline(always)]
    pub(crate) fn component_len(&self) -> usize {
        self.width >> 1
    }

    /// The component of a full quad whose first byte is `at` in `bytes`: its four
    /// integers, one per lane, as `f32`. Bytes past the end of `bytes` read as zero
    /// (never within a validated clip's section).
    #[inline(always)]
    pub(crate) fn quad_component(&self, bytes: &[u8], at: usize) -> V {
        let load = |byte: usize| crate::format::bytes::u64_at_or_zero(bytes, byte);
        if self.one_load {
            V::fields(load(at), self.places, self.masks).integers_to_floats()
        } else {
            // Lanes 2 and 3 start `2 · width` bits in: a whole byte or a half.
            let high_bit = self.width << 1;
            let high = load(at.wrapping_add(high_bit >> 3)) >> (high_bit & 7);
            let low = V::fields(load(at), self.low_places, self.low_masks);
            low.xor(V::fields(high, self.high_places, self.high_masks)).integers_to_floats()
        }
    }

    /// The `C` integers of constant `rank` among `count` of the list whose values
    /// start at byte `at`, as `f32` lanes (lanes past `C` zero).
    #[inline(always)]
    pub(crate) fn constant<const C: usize>(&self, bytes: &[u8], at: usize, rank: usize, count: usize) -> V {
        let (g, j) = (rank >> 2, rank & 3);
        // The quad's lanes: four, or what is left in the last quad. Its components
        // take `ceil(lanes · width / 8)` bytes each, full quads `width / 2`.
        let first = g << 2;
        let lanes = count.wrapping_sub(first).min(QUAD);
        let quad = at.wrapping_add(g.wrapping_mul(C).wrapping_mul(self.component_len()));
        let component = lanes.wrapping_mul(self.width).div_ceil(8);
        let lane = j.wrapping_mul(self.width);
        let field = |m: usize| {
            if m >= C {
                return 0;
            }
            let bit = (quad.wrapping_add(m.wrapping_mul(component)) << 3).wrapping_add(lane);
            (crate::format::bytes::u64_at_or_zero(bytes, bit >> 3) >> (bit & 7)) as u32 & self.mask
        };
        V::from_u32([field(0), field(1), field(2), field(3)])
    }
}

/// Lanes of a quad.
const QUAD: usize = crate::format::QUAD_LANES;

/// The six bytes at `at` (zero past the end), for [`integers`] at the very start of
/// a buffer: never on a path a valid clip from the reference encoder takes.
#[cold]
#[inline(never)]
fn six_bytes(bytes: &[u8], at: usize) -> u64 {
    match bytes.get(at..).and_then(|b| b.first_chunk::<6>()) {
        Some(&[a, b, c, d, e, f]) => u64::from_le_bytes([a, b, c, d, e, f, 0, 0]),
        None => 0,
    }
}

/// How the 16-bit integers of a list's constants or clip ranges decode (3.0,
/// format-spec/tracks.md): `q · step + base` lane by lane, lanes past the list's
/// components 0.
#[derive(Clone, Copy)]
pub(crate) struct Grid<V: Lanes> {
    pub step: V,
    pub base: V,
}

impl<V: Lanes> Grid<V> {
    /// The fixed grid of rotation components: `[-1, 1]` in 65535 steps.
    #[inline(always)]
    pub(crate) fn rotation<const C: usize>() -> Self {
        let (s, b) = (ROTATION_STEP, ROTATION_BASE);
        if C == 4 {
            Grid { step: V::splat(s), base: V::splat(b) }
        } else {
            let mask = V::from_bits([u32::MAX, u32::MAX, u32::MAX, 0]);
            Grid { step: V::splat(s).and(mask), base: V::splat(b).and(mask) }
        }
    }

    /// The rotation grid of constants packed on `width` bits (4.1): `[-1, 1]` in
    /// `2^width − 1` steps ([`crate::format::constant_width_step`]).
    #[inline(always)]
    pub(crate) fn rotation_packed<const C: usize>(width: u8) -> Self {
        let (s, b) = (V::splat(crate::format::constant_width_step(width)), V::splat(ROTATION_BASE));
        if C == 4 {
            Grid { step: s, base: b }
        } else {
            let mask = V::from_bits([u32::MAX, u32::MAX, u32::MAX, 0]);
            Grid { step: s.and(mask), base: b.and(mask) }
        }
    }

    /// The grid of list `list`: the rotation grid, or the stored [`crate::format::Grid`]
    /// at byte `at` of `bytes` (bases, then steps).
    #[inline(always)]
    pub(crate) fn of<const C: usize>(bytes: &[u8], rotation: bool, at: usize) -> Self {
        if rotation {
            Self::rotation::<C>()
        } else {
            let from = |at: usize| floats::<V, 3>(bytes.get(at..).unwrap_or(&[]));
            Grid { base: from(at), step: from(at.wrapping_add(12)) }
        }
    }

    /// The values of integers `q`: `q · step + base`.
    #[inline(always)]
    pub(crate) fn apply(&self, q: V) -> V {
        q.mul(self.step).add(self.base)
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

/// The nearest `f32` to `1 / (2^b − 1)` for `b` bits, by `b & 31` (4.0,
/// format-spec/decoding.md: a multiplication where 3.x divided). `2^b − 1` is exact
/// in `f32` up to 24 bits, the widest quantised rate, so one rounded division gives
/// the nearest value; `(2^b − 1) · R[b]` is exactly 1 for every `b` (tested), so the
/// largest integer still decodes to the top of its range. Entries 0 and 25 to 31
/// are never used for a quantised value.
#[allow(clippy::indexing_slicing)]
pub(crate) const RECIPROCALS: [f32; 32] = {
    let mut t = [0.0f32; 32];
    let mut b = 1;
    while b < 32 {
        t[b] = 1.0 / MASKS[b] as f32;
        b += 1;
    }
    t
};

/// The nearest `f32` to `1 / 255`: a segment range byte's scale (bits `0x3B808081`).
pub(crate) const BYTE_SCALE: f32 = 1.0 / 255.0;

/// The nearest `f32` to `1 / 65535`: the scale of a bit rate 0 component's 16-bit
/// segment value (bits `0x37800080`).
pub(crate) const WORD_SCALE: f32 = 1.0 / 65535.0;

/// A sub-track's segment range bytes `lo`, `hi` (0 to 255, one lane per component)
/// and the forms the quantised path uses, `lo · K8` and `hi · K8`: computed once
/// per sub-track and segment, and shared by both key frames when they lie in the
/// same segment.
#[derive(Clone, Copy)]
pub(crate) struct SegmentRange<V: Lanes> {
    lo: V,
    hi: V,
    lo_scaled: V,
    hi_scaled: V,
}

impl<V: Lanes> SegmentRange<V> {
    /// The range of lane values `lo`, `hi`.
    #[inline(always)]
    pub(crate) fn new(lo: V, hi: V) -> Self {
        let scale = V::splat(BYTE_SCALE);
        SegmentRange { lo, hi, lo_scaled: lo.mul(scale), hi_scaled: hi.mul(scale) }
    }

    /// A range given by its scaled forms alone, for [`dequantize`] (which reads
    /// nothing else): what a kept pose's plan keeps.
    #[inline(always)]
    pub(crate) fn scaled(lo_scaled: V, hi_scaled: V) -> Self {
        let zero = V::splat(0.0);
        SegmentRange { lo: zero, hi: zero, lo_scaled, hi_scaled }
    }

    /// The forms [`dequantize`] uses: `lo · K8`, `hi · K8`.
    #[inline(always)]
    pub(crate) fn scaled_parts(&self) -> (V, V) {
        (self.lo_scaled, self.hi_scaled)
    }

    /// The segment's constant for bit rate 0 (before the clip range): the `u16`
    /// `lo + 256 · hi` times [`WORD_SCALE`].
    #[inline(always)]
    pub(crate) fn constant(&self) -> V {
        self.lo.add(self.hi.mul(V::splat(256.0))).mul(V::splat(WORD_SCALE))
    }
}

/// The value of quantised components, lane by lane: `q · scale` (`scale` =
/// [`RECIPROCALS`]`[b]`), then the segment range `lo`, `hi` (bytes 0 to 255, `None`
/// in a single-segment clip): `n · (hi · K8) + lo · K8`, then the clip range:
/// `n · extent + min`.
#[inline(always)]
pub(crate) fn dequantize<V: Lanes>(q: V, scale: V, segment: Option<&SegmentRange<V>>, min: V, extent: V) -> V {
    let n = q.mul(scale);
    let n = match segment {
        Some(s) => n.mul(s.hi_scaled).add(s.lo_scaled),
        None => n,
    };
    n.mul(extent).add(min)
}

/// The value of components of bit rate 0, lane by lane: the segment's constant, the
/// `u16` `lo + 256 · hi` times [`WORD_SCALE`] (0 in a single-segment clip), then the
/// clip range.
#[inline(always)]
pub(crate) fn flat<V: Lanes>(segment: Option<&SegmentRange<V>>, min: V, extent: V) -> V {
    let n = match segment {
        Some(s) => s.constant(),
        None => V::splat(0.0),
    };
    n.mul(extent).add(min)
}

/// A three-component rotation's `w`: `w = sqrt(1 − ((x·x + y·y) + z·z))` where that argument is positive, else 0.
#[inline(always)]
pub(crate) fn rebuild_w<V: Lanes>(x: V, y: V, z: V) -> V {
    let t = V::splat(1.0).sub(x.mul(x).add(y.mul(y)).add(z.mul(z)));
    t.sqrt().and(t.gt(V::splat(0.0)))
}
