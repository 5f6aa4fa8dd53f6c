//! Rotation normalisation as the decoder does it, for the encoder (which measures
//! its error on the decoder's exact values): the decoder's own lane-wise arithmetic
//! ([`crate::decode::finish_rotations`]) on the portable scalar backend, not a
//! second implementation.

use glam::Quat;

use crate::decode::finish_rotations;
use crate::simd::scalar::F32x4;
use crate::simd::Lanes;

/// Normalises a quaternion given as `[x, y, z, w]` as a decoded rotation is
/// normalised. One whose squared length is not a positive finite number (zero, or
/// infinite or NaN components) becomes the identity.
#[inline]
pub fn normalize_rotation(q: [f32; 4]) -> Quat {
    let k = q.map(F32x4::splat);
    let [x, y, z, w] = finish_rotations(false, k, k, 0.0).map(|v| {
        let [first, ..] = v.to_array();
        first
    });
    Quat::from_xyzw(x, y, z, w)
}
