//! The key frames a position decodes (`format-spec/decoding.md`, Key frames left out)
//! and where each one's samples are: its segment's directory, bit rates and ranges,
//! and its first sample bit.

use crate::format::clip::Clip;

/// One of the two key frames being interpolated: where its segment's parts are.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Key<'a> {
    /// The bytes holding its samples: the clip's, or a resident chunk of a database
    /// tier ([`Sampler::seek_streamed`]).
    pub samples: &'a [u8],
    /// Offset of the segment's frame directory.
    pub directory: usize,
    /// Offset of the segment's bit rates.
    pub rates: usize,
    /// Offset of the segment's range bytes (unused with a single segment).
    pub segment_ranges: usize,
    /// Bit offset, from the start of `samples`, of this key frame's first sample bit.
    pub frame_bit: u64,
}

/// Where key frame `sample` of `segment` (table entry `entry`: data offset, bits
/// per key frame, key frames present) is.
#[inline(always)]
pub(crate) fn locate<'a>(clip: &Clip<'a>, sample: u32, segment: u32, entry: (usize, u32, u32)) -> Key<'a> {
    let (data_offset, frame_bits, present) = entry;
    // `sample` is at most sample_count − 1 and lies in `segment`: nothing wraps.
    let local = sample.saturating_sub(segment.wrapping_mul(u32::from(clip.segment_len)));
    // The key frame's place among the segment's stored frames.
    let below = (1u32 << (local & 31)).wrapping_sub(1);
    // Every frame before it present (a segment without holes): no population
    // count, which is a long sequence on targets without a `popcnt` instruction.
    let stored = if present & below == below { local & 31 } else { (present & below).count_ones() };
    let directory = data_offset;
    let rates = directory.wrapping_add(clip.frame_directory_len as usize);
    let segment_ranges = rates.wrapping_add(clip.animated_count as usize);
    let samples_start = (data_offset as u64).wrapping_add(clip.segment_header_len());
    let frame_bit = samples_start.wrapping_mul(8).wrapping_add(u64::from(stored).wrapping_mul(u64::from(frame_bits)));
    Key { samples: clip.bytes, directory, rates, segment_ranges, frame_bit }
}

/// The stored key frames to blend for samples `k0` and `k1` at weight `alpha`, given
/// the key frames `present` in `k0`'s segment `segment` (decoding.md, Key frames left
/// out): unchanged when `k0` is stored and so is `k1` (or the weight is 0); otherwise
/// the nearest stored frames of the segment around the position, found with two bit
/// scans, and the weight of the position between them. Every segment keeps its first
/// and last key frame, so both exist inside the segment.
#[inline(always)]
pub(crate) fn kept_keys(clip: &Clip<'_>, segment: u32, present: u32, k0: u32, k1: u32, alpha: f32) -> (u32, u32, f32) {
    let start = segment.wrapping_mul(u32::from(clip.segment_len));
    // Below 32: a segment holds at most 31 samples.
    let local = k0.wrapping_sub(start) & 31;
    let here = present >> local;
    if here & 1 != 0 && (alpha == 0.0 || here & 2 != 0) {
        return (k0, k1, alpha);
    }
    between_kept(start, local, present, k0, k1, alpha)
}

/// [`kept_keys`] when a key frame is missing.
#[inline(never)]
fn between_kept(start: u32, local: u32, present: u32, k0: u32, k1: u32, alpha: f32) -> (u32, u32, f32) {
    between(start, local, present, k0, k1, alpha)
}

/// The nearest stored frames around local frame `local` of the segment starting at
/// sample `start` whose stored frames are `present`, and the weight between them
/// ([`kept_keys`] when a key frame is missing).
#[inline(always)]
pub(crate) fn between(start: u32, local: u32, present: u32, k0: u32, k1: u32, alpha: f32) -> (u32, u32, f32) {
    // Frames `0 ..= local` and the frames after `local`.
    let upto = u32::MAX >> (31u32.wrapping_sub(local) & 31);
    let (before, after) = (present & upto, present & !upto);
    if after == 0 || (present >> local) & 1 != 0 && alpha == 0.0 {
        // `k0` is the segment's last frame (stored; `k1` is in the next segment or
        // the first sample of a loop), or stored and decoded alone.
        return (k0, k1, alpha);
    }
    // Bit 0 is always set, so `before` is not empty.
    let lo = 31u32.wrapping_sub(before.leading_zeros());
    let hi = after.trailing_zeros();
    let alpha = weight_between(local.wrapping_sub(lo), hi.wrapping_sub(lo), alpha);
    (start.wrapping_add(lo), start.wrapping_add(hi), alpha)
}

/// The weight of a position between two stored key frames `span` frames apart, the
/// position `offset` frames past the first plus `fraction` of a frame (decoding.md,
/// Key frames left out): `(offset + fraction) / span`, the integers converted to
/// `f32` first.
#[inline]
pub fn weight_between(offset: u32, span: u32, fraction: f32) -> f32 {
    (offset as f32 + fraction) / span as f32
}
