//! One sub-track (a bone's rotation, translation or scale) as the compressor sees
//! it: its class, stored form, clip range, and how it encodes at a bit rate within a
//! segment.

use ossa_decoder::format::{SubTrackClass, SubTrackKind, TrackList, MAX_SEGMENT_LEN, RAW_BITS};
use ossa_decoder::interpolation::{interpolate_rotation, interpolate_vector, normalize_rotation, weight_between};
use ossa_decoder::quantization::{decode_component, rotation_from_components, Dequantizer};

use super::frame_set::{all_kept, around};
use super::reference::Reference;
use super::values::Lane4;

/// The most samples a segment holds (the last one takes the remainder).
pub const MAX_SEGMENT_SAMPLES: usize = 2 * MAX_SEGMENT_LEN as usize - 1;

/// The bit rates a segment may give a sub-track, from cheapest to exact.
pub const LADDER: [u8; 26] =
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, RAW_BITS];

/// A sub-track and its encoding decisions.
#[derive(Clone, Debug)]
pub struct SubTrack {
    /// Rotation, translation or scale.
    pub kind: SubTrackKind,
    /// Owning bone.
    pub bone: usize,
    /// Default, constant or animated.
    pub class: SubTrackClass,
    /// Components stored: 4 for a full quaternion, else 3.
    pub components: u32,
    /// The value a constant sub-track decodes to (before a rotation is finished): its
    /// `f32` value, or the value of its integers when quantised.
    pub constant: [f32; 4],
    /// The constant's value before quantisation.
    pub constant_exact: [f32; 4],
    /// The constant's integers (of its list's width), when quantised
    /// ([`super::grid`]).
    pub constant_q: Option<[u32; 4]>,
    /// Clip range minimum per component (animated), as the decoder reads it.
    pub clip_min: [f32; 4],
    /// Clip range extent per component (animated), as the decoder reads it.
    pub clip_extent: [f32; 4],
    /// The smallest and largest stored value per component (animated).
    pub range_exact: [(f32, f32); 4],
    /// The clip range's 16-bit integers per component: minimum, extent.
    pub range_q: [(u16, u16); 4],
    /// When the range cannot be represented (values so large the extent overflows),
    /// only raw samples are allowed.
    pub raw_only: bool,
    /// Error caused by this sub-track's class alone (for promotion decisions).
    pub class_error: f64,
}

/// How an animated sub-track is encoded in one segment.
#[derive(Clone, Debug, PartialEq)]
pub struct SegmentCode {
    /// Bit rate (a [`LADDER`] value).
    pub bits: u8,
    /// Segment range bytes `(min, extent)` per component (or the 16-bit constant for
    /// bit rate 0).
    pub range_bytes: [(u8, u8); 4],
    /// Stored integers per segment sample and component (those of samples left out
    /// are computed but not written).
    pub values: Vec<[u32; 4]>,
    /// Bit `i`: segment sample `i` is a stored key frame; the others decode by
    /// interpolation between the stored ones around them ([`super::key_frames`]).
    pub kept: u32,
}

impl SubTrack {
    /// The list this sub-track is stored in (by kind and component count).
    pub fn list(&self) -> TrackList {
        TrackList::of(self.kind, self.components)
    }

    /// A sub-track of `bone` in `class`, three components, no constant or ranges yet.
    pub fn new(kind: SubTrackKind, bone: usize, class: SubTrackClass) -> SubTrack {
        SubTrack {
            kind,
            bone,
            class,
            components: 3,
            constant: [0.0; 4],
            constant_exact: [0.0; 4],
            constant_q: None,
            clip_min: [0.0; 4],
            clip_extent: [0.0; 4],
            range_exact: [(0.0, 0.0); 4],
            range_q: [(0, 0); 4],
            raw_only: false,
            class_error: 0.0,
        }
    }

    /// Part index of this sub-track in [`super::values::LocalValues`].
    pub fn part(&self) -> usize {
        self.kind as usize
    }

    /// The decoded local value of a stored component array, as the decoder makes it.
    pub fn to_local(&self, c: [f32; 4]) -> Lane4 {
        match self.kind {
            SubTrackKind::Rotation => {
                let q = normalize_rotation(rotation_from_components(c, self.components));
                [q.x, q.y, q.z, q.w]
            }
            _ => [c[0], c[1], c[2], 0.0],
        }
    }

    /// Sets the constant's decoded value and its integers (`None`: stored raw).
    pub fn set_constant(&mut self, value: [f32; 4], q: Option<[u32; 4]>) {
        self.constant = value;
        self.constant_q = q;
    }

    /// The decoded value of the constant.
    pub fn constant_local(&self) -> Lane4 {
        self.to_local(self.constant)
    }

    /// The value stored for `sample` (see [`stored_form`]).
    #[inline]
    pub fn stored(&self, reference: &Reference, sample: usize) -> [f32; 4] {
        stored_form(self.kind, reference.local[reference.at(sample, self.bone)].parts[self.part()])
    }

    /// Computes clip ranges of an animated sub-track from its stored values.
    pub fn compute_clip_range(&mut self, reference: &Reference) {
        let n = self.components as usize;
        self.raw_only = false;
        for c in 0..n {
            let (lo, hi) = (0..reference.sample_count)
                .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), s| span(lo, hi, self.stored(reference, s)[c]));
            let extent = hi - lo;
            self.range_exact[c] = (lo + 0.0, hi + 0.0);
            if extent.is_finite() {
                // `+ 0.0` turns a -0.0 minimum into +0.0 on every target.
                self.clip_min[c] = lo + 0.0;
                self.clip_extent[c] = extent;
            } else {
                self.raw_only = true;
            }
        }
        if self.raw_only {
            self.clip_min = [0.0; 4];
            self.clip_extent = [0.0; 4];
        }
        for c in n..4 {
            self.clip_min[c] = 0.0;
            self.clip_extent[c] = 0.0;
            self.range_exact[c] = (0.0, 0.0);
        }
    }

    /// Encodes samples `start..start + count` (one segment) at `bits`. `ranged` tells
    /// whether the clip has per-segment ranges (more than one segment).
    pub fn encode(&self, reference: &Reference, start: usize, count: usize, bits: u8, ranged: bool) -> SegmentCode {
        let mut buffer = [[0.0f32; 4]; MAX_SEGMENT_SAMPLES];
        let samples = &mut buffer[..count];
        for (i, v) in samples.iter_mut().enumerate() {
            *v = self.stored(reference, start + i);
        }
        encode_samples(samples, self.components as usize, self.clip_min, self.clip_extent, bits, ranged)
    }

    /// The decoded local value at segment sample `i` of `code`: a stored key frame's,
    /// or, for a sample left out, the decoder's interpolation between the stored key
    /// frames around it.
    pub fn decode(&self, code: &SegmentCode, i: usize, ranged: bool) -> Lane4 {
        self.decode_with(code, i, &self.dequantizer(code, ranged))
    }

    /// The decoded local value at every segment sample of `code`, into `into`.
    pub fn decode_all(&self, code: &SegmentCode, count: usize, ranged: bool, into: &mut Vec<Lane4>) {
        let dequantizer = self.dequantizer(code, ranged);
        into.clear();
        into.extend((0..count).map(|i| self.decode_with(code, i, &dequantizer)));
    }

    /// The decoder's arithmetic for `code`'s integers.
    pub fn dequantizer(&self, code: &SegmentCode, ranged: bool) -> Dequantizer {
        Dequantizer::new(code.bits, ranged.then_some(code.range_bytes), self.clip_min, self.clip_extent)
    }

    /// [`SubTrack::decode`] with `code`'s arithmetic made ([`SubTrack::dequantizer`]).
    pub fn decode_with(&self, code: &SegmentCode, i: usize, dequantizer: &Dequantizer) -> Lane4 {
        // Components past the stored ones have zero values and ranges: they decode to 0.
        let stored = |k: usize| dequantizer.decode(code.values[k]);
        if code.kept >> i & 1 != 0 {
            return self.to_local(stored(i));
        }
        let (lo, hi) = around(code.kept, i);
        let alpha = weight_between((i - lo) as u32, (hi - lo) as u32, 0.0);
        match self.kind {
            SubTrackKind::Rotation => {
                let q = interpolate_rotation(stored(lo), stored(hi), self.components, alpha);
                [q.x, q.y, q.z, q.w]
            }
            _ => interpolate_vector(stored(lo), stored(hi), alpha),
        }
    }
}

/// Encodes the samples of one segment (`n` components each) at `bits`, given the
/// clip range; `ranged` tells whether the clip has per-segment ranges (more than
/// one segment). Shared by bone sub-tracks and scalar tracks.
pub fn encode_samples(
    samples: &[[f32; 4]],
    n: usize,
    clip_min: [f32; 4],
    clip_extent: [f32; 4],
    bits: u8,
    ranged: bool,
) -> SegmentCode {
    let count = samples.len();
    let mut range_bytes = [(0u8, 0u8); 4];
    let mut values = vec![[0u32; 4]; count];
    if bits == RAW_BITS {
        for (v, s) in values.iter_mut().zip(samples) {
            for c in 0..n {
                v[c] = s[c].to_bits();
            }
        }
        return SegmentCode { bits, range_bytes, values, kept: all_kept(count) };
    }
    let normalized = |v: f32, c: usize| -> f64 {
        let (min, extent) = (clip_min[c], clip_extent[c]);
        if extent > 0.0 {
            ((f64::from(v) - f64::from(min)) / f64::from(extent)).clamp(0.0, 1.0)
        } else {
            0.0
        }
    };
    // Each sample's position in the clip range, made once (the segment range and the
    // integers both read it). Segments hold at most `MAX_SEGMENT_SAMPLES` samples; a
    // longer run (none today) would compute it where read.
    let mut positions = [[0.0f64; 4]; MAX_SEGMENT_SAMPLES];
    let made = count <= MAX_SEGMENT_SAMPLES;
    if made {
        for (p, s) in positions.iter_mut().zip(samples) {
            for c in 0..n {
                p[c] = normalized(s[c], c);
            }
        }
    }
    let position = |i: usize, c: usize| if made { positions[i][c] } else { normalized(samples[i][c], c) };
    if ranged {
        for (c, bytes) in range_bytes.iter_mut().enumerate().take(n) {
            let (lo, hi) = (0..count).fold((1.0f64, 0.0f64), |(lo, hi), i| span(lo, hi, position(i, c)));
            *bytes = if bits == 0 {
                // Constant within the segment: the middle of its span, on 16 bits.
                let mid = ((lo + hi) * 0.5 * 65535.0).round().clamp(0.0, 65535.0) as u16;
                let (min, extent) = (clip_min[c], clip_extent[c]);
                best_constant(mid.to_le_bytes(), |x| decode_component(0, 0, Some(x), min, extent), samples, c)
            } else {
                let lo_byte = (lo * 255.0).floor().clamp(0.0, 255.0) as u8;
                let hi_byte = (hi * 255.0).ceil().clamp(0.0, 255.0) as u8;
                (lo_byte, hi_byte.saturating_sub(lo_byte))
            };
        }
    }
    if bits == 0 {
        return SegmentCode { bits, range_bytes, values, kept: all_kept(count) };
    }
    let segment = ranged.then_some(range_bytes);
    let max_q = (1u32 << bits) - 1;
    let top = f64::from(max_q);
    // Per component, the integer of a position is `(position − start) · scale`,
    // clamped to `0 ..= max_q` and rounded: `start` is where the segment range
    // begins in the clip range and `scale` spreads it over the integers (0 for a
    // component the range holds flat, and for the lanes past `n`).
    let (mut start, mut scale) = ([0.0f64; 4], [0.0f64; 4]);
    for c in 0..n {
        (start[c], scale[c]) = match range_bytes[c] {
            (a, b) if ranged && b > 0 => (f64::from(a) / 255.0, top * 255.0 / f64::from(b)),
            _ if ranged => (0.0, 0.0),
            _ => (0.0, top),
        };
    }
    let dequantizer = Dequantizer::new(bits, segment, clip_min, clip_extent);
    for (i, (v, s)) in values.iter_mut().zip(samples).enumerate() {
        // The nearest integer, all components at once (a product where a quotient
        // was meant may land one integer off); then the neighbour on the target's
        // side, with the decoder's own arithmetic. Decoding rises with the integer,
        // so of a guess within one of the nearest integer and that neighbour, the
        // nearer is the nearest.
        let mut guess = [0u32; 4];
        for (c, g) in guess.iter_mut().enumerate() {
            *g = round_to_u32(((position(i, c) - start[c]) * scale[c]).clamp(0.0, top));
        }
        let decoded = dequantizer.decode(guess);
        let mut other = guess;
        for c in 0..4 {
            if decoded[c] > s[c] {
                other[c] = guess[c].saturating_sub(1);
            } else if decoded[c] < s[c] {
                other[c] = (guess[c] + 1).min(max_q);
            }
        }
        let other_decoded = dequantizer.decode(other);
        for c in 0..n {
            let closer = (other_decoded[c] - s[c]).abs() < (decoded[c] - s[c]).abs();
            v[c] = if closer { other[c] } else { guess[c] };
        }
    }
    SegmentCode { bits, range_bytes, values, kept: all_kept(count) }
}

/// `x.round() as u32` (halves away from zero) for `x` in `0.0 ..= u32::MAX as f64`.
/// `f64::round` is a library call on x86-64 below SSE4.1, and this runs for every
/// component of every sample at every rate tried: the truncation and the fraction
/// (exact: both below 2^32) decide instead.
#[inline]
fn round_to_u32(x: f64) -> u32 {
    let whole = x as u32;
    if x - f64::from(whole) >= 0.5 {
        whole.saturating_add(1)
    } else {
        whole
    }
}

/// The form a value is stored in: rotations flipped to `w >= 0` (so that a dropped
/// `w` is rebuilt as the positive root), vectors as they are.
pub fn stored_form(kind: SubTrackKind, v: Lane4) -> [f32; 4] {
    if kind == SubTrackKind::Rotation && v[3] < 0.0 {
        v.map(|c| -c)
    } else {
        v
    }
}

/// Among the 16-bit constants around `start`, the one whose decoded value is closest
/// to the middle of the samples' span (the decoder's rounding decides).
fn best_constant(start: [u8; 2], decode: impl Fn((u8, u8)) -> f32, samples: &[[f32; 4]], c: usize) -> (u8, u8) {
    let base = u16::from_le_bytes(start);
    let mut best = (start[0], start[1]);
    let mut best_err = f32::INFINITY;
    for q in [base.saturating_sub(1), base, base.saturating_add(1)] {
        let b = q.to_le_bytes();
        let v = decode((b[0], b[1]));
        let err = samples.iter().fold(0.0f32, |m, s| m.max((s[c] - v).abs()));
        if err < best_err {
            best_err = err;
            best = (b[0], b[1]);
        }
    }
    best
}

/// Extends `(lo, hi)` by `v`. Unlike `f32::min`/`max`, which may return either zero
/// for `-0.0` against `+0.0` depending on the target, this keeps the first seen: the
/// encoder's output must be the same bytes on every machine.
pub fn span<T: PartialOrd + Copy>(lo: T, hi: T, v: T) -> (T, T) {
    (if v < lo { v } else { lo }, if v > hi { v } else { hi })
}

#[cfg(test)]
mod tests {
    use super::round_to_u32;

    #[test]
    fn round_to_u32_is_round_on_every_kind_of_value() {
        let mut values = vec![0.0, 0.5, 1.5, 2.5, 0.49999999999999994, 4_294_967_294.5, 4_294_967_295.0];
        // Each half from 0 to 2^20 with its neighbours, and a spread of fractions.
        for i in 0..(1u32 << 20) {
            let half = f64::from(i) + 0.5;
            values.extend([half.next_down(), half, half.next_up(), f64::from(i) + f64::from(i % 97) / 97.0]);
        }
        // Large values near the top of the range (every rate up to 31 bits).
        for bits in 1..32u32 {
            let max = f64::from((1u32 << bits) - 1);
            values.extend([max, max - 0.5, max - 0.5000001, max * 0.3337]);
        }
        for x in values {
            assert_eq!(round_to_u32(x), x.round() as u32, "{x}");
        }
    }
}
