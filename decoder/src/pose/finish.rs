//! Finishing decoded values (`format-spec/decoding.md`, Interpolation): rotations
//! rebuilt, sign-aligned for the shorter arc, interpolated and normalised, four at a
//! time as one vector per component ("structure of arrays") so that every step is a
//! lane-wise operation in the order the spec writes them; translations and scales
//! interpolated lane by lane.

use crate::simd::Lanes;
use crate::unpack::values::rebuild_w;

/// Rotations finished lane by lane, given as one vector per component (`x`, `y`,
/// `z`, `w` of key 0 in `k0`, of key 1 in `k1`): `w` rebuilt when `rebuild` (the
/// given `w` is then ignored), key 1 negated where the dot product is negative,
/// interpolated by `alpha` (key 0 alone when it is 0), normalised. Returned in the
/// same layout.
#[inline(always)]
pub(crate) fn finish_rotations<V: Lanes>(rebuild: bool, k0: [V; 4], k1: [V; 4], alpha: f32) -> [V; 4] {
    let [x0, y0, z0, w0] = k0;
    let w0 = if rebuild { rebuild_w(x0, y0, z0) } else { w0 };
    let (x, y, z, w) = if alpha == 0.0 {
        (x0, y0, z0, w0)
    } else {
        let [x1, y1, z1, w1] = k1;
        let w1 = if rebuild { rebuild_w(x1, y1, z1) } else { w1 };
        // Shorter arc: key 1's sign bits flipped where the dot product is negative.
        let dot = x0.mul(x1).add(y0.mul(y1)).add(z0.mul(z1)).add(w0.mul(w1));
        let flip = dot.lt(V::splat(0.0)).and(V::splat(-0.0));
        let a = V::splat(alpha);
        let lerp = |v0: V, v1: V| v0.add(v1.xor(flip).sub(v0).mul(a));
        (lerp(x0, x1), lerp(y0, y1), lerp(z0, z1), lerp(w0, w1))
    };
    // Normalise: multiply by 1 / sqrt(d) where d is positive and finite, else the
    // identity.
    let d = x.mul(x).add(y.mul(y)).add(z.mul(z)).add(w.mul(w));
    let ok = d.gt(V::splat(0.0)).and(d.lt(V::splat(f32::INFINITY)));
    let inv = V::splat(1.0).div(d.sqrt());
    // (`v & ok` is `select(ok, v, 0)`: `ok` is all ones or zero in each lane.)
    [x.mul(inv).and(ok), y.mul(inv).and(ok), z.mul(inv).and(ok), V::select(ok, w.mul(inv), V::splat(1.0))]
}

/// One rotation finished exactly as [`finish_rotations`] finishes each of its lanes
/// (the same IEEE operations in the same order, so the same bits), for a single
/// bone: `q0`, `q1` are key 0 and key 1 as `x, y, z, w` (`w` ignored and rebuilt
/// when `rebuild`), and no transposes are needed. The sums across components run
/// on scalars, in the order the four-lane version adds its vectors.
#[inline(always)]
pub(crate) fn finish_rotation<V: Lanes>(rebuild: bool, q0: V, q1: V, alpha: f32) -> V {
    let sqrt = |v: f32| {
        let [r, ..] = V::splat(v).sqrt().to_array();
        r
    };
    let key = |q: V| {
        let [x, y, z, w] = q.to_array();
        if rebuild {
            let t = 1.0 - ((x * x + y * y) + z * z);
            // `t > 0` is false for NaN: 0, as the lane-wise mask gives.
            [x, y, z, if t > 0.0 { sqrt(t) } else { 0.0 }]
        } else {
            [x, y, z, w]
        }
    };
    let [x0, y0, z0, w0] = key(q0);
    let q = if alpha == 0.0 {
        [x0, y0, z0, w0]
    } else {
        let [x1, y1, z1, w1] = key(q1);
        let dot = ((x0 * x1 + y0 * y1) + z0 * z1) + w0 * w1;
        let flip = if dot < 0.0 { 0x8000_0000 } else { 0 };
        let lerp = |v0: f32, v1: f32| v0 + (f32::from_bits(v1.to_bits() ^ flip) - v0) * alpha;
        [lerp(x0, x1), lerp(y0, y1), lerp(z0, z1), lerp(w0, w1)]
    };
    let [x, y, z, w] = q;
    let d = ((x * x + y * y) + z * z) + w * w;
    if d > 0.0 && d < f32::INFINITY {
        let inv = 1.0 / sqrt(d);
        V::from_bits([x * inv, y * inv, z * inv, w * inv].map(f32::to_bits))
    } else {
        V::from_bits([0.0f32, 0.0, 0.0, 1.0].map(f32::to_bits))
    }
}

/// One sub-track of list `L` (`C` components) finished from its values at key 0 and
/// key 1, given as `x, y, z, w` in one vector each: a rotation as
/// [`finish_rotation`] finishes it, a translation or scale interpolated (key 0's
/// alone when `alpha` is 0). What every path that decodes a sub-track alone shares.
#[inline(always)]
pub(crate) fn finish_single<V: Lanes, const L: usize, const C: usize>(v0: V, v1: V, alpha: f32) -> V {
    if crate::format::TrackList::from_index(L).kind() == crate::format::SubTrackKind::Rotation {
        finish_rotation(C == 3, v0, v1, alpha)
    } else if alpha != 0.0 {
        lerp(v0, v1, alpha)
    } else {
        v0
    }
}

/// `v0 + (v1 − v0) · α`, lane by lane.
#[inline(always)]
pub(crate) fn lerp<V: Lanes>(v0: V, v1: V, alpha: f32) -> V {
    v0.add(v1.sub(v0).mul(V::splat(alpha)))
}
