//! The reference the error is measured against: the raw clip as `f32` (what an
//! engine consumes), its object-space transforms and virtual vertices, plus the
//! hierarchy queries the optimiser needs.

use crate::error_metric::{vertex_error, Affine};
use crate::raw_clip::RawClip;

/// Decoded value of one sub-track at one sample: a unit quaternion `[x, y, z, w]`,
/// or a 3-D vector in the first three lanes.
pub type Lane4 = [f32; 4];

/// Local values of one bone at one sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LocalValues {
    /// Rotation, translation, scale (vectors in the first three lanes).
    pub parts: [Lane4; 3],
}

impl LocalValues {
    /// The affine transform these values describe.
    #[inline]
    pub fn affine(&self) -> Affine {
        let [r, t, s] = self.parts;
        Affine::from_parts(r.map(f64::from), [t[0], t[1], t[2]].map(f64::from), [s[0], s[1], s[2]].map(f64::from))
    }
}

/// Everything about the raw clip that error measurement needs.
pub struct Reference {
    /// Number of bones.
    pub bone_count: usize,
    /// Number of samples.
    pub sample_count: usize,
    /// Parent of each bone.
    pub parents: Vec<Option<usize>>,
    /// Shell distance of each bone.
    pub shells: Vec<f64>,
    /// Local values, `[sample * bone_count + bone]`.
    pub local: Vec<LocalValues>,
    /// Local affine transforms, same indexing.
    pub local_affine: Vec<Affine>,
    /// Object-space transforms, same indexing.
    pub object: Vec<Affine>,
    /// Virtual vertices in object space, same indexing.
    pub vertices: Vec<[[f64; 3]; 3]>,
    /// For each bone: itself and every descendant, in increasing index order (so a
    /// parent always comes before its children).
    pub subtree: Vec<Vec<usize>>,
    /// For each bone: itself, then its parent, up to its root.
    pub chain: Vec<Vec<usize>>,
}

impl Reference {
    /// Builds the reference of a validated clip.
    pub fn new(clip: &RawClip) -> Reference {
        let bone_count = clip.bones.len();
        let sample_count = clip.sample_count;
        let parents: Vec<Option<usize>> = clip.bones.iter().map(|b| b.parent).collect();
        let shells = clip.bones.iter().map(|b| b.shell_distance).collect();
        let mut local = Vec::with_capacity(bone_count * sample_count);
        for s in 0..sample_count {
            for track in &clip.tracks {
                let r = track.rotations[s].map(|v| v as f32);
                let t = track.translations[s];
                let sc = track.scales[s];
                local.push(LocalValues {
                    parts: [
                        r,
                        [t[0] as f32, t[1] as f32, t[2] as f32, 0.0],
                        [sc[0] as f32, sc[1] as f32, sc[2] as f32, 0.0],
                    ],
                });
            }
        }
        let local_affine: Vec<Affine> = local.iter().map(LocalValues::affine).collect();
        let mut object: Vec<Affine> = Vec::with_capacity(local.len());
        for s in 0..sample_count {
            for b in 0..bone_count {
                let l = &local_affine[s * bone_count + b];
                let o = match parents[b] {
                    Some(p) => object[s * bone_count + p].then(l),
                    None => *l,
                };
                object.push(o);
            }
        }
        let vertices = object
            .iter()
            .enumerate()
            .map(|(i, o): (usize, &Affine)| o.vertices(clip.bones[i % bone_count.max(1)].shell_distance))
            .collect();
        let mut subtree: Vec<Vec<usize>> = (0..bone_count).map(|b| vec![b]).collect();
        let mut chain: Vec<Vec<usize>> = Vec::with_capacity(bone_count);
        for b in 0..bone_count {
            let mut c = vec![b];
            let mut p = parents[b];
            while let Some(a) = p {
                c.push(a);
                subtree[a].push(b);
                p = parents[a];
            }
            chain.push(c);
        }
        Reference { bone_count, sample_count, parents, shells, local, local_affine, object, vertices, subtree, chain }
    }

    /// Index of `(sample, bone)` in the per-sample arrays.
    #[inline]
    pub fn at(&self, sample: usize, bone: usize) -> usize {
        sample * self.bone_count + bone
    }

    /// Error of `bone` at `sample` given its lossy object-space transform.
    #[inline]
    pub fn error(&self, sample: usize, bone: usize, lossy_object: &Affine) -> f64 {
        vertex_error(&self.vertices[self.at(sample, bone)], &lossy_object.vertices(self.shells[bone]))
    }

    /// The largest error over `bone`'s subtree at `samples` when only one sub-track
    /// of `bone` (`part`: 0 rotation, 1 translation, 2 scale) is replaced by
    /// `value(sample)` and everything else is exact.
    pub fn standalone_error(
        &self,
        bone: usize,
        part: usize,
        samples: std::ops::Range<usize>,
        scratch: &mut Vec<Affine>,
        mut value: impl FnMut(usize) -> Lane4,
    ) -> f64 {
        scratch.resize(self.bone_count, Affine::IDENTITY);
        let mut worst = 0.0f64;
        for s in samples {
            let mut local = self.local[self.at(s, bone)];
            local.parts[part] = value(s);
            let l = local.affine();
            let o = match self.parents[bone] {
                Some(p) => self.object[self.at(s, p)].then(&l),
                None => l,
            };
            scratch[bone] = o;
            worst = worst.max(self.error(s, bone, &o));
            for &d in &self.subtree[bone][1..] {
                let p = self.parents[d].unwrap_or(bone);
                let o = scratch[p].then(&self.local_affine[self.at(s, d)]);
                scratch[d] = o;
                worst = worst.max(self.error(s, d, &o));
            }
        }
        worst
    }
}
