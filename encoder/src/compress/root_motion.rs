//! Root motion at compression time (seed 000): which bone carries it, whether its pose
//! plays in place, what the root-motion block keeps, and whether a loop closes once the
//! motion is taken out of the pose.
//!
//! The decoder reads the motion from the bone's own track whatever the options; the
//! block only names a bone other than bone 0 (with its ancestors), keeps the bone's
//! last sample when a wrapping loop drops it (so its motion over the last interval and
//! over whole loops is the source's, never lost), and gives the transform an in-place
//! pose shows.

use ossa_decoder::format::{
    Looping, RootEnd, RootInPlace, RootMotionBlock, MAX_ROOT_CHAIN, ROOT_END_STORED, ROOT_IN_PLACE,
};
use zerocopy::little_endian::{F32, U32};

use super::reference::{length, Reference};
use super::writer::RootMotionParts;
use super::CompressError;
use crate::error_metric::Affine;
use crate::raw_clip::RawClip;

/// The root-motion bone: the one named `name`, or the first root (bone 0: parents come
/// before their children). `None` for a clip without bones. A bone with a parent (a
/// hip under a still root, as in the CMU clips) has its motion composed through its
/// ancestors, at most [`MAX_ROOT_CHAIN`] of them.
pub fn motion_bone(clip: &RawClip, name: Option<&str>) -> Result<Option<usize>, CompressError> {
    let Some(name) = name else { return Ok((!clip.bones.is_empty()).then_some(0)) };
    let bone = clip.bones.iter().position(|b| b.name == name).ok_or_else(|| CompressError::NoSuchBone(name.into()))?;
    let depth = ancestors(clip, bone).len();
    if depth > MAX_ROOT_CHAIN as usize {
        return Err(CompressError::RootChainTooDeep { bone: name.into(), depth });
    }
    Ok(Some(bone))
}

/// Marks what the bit-rate search must hold for the root motion of `bone`: its
/// rotation and its ancestors' are not compensated below
/// ([`Reference::uncompensated`]), so each stays as precise as everything it carries
/// needs, as without compensation. When the user `declared` root motion (named the
/// bone or extracts its motion), its rotation must also hold the far end of its path
/// within the precision ([`Reference::travel`]): a game's displacement is expressed
/// in the bone's own frame, so its rotation error turns the whole path.
pub fn hold_motion_bone(reference: &mut Reference, bone: Option<usize>, declared: bool) {
    let Some(bone) = bone else { return };
    reference.uncompensated = vec![false; reference.bone_count];
    for b in reference.hierarchy.chain(bone).collect::<Vec<_>>() {
        reference.uncompensated[b] = true;
    }
    reference.travel = 0.0;
    if declared {
        let start = reference.object[reference.at(0, bone)].t;
        for s in 0..reference.sample_count {
            let t = reference.object[reference.at(s, bone)].t;
            reference.travel = reference.travel.max(length([t[0] - start[0], t[1] - start[1], t[2] - start[2]]));
        }
    }
}

/// The ancestors of `bone`, outermost first.
fn ancestors(clip: &RawClip, bone: usize) -> Vec<usize> {
    let mut chain = Vec::new();
    let mut b = clip.bones[bone].parent;
    while let Some(p) = b {
        chain.push(p);
        b = clip.bones[p].parent;
    }
    chain.reverse();
    chain
}

/// Whether the clip loops: it has more than one sample, and every bone's last sample is
/// within `precision` of its first in object space (its virtual vertices, as the error
/// is measured). With the motion of `in_place` taken out (its bone's own transform held
/// at its first sample, as an in-place pose shows it), a root that travels or turns
/// over the loop does not count: its motion is kept apart. Without, it does, so a root
/// that travels is never wrapped and its motion never dropped with the last sample.
pub fn closes(reference: &Reference, precision: f64, in_place: Option<usize>) -> bool {
    let last = reference.sample_count.saturating_sub(1);
    if last == 0 {
        return false;
    }
    // The last sample's object transforms, the in-place bone at its first sample.
    let mut object = vec![Affine::IDENTITY; reference.bone_count];
    for b in 0..reference.bone_count {
        let sample = if Some(b) == in_place { 0 } else { last };
        let local = reference.local_affine[reference.at(sample, b)];
        object[b] = match reference.parent(b) {
            Some(p) => object[p].then(&local),
            None => reference.root_object(b, local),
        };
    }
    (0..reference.bone_count).all(|b| reference.error(0, b, &object[b]) <= precision)
}

/// The root-motion block the clip needs, if any: for a bone other than 0, for an
/// in-place pose (`in_place`), or to keep the root's dropped last sample when a
/// wrapping loop's root does not end exactly (in `f32`) where it started.
pub fn block(
    clip: &RawClip,
    reference: &Reference,
    bone: Option<usize>,
    looping: Looping,
    in_place: bool,
) -> Option<RootMotionParts> {
    let bone = bone?;
    let chain = ancestors(clip, bone);
    let value = |sample: usize| reference.local[reference.at(sample, bone)].parts;
    let last = reference.sample_count - 1;
    let [r0, t0, _] = value(0);
    let [r1, t1, _] = value(last);
    let bits = |v: [f32; 4]| v.map(f32::to_bits);
    let moved = bits(r0) != bits(r1) || bits(t0) != bits(t1);
    let end = (looping == Looping::Wrap && moved).then(|| RootEnd {
        rotation: r1.map(F32::new),
        translation: [t1[0], t1[1], t1[2]].map(F32::new),
        reserved: U32::new(0),
    });
    let in_place = in_place.then(|| {
        let [r, t, s] = value(0);
        RootInPlace {
            rotation: r.map(F32::new),
            translation: [t[0], t[1], t[2]].map(F32::new),
            scale: [s[0], s[1], s[2]].map(F32::new),
            reserved: [U32::new(0); 2],
        }
    });
    if bone == 0 && chain.is_empty() && end.is_none() && in_place.is_none() {
        return None;
    }
    let options = if end.is_some() { ROOT_END_STORED } else { 0 } | if in_place.is_some() { ROOT_IN_PLACE } else { 0 };
    let block = RootMotionBlock {
        motion_bone: U32::new(bone as u32),
        options: U32::new(options),
        chain_len: U32::new(chain.len() as u32),
        reserved: U32::new(0),
    };
    Some(RootMotionParts { block, chain, end, in_place })
}
