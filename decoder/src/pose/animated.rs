//! The animated sub-tracks of a pose, list by list and quad by quad
//! (format-spec/segments.md, Quads): each quad's four lanes decoded together, one
//! vector per component, finished four at a time, and written to their bones. What
//! a kept pose rewrites on every call, so the loop is written for it: each list's
//! bytes are checked once and walked in fixed-size runs, a quad's reads are at fixed
//! offsets, and its last quad (1 to 3 lanes) takes the same code with its words
//! read lane by lane.

use crate::format::bytes::f32_at;
use crate::format::clip::Clip;
use crate::format::{bitset_index, SubTrackKind, TrackList, QUAD_LANES, ROTATION_BASE, ROTATION_STEP};
use crate::pose::finish::{finish_rotations, finish_single, lerp};
use crate::pose::lists::{put, put_lanes, ROTATION3, ROTATION4, SCALE, TRANSLATION};
use crate::seek::Key;
use crate::simd::Lanes;
use crate::transform::Transform;
use crate::unpack::quad::{
    quad_values, rate_word, window, Groups, Lane, LaneKey, QuadBits, QuadKey, QuadRates, Window, ZEROS,
};
use crate::unpack::values::floats;

/// Writes the animated sub-tracks of every list at `keys` blended by `alpha` into
/// `out`, and nothing else: the parts of a bone no animated sub-track covers keep
/// what `out` holds.
#[inline(always)]
pub(crate) fn animated_part<V: Lanes>(clip: &Clip<'_>, keys: &[Key<'_>; 2], alpha: f32, out: &mut [Transform]) {
    // Both keys in one segment (every pose of a single-segment clip, and most of
    // the others): they share bit rates and segment ranges, read once.
    let same = keys[0].rates == keys[1].rates;
    match (clip.segment_count > 1, same) {
        (true, true) => animated_with::<V, true, true>(clip, keys, alpha, out),
        (true, false) => animated_with::<V, true, false>(clip, keys, alpha, out),
        (false, _) => animated_with::<V, false, true>(clip, keys, alpha, out),
    }
}

/// [`animated_part`] for a clip with (`RANGED`) or without segment ranges, with both
/// keys in one segment (`SAME`) or not.
#[inline(always)]
fn animated_with<V: Lanes, const RANGED: bool, const SAME: bool>(
    clip: &Clip<'_>,
    keys: &[Key<'_>; 2],
    alpha: f32,
    out: &mut [Transform],
) {
    // Bit offsets of the next quad in each key frame: the bits of the quads before
    // it, carried from list to list.
    let mut bits = [keys[0].frame_bit, keys[1].frame_bit];
    list::<V, ROTATION3, 3, RANGED, SAME>(clip, keys, alpha, &mut bits, out);
    list::<V, ROTATION4, 4, RANGED, SAME>(clip, keys, alpha, &mut bits, out);
    list::<V, TRANSLATION, 3, RANGED, SAME>(clip, keys, alpha, &mut bits, out);
    list::<V, SCALE, 3, RANGED, SAME>(clip, keys, alpha, &mut bits, out);
}

/// The animated sub-tracks of list `L` (`C` components each); `bits` is where the
/// list's samples start in each key frame, and where the next list's start on
/// return. `RANGED`, `SAME`: as for [`animated_with`].
#[inline(always)]
fn list<V: Lanes, const L: usize, const C: usize, const RANGED: bool, const SAME: bool>(
    clip: &Clip<'_>,
    keys: &[Key<'_>; 2],
    alpha: f32,
    bits: &mut [u64; 2],
    out: &mut [Transform],
) {
    let list = TrackList::from_index(L);
    const { assert!(TrackList::from_index(L).components() as usize == C) };
    let count = clip.count(true, list) as usize;
    if count == 0 {
        return;
    }
    let [key0, key1] = keys;
    let start = clip.start(list);
    let grid = range_grid::<V>(clip, list);
    let mut bones = clip.lists.bones(bitset_index(true, list));
    // Where the list's bytes start: its rates in each key's segment, its clip ranges
    // (four bytes per component), its segment range bytes (two per component).
    // Everything is inside sections validation checked: nothing wraps.
    let index = start.animated_index as usize;
    let before = start.animated_components as usize;
    let mut at = At {
        rates: [key0.rates.wrapping_add(index), key1.rates.wrapping_add(index)],
        clip: clip.ranges_offset.wrapping_add(before << 2),
        segment: [key0.segment_ranges.wrapping_add(before << 1), key1.segment_ranges.wrapping_add(before << 1)],
    };
    let samples = ListSamples { clip, keys, alpha, grid };
    // The whole quads (where every offset is a constant), then the last one when
    // the count is not a multiple of four.
    for _ in 0..count / QUAD_LANES {
        decode::<V, L, C, RANGED, SAME>(&samples, &mut at, QUAD_LANES, bits, &mut bones, out);
    }
    // A last quad of one lane is one sub-track: read alone, as a single bone is
    // (its components in the lanes of one vector), it costs about half a quad.
    match count % QUAD_LANES {
        0 => {}
        1 => single::<V, L, C, RANGED, SAME>(clip, &at, keys, alpha, bits, &mut bones, out),
        lanes => decode::<V, L, C, RANGED, SAME>(&samples, &mut at, lanes, bits, &mut bones, out),
    }
}

/// The clip-range grid of `list`: each component's step and base, one vector per
/// component (every lane the same).
#[inline(always)]
pub(crate) fn range_grid<V: Lanes>(clip: &Clip<'_>, list: TrackList) -> [(V, V); 4] {
    if list.kind() == SubTrackKind::Rotation {
        [(V::splat(ROTATION_STEP), V::splat(ROTATION_BASE)); 4]
    } else {
        let at = clip.start(list).range_grid as usize;
        let value = |offset: usize| V::splat(f32_at(clip.bytes, at.wrapping_add(offset)).unwrap_or(0.0));
        core::array::from_fn(|m| (value(m.wrapping_mul(4).wrapping_add(12)), value(m.wrapping_mul(4))))
    }
}

/// What every quad of one list is decoded with: the clip, the two key frames and
/// the blend between them, and the list's clip-range grid, one vector per
/// component (every lane the same).
struct ListSamples<'a, 'c, V: Lanes> {
    clip: &'a Clip<'c>,
    keys: &'a [Key<'c>; 2],
    alpha: f32,
    grid: [(V, V); 4],
}

/// The quad of one lane of list `L` at `at` (a list's last sub-track when its count
/// is one more than a multiple of four), decoded as [`Lane`] decodes a single
/// bone's, written to the next bone of `bones`; moves `bits` past it. The same
/// operations on the same numbers as [`decode`]: the same bits.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn single<V: Lanes, const L: usize, const C: usize, const RANGED: bool, const SAME: bool>(
    clip: &Clip<'_>,
    at: &At,
    keys: &[Key<'_>; 2],
    alpha: f32,
    bits: &mut [u64; 2],
    bones: &mut impl Iterator<Item = usize>,
    out: &mut [Transform],
) {
    let bytes = clip.bytes;
    let [key0, key1] = keys;
    let lane = Lane { bytes, lanes: 1, lane: 0, clip_at: at.clip };
    // The list's grid as vectors across components.
    let list = TrackList::from_index(L);
    let (step, base) = if list.kind() == SubTrackKind::Rotation {
        (V::splat(ROTATION_STEP), V::splat(ROTATION_BASE))
    } else {
        let at = clip.start(list).range_grid as usize;
        let from = |at: usize| bytes.get(at..).unwrap_or(&[]);
        (floats::<V, C>(from(at.wrapping_add(12))), floats::<V, C>(from(at)))
    };
    let (mins, extents) = lane.clip_range::<C>();
    let min = V::from_halves(mins).mul(step).add(base);
    let extent = V::from_halves(extents).mul(step);
    let rate = |k: usize| rate_word(bytes, at.rates.get(k).copied().unwrap_or(0), 1);
    let segment = |k: usize| RANGED.then(|| lane.segment::<V, C>(at.segment.get(k).copied().unwrap_or(0)));
    let (rate0, segment0) = (rate(0), segment(0));
    let k0 = LaneKey { rates: rate0, samples: key0.samples, bit: bits[0] };
    let v0 = lane.value::<V, C>(&k0, segment0.as_ref(), min, extent);
    let rate1 = if SAME { rate0 } else { rate(1) };
    let v1 = if alpha == 0.0 {
        v0
    } else {
        let k1 = LaneKey { rates: rate1, samples: key1.samples, bit: bits[1] };
        let segment1 = if SAME { segment0 } else { segment(1) };
        lane.value::<V, C>(&k1, segment1.as_ref(), min, extent)
    };
    bits[0] = bits[0].wrapping_add(u64::from(rate0).wrapping_mul(C as u64));
    bits[1] = bits[1].wrapping_add(u64::from(rate1).wrapping_mul(C as u64));
    let value = finish_single::<V, L, C>(v0, v1, alpha);
    put::<V, L>(value, bones, out);
}

/// Where the next quad's bytes are: its rate bytes in each key's segment, its clip
/// ranges, its segment range bytes in each key's segment.
struct At {
    rates: [usize; 2],
    clip: usize,
    segment: [usize; 2],
}

/// Decodes the quad of `lanes` lanes (1 to 4) of list `L` at `at`, writes its lanes
/// to the next bones of `bones`, and moves `at` and `bits` past it.
#[inline(always)]
fn decode<V: Lanes, const L: usize, const C: usize, const RANGED: bool, const SAME: bool>(
    list: &ListSamples<'_, '_, V>,
    at: &mut At,
    lanes: usize,
    bits: &mut [u64; 2],
    bones: &mut impl Iterator<Item = usize>,
    out: &mut [Transform],
) {
    let ListSamples { clip, keys, alpha, ref grid } = *list;
    // Key 1 is read only when it weighs something.
    let interpolate = alpha != 0.0;
    let bytes = clip.bytes;
    let [key0, key1] = keys;
    // Each byte range in one window, checked once (its copy near the buffer's end).
    let (mut spare_clip, mut spare0, mut spare1) = (None, None, None);
    let (mut spare_bits0, mut spare_bits1) = (None, None);
    let clip_groups = Groups { window: window(bytes, at.clip, &mut spare_clip), lanes };
    // (Functions, not closures: a closure the compiler leaves out of line would lose
    // the AVX2 code generation of the function it is written in.)
    let segment0 = Groups { window: segment_window::<RANGED>(bytes, at.segment[0], &mut spare0), lanes };
    let rates0 = QuadRates::<V>::new(rate_word(bytes, at.rates[0], lanes), lanes);
    let bits0 = quad_bits(key0.samples, bits[0], &mut spare_bits0);
    let k0 = QuadKey { rates: rates0, segment: segment0, bits: bits0 };
    let k1 = if !interpolate {
        k0
    } else if SAME {
        QuadKey { bits: quad_bits(key1.samples, bits[1], &mut spare_bits1), ..k0 }
    } else {
        QuadKey {
            rates: QuadRates::<V>::new(rate_word(bytes, at.rates[1], lanes), lanes),
            segment: Groups { window: segment_window::<RANGED>(bytes, at.segment[1], &mut spare1), lanes },
            bits: quad_bits(key1.samples, bits[1], &mut spare_bits1),
        }
    };
    // Quads without rate-0 or raw lanes (most) take code without their selects.
    let (v0, v1) = if k0.rates.special || k1.rates.special {
        quad_values::<V, C, RANGED, SAME, true>(grid, &clip_groups, &k0, &k1, interpolate)
    } else {
        quad_values::<V, C, RANGED, SAME, false>(grid, &clip_groups, &k0, &k1, interpolate)
    };
    bits[0] = bits[0].wrapping_add(u64::from(k0.rates.width).wrapping_mul(C as u64));
    bits[1] = bits[1].wrapping_add(u64::from(k1.rates.width).wrapping_mul(C as u64));
    at.rates = at.rates.map(|r| r.wrapping_add(lanes));
    at.clip = at.clip.wrapping_add(lanes.wrapping_mul(C << 2));
    at.segment = at.segment.map(|r| r.wrapping_add(lanes.wrapping_mul(C << 1)));
    store::<V, L, C>(v0, v1, alpha, lanes, bones, out);
}

/// Where a quad's bits start in a key frame's `samples`: at bit `bit`.
#[inline(always)]
pub(crate) fn quad_bits<'a>(samples: &'a [u8], bit: u64, spare: &'a mut Option<Window>) -> QuadBits<'a> {
    QuadBits { samples, bit, window: window(samples, usize::try_from(bit >> 3).unwrap_or(usize::MAX), spare) }
}

/// The window of a quad's segment range bytes at byte `at` (zeros, never read,
/// without segment ranges).
#[inline(always)]
fn segment_window<'a, const RANGED: bool>(bytes: &'a [u8], at: usize, spare: &'a mut Option<Window>) -> &'a Window {
    if RANGED {
        window(bytes, at, spare)
    } else {
        &ZEROS
    }
}

/// Finishes a quad's values (one vector per component at each key) and stores lane
/// `j` in the `j`-th next bone of `bones`, for the first `lanes`.
#[inline(always)]
pub(crate) fn store<V: Lanes, const L: usize, const C: usize>(
    k0: [V; 4],
    k1: [V; 4],
    alpha: f32,
    lanes: usize,
    bones: &mut impl Iterator<Item = usize>,
    out: &mut [Transform],
) {
    let rotation = TrackList::from_index(L).kind() == SubTrackKind::Rotation;
    let values = if rotation {
        V::transpose(finish_rotations(C == 3, k0, k1, alpha))
    } else if alpha != 0.0 {
        V::transpose(core::array::from_fn(|m| match (k0.get(m), k1.get(m)) {
            (Some(&a), Some(&b)) if m < C => lerp(a, b, alpha),
            _ => V::splat(0.0),
        }))
    } else {
        V::transpose(k0)
    };
    put_lanes::<V, L>(values, lanes, bones, out);
}
