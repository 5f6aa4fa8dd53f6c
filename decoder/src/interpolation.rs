//! Interpolation between the two key frames around a sample time.
//!
//! Shared with the encoder, which measures its error through these functions. The
//! arithmetic is written out per component, in a fixed order, so every target (SIMD
//! or not) produces the same bits.

use glam::{Quat, Vec3};

#[inline]
fn dot4([ax, ay, az, aw]: [f32; 4], [bx, by, bz, bw]: [f32; 4]) -> f32 {
    ((ax * bx + ay * by) + az * bz) + aw * bw
}

/// Normalises a quaternion given as `[x, y, z, w]`. One whose squared length is not
/// a positive finite number (zero, or infinite or NaN components, which only
/// corrupted raw samples produce) becomes the identity.
#[inline]
pub fn normalize_rotation(q: [f32; 4]) -> Quat {
    let len2 = dot4(q, q);
    let [x, y, z, w] = q;
    if len2 > 0.0 && len2 < f32::INFINITY {
        let inv = 1.0 / libm::sqrtf(len2);
        Quat::from_xyzw(x * inv, y * inv, z * inv, w * inv)
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
    // Along the shorter arc: key 1 negated (sign bits flipped) when the dot is negative.
    let q1 = if dot4(q0, q1) < 0.0 { q1.map(|v| -v) } else { q1 };
    let lerp = |a: f32, b: f32| a + (b - a) * alpha;
    let ([x0, y0, z0, w0], [x1, y1, z1, w1]) = (q0, q1);
    normalize_rotation([lerp(x0, x1), lerp(y0, y1), lerp(z0, z1), lerp(w0, w1)])
}

/// Linear interpolation of translations and scales. `alpha == 0` returns `v0`.
#[inline]
pub fn interpolate_vector(v0: [f32; 3], v1: [f32; 3], alpha: f32) -> Vec3 {
    if alpha == 0.0 {
        return Vec3::from_array(v0);
    }
    Vec3::new(v0[0] + (v1[0] - v0[0]) * alpha, v0[1] + (v1[1] - v0[1]) * alpha, v0[2] + (v1[2] - v0[2]) * alpha)
}
