//! The four track lists as const parameters, and where a value of each goes in a
//! bone's transform: what the whole-pose, single-bone and subset paths share.

use crate::format::TrackList;
use crate::simd::Lanes;
use crate::transform::Transform;

/// List indices as const parameters (`TrackList as usize`, read back with
/// [`TrackList::from_index`]).
pub(crate) const ROTATION3: usize = TrackList::Rotation3 as usize;
pub(crate) const ROTATION4: usize = TrackList::Rotation4 as usize;
pub(crate) const TRANSLATION: usize = TrackList::Translation as usize;
pub(crate) const SCALE: usize = TrackList::Scale as usize;

/// Stores a decoded value in the part of `t` list `L` names.
#[inline(always)]
pub(crate) fn write<V: Lanes, const L: usize>(value: V, t: &mut Transform) {
    write_list(TrackList::from_index(L), value, t);
}

/// Stores a decoded value in the part of `t` `list` names (a list known only at run
/// time: a subset's gathered quad mixes them).
#[inline(always)]
pub(crate) fn write_list<V: Lanes>(list: TrackList, value: V, t: &mut Transform) {
    match list {
        TrackList::Rotation3 | TrackList::Rotation4 => t.rotation = value.to_quat(),
        TrackList::Translation => t.translation = value.to_vec3(),
        TrackList::Scale => t.scale = value.to_vec3(),
    }
}

/// Stores `value` in the part list `L` names of the next bone of `bones` (nothing
/// once `bones` ends).
#[inline(always)]
pub(crate) fn put<V: Lanes, const L: usize>(value: V, bones: &mut impl Iterator<Item = usize>, out: &mut [Transform]) {
    if let Some(t) = bones.next().and_then(|bone| out.get_mut(bone)) {
        write::<V, L>(value, t);
    }
}

/// [`put`] for the first `lanes` (1 to 4) of four values, in order.
#[inline(always)]
pub(crate) fn put_lanes<V: Lanes, const L: usize>(
    values: [V; 4],
    lanes: usize,
    bones: &mut impl Iterator<Item = usize>,
    out: &mut [Transform],
) {
    // Written out, not looped (with four lanes, `lanes` is a constant): the values
    // stay in registers.
    let [a, b, c, d] = values;
    put::<V, L>(a, bones, out);
    if lanes > 1 {
        put::<V, L>(b, bones, out);
    }
    if lanes > 2 {
        put::<V, L>(c, bones, out);
    }
    if lanes > 3 {
        put::<V, L>(d, bones, out);
    }
}
