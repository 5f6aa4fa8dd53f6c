//! Whole-pose decoding: the identity everywhere, then each list's constant
//! sub-tracks, then each list's animated ones, every list visited through its bone
//! bit set with one function specialised for it (component count, kind), so the
//! cost follows the stored sub-tracks, not the bone count, and no per-sub-track
//! decision is made at run time that the list already decides.

use crate::format::additive::Additive;
use crate::format::clip::Clip;
use crate::format::{bitset_index, SubTrackKind, TrackList, ROTATION_BASE, ROTATION_STEP};
use crate::pose::finish::{finish_rotation, finish_rotations, lerp};
use crate::pose::lists::{write, ROTATION3, ROTATION4, SCALE, TRANSLATION};
use crate::seek::Key;
use crate::simd::Lanes;
use crate::transform::Transform;
use crate::unpack::values::{floats, integers, key_value, Grid, Rate, SegmentRange};

/// Decodes every bone of `clip` at `keys` blended by `alpha` into `out` (at least
/// `bone_count` long; a shorter slice is filled as far as it goes): the parts that do
/// not change with time ([`statics`]), then the animated sub-tracks ([`animated_part`]).
#[inline(always)]
pub(crate) fn pose<V: Lanes>(clip: &Clip<'_>, keys: &[Key<'_>; 2], alpha: f32, out: &mut [Transform]) {
    statics::<V>(clip, out);
    animated_part::<V>(clip, keys, alpha, out);
}

/// Writes what does not change with time into `out` (at least `bone_count` long; a
/// shorter slice is filled as far as it goes): the default value of every part of
/// every bone (the identity, or the database's shared pose), then each list's
/// constant sub-tracks. A kept pose ([`crate::KeptPose`]) writes this once per clip.
#[inline(always)]
pub(crate) fn statics<V: Lanes>(clip: &Clip<'_>, out: &mut [Transform]) {
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
                constant_rotations::<V, C>(k, &mut bones, out);
            }
            // The last one to three, one at a time.
            for value in groups.remainder().chunks_exact(C << 2) {
                single_rotation::<V, C>(floats::<V, C>(value), &mut bones, out);
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
                constant_rotations::<V, C>(k.map(|q| q.mul(step).add(base)), &mut bones, out);
            }
            // The last one to three, one at a time, on the grid (which clears the
            // lanes past `C`).
            let grid = Grid::<V>::rotation::<C>();
            let rest = groups.remainder();
            let rest_at = at.wrapping_add(stored.len().wrapping_sub(rest.len()));
            for i in 0..rest.len().checked_div(C << 1).unwrap_or(0) {
                let value = grid.apply(integers::<V, C>(clip.bytes, rest_at.wrapping_add(i.wrapping_mul(C << 1))));
                single_rotation::<V, C>(value, &mut bones, out);
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
fn single_rotation<V: Lanes, const C: usize>(value: V, bones: &mut impl Iterator<Item = usize>, out: &mut [Transform]) {
    if let Some(t) = bones.next().and_then(|bone| out.get_mut(bone)) {
        t.rotation = finish_rotation(C == 3, value, value, 0.0).to_quat();
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
    let mut reader = ListReader::<V, C, RANGED, SAME>::new(clip, list, count, keys, alpha, *bits);
    if list.kind() == SubTrackKind::Rotation {
        let mut bones = clip.lists.bones(bitset_index(true, list));
        // Four at a time, as plain values (no batch in memory): both key values of
        // each, then the four finished together. Slots past the list's end name no bone (`usize::MAX`),
        // so nothing is written for them.
        let zero = V::splat(0.0);
        let mut left = count;
        while left > 0 {
            let n = left.min(4);
            left = left.wrapping_sub(n);
            let (b0, a0, c0) = reader.slot(&mut bones, true, zero);
            let (b1, a1, c1) = reader.slot(&mut bones, n > 1, zero);
            let (b2, a2, c2) = reader.slot(&mut bones, n > 2, zero);
            let (b3, a3, c3) = reader.slot(&mut bones, n > 3, zero);
            let k0 = V::transpose([a0, a1, a2, a3]);
            let k1 = V::transpose([c0, c1, c2, c3]);
            let [q0, q1, q2, q3] = V::transpose(finish_rotations(C == 3, k0, k1, alpha));
            for (q, bone) in [(q0, b0), (q1, b1), (q2, b2), (q3, b3)] {
                if let Some(t) = out.get_mut(bone) {
                    t.rotation = q.to_quat();
                }
            }
        }
    } else {
        clip.lists.for_each_bone(bitset_index(true, list), |bone| {
            let (v0, v1) = reader.next();
            if let Some(t) = out.get_mut(bone) {
                write::<V, L>(if alpha == 0.0 { v0 } else { lerp(v0, v1, alpha) }, t);
            }
            true
        });
    }
    *bits = [reader.bit0, reader.bit1];
}

/// Walks the animated sub-tracks of one list in storage order and decodes each one
/// at both key frames. Everything a sub-track needs is read once for both keys:
/// its clip range, and, when both keys lie in one segment (`SAME`), its bit rate
/// and segment range.
struct ListReader<'b, V: Lanes, const C: usize, const RANGED: bool, const SAME: bool> {
    bytes: &'b [u8],
    /// The bytes each key's samples are in (the clip's, or a database tier chunk's).
    samples0: &'b [u8],
    samples1: &'b [u8],
    /// Where the next sub-track's clip-range integers (`C` minimums, then `C`
    /// extents) are.
    range_at: usize,
    /// The list's clip-range grid.
    grid: Grid<V>,
    /// Each key's bit rates, from the next sub-track on.
    rates0: core::slice::Iter<'b, u8>,
    rates1: core::slice::Iter<'b, u8>,
    /// Each key's segment range bytes, from the next sub-track's on (to the end of
    /// the buffer, so that a sub-track's bytes load in one 8-byte read).
    segment0: &'b [u8],
    segment1: &'b [u8],
    /// Bit offset of the next sub-track's samples in each key frame.
    bit0: u64,
    bit1: u64,
    interpolate: bool,
    _lanes: core::marker::PhantomData<V>,
}

impl<'b, V: Lanes, const C: usize, const RANGED: bool, const SAME: bool> ListReader<'b, V, C, RANGED, SAME> {
    #[inline(always)]
    fn new(clip: &Clip<'b>, list: TrackList, count: usize, keys: &[Key<'b>; 2], alpha: f32, bits: [u64; 2]) -> Self {
        let bytes = clip.bytes;
        let [key0, key1] = keys;
        // Every span below is inside a section validation checked; nothing wraps.
        let start = clip.start(list);
        let index = start.animated_index as usize;
        let before = start.animated_components as usize;
        let grid = Grid::of::<C>(bytes, list.kind() == SubTrackKind::Rotation, start.range_grid as usize);
        let rest = |at: usize| if RANGED { bytes.get(at..).unwrap_or(&[]) } else { &[] };
        ListReader {
            bytes,
            samples0: key0.samples,
            samples1: key1.samples,
            range_at: clip.ranges_offset.wrapping_add(before << 2),
            grid,
            rates0: span(bytes, key0.rates.wrapping_add(index), count).iter(),
            rates1: span(bytes, key1.rates.wrapping_add(index), if SAME { 0 } else { count }).iter(),
            segment0: rest(key0.segment_ranges.wrapping_add(before << 1)),
            segment1: if SAME { &[] } else { rest(key1.segment_ranges.wrapping_add(before << 1)) },
            bit0: bits[0],
            bit1: bits[1],
            interpolate: alpha != 0.0,
            _lanes: core::marker::PhantomData,
        }
    }

    /// One slot of a group of four rotations: when `live`, the next bone of `bones`
    /// and the next sub-track's key values; otherwise no bone (`usize::MAX`) and
    /// `zero`.
    #[inline(always)]
    fn slot(&mut self, bones: &mut impl Iterator<Item = usize>, live: bool, zero: V) -> (usize, V, V) {
        if live {
            let bone = bones.next().unwrap_or(usize::MAX);
            let (v0, v1) = self.next();
            (bone, v0, v1)
        } else {
            (usize::MAX, zero, zero)
        }
    }

    /// The next sub-track's values at key 0 and key 1 (key 0's again when the
    /// weight is 0). Called at most once per sub-track of the list (past its end, the
    /// values would be zero).
    #[inline(always)]
    fn next(&mut self) -> (V, V) {
        let rate0 = self.rates0.next().copied().unwrap_or(0);
        let rate1 = if SAME { rate0 } else { self.rates1.next().copied().unwrap_or(0) };
        // A sub-track's integers load in one 16-byte read.
        let (lo, extent) = match self.bytes.get(self.range_at..).and_then(|b| b.first_chunk::<16>()) {
            // Lane 3 of a three-component range holds another integer: the grid's
            // lane-3 step and base are 0.
            Some(w) => V::from_halves_pair::<C>(w),
            // The last sub-track of a buffer ending right after it.
            None => range_integers_at_end::<V, C>(self.bytes, self.range_at),
        };
        let (min, extent) = (self.grid.apply(lo), self.grid.scale(extent));
        self.range_at = self.range_at.wrapping_add(C << 2);
        let segment0 = RANGED.then(|| SegmentRange::<V>::from_bytes::<C>(self.segment0));
        let prepared0 = Rate::<V>::new::<C>(rate0);
        let v0 = key_value::<V, C>(self.samples0, &prepared0, self.bit0, segment0.as_ref(), min, extent);
        let v1 = if !self.interpolate {
            v0
        } else if SAME {
            key_value::<V, C>(self.samples1, &prepared0, self.bit1, segment0.as_ref(), min, extent)
        } else {
            let segment1 = RANGED.then(|| SegmentRange::<V>::from_bytes::<C>(self.segment1));
            key_value::<V, C>(self.samples1, &Rate::new::<C>(rate1), self.bit1, segment1.as_ref(), min, extent)
        };
        self.bit0 = self.bit0.wrapping_add(u64::from(rate0).wrapping_mul(C as u64));
        self.bit1 = self.bit1.wrapping_add(u64::from(rate1).wrapping_mul(C as u64));
        if RANGED {
            self.segment0 = self.segment0.get(C << 1..).unwrap_or(&[]);
            if !SAME {
                self.segment1 = self.segment1.get(C << 1..).unwrap_or(&[]);
            }
        }
        (v0, v1)
    }
}

/// A clip range's integers (minimums, extents) at `at` when fewer than 16 bytes
/// follow them in the buffer.
#[cold]
#[inline(never)]
fn range_integers_at_end<V: Lanes, const C: usize>(bytes: &[u8], at: usize) -> (V, V) {
    (integers::<V, C>(bytes, at), integers::<V, C>(bytes, at.wrapping_add(C << 1)))
}
