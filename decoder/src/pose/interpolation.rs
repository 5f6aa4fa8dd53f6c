//! Rotation normalisation and interpolation as the decoder does them, for the
//! encoder (which measures its error on the decoder's exact values): the decoder's
//! own lane-wise arithmetic (`pose::finish`)
//! on the portable scalar backend, not a second implementation.

use glam::Quat;

use crate::pose::finish::{finish_rotations, lerp};
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

/// The rotation a decoder gives between two stored key values (`[x, y, z, w]`; with
/// three `components`, `w` is ignored and rebuilt) at weight `alpha`: the shorter
/// arc, interpolated component by component, normalised.
#[inline]
pub fn interpolate_rotation(k0: [f32; 4], k1: [f32; 4], components: u32, alpha: f32) -> Quat {
    let [x, y, z, w] = finish_rotations(components == 3, k0.map(F32x4::splat), k1.map(F32x4::splat), alpha).map(|v| {
        let [first, ..] = v.to_array();
        first
    });
    Quat::from_xyzw(x, y, z, w)
}

/// A translation, scale or scalar a decoder gives between two key values at weight
/// `alpha`: `v0 + (v1 − v0) · alpha`, component by component.
#[inline]
pub fn interpolate_vector(v0: [f32; 4], v1: [f32; 4], alpha: f32) -> [f32; 4] {
    let to = |v: [f32; 4]| F32x4::from_bits(v.map(f32::to_bits));
    lerp(to(v0), to(v1), alpha).to_array()
}

pub use crate::seek::keys::weight_between;
