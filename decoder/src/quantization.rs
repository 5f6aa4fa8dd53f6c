//! Dequantisation arithmetic: how stored integers become component values.
//!
//! The encoder calls these very functions when it measures the error of a candidate
//! bit rate, so what it measures is bit for bit what the decoder produces. The order
//! of operations is part of the format (see `format-spec/`): multiply, then add, in
//! `f32`, never fused, so every target decodes the same bits.

/// `q / (2^bits - 1)`, the normalised value of a `bits`-bit unsigned integer.
/// `bits` is 1 to 24, so the divisor and `q` are exact in `f32`.
#[inline]
pub fn unpack_unorm(q: u32, bits: u8) -> f32 {
    let max = (1u32 << (bits & 31)).wrapping_sub(1);
    // max is at least 1 for valid bit rates; guard anyway so nothing divides by zero.
    if max == 0 {
        return 0.0;
    }
    q as f32 / max as f32
}

/// The per-segment range `(min, extent)` inside the clip range, from its two bytes.
#[inline]
pub fn segment_range(min_byte: u8, extent_byte: u8) -> (f32, f32) {
    (f32::from(min_byte) / 255.0, f32::from(extent_byte) / 255.0)
}

/// The normalised value of a sub-track component that is constant within a segment
/// (bit rate 0): its two range bytes read as a little-endian `u16` over 65535.
#[inline]
pub fn segment_constant(min_byte: u8, extent_byte: u8) -> f32 {
    f32::from(u16::from_le_bytes([min_byte, extent_byte])) / 65535.0
}

/// Applies the segment range to a normalised sample: `n * extent + min`.
#[inline]
pub fn apply_segment_range(normalized: f32, range: (f32, f32)) -> f32 {
    normalized * range.1 + range.0
}

/// Applies the clip range: `n * extent + min`.
#[inline]
pub fn apply_clip_range(normalized: f32, min: f32, extent: f32) -> f32 {
    normalized * extent + min
}

/// Rebuilds `w` of a unit quaternion stored without it (`w >= 0`).
#[inline]
pub fn reconstruct_w(x: f32, y: f32, z: f32) -> f32 {
    let w2 = 1.0 - (x * x + y * y + z * z);
    if w2 > 0.0 {
        libm::sqrtf(w2)
    } else {
        0.0
    }
}

/// The value of one component of an animated sub-track at one key frame.
///
/// `stored` is the integer read from the bit stream (`bits` wide; unused for 0),
/// `segment_bytes` the component's two segment-range bytes (`None` when the clip has
/// a single segment), `clip_min`/`clip_extent` its clip range.
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
    let normalized = if bits == 0 {
        match segment_bytes {
            Some((lo, hi)) => segment_constant(lo, hi),
            None => 0.0,
        }
    } else {
        let n = unpack_unorm(stored, bits);
        match segment_bytes {
            Some((lo, hi)) => apply_segment_range(n, segment_range(lo, hi)),
            None => n,
        }
    };
    apply_clip_range(normalized, clip_min, clip_extent)
}

/// A rotation's `[x, y, z, w]` from its stored components: with three, `w` is rebuilt.
#[inline]
pub fn rotation_from_components(c: [f32; 4], components: u32) -> [f32; 4] {
    let [x, y, z, _] = c;
    if components == 4 {
        c
    } else {
        [x, y, z, reconstruct_w(x, y, z)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(reconstruct_w(1.0, 0.5, 0.0), 0.0);
    }
}
