//! Object-space error on virtual vertices (seed 001).
//!
//! Each bone carries three virtual vertices at its shell distance on its local x, y
//! and z axes. Local transforms are combined down the hierarchy into object space
//! (rotation, translation and non-uniform scale, as 3×4 affine matrices in `f64`),
//! the vertices are moved by the reference and by the decoded transforms, and the
//! error of a bone at a sample is the largest distance between the two.

/// A 3×4 affine transform: `p' = m * p + t` (`m` stored as three columns).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Affine {
    /// Columns of the linear part (rotation times scale).
    pub m: [[f64; 3]; 3],
    /// Translation.
    pub t: [f64; 3],
}

impl Affine {
    /// The identity.
    pub const IDENTITY: Affine = Affine { m: [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], t: [0.0; 3] };

    /// Builds `translate(t) * rotate(q) * scale(s)`. `q` need not be exactly unit:
    /// it is normalised here, in `f64`.
    pub fn from_parts(q: [f64; 4], t: [f64; 3], s: [f64; 3]) -> Affine {
        let len2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
        let [x, y, z, w] = if len2 > 0.0 && len2.is_finite() {
            let inv = 1.0 / len2.sqrt();
            q.map(|c| c * inv)
        } else {
            [0.0, 0.0, 0.0, 1.0]
        };
        let (xx, yy, zz) = (x * x, y * y, z * z);
        let (xy, xz, yz) = (x * y, x * z, y * z);
        let (wx, wy, wz) = (w * x, w * y, w * z);
        let c0 = [1.0 - 2.0 * (yy + zz), 2.0 * (xy + wz), 2.0 * (xz - wy)];
        let c1 = [2.0 * (xy - wz), 1.0 - 2.0 * (xx + zz), 2.0 * (yz + wx)];
        let c2 = [2.0 * (xz + wy), 2.0 * (yz - wx), 1.0 - 2.0 * (xx + yy)];
        Affine { m: [c0.map(|v| v * s[0]), c1.map(|v| v * s[1]), c2.map(|v| v * s[2])], t }
    }

    /// Applies the transform to a point.
    #[inline]
    pub fn apply(&self, p: [f64; 3]) -> [f64; 3] {
        let m = &self.m;
        [
            m[0][0] * p[0] + m[1][0] * p[1] + m[2][0] * p[2] + self.t[0],
            m[0][1] * p[0] + m[1][1] * p[1] + m[2][1] * p[2] + self.t[1],
            m[0][2] * p[0] + m[1][2] * p[1] + m[2][2] * p[2] + self.t[2],
        ]
    }

    /// `self ∘ child`: the child's transform expressed in this transform's parent space.
    #[inline]
    pub fn then(&self, child: &Affine) -> Affine {
        let col = |c: [f64; 3]| {
            let m = &self.m;
            [
                m[0][0] * c[0] + m[1][0] * c[1] + m[2][0] * c[2],
                m[0][1] * c[0] + m[1][1] * c[1] + m[2][1] * c[2],
                m[0][2] * c[0] + m[1][2] * c[1] + m[2][2] * c[2],
            ]
        };
        Affine { m: [col(child.m[0]), col(child.m[1]), col(child.m[2])], t: self.apply(child.t) }
    }

    /// The three virtual vertices of a bone with this object-space transform.
    #[inline]
    pub fn vertices(&self, shell: f64) -> [[f64; 3]; 3] {
        // m * (shell * e_k) + t = shell * column k + t.
        let v = |k: usize| {
            [self.m[k][0] * shell + self.t[0], self.m[k][1] * shell + self.t[1], self.m[k][2] * shell + self.t[2]]
        };
        [v(0), v(1), v(2)]
    }
}

/// The error of one bone: the largest distance between its virtual vertices at
/// `shell` moved by the `reference` and by the `lossy` object-space transforms
/// ([`Affine::vertices`]). It is computed from the transforms' difference: vertex
/// `k` moves by `shell` times the difference of column `k` plus the difference of
/// the translations, which is what subtracting the moved vertices gives, with less
/// work and less cancellation.
#[inline]
pub fn transform_error(reference: &Affine, lossy: &Affine, shell: f64) -> f64 {
    let dt = [reference.t[0] - lossy.t[0], reference.t[1] - lossy.t[1], reference.t[2] - lossy.t[2]];
    let mut worst = 0.0f64;
    for (a, b) in reference.m.iter().zip(&lossy.m) {
        let d = [(a[0] - b[0]) * shell + dt[0], (a[1] - b[1]) * shell + dt[1], (a[2] - b[2]) * shell + dt[2]];
        let d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
        // NaN must read as an unbounded error: `max` would drop it for the other
        // operand.
        if d2.is_nan() {
            return f64::INFINITY;
        }
        worst = worst.max(d2);
    }
    worst.sqrt()
}

/// Object-space transforms of every bone from local ones (`parents[b] < b`).
pub fn to_object_space(local: &[Affine], parents: &[Option<usize>], out: &mut Vec<Affine>) {
    out.clear();
    for (b, l) in local.iter().enumerate() {
        let o = match parents[b] {
            Some(p) => out[p].then(l),
            None => *l,
        };
        out.push(o);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn composes_rotation_translation_and_scale() {
        // 90° about z: x axis goes to y.
        let h = std::f64::consts::FRAC_1_SQRT_2;
        let parent = Affine::from_parts([0.0, 0.0, h, h], [1.0, 0.0, 0.0], [2.0, 2.0, 2.0]);
        let child = Affine::from_parts([0.0, 0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [1.0; 3]);
        let p = parent.then(&child).apply([0.0; 3]);
        assert!((p[0] - 1.0).abs() < 1e-12 && (p[1] - 2.0).abs() < 1e-12, "{p:?}");
        let v = parent.vertices(3.0);
        assert!((v[0][1] - 6.0).abs() < 1e-12);
    }

    #[test]
    fn transform_error_is_the_largest_distance_between_moved_vertices() {
        let h = std::f64::consts::FRAC_1_SQRT_2;
        let reference = Affine::from_parts([0.0, 0.0, h, h], [1.0, 2.0, 3.0], [1.0, 2.0, 0.5]);
        let lossy = Affine::from_parts([0.01, -0.02, h, h], [1.1, 2.0, 2.9], [1.0, 2.1, 0.5]);
        let (a, b) = (reference.vertices(3.0), lossy.vertices(3.0));
        let direct = (0..3)
            .map(|k| ((a[k][0] - b[k][0]).powi(2) + (a[k][1] - b[k][1]).powi(2) + (a[k][2] - b[k][2]).powi(2)).sqrt())
            .fold(0.0, f64::max);
        let error = transform_error(&reference, &lossy, 3.0);
        assert!(direct > 0.1 && (error - direct).abs() < 1e-12, "{error} against {direct}");
        assert_eq!(transform_error(&reference, &reference, 3.0), 0.0);
        // A NaN in any vertex, first or last, is an unbounded error.
        for k in 0..3 {
            let mut broken = lossy;
            broken.m[k][1] = f64::NAN;
            assert_eq!(transform_error(&reference, &broken, 3.0), f64::INFINITY, "column {k}");
        }
    }
}
