//! Single-bone decoding in time independent of the bone index: each of the bone's
//! three sub-tracks is found with a bit test per list, its data by rank (a rank
//! directory entry plus a popcount of at most [`RANK_BLOCK_BITS`] bits), and an
//! animated sub-track's samples by a segment frame-directory entry plus the bit rates
//! of at most [`FRAME_BLOCK`] − 1 sub-tracks before it, summed eight at a time.
//!
//! [`RANK_BLOCK_BITS`]: crate::format::RANK_BLOCK_BITS

use crate::format::bytes::{u32_at, u64_at_or_zero};
use crate::format::clip::Clip;
use crate::format::{bitset_index, SubTrackKind, TrackList, FRAME_BLOCK};
use crate::pose::finish::{finish_rotation, lerp};
use crate::pose::lists::{write, ROTATION3, ROTATION4, SCALE, TRANSLATION};
use crate::seek::Key;
use crate::simd::Lanes;
use crate::transform::Transform;
use crate::unpack::values::{floats, integers, key_value, Grid, Rate, SegmentRange};

/// Bone `bone` (below the bone count) at `keys` blended by `alpha`.
#[inline(always)]
pub(crate) fn bone<V: Lanes>(clip: &Clip<'_>, keys: &[Key<'_>; 2], alpha: f32, bone: usize) -> Transform {
    let mut t = clip.default_transform(bone);
    let lists = &clip.lists;
    let has = |animated: bool, list: TrackList| lists.contains(bitset_index(animated, list), bone);
    if has(true, TrackList::Rotation3) {
        animated::<V, ROTATION3, 3>(clip, keys, alpha, bone, &mut t);
    } else if has(true, TrackList::Rotation4) {
        animated::<V, ROTATION4, 4>(clip, keys, alpha, bone, &mut t);
    } else if has(false, TrackList::Rotation3) {
        constant::<V, ROTATION3, 3>(clip, bone, &mut t);
    } else if has(false, TrackList::Rotation4) {
        constant::<V, ROTATION4, 4>(clip, bone, &mut t);
    }
    if has(true, TrackList::Translation) {
        animated::<V, TRANSLATION, 3>(clip, keys, alpha, bone, &mut t);
    } else if has(false, TrackList::Translation) {
        constant::<V, TRANSLATION, 3>(clip, bone, &mut t);
    }
    if has(true, TrackList::Scale) {
        animated::<V, SCALE, 3>(clip, keys, alpha, bone, &mut t);
    } else if has(false, TrackList::Scale) {
        constant::<V, SCALE, 3>(clip, bone, &mut t);
    }
    t
}

/// The bytes of `bytes` from `at` on (empty past the end).
#[inline(always)]
fn from(bytes: &[u8], at: usize) -> &[u8] {
    bytes.get(at..).unwrap_or(&[])
}

/// The constant sub-track of `bone` in list `L` (`C` components).
#[inline(always)]
fn constant<V: Lanes, const L: usize, const C: usize>(clip: &Clip<'_>, bone: usize, t: &mut Transform) {
    let list = TrackList::from_index(L);
    const { assert!(TrackList::from_index(L).components() as usize == C) };
    let value = constant_value::<V, L, C>(clip, bone);
    if list.kind() == SubTrackKind::Rotation {
        t.rotation = finish_rotation(C == 3, value, value, 0.0).to_quat();
    } else {
        write::<V, L>(value, t);
    }
}

/// The animated sub-track of `bone` in list `L` (`C` components).
#[inline(always)]
fn animated<V: Lanes, const L: usize, const C: usize>(
    clip: &Clip<'_>,
    keys: &[Key<'_>; 2],
    alpha: f32,
    bone: usize,
    t: &mut Transform,
) {
    let list = TrackList::from_index(L);
    let (v0, v1) = animated_keys::<V, L, C>(clip, keys, alpha, bone);
    if list.kind() == SubTrackKind::Rotation {
        t.rotation = finish_rotation(C == 3, v0, v1, alpha).to_quat();
    } else {
        write::<V, L>(if alpha == 0.0 { v0 } else { lerp(v0, v1, alpha) }, t);
    }
}

/// The values at key 0 and key 1 (key 0's again when `alpha` is 0) of the animated
/// sub-track of `bone` in list `L` (`C` components), found by rank and frame
/// directory.
#[inline(always)]
pub(crate) fn animated_keys<V: Lanes, const L: usize, const C: usize>(
    clip: &Clip<'_>,
    keys: &[Key<'_>; 2],
    alpha: f32,
    bone: usize,
) -> (V, V) {
    let list = TrackList::from_index(L);
    const { assert!(TrackList::from_index(L).components() as usize == C) };
    let rank = clip.lists.rank(bitset_index(true, list), bone);
    // Indices are bounded by the validated sections: nothing wraps.
    let index = clip.animated_start(list).wrapping_add(rank);
    let (before, span4) = (clip.animated_components_before(index), four_component_span(clip, index as usize));
    animated_in::<V, C>(clip, keys, alpha, list, index, before, span4)
}

/// The values at key 0 and key 1 (key 0's again when `alpha` is 0) of animated
/// sub-track `index` (of `C` components, `before` components stored by the animated
/// sub-tracks before it, `span4` its [`four_component_span`]), its samples found by
/// frame directory.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn animated_in<V: Lanes, const C: usize>(
    clip: &Clip<'_>,
    keys: &[Key<'_>; 2],
    alpha: f32,
    list: TrackList,
    index: u32,
    before: u32,
    span4: (usize, usize),
) -> (V, V) {
    let [key0, key1] = keys;
    let offset0 = frame_offset_in(clip, key0, index as usize, span4);
    // Both keys in one segment (most poses) share the offset.
    let offset1 = if key1.rates == key0.rates || alpha == 0.0 {
        offset0
    } else {
        frame_offset_in(clip, key1, index as usize, span4)
    };
    let bytes = clip.bytes;
    // Offsets are bounded by the validated sections: nothing wraps.
    let before = before as usize;
    let range = clip.ranges_offset.wrapping_add(before << 2);
    let (min, extent) = clip_range::<V, C>(clip, list, range);
    let ranged = clip.segment_count > 1;
    // What a key's segment says of the sub-track: its bit rate and segment range.
    let locate = |key: &Key<'_>| {
        let rate = Rate::<V>::new::<C>(bytes.get(key.rates.wrapping_add(index as usize)).copied().unwrap_or(0));
        let segment_range = ranged
            .then(|| SegmentRange::<V>::from_bytes::<C>(from(bytes, key.segment_ranges.wrapping_add(before << 1))));
        (rate, segment_range)
    };
    let (rate, segment_range) = locate(key0);
    let v0 = key_value::<V, C>(
        key0.samples,
        &rate,
        key0.frame_bit.wrapping_add(offset0),
        segment_range.as_ref(),
        min,
        extent,
    );
    let v1 = if alpha == 0.0 {
        v0
    } else {
        // Both keys in one segment (most poses) share all of it.
        let (rate, segment_range) = if key1.rates == key0.rates { (rate, segment_range) } else { locate(key1) };
        key_value::<V, C>(
            key1.samples,
            &rate,
            key1.frame_bit.wrapping_add(offset1),
            segment_range.as_ref(),
            min,
            extent,
        )
    };
    (v0, v1)
}

/// The clip range (minimum, extent) of an animated sub-track of `list` (`C`
/// components), whose integers are at byte `at`: on the list's grid.
#[inline(always)]
fn clip_range<V: Lanes, const C: usize>(clip: &Clip<'_>, list: TrackList, at: usize) -> (V, V) {
    let grid =
        Grid::<V>::of::<C>(clip.bytes, list.kind() == SubTrackKind::Rotation, clip.start(list).range_grid as usize);
    (grid.apply(integers::<V, C>(clip.bytes, at)), grid.scale(integers::<V, C>(clip.bytes, at.wrapping_add(C << 1))))
}

/// The stored value of the constant sub-track of `bone` in list `L` (`C`
/// components), found by rank (a rotation not yet finished), raw or on its grid.
#[inline(always)]
pub(crate) fn constant_value<V: Lanes, const L: usize, const C: usize>(clip: &Clip<'_>, bone: usize) -> V {
    let list = TrackList::from_index(L);
    let rank = clip.lists.rank(bitset_index(false, list), bone) as usize;
    let start = clip.start(list);
    // Bounded by the validated constants section: no overflow.
    if clip.raw_constants(list) {
        floats::<V, C>(from(clip.bytes, (start.constant_at as usize).wrapping_add(rank.wrapping_mul(C << 2))))
    } else {
        let grid = Grid::<V>::of::<C>(clip.bytes, list.kind() == SubTrackKind::Rotation, start.constant_grid as usize);
        grid.apply(integers::<V, C>(clip.bytes, (start.constant_at as usize).wrapping_add(rank.wrapping_mul(C << 1))))
    }
}

/// Which of the sub-tracks before `index` in its frame-directory block are rotations
/// of four components (`from .. to`, empty when none): they store one more component
/// each. Depends on the index alone, not on the segment.
#[inline(always)]
pub(crate) fn four_component_span(clip: &Clip<'_>, index: usize) -> (usize, usize) {
    let start = (index / FRAME_BLOCK).wrapping_mul(FRAME_BLOCK);
    let (r4, r4_end) = clip.rotation4_span();
    (start.max(r4 as usize), index.min(r4_end as usize))
}

/// Bit offset of animated sub-track `index` inside a key frame of `key`'s segment:
/// a frame-directory entry plus the bits of at most [`FRAME_BLOCK`] − 1 sub-tracks
/// before it (`span4`: [`four_component_span`]).
#[inline(always)]
pub(crate) fn frame_offset_in(clip: &Clip<'_>, key: &Key<'_>, index: usize, span4: (usize, usize)) -> u64 {
    let bytes = clip.bytes;
    let block = index / FRAME_BLOCK;
    let start = block.wrapping_mul(FRAME_BLOCK);
    let base = match block.checked_sub(1) {
        Some(entry) => u32_at(bytes, key.directory.wrapping_add(entry << 2)).unwrap_or(0),
        None => 0,
    };
    // Every sub-track stores 3 components, except the rotations of `span4`.
    let (from4, to4) = span4;
    let extra = if from4 < to4 { rate_sum(bytes, key.rates, from4, to4) } else { 0 };
    u64::from(base).wrapping_add(rate_sum(bytes, key.rates, start, index).wrapping_mul(3)).wrapping_add(extra)
}

/// The sum of the bit rates `from .. to` (at most [`FRAME_BLOCK`] of them) of the
/// rates at `rates`, eight bytes per step: bytes added in 16-bit lanes, which hold
/// 256 rates of at most 32.
#[inline(always)]
fn rate_sum(bytes: &[u8], rates: usize, from: usize, to: usize) -> u64 {
    const EVEN: u64 = 0x00ff_00ff_00ff_00ff;
    let pairs = |word: u64| (word & EVEN).wrapping_add((word >> 8) & EVEN);
    let mut lanes = 0u64;
    let mut at = from;
    // Whole words of eight rates, then the first `to − at` rates of the next.
    while at.wrapping_add(8) <= to {
        lanes = lanes.wrapping_add(pairs(u64_at_or_zero(bytes, rates.wrapping_add(at))));
        at = at.wrapping_add(8);
    }
    let left = to.saturating_sub(at);
    if left > 0 {
        let word = u64_at_or_zero(bytes, rates.wrapping_add(at));
        lanes = lanes.wrapping_add(pairs(word & (u64::MAX >> ((8usize.wrapping_sub(left) << 3) & 63))));
    }
    // Horizontal sum of the four 16-bit lanes.
    lanes.wrapping_mul(0x0001_0001_0001_0001) >> 48
}

#[cfg(test)]
mod tests {
    use super::rate_sum;

    #[test]
    fn rate_sum_adds_any_span_of_rates() {
        let bytes: [u8; 300] = core::array::from_fn(|i| (i % 33) as u8);
        for from in [0usize, 1, 7, 8, 100] {
            for to in [from, from + 1, from + 9, from + 64, (from + 255).min(292)] {
                let expected: u64 = bytes[from..to].iter().map(|&b| u64::from(b)).sum();
                assert_eq!(rate_sum(&bytes, 0, from, to), expected, "{from}..{to}");
            }
        }
        // Rates past the buffer read as zero.
        assert_eq!(rate_sum(&bytes, 290, 0, 20), bytes[290..].iter().map(|&b| u64::from(b)).sum::<u64>());
    }
}
