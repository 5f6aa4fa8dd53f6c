//! Interpolation between the two key frames around a sample time.
//!
//! Shared with the encoder, which measures its error through these functions. The
//! arithmetic is written out per component, in a fixed order, so every target (SIMD
//! or not) produces the same bits.

use glam::{Quat, Vec3};

#[inline]
fn dot4(a: [f32; 4], b: [f32; 4]) -> f32 {
    ((a[0] * b[0] + a[1] * b[1]) + a[2] * b[2]) + a[3] * b[3]
}

/// Normalises a quaternion given as `[x, y, z, w]`; a zero-length one becomes the
/// identity.
#[inline]
pub fn normalize_rotation(q: [f32; 4]) -> Quat {
    let len2 = dot4(q, q);
    if len2 > 0.0 && len2.is_finite() {
        let inv = 1.0 / libm::sqrtf(len2);
        Quat::from_xyzw(q[0] * inv, q[1] * inv, q[2] * inv, q[3] * inv)
    } else if len2 > 0.0 {
        // Infinite or NaN components (only from corrupted raw samples): no panic,
        // the value passes through.
        Quat::from_xyzw(q[0], q[1], q[2], q[3])
    } else {
        Quat::IDENTITY
    }
}

/// Normalised linear interpolation along the shorter arc. `alpha == 0` returns the
/// normalised first key without looking at the second.
#[inline]
pub fn interpolate_rotation(q0: [f32; 4], q1: [f32; 4], alpha: f32) -> Quat {
    if alpha == 0.0 {
        return normalize_rotation(q0);
    }
    let sign = if dot4(q0, q1) < 0.0 { -1.0 } else { 1.0 };
    let mut q = [0.0f32; 4];
    for i in 0..4 {
        q[i] = q0[i] + (q1[i] * sign - q0[i]) * alpha;
    }
    normalize_rotation(q)
}

/// Linear interpolation of translations and scales. `alpha == 0` returns `v0`.
#[inline]
pub fn interpolate_vector(v0: [f32; 3], v1: [f32; 3], alpha: f32) -> Vec3 {
    if alpha == 0.0 {
        return Vec3::from_array(v0);
    }
    Vec3::new(v0[0] + (v1[0] - v0[0]) * alpha, v0[1] + (v1[1] - v0[1]) * alpha, v0[2] + (v1[2] - v0[2]) * alpha)
}
