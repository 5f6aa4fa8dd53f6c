//! Key frames of a clip of a streaming database (`format-spec/database.md`, Sampling):
//! those its tier chunks hold count as stored while their chunk is resident.

use crate::format::clip::Clip;
use crate::format::database::{TIER_LOW, TIER_MEDIUM};
use crate::seek::keys::{between, locate, Key};
use crate::stream::database::Binding;
use crate::stream::residency::{Residency, Slot};

/// The keys and weight of samples `k0` and `k1` at weight `alpha` when a key is not
/// in the clip (or is its segment's last frame): the key frames of `binding`'s tiers
/// that `residency` holds join the clip's before the two bit scans, and each key's
/// samples are read from where it is.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn from_tiers<'a, S: AsRef<[Slot<'a>]>>(
    clip: &Clip<'a>,
    k0: u32,
    k1: u32,
    alpha: f32,
    segment0: u32,
    entry0: (usize, u32, u32),
    binding: &Binding<'_>,
    residency: &Residency<'a, S>,
) -> ([Key<'a>; 2], f32) {
    let start = segment0.wrapping_mul(u32::from(clip.segment_len));
    // The tiers' key frames of the segment, counted where their chunk is resident.
    let ([medium_held, low_held], [medium_at, low_at]) = binding.segment(segment0);
    let (medium_chunk, medium_byte) = binding.locate(medium_at);
    let (low_chunk, low_byte) = binding.locate(low_at);
    let medium = if medium_held != 0 { residency.chunk(TIER_MEDIUM, medium_chunk) } else { None };
    let low = if low_held != 0 { residency.chunk(TIER_LOW, low_chunk) } else { None };
    let medium_held = if medium.is_some() { medium_held } else { 0 };
    let low_held = if low.is_some() { low_held } else { 0 };
    let (data_offset, frame_bits, clip_held) = entry0;
    let present = clip_held | medium_held | low_held;
    // Below 32: a segment holds at most 31 samples.
    let local = k0.wrapping_sub(start) & 31;
    let here = present >> local;
    let (k0, k1, alpha) = if here & 1 != 0 && (alpha == 0.0 || here & 2 != 0) {
        (k0, k1, alpha)
    } else {
        between(start, local, present, k0, k1, alpha)
    };
    let directory = data_offset;
    let rates = directory.wrapping_add(clip.frame_directory_len as usize);
    let segment_ranges = rates.wrapping_add(clip.animated_count as usize);
    let clip_bit = (data_offset as u64).wrapping_add(clip.segment_header_len()).wrapping_mul(8);
    // Key frame `k` of the segment: in the clip, or in the tier that holds it; its
    // place among that source's frames of the segment gives its first bit.
    let key = |k: u32| {
        let bit = 1u32 << (k.wrapping_sub(start) & 31);
        let (samples, first_bit, held) = if clip_held & bit != 0 {
            (clip.bytes, clip_bit, clip_held)
        } else if medium_held & bit != 0 {
            (medium.unwrap_or(&[]), (medium_byte as u64).wrapping_mul(8), medium_held)
        } else {
            (low.unwrap_or(&[]), (low_byte as u64).wrapping_mul(8), low_held)
        };
        let stored = (held & bit.wrapping_sub(1)).count_ones();
        let frame_bit = first_bit.wrapping_add(u64::from(stored).wrapping_mul(u64::from(frame_bits)));
        Key { samples, directory, rates, segment_ranges, frame_bit }
    };
    let key0 = key(k0);
    // The second key is in the first one's segment, or is the first frame of the
    // next segment (or of the clip, for a loop), which the clip always stores.
    let segment1 = clip.segment_of(k1);
    let key1 = if segment1 == segment0 { key(k1) } else { locate(clip, k1, segment1, clip.segment(segment1)) };
    ([key0, key1], alpha)
}
