//! The decoder's arithmetic for one component at a time, for the encoder.
//!
//! The encoder measures the error of each candidate bit rate on the values the
//! decoder will produce, so it needs them bit for bit. These functions are not a
//! second implementation: they run the decoder's own lane-wise arithmetic
//! (the crate's `decode` module) on the portable scalar backend, one value per lane, so a
//! change to the format's arithmetic changes both sides at once.

use crate::simd::scalar::F32x4;
use crate::simd::Lanes;
use crate::unpack::values::{dequantize, flat, rebuild_w, SegmentRange, RECIPROCALS};

/// Lane 0 of `v`.
#[inline(always)]
fn first(v: F32x4) -> f32 {
    let [x, ..] = v.to_array();
    x
}

/// The value of one component of an animated sub-track at one key frame.
///
/// `stored` is the integer read from the bit stream (`bits` wide; unused for 0; the
/// `f32` bits themselves for 32), `segment_bytes` the component's two segment-range
/// bytes `lo`, `hi` (`None` when the clip has a single segment), `clip_min` and
/// `clip_extent` its clip range.
#[inline]
pub fn decode_component(
    bits: u8,
    stored: u32,
    segment_bytes: Option<(u8, u8)>,
    clip_min: f32,
    clip_extent: f32,
) -> f32 {
    if bits == crate::format::RAW_BITS {
        return f32::from_bits(stored);
    }
    let segment =
        segment_bytes.map(|(lo, hi)| SegmentRange::new(F32x4::splat(f32::from(lo)), F32x4::splat(f32::from(hi))));
    let (min, extent) = (F32x4::splat(clip_min), F32x4::splat(clip_extent));
    if bits == 0 {
        first(flat(segment.as_ref(), min, extent))
    } else {
        let scale = RECIPROCALS.get(usize::from(bits & 31)).copied().unwrap_or(1.0);
        first(dequantize(F32x4::from_u32([stored; 4]), F32x4::splat(scale), segment.as_ref(), min, extent))
    }
}

/// [`decode_component`] for the components of one sub-track at once, one per lane:
/// the same bits as one call per component, in about the time of one.
#[inline(always)]
pub fn decode_components(
    bits: u8,
    stored: [u32; 4],
    segment_bytes: Option<[(u8, u8); 4]>,
    clip_min: [f32; 4],
    clip_extent: [f32; 4],
) -> [f32; 4] {
    Dequantizer::new(bits, segment_bytes, clip_min, clip_extent).decode(stored)
}

/// [`decode_components`] for many key frames of one sub-track in one segment: its
/// bit rate and ranges are made into lanes once, not at every key frame (the
/// encoder decodes every candidate it tries).
#[derive(Clone, Copy)]
pub struct Dequantizer {
    bits: u8,
    scale: F32x4,
    segment: Option<SegmentRange<F32x4>>,
    min: F32x4,
    extent: F32x4,
}

impl Dequantizer {
    /// The arithmetic of bit rate `bits` with segment range `segment_bytes` (`None`
    /// in a single-segment clip) and clip range `clip_min`, `clip_extent`.
    #[inline(always)]
    pub fn new(bits: u8, segment_bytes: Option<[(u8, u8); 4]>, clip_min: [f32; 4], clip_extent: [f32; 4]) -> Self {
        let segment = segment_bytes.map(|b| {
            SegmentRange::new(
                F32x4::from_u32(b.map(|(lo, _)| u32::from(lo))),
                F32x4::from_u32(b.map(|(_, hi)| u32::from(hi))),
            )
        });
        let (min, extent) =
            (F32x4::from_bits(clip_min.map(f32::to_bits)), F32x4::from_bits(clip_extent.map(f32::to_bits)));
        let scale = F32x4::splat(RECIPROCALS.get(usize::from(bits & 31)).copied().unwrap_or(1.0));
        Dequantizer { bits, scale, segment, min, extent }
    }

    /// The decoded components of the integers `stored`.
    #[inline(always)]
    pub fn decode(&self, stored: [u32; 4]) -> [f32; 4] {
        let v = match self.bits {
            crate::format::RAW_BITS => return stored.map(f32::from_bits),
            0 => flat(self.segment.as_ref(), self.min, self.extent),
            _ => dequantize(F32x4::from_u32(stored), self.scale, self.segment.as_ref(), self.min, self.extent),
        };
        v.to_array()
    }
}

/// The value of a 16-bit quantised integer `q` (a 3.0 constant or clip-range
/// component) on a grid of `step` and `base`: `q · step + base`, as the decoder's
/// lanes compute it (the `unpack::values::Grid` arithmetic, one value per lane).
#[inline]
pub fn dequantize16(q: u16, step: f32, base: f32) -> f32 {
    let grid = crate::unpack::values::Grid { step: F32x4::splat(step), base: F32x4::splat(base) };
    first(grid.apply(F32x4::from_halves(u64::from(q))))
}

/// The value of a packed constant integer `q` (4.1, below 2²⁴) on a grid of `step`
/// and `base`: `q · step + base`, as the decoder's lanes compute it.
#[inline]
pub fn dequantize_packed(q: u32, step: f32, base: f32) -> f32 {
    let grid = crate::unpack::values::Grid { step: F32x4::splat(step), base: F32x4::splat(base) };
    first(grid.apply(F32x4::from_u32([q & 0x00ff_ffff, 0, 0, 0])))
}

/// A rotation's `[x, y, z, w]` from its stored components: with three, `w` is rebuilt
/// (`sqrt(1 − ((x·x + y·y) + z·z))` where positive, else 0).
#[inline]
pub fn rotation_from_components(c: [f32; 4], components: u32) -> [f32; 4] {
    let [x, y, z, _] = c;
    if components == 4 {
        c
    } else {
        [x, y, z, first(rebuild_w(F32x4::splat(x), F32x4::splat(y), F32x4::splat(z)))]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn components_decode_together_as_they_decode_one_by_one() {
        let segments = [None, Some([(0, 255), (17, 3), (255, 0), (100, 100)])];
        let (min, extent) = ([-2.0, 0.25, 1e-3, -7.5], [4.0, 0.5, 3e-7, 1e4]);
        for bits in [0u8, 1, 7, 12, 19, 24, crate::format::RAW_BITS] {
            for segment in segments {
                for seed in 0u32..50 {
                    let max = if bits >= 32 { u32::MAX } else { (1u32 << bits) - 1 };
                    let stored = [0, 1, 2, 3].map(|c| seed.wrapping_mul(2_654_435_761).rotate_left(c * 7) & max);
                    let together = decode_components(bits, stored, segment, min, extent);
                    for c in 0..4 {
                        let alone = decode_component(bits, stored[c], segment.map(|s| s[c]), min[c], extent[c]);
                        assert_eq!(together[c].to_bits(), alone.to_bits(), "bits {bits} component {c}");
                    }
                }
            }
        }
    }

    #[test]
    fn dequantisation_hits_the_range_ends() {
        assert_eq!(decode_component(8, 0, None, -2.0, 4.0), -2.0);
        assert_eq!(decode_component(8, 255, None, -2.0, 4.0), 2.0);
        assert_eq!(decode_component(24, (1 << 24) - 1, None, 0.0, 1.0), 1.0);
        assert_eq!(decode_component(32, 1.5f32.to_bits(), Some((3, 4)), 9.0, 9.0), 1.5);
        // Bit rate 0 with a segment: the 16-bit constant.
        assert_eq!(decode_component(0, 0, Some((0xff, 0xff)), 1.0, 2.0), 3.0);
        assert_eq!(decode_component(0, 0, None, 1.0, 2.0), 1.0);
        // Segment range: lo/255 + n * hi/255.
        let v = decode_component(1, 1, Some((51, 102)), 0.0, 1.0);
        assert!((v - 0.6).abs() < 1e-6, "{v}");
        assert_eq!(rotation_from_components([1.0, 0.5, 0.0, 9.0], 3)[3], 0.0);
    }

    /// The reciprocals are the spec's (format-spec/decoding.md, 4.0), and each one
    /// brings the largest integer of its rate exactly to 1.
    #[test]
    fn reciprocals_are_the_specified_constants() {
        use crate::unpack::values::{BYTE_SCALE, WORD_SCALE};
        let spec: [u32; 24] = [
            0x3F80_0000,
            0x3EAA_AAAB,
            0x3E12_4925,
            0x3D88_8889,
            0x3D04_2108,
            0x3C82_0821,
            0x3C01_0204,
            0x3B80_8081,
            0x3B00_4020,
            0x3A80_2008,
            0x3A00_1002,
            0x3980_0801,
            0x3900_0400,
            0x3880_0200,
            0x3800_0100,
            0x3780_0080,
            0x3700_0040,
            0x3680_0020,
            0x3600_0010,
            0x3580_0008,
            0x3500_0004,
            0x3480_0002,
            0x3400_0001,
            0x3380_0001,
        ];
        for (b, bits) in (1..=24).zip(spec) {
            assert_eq!(RECIPROCALS[b].to_bits(), bits, "R[{b}]");
            assert_eq!(((1u32 << b) - 1) as f32 * RECIPROCALS[b], 1.0, "R[{b}]");
        }
        assert_eq!(BYTE_SCALE.to_bits(), 0x3B80_8081);
        assert_eq!(WORD_SCALE.to_bits(), 0x3780_0080);
    }
}
