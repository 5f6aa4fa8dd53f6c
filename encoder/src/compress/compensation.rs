//! Error compensation along the hierarchy: a child's rotation is quantised from the
//! value that puts it at its source orientation in object space *through its
//! parent's decoded rotation*, not from its own source value.
//!
//! Without it, a bone's rotation error turns everything below it: a hip's error
//! moves a hand by the error times the hip-to-hand distance, so the search must give
//! the bones near the root many bits. With it, each child undoes in its own
//! rotation what its ancestors' rounding turned, and an ancestor's error only moves
//! its children's origins (by the error times one bone's length); each bone's
//! orientation in object space carries only its own rounding. The decoder is
//! unchanged: only the values the encoder quantises differ.
//!
//! The correction is computed on rotations alone (the product of the local
//! rotations down the chain): translations and scales are quantised from their
//! source values as before. Whatever the correction, the search measures the real
//! error of the decoded values, so the bound never rests on it.

use glam::DQuat;

use super::reference::Reference;
use super::values::LocalValues;

/// Whether a clip's rotations are compensated: not in an additive clip, where what a
/// game sees is the base combined with the stored values, not their product down
/// the chain.
pub fn applies(reference: &Reference) -> bool {
    reference.base.is_none()
}

fn rotation_of(values: &LocalValues) -> DQuat {
    DQuat::from_array(values.parts[0].map(f64::from))
}

/// The rotation of `bone` relative to its root's space, the product of the local
/// rotations of its chain as `local(bone)` gives them.
#[cfg(test)]
fn chain_rotation(reference: &Reference, bone: usize, local: impl Fn(usize) -> DQuat) -> DQuat {
    reference.hierarchy.chain(bone).fold(DQuat::IDENTITY, |q, b| local(b) * q)
}

/// The rotations, relative to their roots' spaces, of every bone at every sample of
/// one segment: from the source values, and from the decoded ones (where an
/// uncompensated bone, [`Reference::uncompensated`], counts as exact: its error is
/// left to move everything below it). Kept up to date bone by bone as decoded values
/// change, so that a compensated value costs two products, whatever the depth.
pub struct Chains {
    bones: usize,
    start: usize,
    source: Vec<DQuat>,
    lossy: Vec<DQuat>,
}

impl Chains {
    /// The chains of samples `start..start + count`, `decoded` holding the decoded
    /// local values (bone-major within each sample).
    pub fn new(reference: &Reference, start: usize, count: usize, decoded: &[LocalValues]) -> Chains {
        let bones = reference.bone_count;
        let identity = DQuat::IDENTITY;
        let mut chains =
            Chains { bones, start, source: vec![identity; count * bones], lossy: vec![identity; count * bones] };
        for root in (0..bones).filter(|&b| reference.parent(b).is_none()) {
            for &b in reference.hierarchy.subtree(root) {
                for i in 0..count {
                    let parent = reference.parent(b).map_or(identity, |p| chains.source[i * bones + p]);
                    chains.source[i * bones + b] = parent * rotation_of(&reference.local[reference.at(start + i, b)]);
                }
                chains.update(reference, decoded, b);
            }
        }
        chains
    }

    /// Brings `bone`'s decoded chain up to date with its decoded local rotation (its
    /// parent's up to date).
    pub fn update(&mut self, reference: &Reference, decoded: &[LocalValues], bone: usize) {
        let bones = self.bones;
        for i in 0..self.lossy.len() / bones {
            let local = if reference.is_uncompensated(bone) {
                rotation_of(&reference.local[reference.at(self.start + i, bone)])
            } else {
                rotation_of(&decoded[i * bones + bone])
            };
            let parent = reference.parent(bone).map_or(DQuat::IDENTITY, |p| self.lossy[i * bones + p]);
            self.lossy[i * bones + bone] = parent * local;
        }
    }

    /// `bone`'s decoded chain at every sample, to be put back with
    /// [`Chains::restore`].
    pub fn save(&self, bone: usize, into: &mut Vec<DQuat>) {
        into.extend(self.lossy.iter().skip(bone).step_by(self.bones));
    }

    /// Puts back `bone`'s decoded chain from what [`Chains::save`] wrote at `from`.
    pub fn restore(&mut self, bone: usize, from: &[DQuat]) {
        for (q, saved) in self.lossy.iter_mut().skip(bone).step_by(self.bones).zip(from) {
            *q = *saved;
        }
    }

    /// The local rotation of `bone` at segment sample `i` that, under its parent's
    /// decoded chain, gives its source orientation. `None` for a root, which has
    /// nothing to compensate.
    pub fn compensated(&self, reference: &Reference, i: usize, bone: usize) -> Option<[f32; 4]> {
        let parent = reference.parent(bone)?;
        let at = |b: usize| i * self.bones + b;
        let correction = self.lossy[at(parent)].conjugate() * self.source[at(parent)];
        let q = correction * rotation_of(&reference.local[reference.at(self.start + i, bone)]);
        let len = q.length();
        if !(len > 0.0 && len.is_finite()) {
            return None;
        }
        Some((q / len).to_array().map(|c| c as f32))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::raw_clip::{Bone, BoneTrack, RawClip, RawTransform};

    /// A chain 0 ─ 1 ─ 2 ─ 3 with a side bone 4 under 1, turning at every sample.
    fn chain_clip(samples: usize) -> RawClip {
        let parents = [None, Some(0), Some(1), Some(2), Some(1)];
        let bones = parents
            .iter()
            .enumerate()
            .map(|(i, &parent)| Bone {
                name: format!("b{i}"),
                parent,
                shell_distance: 3.0,
                bind_pose: RawTransform::IDENTITY,
            })
            .collect();
        let tracks = (0..parents.len())
            .map(|b| BoneTrack {
                rotations: (0..samples)
                    .map(|s| {
                        let a = 0.3 + 0.2 * b as f64 + 0.05 * s as f64;
                        let axis = [a.cos(), a.sin(), 0.5];
                        let n = (axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]).sqrt();
                        let (sin, cos) = (0.5 * a).sin_cos();
                        [axis[0] / n * sin, axis[1] / n * sin, axis[2] / n * sin, cos]
                    })
                    .collect(),
                translations: vec![[10.0, 2.0, -1.0]; samples],
                scales: vec![[1.0; 3]; samples],
            })
            .collect();
        RawClip {
            name: "chain".into(),
            sample_rate: 30.0,
            sample_count: samples,
            bones,
            tracks,
            additive: None,
            source: Default::default(),
        }
    }

    /// The reference's local values with every rotation turned by a small error of its
    /// own, as a decoder might give them.
    fn lossy(reference: &Reference, samples: usize) -> Vec<LocalValues> {
        let mut decoded = reference.local[..samples * reference.bone_count].to_vec();
        for (k, v) in decoded.iter_mut().enumerate() {
            let e = 1e-3 * (1.0 + (k % 7) as f64);
            let error = [e, -0.5 * e, 0.25 * e, 1.0];
            let q = (DQuat::from_array(error) * rotation_of(v)).normalize();
            v.parts[0] = q.to_array().map(|c| c as f32);
        }
        decoded
    }

    fn widen(q: [f32; 4]) -> DQuat {
        DQuat::from_array(q.map(f64::from))
    }

    /// The angle of the rotation from `a` to `b` (robust near zero, where `acos` of a
    /// dot product drowns in the rounding of the lengths).
    fn angle(a: DQuat, b: DQuat) -> f64 {
        let d = a.conjugate() * b;
        2.0 * d.xyz().length().atan2(d.w.abs())
    }

    #[test]
    fn a_compensated_rotation_puts_its_bone_at_its_source_orientation() {
        let samples = 4;
        let reference = Reference::new(&chain_clip(samples)).unwrap();
        let decoded = lossy(&reference, samples);
        let bones = reference.bone_count;
        let chains = Chains::new(&reference, 0, samples, &decoded);
        for i in 0..samples {
            let source = |b: usize| rotation_of(&reference.local[reference.at(i, b)]);
            assert_eq!(chains.compensated(&reference, i, 0), None, "a root has nothing to compensate");
            for bone in 1..bones {
                let q = chains.compensated(&reference, i, bone).map(widen).unwrap();
                let parent = reference.parent(bone).unwrap();
                let lossy_parent = chain_rotation(&reference, parent, |b| rotation_of(&decoded[i * bones + b]));
                let got = lossy_parent * q;
                let want = chain_rotation(&reference, bone, source);
                // Only the f32 rounding of the result is left: far below the
                // decoded chain's own error (about 1e-3 per bone).
                assert!(angle(got, want) < 1e-6, "sample {i} bone {bone}: {}", angle(got, want));
                let uncompensated = lossy_parent * rotation_of(&reference.local[reference.at(i, bone)]);
                assert!(angle(uncompensated, want) > 1e-4, "the chain's error is there to undo");
            }
        }
    }

    #[test]
    fn an_uncompensated_bone_keeps_its_error_below_it() {
        let samples = 3;
        let mut reference = Reference::new(&chain_clip(samples)).unwrap();
        // Only bone 1 is off; held, its children take their source values as they are.
        let mut decoded = reference.local[..samples * reference.bone_count].to_vec();
        let bones = reference.bone_count;
        for i in 0..samples {
            decoded[i * bones + 1] = lossy(&reference, samples)[i * bones + 1];
        }
        reference.uncompensated = vec![false, true, false, false, false];
        let chains = Chains::new(&reference, 0, samples, &decoded);
        for i in 0..samples {
            for bone in [2, 4] {
                let q = chains.compensated(&reference, i, bone).map(widen).unwrap();
                let source = rotation_of(&reference.local[reference.at(i, bone)]);
                assert!(angle(q, source) < 1e-6, "sample {i} bone {bone}");
            }
        }
        // Not held, the same error is undone by the children.
        reference.uncompensated.clear();
        let mut chains = Chains::new(&reference, 0, samples, &decoded);
        let q = chains.compensated(&reference, 0, 2).map(widen).unwrap();
        assert!(angle(q, rotation_of(&reference.local[reference.at(0, 2)])) > 1e-4);
        // A change of bone 1's decoded rotation reaches its children once their
        // chains are brought up to date, parents first; putting it back restores them.
        let mut saved = Vec::new();
        chains.save(1, &mut saved);
        let before = chains.compensated(&reference, 0, 2);
        let mut changed = decoded.clone();
        changed[1] = reference.local[reference.at(0, 1)];
        chains.update(&reference, &changed, 1);
        let q = chains.compensated(&reference, 0, 2).map(widen).unwrap();
        assert!(angle(q, rotation_of(&reference.local[reference.at(0, 2)])) < 1e-6, "bone 1 exact again");
        chains.restore(1, &saved);
        assert_eq!(chains.compensated(&reference, 0, 2), before);
    }
}
