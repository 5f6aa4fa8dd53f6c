//! Whole-pose decoding: the identity everywhere, then each list's constant
//! sub-tracks, then each list's animated ones, every list visited through its bone
//! bit set with one function specialised for it (component count, kind), so the
//! cost follows the stored sub-tracks, not the bone count, and no per-sub-track
//! decision is made at run time that the list already decides.

use crate::clip::Clip;
use crate::decode::{finish_rotations, floats, key_value, lerp, range_words, Rotations};
use crate::format::{bitset_index, SubTrackKind, TrackList};
use crate::sampler::Key;
use crate::simd::Lanes;
use crate::transform::Transform;

/// List indices as const parameters (`TrackList as usize`, read back with
/// [`TrackList::from_index`]).
pub(crate) const ROTATION3: usize = TrackList::Rotation3 as usize;
pub(crate) const ROTATION4: usize = TrackList::Rotation4 as usize;
pub(crate) const TRANSLATION: usize = TrackList::Translation as usize;
pub(crate) const SCALE: usize = TrackList::Scale as usize;

/// Decodes every bone of `clip` at `keys` blended by `alpha` into `out` (at least
/// `bone_count` long; a shorter slice is filled as far as it goes).
#[inline(always)]
pub(crate) fn pose<V: Lanes>(clip: &Clip<'_>, keys: &[Key; 2], alpha: f32, out: &mut [Transform]) {
    // Both keys in one segment (every pose of a single-segment clip, and most of
    // the others): they share bit rates and segment ranges, read once.
    let same = keys[0].rates == keys[1].rates;
    match (clip.segment_count > 1, same) {
        (true, true) => pose_with::<V, true, true>(clip, keys, alpha, out),
        (true, false) => pose_with::<V, true, false>(clip, keys, alpha, out),
        (false, _) => pose_with::<V, false, true>(clip, keys, alpha, out),
    }
}

/// [`pose`] for a clip with (`RANGED`) or without segment ranges, with both keys in
/// one segment (`SAME`) or not.
#[inline(always)]
fn pose_with<V: Lanes, const RANGED: bool, const SAME: bool>(
    clip: &Clip<'_>,
    keys: &[Key; 2],
    alpha: f32,
    out: &mut [Transform],
) {
    let out = match out.get_mut(..clip.bone_count as usize) {
        Some(out) => out,
        None => out,
    };
    for t in out.iter_mut() {
        *t = Transform::IDENTITY;
    }
    constants::<V, ROTATION3, 3>(clip, out);
    constants::<V, ROTATION4, 4>(clip, out);
    constants::<V, TRANSLATION, 3>(clip, out);
    constants::<V, SCALE, 3>(clip, out);
    // Bit offsets of the next animated sub-track in each key frame: the sum of the
    // bit rates before it, carried from list to list.
    let mut bits = [keys[0].frame_bit, keys[1].frame_bit];
    animated::<V, ROTATION3, 3, RANGED, SAME>(clip, keys, alpha, &mut bits, out);
    animated::<V, ROTATION4, 4, RANGED, SAME>(clip, keys, alpha, &mut bits, out);
    animated::<V, TRANSLATION, 3, RANGED, SAME>(clip, keys, alpha, &mut bits, out);
    animated::<V, SCALE, 3, RANGED, SAME>(clip, keys, alpha, &mut bits, out);
}

/// The `len` bytes at `at`: always there in a validated clip (an empty slice
/// otherwise, which decodes nothing).
#[inline(always)]
fn span(bytes: &[u8], at: usize, len: usize) -> &[u8] {
    bytes.get(at..at.saturating_add(len)).unwrap_or(&[])
}

/// The constant sub-tracks of list `L` (`C` components each).
#[inline(always)]
fn constants<V: Lanes, const L: usize, const C: usize>(clip: &Clip<'_>, out: &mut [Transform]) {
    let list = TrackList::from_index(L);
    const { assert!(TrackList::from_index(L).components() as usize == C) };
    // Bounded by the validated constants section: nothing wraps.
    let at = clip.constants_offset.wrapping_add((clip.constant_components_before(list) as usize) << 2);
    let len = (clip.count(false, list) as usize).wrapping_mul(C << 2);
    let stored = span(clip.bytes, at, len);
    let mut bones = clip.lists.bones(bitset_index(false, list));
    if list.kind() == SubTrackKind::Rotation {
        // Four values stored back to back load as one vector per component: no
        // gather, no transpose on the way in.
        let mut groups = stored.chunks_exact(C << 4);
        for group in &mut groups {
            let load = |i: usize| floats::<V, 4>(group.get(i << 4..).unwrap_or(&[]));
            let k = if C == 4 {
                V::transpose([load(0), load(1), load(2), load(3)])
            } else {
                let [x, y, z] = V::deinterleave3([load(0), load(1), load(2)]);
                [x, y, z, V::splat(0.0)]
            };
            constant_rotations::<V, C>(k, &mut bones, out);
        }
        // The last one to three, one value per vector, transposed (unused lanes zero).
        let rest = groups.remainder();
        if !rest.is_empty() {
            let load = |i: usize| floats::<V, C>(rest.get(i.wrapping_mul(C << 2)..).unwrap_or(&[]));
            constant_rotations::<V, C>(V::transpose([load(0), load(1), load(2), V::splat(0.0)]), &mut bones, out);
        }
    } else {
        for (bone, value) in bones.zip(stored.chunks_exact(C << 2)) {
            if let Some(t) = out.get_mut(bone) {
                write::<V, L>(floats::<V, C>(value), t);
            }
        }
    }
}

/// Finishes up to four constant rotations given one vector per component (`C` = 3:
/// `w` rebuilt) and stores them in the next bones of `bones`, one per rotation
/// (fewer when `bones` ends first: the lanes past the last value are unused).
#[inline(always)]
fn constant_rotations<V: Lanes, const C: usize>(
    k: [V; 4],
    bones: &mut impl Iterator<Item = usize>,
    out: &mut [Transform],
) {
    let finished = V::transpose(finish_rotations(C == 3, k, k, 0.0));
    for q in finished {
        if let Some(t) = bones.next().and_then(|bone| out.get_mut(bone)) {
            t.rotation = q.to_quat();
        }
    }
}

/// The animated sub-tracks of list `L` (`C` components each) of a clip with
/// (`RANGED`) or without segment ranges, the keys in one segment (`SAME`: key 1's
/// bit rates and segment ranges are key 0's) or not; `bits` is where the list's
/// samples start in each key frame, and where the next list's start on return.
#[inline(always)]
fn animated<V: Lanes, const L: usize, const C: usize, const RANGED: bool, const SAME: bool>(
    clip: &Clip<'_>,
    keys: &[Key; 2],
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
    let bytes = clip.bytes;
    let [key0, key1] = keys;
    // Every span below is inside a section validation checked; nothing wraps.
    let index = clip.animated_start(list) as usize;
    let before = clip.animated_components_before(index as u32) as usize;
    let ranges = span(bytes, clip.ranges_offset.wrapping_add(before << 3), count.wrapping_mul(C << 3));
    let rates0 = span(bytes, key0.rates.wrapping_add(index), count);
    let rates1 = span(bytes, key1.rates.wrapping_add(index), count);
    let segment_len = if RANGED { count.wrapping_mul(C << 1) } else { 0 };
    let segment0 = span(bytes, key0.segment_ranges.wrapping_add(before << 1), segment_len);
    let segment1 = span(bytes, key1.segment_ranges.wrapping_add(before << 1), segment_len);
    let [mut bit0, mut bit1] = *bits;
    let mut batch = Rotations::<V>::new();
    let bones = clip.lists.bones(bitset_index(true, list));
    for (k, ((bone, range), (&rate0, &rate1))) in
        bones.zip(ranges.chunks_exact(C << 3)).zip(rates0.iter().zip(rates1)).enumerate()
    {
        let (min, extent) = range.split_at(C << 2);
        let (min, extent) = (floats::<V, C>(min), floats::<V, C>(extent));
        let segment =
            |bytes: &[u8]| RANGED.then(|| range_words::<C>(bytes.get(k.wrapping_mul(C << 1)..).unwrap_or(&[])));
        let range0 = segment(segment0);
        let v0 = key_value::<V, C>(bytes, rate0, bit0, range0, min, extent);
        let rate1 = if SAME { rate0 } else { rate1 };
        let v1 = if alpha == 0.0 {
            v0
        } else {
            key_value::<V, C>(bytes, rate1, bit1, if SAME { range0 } else { segment(segment1) }, min, extent)
        };
        if list.kind() == SubTrackKind::Rotation {
            if batch.push(bone, v0, v1) {
                flush::<V, C>(&mut batch, alpha, out);
            }
        } else if let Some(t) = out.get_mut(bone) {
            write::<V, L>(if alpha == 0.0 { v0 } else { lerp(v0, v1, alpha) }, t);
        }
        bit0 = bit0.wrapping_add(u64::from(rate0).wrapping_mul(C as u64));
        bit1 = bit1.wrapping_add(u64::from(rate1).wrapping_mul(C as u64));
    }
    *bits = [bit0, bit1];
    if list.kind() == SubTrackKind::Rotation {
        flush::<V, C>(&mut batch, alpha, out);
    }
}

/// Finishes the batched rotations (`C` = 3: `w` rebuilt) and stores them in their
/// bones.
#[inline(always)]
fn flush<V: Lanes, const C: usize>(rotations: &mut Rotations<V>, alpha: f32, out: &mut [Transform]) {
    if rotations.len == 0 {
        return;
    }
    let (bones, len) = (rotations.bones, rotations.len);
    let finished = rotations.finish(C == 3, alpha);
    for (&bone, q) in bones.iter().zip(finished).take(len) {
        if let Some(t) = out.get_mut(bone) {
            t.rotation = q.to_quat();
        }
    }
}

/// Stores a decoded value in the part of `t` list `L` names.
#[inline(always)]
pub(crate) fn write<V: Lanes, const L: usize>(value: V, t: &mut Transform) {
    match TrackList::from_index(L) {
        TrackList::Rotation3 | TrackList::Rotation4 => t.rotation = value.to_quat(),
        TrackList::Translation => t.translation = value.to_vec3(),
        TrackList::Scale => t.scale = value.to_vec3(),
    }
}
