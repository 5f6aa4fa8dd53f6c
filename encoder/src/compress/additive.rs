//! Additive clips at compression time: the base pose at each of the clip's samples,
//! and the combined transform a game sees ([`ossa_decoder::Additive::apply`]), in
//! `f64`, which the error is measured on.

use ossa_decoder::Additive;

use super::values::{Lane4, LocalValues};
use crate::error_metric::Affine;
use crate::memory::{self, OutOfMemory};
use crate::raw_clip::{normalize, AdditiveBase};

/// The base sampled at each of `sample_count` samples at `sample_rate` (the additive
/// clip's times), `[sample * bones + bone]`, rounded to `f32` as an engine holds it.
/// Between two base samples it is interpolated (rotations normalised, along the
/// shorter arc); before the first and after the last it is held.
pub fn base_at_samples(
    base: &AdditiveBase,
    bones: usize,
    sample_count: usize,
    sample_rate: f64,
) -> Result<Vec<LocalValues>, OutOfMemory> {
    let mut out = memory::with_capacity(bones * sample_count, "the additive base")?;
    let last = base.sample_count - 1;
    for s in 0..sample_count {
        let position = (s as f64 / sample_rate * base.sample_rate).clamp(0.0, last as f64);
        let k = (position.floor() as usize).min(last);
        let (k1, a) = if k < last { (k + 1, position - k as f64) } else { (k, 0.0) };
        for track in base.tracks.iter().take(bones) {
            let (q0, q1) = (track.rotations[k], track.rotations[k1]);
            let dot: f64 = (0..4).map(|i| q0[i] * q1[i]).sum();
            let sign = if dot < 0.0 { -1.0 } else { 1.0 };
            let q: [f64; 4] = std::array::from_fn(|i| q0[i] + (sign * q1[i] - q0[i]) * a);
            let q = normalize(q).unwrap_or([0.0, 0.0, 0.0, 1.0]);
            let lerp = |v0: [f64; 3], v1: [f64; 3]| -> Lane4 {
                let v: [f64; 3] = std::array::from_fn(|i| v0[i] + (v1[i] - v0[i]) * a);
                [v[0] as f32, v[1] as f32, v[2] as f32, 0.0]
            };
            out.push(LocalValues {
                parts: [
                    q.map(|v| v as f32),
                    lerp(track.translations[k], track.translations[k1]),
                    lerp(track.scales[k], track.scales[k1]),
                ],
            });
        }
    }
    Ok(out)
}

/// The transform a game sees for a bone whose base is `base` and whose additive
/// transform is `additive`, combined as `format` says.
pub fn combine(format: Additive, base: &LocalValues, additive: &LocalValues) -> Affine {
    let wide = |v: Lane4| v.map(f64::from);
    let [qb, tb, sb] = base.parts.map(wide);
    let [qa, ta, sa] = additive.parts.map(wide);
    let sum = |a: [f64; 4], b: [f64; 4]| [a[0] + b[0], a[1] + b[1], a[2] + b[2]];
    match format {
        Additive::None => additive.affine(),
        // As a transform (rotation, translation, scale), not as an affine matrix: with
        // a non-uniform base scale the two differ, and a game composes transforms.
        Additive::Relative => {
            let scaled = [sb[0] * ta[0], sb[1] * ta[1], sb[2] * ta[2], 0.0];
            let moved = hamilton(hamilton(qb, scaled), [-qb[0], -qb[1], -qb[2], qb[3]]);
            Affine::from_parts(hamilton(qb, qa), sum(moved, tb), [sb[0] * sa[0], sb[1] * sa[1], sb[2] * sa[2]])
        }
        Additive::Additive0 => {
            Affine::from_parts(hamilton(qb, qa), sum(ta, tb), [sa[0] * sb[0], sa[1] * sb[1], sa[2] * sb[2]])
        }
        Additive::Additive1 => Affine::from_parts(
            hamilton(qb, qa),
            sum(ta, tb),
            [(1.0 + sa[0]) * sb[0], (1.0 + sa[1]) * sb[1], (1.0 + sa[2]) * sb[2]],
        ),
    }
}

/// The quaternion product `a · b` (`b` applied first), `[x, y, z, w]`.
pub(crate) fn hamilton(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
    let [ax, ay, az, aw] = a;
    let [bx, by, bz, bw] = b;
    [
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(q: [f32; 4], t: [f32; 3], s: [f32; 3]) -> LocalValues {
        LocalValues { parts: [q, [t[0], t[1], t[2], 0.0], [s[0], s[1], s[2], 0.0]] }
    }

    /// The encoder's `f64` combination agrees with the decoder's documented
    /// [`Additive::apply`] on the same transforms, in every mode.
    #[test]
    fn combining_matches_the_decoders_apply() {
        use ossa_decoder::glam::{Quat, Vec3};
        use ossa_decoder::Transform;
        let h = std::f32::consts::FRAC_1_SQRT_2;
        let base = values([0.0, h, 0.0, h], [1.0, 2.0, 3.0], [2.0, 1.0, 0.5]);
        let add = values([h, 0.0, 0.0, h], [0.5, -1.0, 4.0], [0.25, 1.5, 1.0]);
        let transform = |v: &LocalValues| Transform {
            rotation: Quat::from_array(v.parts[0]),
            translation: Vec3::new(v.parts[1][0], v.parts[1][1], v.parts[1][2]),
            scale: Vec3::new(v.parts[2][0], v.parts[2][1], v.parts[2][2]),
        };
        for format in [Additive::Relative, Additive::Additive0, Additive::Additive1] {
            let ours = combine(format, &base, &add);
            let theirs = format.apply(&transform(&base), &transform(&add));
            let theirs =
                values(theirs.rotation.to_array(), theirs.translation.to_array(), theirs.scale.to_array()).affine();
            for p in [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 3.0, 0.0], [0.0, 0.0, -2.0]] {
                let (a, b) = (ours.apply(p), theirs.apply(p));
                let d = (0..3).map(|i| (a[i] - b[i]).abs()).fold(0.0, f64::max);
                assert!(d < 1e-5, "{format:?}: {a:?} vs {b:?}");
            }
        }
    }
}
