//! Single-bone decoding in time independent of the bone index: each of the bone's
//! three sub-tracks is found with a bit test per list, its data by rank (a rank
//! directory entry plus a popcount of at most [`RANK_BLOCK_BITS`] bits), and an
//! animated sub-track's quad by a segment frame-directory entry plus the bit rates
//! of the sub-tracks of at most [`FRAME_BLOCK`] − 1 quads before it, summed eight at
//! a time.
//!
//! [`RANK_BLOCK_BITS`]: crate::format::RANK_BLOCK_BITS

use crate::format::bytes::{u32_at, u64_at_or_zero};
use crate::format::clip::Clip;
use crate::format::{bitset_index, SubTrackKind, TrackList, FRAME_BLOCK, QUAD_LANES, ROTATION_BASE, ROTATION_STEP};
use crate::pose::finish::{finish_rotation, lerp};
use crate::pose::lists::{write, ROTATION3, ROTATION4, SCALE, TRANSLATION};
use crate::seek::Key;
use crate::simd::Lanes;
use crate::transform::Transform;
use crate::unpack::quad::{rate_word, Lane, LaneKey};
use crate::unpack::values::{floats, integers, Grid, PackedList};

/// Bone `bone` (below the bone count) at `keys` blended by `alpha`: its static
/// parts read from the clip's static pose when one is attached, decoded otherwise,
/// then its animated sub-tracks.
#[inline(always)]
pub(crate) fn bone<V: Lanes>(clip: &Clip<'_>, keys: &[Key<'_>; 2], alpha: f32, bone: usize) -> Transform {
    bone_in::<V>(clip, keys, alpha, bone, clip.lists.animated_lists(bone))
}

/// [`bone`] given the lists in which the bone is animated
/// ([`crate::format::track_lists::TrackLists::animated_lists`]), when the caller has
/// read them already.
#[inline(always)]
pub(crate) fn bone_in<V: Lanes>(
    clip: &Clip<'_>,
    keys: &[Key<'_>; 2],
    alpha: f32,
    bone: usize,
    animated_lists: u8,
) -> Transform {
    let fixed = clip.statics.get(bone);
    let mut t = match fixed {
        Some(&t) => t,
        None => clip.default_transform(bone),
    };
    let constants = fixed.is_none();
    let lists = &clip.lists;
    let animated_in = |list: TrackList| (animated_lists >> (list as usize)) & 1 != 0;
    let constant_in = |list: TrackList| constants && lists.contains(bitset_index(false, list), bone);
    if animated_in(TrackList::Rotation3) {
        animated::<V, ROTATION3, 3>(clip, keys, alpha, bone, &mut t);
    } else if animated_in(TrackList::Rotation4) {
        animated::<V, ROTATION4, 4>(clip, keys, alpha, bone, &mut t);
    } else if constant_in(TrackList::Rotation3) {
        constant::<V, ROTATION3, 3>(clip, bone, &mut t);
    } else if constant_in(TrackList::Rotation4) {
        constant::<V, ROTATION4, 4>(clip, bone, &mut t);
    }
    if animated_in(TrackList::Translation) {
        animated::<V, TRANSLATION, 3>(clip, keys, alpha, bone, &mut t);
    } else if constant_in(TrackList::Translation) {
        constant::<V, TRANSLATION, 3>(clip, bone, &mut t);
    }
    if animated_in(TrackList::Scale) {
        animated::<V, SCALE, 3>(clip, keys, alpha, bone, &mut t);
    } else if constant_in(TrackList::Scale) {
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
    animated_in::<V, C>(clip, keys, alpha, list, &Place::of(clip, list, rank))
}

/// Where an animated sub-track's data are (format-spec/segments.md, Quads): its
/// quad, its lane, and the frame-directory block the quad's bit offset is counted
/// from. Depends on the sub-track alone, not on the segment: a [`crate::Subset`]
/// finds it once.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Place {
    /// Index among the animated sub-tracks of the quad's first.
    pub(crate) first: u32,
    /// The quad's lanes (1 to 4) and this sub-track's lane.
    pub(crate) lanes: u8,
    pub(crate) lane: u8,
    /// Components stored by the animated sub-tracks before the quad's first.
    pub(crate) before: u32,
    /// The frame-directory block of the quad, and the index of its first sub-track.
    block: u32,
    block_first: u32,
}

impl Place {
    /// The place of the animated sub-track of list rank `rank` in `list`.
    #[inline(always)]
    pub(crate) fn of(clip: &Clip<'_>, list: TrackList, rank: u32) -> Place {
        // Counts are bounded by the validated track descriptions: nothing wraps.
        let start = clip.animated_start(list);
        let lane = rank & (QUAD_LANES as u32).wrapping_sub(1);
        let first = start.wrapping_add(rank).wrapping_sub(lane);
        let lanes = clip.count(true, list).wrapping_sub(rank.wrapping_sub(lane)).min(QUAD_LANES as u32);
        let quad = clip.quads_before(list).wrapping_add(rank >> QUAD_LANES.trailing_zeros());
        let block = quad >> FRAME_BLOCK.trailing_zeros();
        Place {
            first,
            lanes: lanes as u8,
            lane: lane as u8,
            before: clip.animated_components_before(first),
            block,
            block_first: clip.quad_first(block.wrapping_mul(FRAME_BLOCK as u32)),
        }
    }
}

/// The values at key 0 and key 1 (key 0's again when `alpha` is 0) of the animated
/// sub-track of `list` (`C` components) at `place`: its quad decoded as in a whole
/// pose, one vector per component, then its lane taken (the same operations on
/// every lane, so the same bits).
#[inline(always)]
pub(crate) fn animated_in<'a, V: Lanes, const C: usize>(
    clip: &Clip<'a>,
    keys: &[Key<'a>; 2],
    alpha: f32,
    list: TrackList,
    place: &Place,
) -> (V, V) {
    lane_values::<V, C>(clip, keys, alpha, list, place)
}

/// The clip range of the animated sub-track of `list` (`C` components) at `place`:
/// each component's minimum and extent, dequantised. It does not change with time:
/// a [`crate::Subset`] finds it once.
#[inline(always)]
pub(crate) fn clip_range<V: Lanes, const C: usize>(clip: &Clip<'_>, list: TrackList, place: &Place) -> (V, V) {
    lane_range::<V, C>(clip, list, &lane(clip, place))
}

/// [`clip_range`] of the sub-track at `this`.
#[inline(always)]
fn lane_range<V: Lanes, const C: usize>(clip: &Clip<'_>, list: TrackList, this: &Lane<'_>) -> (V, V) {
    let bytes = clip.bytes;
    let (step, base) = if list.kind() == SubTrackKind::Rotation {
        (V::splat(ROTATION_STEP), V::splat(ROTATION_BASE))
    } else {
        let grid_at = clip.start(list).range_grid as usize;
        (floats::<V, C>(from(bytes, grid_at.wrapping_add(12))), floats::<V, C>(from(bytes, grid_at)))
    };
    let (mins, extents) = this.clip_range::<C>();
    (V::from_halves(mins).mul(step).add(base), V::from_halves(extents).mul(step))
}

/// The [`Lane`] of the animated sub-track at `place`.
#[inline(always)]
pub(crate) fn lane<'a>(clip: &Clip<'a>, place: &Place) -> Lane<'a> {
    Lane {
        bytes: clip.bytes,
        lanes: usize::from(place.lanes),
        lane: usize::from(place.lane),
        clip_at: clip.ranges_offset.wrapping_add((place.before as usize) << 2),
    }
}

/// [`animated_in`] of the sub-track of `list` at `place`.
#[inline(always)]
fn lane_values<'a, V: Lanes, const C: usize>(
    clip: &Clip<'a>,
    keys: &[Key<'a>; 2],
    alpha: f32,
    list: TrackList,
    place: &Place,
) -> (V, V) {
    let [key0, key1] = keys;
    let bytes = clip.bytes;
    let lanes = usize::from(place.lanes);
    let (first, before) = (place.first as usize, place.before as usize);
    let offset0 = frame_offset_in(clip, key0, place);
    // Both keys in one segment (most poses) share the offset and the rates.
    let same = key1.rates == key0.rates || alpha == 0.0;
    let offset1 = if same { offset0 } else { frame_offset_in(clip, key1, place) };
    let ranged = clip.segment_count > 1;
    let this = lane(clip, place);
    let key = |key: &Key<'a>, offset: u64| LaneKey {
        rates: rate_word(bytes, key.rates.wrapping_add(first), lanes),
        samples: key.samples,
        bit: key.frame_bit.wrapping_add(offset),
    };
    let (min, extent) = lane_range::<V, C>(clip, list, &this);
    let segment = |key: &Key<'_>| ranged.then(|| this.segment::<V, C>(key.segment_ranges.wrapping_add(before << 1)));
    let segment0 = segment(key0);
    let k0 = key(key0, offset0);
    let v0 = this.value::<V, C>(&k0, segment0.as_ref(), min, extent);
    let v1 = if alpha == 0.0 {
        v0
    } else if same {
        let k1 = LaneKey { samples: key1.samples, bit: key1.frame_bit.wrapping_add(offset1), ..k0 };
        this.value::<V, C>(&k1, segment0.as_ref(), min, extent)
    } else {
        this.value::<V, C>(&key(key1, offset1), segment(key1).as_ref(), min, extent)
    };
    (v0, v1)
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
    } else if clip.constant_width(list) != 0 {
        // 4.1: `C` integers of `width` bits per constant, packed from the list's byte.
        let width = clip.constant_width(list);
        let grid = if list.kind() == SubTrackKind::Rotation {
            Grid::<V>::rotation_packed::<C>(width)
        } else {
            Grid::<V>::of::<C>(clip.bytes, false, start.constant_grid as usize)
        };
        let count = clip.count(false, list) as usize;
        grid.apply(PackedList::<V>::new(width).constant::<C>(clip.bytes, start.constant_at as usize, rank, count))
    } else {
        let grid = Grid::<V>::of::<C>(clip.bytes, list.kind() == SubTrackKind::Rotation, start.constant_grid as usize);
        grid.apply(integers::<V, C>(clip.bytes, (start.constant_at as usize).wrapping_add(rank.wrapping_mul(C << 1))))
    }
}

/// Bit offset of the quad at `place` inside a key frame of `key`'s segment: a
/// frame-directory entry plus the bits of the sub-tracks from the first of its block
/// (at most [`FRAME_BLOCK`] − 1 quads) to the quad's first. Every sub-track stores
/// three components but the four-component rotations, which store one more.
#[inline(always)]
pub(crate) fn frame_offset_in(clip: &Clip<'_>, key: &Key<'_>, place: &Place) -> u64 {
    frame_offset_after(clip, key, place, None)
}

/// Where a quad's bits start in a key frame, as [`frame_offset_after`] found it: what
/// the next quad's offset can be counted on from.
#[derive(Clone, Copy, Debug)]
pub(crate) struct QuadOffset {
    /// The quad's frame-directory block and the index of its first sub-track.
    block: u32,
    first: u32,
    /// Its bit offset in a key frame.
    offset: u64,
}

/// [`frame_offset_in`], counted on from `after` (a quad of the same key frame found
/// before) when it lies in the same frame-directory block, at or before the quad at
/// `place`: the rates between the two are summed once rather than from the block's
/// first for each quad, when quads are visited in order.
#[inline(always)]
pub(crate) fn frame_offset_after(clip: &Clip<'_>, key: &Key<'_>, place: &Place, after: Option<QuadOffset>) -> u64 {
    let bytes = clip.bytes;
    let (from, base) = match after {
        Some(a) if a.block == place.block && a.first <= place.first => (a.first as usize, a.offset),
        _ => {
            let entry = match place.block.checked_sub(1) {
                Some(entry) => u32_at(bytes, key.directory.wrapping_add((entry as usize) << 2)).unwrap_or(0),
                None => 0,
            };
            (place.block_first as usize, u64::from(entry))
        }
    };
    let to = place.first as usize;
    let (r4, r4_end) = clip.rotation4_span();
    let (from4, to4) = (from.max(r4 as usize), to.min(r4_end as usize));
    let extra = if from4 < to4 { rate_sum(bytes, key.rates, from4, to4) } else { 0 };
    base.wrapping_add(rate_sum(bytes, key.rates, from, to).wrapping_mul(3)).wrapping_add(extra)
}

impl Place {
    /// Where the quad at this place starts, at bit `offset` of a key frame, for
    /// [`frame_offset_after`].
    #[inline(always)]
    pub(crate) fn offset_at(&self, offset: u64) -> QuadOffset {
        QuadOffset { block: self.block, first: self.first, offset }
    }
}

/// The sum of the bit rates `from .. to` (at most [`FRAME_BLOCK`] quads of them, 256
/// rates) of the rates at `rates`, eight bytes per step: bytes added in 16-bit lanes,
/// which hold 256 rates of at most 32.
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
