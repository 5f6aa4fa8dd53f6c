//! The reference the error is measured against: the raw clip as `f32` (what an
//! engine consumes) and its object-space transforms, plus the hierarchy queries the
//! optimiser needs.
//!
//! This is most of the compressor's memory, so it keeps per transform sample only
//! what is costly to recompute: the local values (48 bytes), their affine form (96)
//! and the object-space transform (96). Virtual vertices are rebuilt from the
//! object-space transform when needed (nine multiply-adds).

use super::hierarchy::Hierarchy;
use crate::error_metric::{vertex_error, Affine};
use crate::memory::{self, OutOfMemory};
use crate::raw_clip::{normalize, RawClip};

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

/// Bytes the reference keeps per transform sample (bone × sample).
pub const BYTES_PER_TRANSFORM_SAMPLE: u64 =
    (size_of::<LocalValues>() + size_of::<Affine>() + size_of::<Affine>()) as u64;

/// Everything about the raw clip that error measurement needs.
pub struct Reference {
    /// Number of bones.
    pub bone_count: usize,
    /// Number of samples.
    pub sample_count: usize,
    /// Shell distance of each bone.
    pub shells: Vec<f64>,
    /// Parents, subtrees and chains.
    pub hierarchy: Hierarchy,
    /// Local values, `[sample * bone_count + bone]`.
    pub local: Vec<LocalValues>,
    /// Local affine transforms, same indexing.
    pub local_affine: Vec<Affine>,
    /// Object-space transforms, same indexing.
    pub object: Vec<Affine>,
}

impl Reference {
    /// Builds the reference of a checked clip ([`RawClip::check`]); rotations are
    /// normalised here, in `f64`, before they are rounded to `f32`.
    pub fn new(clip: &RawClip) -> Result<Reference, OutOfMemory> {
        let bone_count = clip.bones.len();
        let sample_count = clip.sample_count;
        let parents: Vec<Option<usize>> = clip.bones.iter().map(|b| b.parent).collect();
        let shells = clip.bones.iter().map(|b| b.shell_distance).collect();
        let n = bone_count * sample_count;
        let mut local = memory::with_capacity(n, "the reference clip")?;
        for s in 0..sample_count {
            for track in &clip.tracks {
                let r = normalize(track.rotations[s]).unwrap_or([0.0, 0.0, 0.0, 1.0]).map(|v| v as f32);
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
        let local_affine = memory::collect(n, local.iter().map(LocalValues::affine), "the reference clip")?;
        let mut object: Vec<Affine> = memory::with_capacity(n, "the reference clip")?;
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
        let hierarchy = Hierarchy::new(&parents);
        Ok(Reference { bone_count, sample_count, shells, hierarchy, local, local_affine, object })
    }

    /// Index of `(sample, bone)` in the per-sample arrays.
    #[inline]
    pub fn at(&self, sample: usize, bone: usize) -> usize {
        sample * self.bone_count + bone
    }

    /// The parent of `bone`.
    #[inline]
    pub fn parent(&self, bone: usize) -> Option<usize> {
        self.hierarchy.parent(bone)
    }

    /// The virtual vertices of `bone` at `sample`, in object space.
    #[inline]
    pub fn vertices(&self, sample: usize, bone: usize) -> [[f64; 3]; 3] {
        self.object[self.at(sample, bone)].vertices(self.shells[bone])
    }

    /// Error of `bone` at `sample` given its lossy object-space transform.
    #[inline]
    pub fn error(&self, sample: usize, bone: usize, lossy_object: &Affine) -> f64 {
        vertex_error(&self.vertices(sample, bone), &lossy_object.vertices(self.shells[bone]))
    }

    /// The largest error over `bone`'s subtree at `samples` when only one sub-track
    /// of `bone` (`part`: 0 rotation, 1 translation, 2 scale) is replaced by
    /// `value(sample)` and everything else is exact.
    ///
    /// Only comparisons with `limit` matter to the callers: the walk stops as soon as
    /// the error exceeds it (the result is then some value above `limit`). A sample
    /// whose value is exactly the reference's moves nothing and is skipped: the
    /// default and constant sub-tracks of deep hierarchies cost no subtree walk.
    pub fn standalone_error(
        &self,
        bone: usize,
        part: usize,
        samples: std::ops::Range<usize>,
        limit: f64,
        scratch: &mut Vec<Affine>,
        mut value: impl FnMut(usize) -> Lane4,
    ) -> f64 {
        scratch.resize(self.bone_count, Affine::IDENTITY);
        let subtree = self.hierarchy.subtree(bone);
        let mut worst = 0.0f64;
        for s in samples {
            let mut local = self.local[self.at(s, bone)];
            let v = value(s);
            if v == local.parts[part] {
                continue;
            }
            local.parts[part] = v;
            let l = local.affine();
            let o = match self.parent(bone) {
                Some(p) => self.object[self.at(s, p)].then(&l),
                None => l,
            };
            scratch[bone] = o;
            worst = worst.max(self.error(s, bone, &o));
            if worst > limit {
                return worst;
            }
            for &d in &subtree[1..] {
                let p = self.parent(d).unwrap_or(bone);
                let o = scratch[p].then(&self.local_affine[self.at(s, d)]);
                scratch[d] = o;
                worst = worst.max(self.error(s, d, &o));
                if worst > limit {
                    return worst;
                }
            }
        }
        worst
    }
}
