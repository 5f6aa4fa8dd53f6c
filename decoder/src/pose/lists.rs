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
    match TrackList::from_index(L) {
        TrackList::Rotation3 | TrackList::Rotation4 => t.rotation = value.to_quat(),
        TrackList::Translation => t.translation = value.to_vec3(),
        TrackList::Scale => t.scale = value.to_vec3(),
    }
}
