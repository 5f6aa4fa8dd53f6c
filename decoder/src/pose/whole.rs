//! Whole-pose decoding: the identity everywhere, then each list's constant
//! sub-tracks, then each list's animated ones, every list visited through its bone
//! bit set with one function specialised for it (component count, kind), so the
//! cost follows the stored sub-tracks, not the bone count, and no per-sub-track
//! decision is made at run time that the list already decides.

use crate::format::additive::Additive;
use crate::format::clip::Clip;
use crate::format::{bitset_index, SubTrackKind, TrackList, QUAD_LANES, ROTATION_BASE, ROTATION_STEP};
use crate::pose::animated::animated_part;
use crate::pose::finish::{finish_rotation, finish_rotations};
use crate::pose::lists::{put, put_lanes, write, ROTATION3, ROTATION4, SCALE, TRANSLATION};
use crate::seek::Key;
use crate::simd::Lanes;
use crate::transform::Transform;
use crate::unpack::values::{floats, integers, Grid, PackedList};

/// Decodes every bone of `clip` at `keys` blended by `alpha` into `out` (at least
/// `bone_count` long; a shorter slice is filled as far as it goes): the parts that do
/// not change with time ([`statics`]), then the animated sub-tracks ([`animated_part`]).
#[inline(always)]
pub(crate) fn pose<V: Lanes>(clip: &Clip<'_>, keys: &[Key<'_>; 2], alpha: f32, out: &mut [Transform]) {
    statics::<V>(clip, out);
    animated_part::<V>(clip, keys, alpha, out);
}

/// Writes what does not change with time into `out` (at least `bone_count` long; a
/// shorter slice is filled as far as it goes): a copy of the clip's static pose when
/// one is attached ([`Clip::with_static_pose`]), else [`decode_statics`]. A kept pose
/// ([`crate::KeptPose`]) writes this once per clip.
#[inline(always)]
pub(crate) fn statics<V: Lanes>(clip: &Clip<'_>, out: &mut [Transform]) {
    match out.get_mut(..clip.statics.len()) {
        Some(out) if !clip.statics.is_empty() => out.copy_from_slice(clip.statics),
        _ => decode_statics::<V>(clip, out),
    }
}

/// Decodes what does not change with time into `out` (at least `bone_count` long; a
/// shorter slice is filled as far as it goes): the default value of every part of
/// every bone (the identity, or the database's shared pose), then each list's
/// constant sub-tracks.
#[inline(always)]
pub(crate) fn decode_statics<V: Lanes>(clip: &Clip<'_>, out: &mut [Transform]) {
    let out = match out.get_mut(..clip.bone_count as usize) {
        Some(out) => out,
        None => out,
    };
    if clip.defaults.is_empty() {
        for t in out.iter_mut() {
            *t = Transform::IDENTITY;
        }
        // An additive1 clip's default scale is 0 (a separate pass, so that the common
        // case fills constant identities).
        if clip.additive() == Additive::Additive1 {
            for t in out.iter_mut() {
                t.scale = glam::Vec3::ZERO;
            }
        }
    } else {
        // Default values from the database's shared pose (one per bone, validated):
        // a copy, where a stored constant would be decoded.
        for (t, values) in out.iter_mut().zip(clip.defaults) {
            *t = crate::format::shared_pose::transform_of(values);
        }
    }
    constants::<V, ROTATION3, 3>(clip, out);
    constants::<V, ROTATION4, 4>(clip, out);
    constants::<V, TRANSLATION, 3>(clip, out);
    constants::<V, SCALE, 3>(clip, out);
}

/// The `len` bytes at `at`: always there in a validated clip (an empty slice
/// otherwise, which decodes nothing).
#[inline(always)]
pub(crate) fn span(bytes: &[u8], at: usize, len: usize) -> &[u8] {
    bytes.get(at..at.saturating_add(len)).unwrap_or(&[])
}

/// The constant sub-tracks of list `L` (`C` components each), raw `f32` or
/// quantised.
#[inline(always)]
fn constants<V: Lanes, const L: usize, const C: usize>(clip: &Clip<'_>, out: &mut [Transform]) {
    let list = TrackList::from_index(L);
    const { assert!(TrackList::from_index(L).components() as usize == C) };
    let count = clip.count(false, list) as usize;
    if count == 0 {
        return;
    }
    let raw = clip.raw_constants(list);
    let at = clip.start(list).constant_at as usize;
    let width = clip.constant_width(list);
    if width != 0 {
        return packed_constants::<V, L, C>(clip, at, width, count, out);
    }
    // Bounded by the validated constants section: nothing wraps.
    let stored = span(clip.bytes, at, count.wrapping_mul(if raw { C << 2 } else { C << 1 }));
    let rotation = list.kind() == SubTrackKind::Rotation;
    match (rotation, raw) {
        (true, true) => {
            let mut bones = clip.lists.bones(bitset_index(false, list));
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
                constant_rotations::<V, L, C>(k, &mut bones, out);
            }
            // The last one to three, one at a time.
            for value in groups.remainder().chunks_exact(C << 2) {
                single_rotation::<V, L, C>(floats::<V, C>(value), &mut bones, out);
            }
        }
        (true, false) => {
            let mut bones = clip.lists.bones(bitset_index(false, list));
            // Four values of `C` integers are `C` words: widened, regrouped by
            // component, then put on the rotation grid (the same in every lane).
            let (step, base) = (V::splat(ROTATION_STEP), V::splat(ROTATION_BASE));
            let mut groups = stored.chunks_exact(C << 3);
            for group in &mut groups {
                let load = |i: usize| integers::<V, 4>(group, i << 3);
                let k = if C == 4 {
                    V::transpose([load(0), load(1), load(2), load(3)])
                } else {
                    let [x, y, z] = V::deinterleave3([load(0), load(1), load(2)]);
                    [x, y, z, V::splat(0.0)]
                };
                constant_rotations::<V, L, C>(k.map(|q| q.mul(step).add(base)), &mut bones, out);
            }
            // The last one to three, one at a time, on the grid (which clears the
            // lanes past `C`).
            let grid = Grid::<V>::rotation::<C>();
            let rest = groups.remainder();
            let rest_at = at.wrapping_add(stored.len().wrapping_sub(rest.len()));
            for i in 0..rest.len().checked_div(C << 1).unwrap_or(0) {
                let value = grid.apply(integers::<V, C>(clip.bytes, rest_at.wrapping_add(i.wrapping_mul(C << 1))));
                single_rotation::<V, L, C>(value, &mut bones, out);
            }
        }
        (false, true) => {
            let mut values = stored.chunks_exact(C << 2);
            clip.lists.for_each_bone(bitset_index(false, list), |bone| match (values.next(), out.get_mut(bone)) {
                (Some(value), Some(t)) => {
                    write::<V, L>(floats::<V, C>(value), t);
                    true
                }
                _ => false,
            });
        }
        (false, false) => {
            let grid = Grid::<V>::of::<C>(clip.bytes, false, clip.start(list).constant_grid as usize);
            // Each value's three integers end an 8-byte load that starts two bytes
            // before them: the window runs from two bytes before the first to the end
            // of the last. (A crafted buffer may put the section at offset 0: then
            // each value is read on its own.)
            match at.checked_sub(2).and_then(|from| clip.bytes.get(from..at.wrapping_add(stored.len()))) {
                Some(mut rest) => clip.lists.for_each_bone(bitset_index(false, list), |bone| {
                    match (rest.split_first_chunk::<8>(), out.get_mut(bone)) {
                        (Some((word, _)), Some(t)) => {
                            write::<V, L>(grid.apply(V::from_halves(u64::from_le_bytes(*word) >> 16)), t);
                            rest = rest.get(C << 1..).unwrap_or(&[]);
                            true
                        }
                        _ => false,
                    }
                }),
                None => constants_at_start::<V, L, C>(clip, at, &grid, out),
            }
        }
    }
}

/// The `count` constants of list `L` packed on `width` bits from byte `at` (4.1,
/// format-spec/tracks.md): each value's `C` integers read apart, then put on the
/// list's grid; rotations finished four at a time.
#[inline(always)]
fn packed_constants<V: Lanes, const L: usize, const C: usize>(
    clip: &Clip<'_>,
    at: usize,
    width: u8,
    count: usize,
    out: &mut [Transform],
) {
    let list = TrackList::from_index(L);
    // Loads past the section read what follows it (masked off) or zeros past the
    // buffer (`u64_at_or_zero`): nothing wraps, nothing faults.
    // Written without closures: a closure is compiled apart from the backend's
    // target features, and its vector operations would become calls.
    let reader = PackedList::<V>::new(width);
    let bytes = clip.bytes;
    let mut bones = clip.lists.bones(bitset_index(false, list));
    let grid = if list.kind() == SubTrackKind::Rotation {
        Grid::<V>::rotation_packed::<C>(width)
    } else {
        Grid::<V>::of::<C>(bytes, false, clip.start(list).constant_grid as usize)
    };
    // Full quads: each component of four constants in one vector, put on the grid.
    let full = count >> 2;
    let (step, base) = (grid.step.to_array(), grid.base.to_array());
    let [s0, s1, s2, s3] = step.map(V::splat);
    let [b0, b1, b2, b3] = base.map(V::splat);
    let stride = reader.component_len();
    let mut byte = at;
    let mut g = 0;
    while g < full {
        let x = reader.quad_component(bytes, byte).mul(s0).add(b0);
        let y = reader.quad_component(bytes, byte.wrapping_add(stride)).mul(s1).add(b1);
        let z = reader.quad_component(bytes, byte.wrapping_add(stride << 1)).mul(s2).add(b2);
        let w = if C == 4 {
            reader.quad_component(bytes, byte.wrapping_add(stride.wrapping_mul(3))).mul(s3).add(b3)
        } else {
            V::splat(0.0)
        };
        byte = byte.wrapping_add(stride.wrapping_mul(C));
        let k = [x, y, z, w];
        if list.kind() == SubTrackKind::Rotation {
            constant_rotations::<V, L, C>(k, &mut bones, out);
        } else {
            put_lanes::<V, L>(V::transpose(k), QUAD_LANES, &mut bones, out);
        }
        g = g.wrapping_add(1);
    }
    // The last one to three, one at a time.
    let mut i = full << 2;
    while i < count {
        let value = grid.apply(reader.constant::<C>(bytes, at, i, count));
        if list.kind() == SubTrackKind::Rotation {
            single_rotation::<V, L, C>(value, &mut bones, out);
        } else if let Some(t) = bones.next().and_then(|bone| out.get_mut(bone)) {
            write::<V, L>(value, t);
        }
        i = i.wrapping_add(1);
    }
}

/// The quantised constants of list `L` of a crafted buffer whose constants start at
/// offset 0 or 1, read one value at a time (never a reference encoder's layout).
#[cold]
#[inline(never)]
fn constants_at_start<V: Lanes, const L: usize, const C: usize>(
    clip: &Clip<'_>,
    at: usize,
    grid: &Grid<V>,
    out: &mut [Transform],
) {
    let list = TrackList::from_index(L);
    let mut next = at;
    clip.lists.for_each_bone(bitset_index(false, list), |bone| match out.get_mut(bone) {
        Some(t) => {
            write::<V, L>(grid.apply(integers::<V, C>(clip.bytes, next)), t);
            next = next.wrapping_add(C << 1);
            true
        }
        None => false,
    });
}

/// Finishes one constant rotation (`C` = 3: `w` rebuilt) and stores it in the next
/// bone of `bones`: the same bits as [`constant_rotations`] gives it, for less work
/// than four lanes when a list ends with fewer than four.
#[inline(always)]
fn single_rotation<V: Lanes, const L: usize, const C: usize>(
    value: V,
    bones: &mut impl Iterator<Item = usize>,
    out: &mut [Transform],
) {
    put::<V, L>(finish_rotation(C == 3, value, value, 0.0), bones, out);
}

/// Finishes up to four constant rotations given one vector per component (`C` = 3:
/// `w` rebuilt) and stores them in the next bones of `bones`, one per rotation
/// (fewer when `bones` ends first: the lanes past the last value are unused).
#[inline(always)]
fn constant_rotations<V: Lanes, const L: usize, const C: usize>(
    k: [V; 4],
    bones: &mut impl Iterator<Item = usize>,
    out: &mut [Transform],
) {
    put_lanes::<V, L>(V::transpose(finish_rotations(C == 3, k, k, 0.0)), QUAD_LANES, bones, out);
}
