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

use super::reference::Reference;
use super::values::LocalValues;

type Quat = [f64; 4];

fn mul(a: Quat, b: Quat) -> Quat {
    [
        a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
        a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
        a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3],
        a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2],
    ]
}

fn conjugate(q: Quat) -> Quat {
    [-q[0], -q[1], -q[2], q[3]]
}

fn rotation_of(values: &LocalValues) -> Quat {
    values.parts[0].map(f64::from)
}

/// The rotation of `bone` relative to its root's space, the product of the local
/// rotations of its chain as `local(sample_index, bone)` gives them.
fn chain_rotation(reference: &Reference, bone: usize, local: impl Fn(usize) -> Quat) -> Quat {
    let mut q = [0.0, 0.0, 0.0, 1.0];
    for b in reference.hierarchy.chain(bone) {
        q = mul(local(b), q);
    }
    q
}

/// The local rotation of `bone` at segment sample `i` (source sample `start + i`)
/// that, under its parent's decoded chain (`decoded`: the segment's decoded local
/// values, bone-major within each sample), gives its source orientation. `None` for
/// a root, which has nothing to compensate.
pub fn compensated_rotation(
    reference: &Reference,
    decoded: &[LocalValues],
    start: usize,
    i: usize,
    bone: usize,
) -> Option<[f32; 4]> {
    let parent = reference.parent(bone)?;
    let bones = reference.bone_count;
    let source = |b: usize| rotation_of(&reference.local[reference.at(start + i, b)]);
    // An uncompensated bone's rotation counts as exact: its error is left to move
    // everything below it.
    let lossy = |b: usize| {
        if reference.is_uncompensated(b) {
            source(b)
        } else {
            rotation_of(&decoded[i * bones + b])
        }
    };
    let correction =
        mul(conjugate(chain_rotation(reference, parent, lossy)), chain_rotation(reference, parent, source));
    let q = mul(correction, source(bone));
    let len = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    if !(len > 0.0 && len.is_finite()) {
        return None;
    }
    Some(q.map(|c| (c / len) as f32))
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
            let q = mul(error, rotation_of(v));
            let len = q.iter().map(|c| c * c).sum::<f64>().sqrt();
            v.parts[0] = q.map(|c| (c / len) as f32);
        }
        decoded
    }

    /// The angle of the rotation from `a` to `b` (robust near zero, where `acos` of a
    /// dot product drowns in the rounding of the lengths).
    fn angle(a: Quat, b: Quat) -> f64 {
        let d = mul(conjugate(a), b);
        2.0 * (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt().atan2(d[3].abs())
    }

    #[test]
    fn a_compensated_rotation_puts_its_bone_at_its_source_orientation() {
        let samples = 4;
        let reference = Reference::new(&chain_clip(samples)).unwrap();
        let decoded = lossy(&reference, samples);
        let bones = reference.bone_count;
        for i in 0..samples {
            let source = |b: usize| rotation_of(&reference.local[reference.at(i, b)]);
            assert_eq!(compensated_rotation(&reference, &decoded, 0, i, 0), None, "a root has nothing to compensate");
            for bone in 1..bones {
                let q = compensated_rotation(&reference, &decoded, 0, i, bone).unwrap().map(f64::from);
                let parent = reference.parent(bone).unwrap();
                let lossy_parent = chain_rotation(&reference, parent, |b| rotation_of(&decoded[i * bones + b]));
                let got = mul(lossy_parent, q);
                let want = chain_rotation(&reference, bone, source);
                // Only the f32 rounding of the result is left: far below the
                // decoded chain's own error (about 1e-3 per bone).
                assert!(angle(got, want) < 1e-6, "sample {i} bone {bone}: {}", angle(got, want));
                let uncompensated = mul(lossy_parent, rotation_of(&reference.local[reference.at(i, bone)]));
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
        for i in 0..samples {
            for bone in [2, 4] {
                let q = compensated_rotation(&reference, &decoded, 0, i, bone).unwrap().map(f64::from);
                let source = rotation_of(&reference.local[reference.at(i, bone)]);
                assert!(angle(q, source) < 1e-6, "sample {i} bone {bone}");
            }
        }
        // Not held, the same error is undone by the children.
        reference.uncompensated.clear();
        let q = compensated_rotation(&reference, &decoded, 0, 0, 2).unwrap().map(f64::from);
        assert!(angle(q, rotation_of(&reference.local[reference.at(0, 2)])) > 1e-4);
    }
}
