//! The reference the error is measured against: the raw clip as `f32` (what an
//! engine consumes) and its object-space transforms, plus the hierarchy queries the
//! optimiser needs.
//!
//! This is most of the compressor's memory, so it keeps per transform sample only
//! what is costly to recompute: the local values (48 bytes), their affine form (96),
//! the object-space transform (96) and the reach of the bone's descendants (8).
//! Virtual vertices are rebuilt from the object-space transform when needed (nine
//! multiply-adds).

use rayon::prelude::*;

use ossa_decoder::format::SubTrackKind;
use ossa_decoder::Additive;

use super::additive;
use super::hierarchy::Hierarchy;
use super::values::{default_value, Lane4, LocalValues};
use crate::error_metric::{transform_error, Affine};
use crate::memory::{self, OutOfMemory};
use crate::raw_clip::{normalize, RawClip};

/// Bytes the reference keeps per transform sample (bone × sample).
pub const BYTES_PER_TRANSFORM_SAMPLE: u64 =
    (size_of::<LocalValues>() + size_of::<Affine>() + size_of::<Affine>() + size_of::<f64>()) as u64;

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
    /// How far from a bone's origin its own and its descendants' virtual vertices
    /// can be, in the space its object transform maps from: an upper bound, same
    /// indexing (see `reach_of_sample`).
    pub reach: Vec<f64>,
    /// For an additive clip, its base at every sample and how the clip applies to
    /// it: `local_affine` and `object` are then the combined transforms a game sees.
    pub base: Option<Base>,
    /// The values default sub-tracks decode to when the clip uses a database's shared
    /// pose (per bone: rotation, translation, scale); `None`: the identity.
    pub defaults: Option<Vec<[Lane4; 3]>>,
    /// The transforms above the roots that have one in the source's scene
    /// ([`crate::SourceSkeleton::root_placements`]): object space is the scene's, so
    /// the precision and every error are in the units the model is seen in.
    pub placements: Vec<(usize, Affine)>,
    /// Bones whose rotation error the rotations below must not compensate
    /// ([`super::compensation`]): the root-motion bone and its ancestors, whose
    /// rotations give the displacement a game accumulates, and so must be as precise
    /// as the whole skeleton they carry needs. Empty: none.
    pub uncompensated: Vec<bool>,
    /// How far the root-motion bone gets from where it starts over the clip, in
    /// object space (0 without one): the lever of its rotation error on the path a
    /// game moves the character along.
    pub travel: f64,
}

/// An additive clip's base, sampled at the clip's samples.
pub struct Base {
    /// How the clip's transforms apply to the base's.
    pub format: Additive,
    /// The base's local values, `[sample * bone_count + bone]`.
    pub local: Vec<LocalValues>,
}

impl Reference {
    /// Builds the reference of a checked clip ([`RawClip::check`]); rotations are
    /// normalised here, in `f64`, before they are rounded to `f32`.
    pub fn new(clip: &RawClip) -> Result<Reference, OutOfMemory> {
        let bone_count = clip.bones.len();
        let sample_count = clip.sample_count;
        let parents: Vec<Option<usize>> = clip.bones.iter().map(|b| b.parent).collect();
        let shells: Vec<f64> = clip.bones.iter().map(|b| b.shell_distance).collect();
        let placements: Vec<(usize, Affine)> =
            clip.source.root_placements.iter().map(|p| (p.bone, p.affine())).collect();
        let place = |bone: usize, local: Affine| place_root(&placements, bone, local);
        let n = bone_count * sample_count;
        let zero = LocalValues { parts: [[0.0; 4]; 3] };
        let mut local = memory::filled_in_parallel(n, zero, "the reference clip")?;
        let mut local_affine = memory::filled_in_parallel(n, Affine::IDENTITY, "the reference clip")?;
        let mut object = memory::filled_in_parallel(n, Affine::IDENTITY, "the reference clip")?;
        let mut reach = memory::filled_in_parallel(n, 0.0f64, "the reference clip")?;
        let base = match &clip.additive {
            Some(b) => Some(Base {
                format: b.format,
                local: additive::base_at_samples(b, bone_count, sample_count, clip.sample_rate)?,
            }),
            None => None,
        };
        // Samples are independent: each is filled on whichever core is free.
        let samples = local
            .par_chunks_mut(bone_count.max(1))
            .zip(local_affine.par_chunks_mut(bone_count.max(1)))
            .zip(object.par_chunks_mut(bone_count.max(1)))
            .zip(reach.par_chunks_mut(bone_count.max(1)));
        samples.enumerate().for_each(|(s, (((local, local_affine), object), reach))| {
            for (b, track) in clip.tracks.iter().enumerate().take(local.len()) {
                let r = normalize(track.rotations[s]).unwrap_or([0.0, 0.0, 0.0, 1.0]).map(|v| v as f32);
                let t = track.translations[s];
                let sc = track.scales[s];
                local[b] = LocalValues {
                    parts: [
                        r,
                        [t[0] as f32, t[1] as f32, t[2] as f32, 0.0],
                        [sc[0] as f32, sc[1] as f32, sc[2] as f32, 0.0],
                    ],
                };
                local_affine[b] = match &base {
                    Some(base) => additive::combine(base.format, &base.local[s * bone_count + b], &local[b]),
                    None => local[b].affine(),
                };
                object[b] = match parents[b] {
                    Some(p) => object[p].then(&local_affine[b]),
                    None => place(b, local_affine[b]),
                };
            }
            reach_of_sample(&parents, &shells, local_affine, reach);
        });
        let hierarchy = Hierarchy::new(&parents);
        Ok(Reference {
            bone_count,
            sample_count,
            shells,
            hierarchy,
            local,
            local_affine,
            object,
            reach,
            base,
            defaults: None,
            placements,
            uncompensated: Vec::new(),
            travel: 0.0,
        })
    }

    /// How big the skeleton is in the units the error is measured in: the largest
    /// side of the box around its joints in the first pose (root placements applied),
    /// or for joints all at one point its largest shell distance. An error means most
    /// as a share of it.
    pub fn skeleton_size(&self) -> f64 {
        let (mut lo, mut hi) = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
        for b in 0..self.bone_count {
            let t = self.object[self.at(0, b)].t;
            for i in 0..3 {
                (lo[i], hi[i]) = (lo[i].min(t[i]), hi[i].max(t[i]));
            }
        }
        let side = (0..3).map(|i| hi[i] - lo[i]).fold(0.0, f64::max);
        if side > 0.0 {
            side
        } else {
            self.shells.iter().copied().fold(0.0, f64::max)
        }
    }

    /// The object transform of root `bone` whose local transform is `local`: placed
    /// in the scene when the source places it.
    #[inline]
    pub fn root_object(&self, bone: usize, local: Affine) -> Affine {
        place_root(&self.placements, bone, local)
    }

    /// The local transform a game sees for `bone` at `sample` when the clip gives it
    /// `values`: the values themselves, or for an additive clip the base with them
    /// applied.
    #[inline]
    pub fn affine_of(&self, sample: usize, bone: usize, values: &LocalValues) -> Affine {
        match &self.base {
            Some(base) => additive::combine(base.format, &base.local[self.at(sample, bone)], values),
            None => values.affine(),
        }
    }

    /// The value `bone`'s default (not stored) sub-track of `kind` decodes to: its
    /// shared pose's when the clip has one, else identity rotation, zero translation,
    /// unit scale (zero in an additive1 clip, where the game adds 1).
    pub fn default_of(&self, bone: usize, kind: SubTrackKind) -> Lane4 {
        if let Some(values) = self.defaults.as_ref().and_then(|d| d.get(bone)) {
            return values[kind as usize];
        }
        let additive = self.base.as_ref().map_or(Additive::None, |b| b.format);
        default_value(kind, additive)
    }

    /// Whether `bone`'s rotation error is left uncompensated below it
    /// ([`Reference::uncompensated`]).
    #[inline]
    pub fn is_uncompensated(&self, bone: usize) -> bool {
        self.uncompensated.get(bone).copied().unwrap_or(false)
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
        transform_error(&self.object[self.at(sample, bone)], lossy_object, self.shells[bone])
    }

    /// The largest error over `bone`'s subtree at `samples` when only one sub-track
    /// of `bone` (`part`: 0 rotation, 1 translation, 2 scale) is replaced by
    /// `value(sample)` and everything else is exact.
    ///
    /// Only comparisons with `limit` matter to the callers: the walk stops as soon as
    /// the error exceeds it (the result is then some value above `limit`), and a
    /// result within `limit` may be an upper bound of the error rather than the
    /// error itself. A sample whose value is exactly the reference's moves nothing
    /// and is skipped: the default and constant sub-tracks of deep hierarchies cost
    /// no subtree walk. A sample whose change moves no vertex of the subtree by more
    /// than `limit` ([`change_bound`]) is not walked either: near the answer of a
    /// bit-rate search, most samples are.
    pub fn standalone_error(
        &self,
        bone: usize,
        part: usize,
        samples: impl IntoIterator<Item = usize>,
        limit: f64,
        scratch: &mut Vec<Affine>,
        value: impl FnMut(usize) -> Lane4,
    ) -> f64 {
        self.standalone_walk(bone, part, samples, (limit, limit), scratch, |_| false, value)
    }

    /// [`Reference::standalone_error`] answering for every limit in `lowest ..=
    /// highest` at once: for each such `limit`, the error is within it exactly when
    /// the result is, with the same answer [`Reference::standalone_error`] gives for
    /// that limit. A choice tried at several limits (a constant's width, for each
    /// share of the precision) walks once.
    ///
    /// Samples are skipped only where the change bound is within `lowest` (below any
    /// limit asked, so the skip never turns an answer), and the walk stops above
    /// `highest`; in between, the errors found are exact.
    #[allow(clippy::too_many_arguments)]
    pub fn standalone_error_between(
        &self,
        bone: usize,
        part: usize,
        samples: impl IntoIterator<Item = usize>,
        lowest: f64,
        highest: f64,
        scratch: &mut Vec<Affine>,
        value: impl FnMut(usize) -> Lane4,
    ) -> f64 {
        self.standalone_walk(bone, part, samples, (lowest, highest.max(lowest)), scratch, |_| false, value)
    }

    /// [`Reference::standalone_error`] for `bone`'s rotation when the rotations below
    /// it are compensated ([`super::compensation`]): a child whose rotation
    /// `compensates` keeps its source orientation in object space, so its whole
    /// subtree moves with its origin, by the distance that origin moves; the subtrees
    /// of the other children are walked as there. Same use of `limit`.
    ///
    /// A model for the search's first step, not a measure: the compensated child's
    /// own rounding and the clip range it is clamped to come on top, and the search
    /// measures them.
    pub fn standalone_rotation_error_compensated(
        &self,
        bone: usize,
        samples: impl IntoIterator<Item = usize>,
        limit: f64,
        scratch: &mut Vec<Affine>,
        compensates: impl Fn(usize) -> bool,
        value: impl FnMut(usize) -> Lane4,
    ) -> f64 {
        self.standalone_walk(bone, ROTATION, samples, (limit, limit), scratch, compensates, value)
    }

    /// How far a change of one constant part of `bone`'s local transform can move the
    /// virtual vertices of its subtree, at any sample, per unit of change
    /// ([`ConstantLevers`]); `None` for an additive clip, whose local transforms are
    /// the base's combined with the values.
    pub fn constant_levers(&self, bone: usize) -> Option<ConstantLevers> {
        if self.base.is_some() {
            return None;
        }
        let placement = self.placements.iter().find(|(b, _)| *b == bone).map(|(_, p)| p.m);
        let mut levers = ConstantLevers { linear: 0.0, rotation: 0.0, translation: 0.0 };
        for s in 0..self.sample_count {
            let at = self.at(s, bone);
            let parent = match self.parent(bone) {
                Some(p) => self.object[self.at(s, p)].m,
                None => placement.unwrap_or(Affine::IDENTITY.m),
            };
            let norm = spectral_bound(&parent);
            let scale = self.local[at].parts[SCALE][..3].iter().fold(0.0f64, |m, &v| m.max(f64::from(v).abs()));
            let reach = norm * self.reach[at];
            // NaN (or infinite) anywhere: no lever, and so no shortcut.
            if !(reach.is_finite() && scale.is_finite()) {
                return None;
            }
            levers.linear = levers.linear.max(reach);
            levers.rotation = levers.rotation.max(reach * scale);
            levers.translation = levers.translation.max(norm);
        }
        Some(levers)
    }

    /// The walk of all three: `compensates` says which children of `bone` keep their
    /// orientation (only for a rotation; `|_| false` walks every bone). A sample
    /// whose change bound is within `skip` is not walked, and the walk stops once the
    /// error exceeds `limit` (`skip <= limit`).
    #[allow(clippy::too_many_arguments)]
    fn standalone_walk(
        &self,
        bone: usize,
        part: usize,
        samples: impl IntoIterator<Item = usize>,
        (skip, limit): (f64, f64),
        scratch: &mut Vec<Affine>,
        compensates: impl Fn(usize) -> bool,
        mut value: impl FnMut(usize) -> Lane4,
    ) -> f64 {
        scratch.resize(self.bone_count, Affine::IDENTITY);
        let subtree = self.hierarchy.subtree(bone);
        let mut linear = LinearParts::default();
        let mut worst = 0.0f64;
        for s in samples {
            let at = self.at(s, bone);
            let mut local = self.local[at];
            let v = value(s);
            if v == local.parts[part] {
                continue;
            }
            local.parts[part] = v;
            let o = self.object_with(s, bone, &local, part, &mut linear);
            // Every vertex of the subtree moves by at most this much (a compensated
            // child's origin too): when that is within `skip`, the walk below
            // cannot find anything above it.
            let bound = change_bound(&self.object[at], &o, self.reach[at]);
            if bound <= skip {
                worst = worst.max(bound);
                continue;
            }
            scratch[bone] = o;
            worst = worst.max(self.error(s, bone, &o));
            if worst > limit {
                return worst;
            }
            // A changed translation (without an additive base) moves the whole
            // subtree by one vector, the bone's own shift: every bone below has the
            // bone's error, up to rounding, and the walk would find nothing more.
            if part == TRANSLATION && self.base.is_none() {
                continue;
            }
            // A compensated child's subtree (contiguous after it) moves as its origin
            // does: its bones are skipped, and `scratch` is only read for bones walked.
            let mut skip_until = 0;
            for (k, &d) in subtree.iter().enumerate().skip(1) {
                if k < skip_until {
                    continue;
                }
                let p = self.parent(d).unwrap_or(bone);
                if p == bone && compensates(d) {
                    let t = self.local[self.at(s, d)].parts[TRANSLATION];
                    let origin = o.apply([t[0], t[1], t[2]].map(f64::from));
                    let r = self.object[self.at(s, d)].t;
                    worst = worst.max(length([origin[0] - r[0], origin[1] - r[1], origin[2] - r[2]]));
                    if worst > limit {
                        return worst;
                    }
                    skip_until = k + self.hierarchy.subtree(d).len();
                    continue;
                }
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

    /// The object transform of `bone` at `sample` when its local values are `local`,
    /// which differ from the reference's in part `part` only; everything above is
    /// the reference's. Bit for bit the parent's transform composed with
    /// [`Reference::affine_of`], with less work: a changed translation leaves the
    /// linear part as the reference's, and `linear` keeps the last linear part.
    fn object_with(
        &self,
        sample: usize,
        bone: usize,
        local: &LocalValues,
        part: usize,
        linear: &mut LinearParts,
    ) -> Affine {
        if part == TRANSLATION && self.base.is_none() {
            let v = local.parts[TRANSLATION];
            let t = [v[0], v[1], v[2]].map(f64::from);
            let moved = match self.parent(bone) {
                Some(p) => self.object[self.at(sample, p)].apply(t),
                None => self.root_object(bone, Affine { m: Affine::IDENTITY.m, t }).t,
            };
            return Affine { m: self.object[self.at(sample, bone)].m, t: moved };
        }
        let l = match &self.base {
            None => linear.affine(local),
            Some(_) => self.affine_of(sample, bone, local),
        };
        match self.parent(bone) {
            Some(p) => self.object[self.at(sample, p)].then(&l),
            None => self.root_object(bone, l),
        }
    }
}

/// Index of the translation in [`LocalValues::parts`].
const TRANSLATION: usize = SubTrackKind::Translation as usize;
const ROTATION: usize = SubTrackKind::Rotation as usize;
const SCALE: usize = SubTrackKind::Scale as usize;

/// The affine form of local values whose rotation and scale are often those of the
/// call before (a constant tried at every sample): the linear part, the costly one,
/// is computed again only when they change. Bit for bit [`LocalValues::affine`].
#[derive(Default)]
struct LinearParts {
    last: Option<LastLinear>,
}

/// The bits of a rotation and a scale, and their linear part.
#[derive(Clone, Copy)]
struct LastLinear {
    rotation: [u32; 4],
    scale: [u32; 4],
    m: [[f64; 3]; 3],
}

impl LinearParts {
    fn affine(&mut self, values: &LocalValues) -> Affine {
        let [r, t, s] = values.parts;
        let t = [t[0], t[1], t[2]].map(f64::from);
        // Bits, not values: `-0.0` and `0.0` may give different zeros.
        let (r, s) = (r.map(f32::to_bits), s.map(f32::to_bits));
        match self.last {
            Some(last) if last.rotation == r && last.scale == s => Affine { m: last.m, t },
            _ => {
                let a = values.affine();
                self.last = Some(LastLinear { rotation: r, scale: s, m: a.m });
                a
            }
        }
    }
}

/// `local` placed by `bone`'s entry in `placements`, if it has one.
#[inline]
fn place_root(placements: &[(usize, Affine)], bone: usize, local: Affine) -> Affine {
    match placements.iter().find(|(b, _)| *b == bone) {
        Some((_, placement)) => placement.then(&local),
        None => local,
    }
}

/// Fills `reach[b]` for every bone of one sample: an upper bound of the distance
/// from `b`'s origin to its own virtual vertices and to every descendant's, measured
/// in the space `b`'s object transform maps from (so that a change `ΔM, Δt` of that
/// transform moves each of them by at most `‖ΔM‖·reach + |Δt|`).
///
/// Children are visited before their parents (`parents[b] < b`): a child `c` at
/// local transform `L_c = (M_c, t_c)` contributes `‖M_c‖·reach[c] + |t_c|`, where
/// `reach[c]` already covers `c`'s vertices (its shell distance) and its subtree, and
/// `‖M_c‖` is the largest scale magnitude (the spectral norm of a rotation times a
/// scale). The bound follows the chain's lengths, so a bent limb is over-estimated:
/// it only makes the shortcut in [`Reference::standalone_error`] rarer, never wrong.
fn reach_of_sample(parents: &[Option<usize>], shells: &[f64], local: &[Affine], reach: &mut [f64]) {
    for (r, &shell) in reach.iter_mut().zip(shells) {
        *r = shell.abs();
    }
    for b in (0..parents.len()).rev() {
        let Some(p) = parents[b] else { continue };
        let l = &local[b];
        // The largest column length, NaN kept (`f64::max` would drop it).
        let norm = l.m.iter().map(|c| length(*c)).fold(0.0f64, |n, x| if n.is_nan() || x <= n { n } else { x });
        let contribution = norm * reach[b] + length(l.t);
        // NaN (or infinite) reach disables the shortcut rather than hiding an error.
        reach[p] = if contribution.is_nan() { f64::INFINITY } else { reach[p].max(contribution) };
    }
}

/// An upper bound of how far any vertex within `reach` of a bone's origin moves when
/// its object transform changes from `reference` to `lossy`: `‖ΔM‖_F·reach + |Δt|`
/// (the Frobenius norm bounds the spectral one), with a relative margin of `1e-9` so
/// that floating-point rounding cannot make it smaller than the error
/// [`Reference::error`] computes. NaN anywhere gives infinity.
#[inline]
pub fn change_bound(reference: &Affine, lossy: &Affine, reach: f64) -> f64 {
    let mut frobenius2 = 0.0f64;
    for (a, b) in reference.m.iter().zip(&lossy.m) {
        for (x, y) in a.iter().zip(b) {
            frobenius2 += (x - y) * (x - y);
        }
    }
    let dt = [lossy.t[0] - reference.t[0], lossy.t[1] - reference.t[1], lossy.t[2] - reference.t[2]];
    let bound = (frobenius2.sqrt() * reach + length(dt)) * (1.0 + 1e-9);
    if bound.is_nan() {
        f64::INFINITY
    } else {
        bound
    }
}

/// Per unit of change of one constant part of a bone's local transform, the most its
/// subtree's virtual vertices move at any sample ([`Reference::constant_levers`]):
/// with `P` the parent's object-space linear part, `S` the bone's scale and `r` its
/// reach (the bound the reference keeps per bone and sample), a local linear change
/// `ΔM` and translation change `Δt` move a vertex by at most `‖P‖₂ (‖ΔM‖_F r + |Δt|)`.
#[derive(Clone, Copy, Debug)]
pub struct ConstantLevers {
    /// `max ‖P‖₂ r`: a scale change `Δs` gives `‖ΔM‖_F = |Δs|` (unit rotation columns).
    linear: f64,
    /// `max ‖P‖₂ r max|S|`: a rotation change gives `ΔM = ΔR S`.
    rotation: f64,
    /// `max ‖P‖₂`.
    translation: f64,
}

impl ConstantLevers {
    /// An upper bound of how far any vertex of the subtree moves, at any sample, when
    /// part `part` of the local transform (everything else the reference's) goes from
    /// `from` to `to` (local values, [`super::sub_track::SubTrack::to_local`]), with a
    /// relative margin of `1e-6` for rounding; infinity when it cannot say.
    pub fn change(&self, part: usize, from: Lane4, to: Lane4) -> f64 {
        let delta = |k: usize| f64::from(to[k]) - f64::from(from[k]);
        let bound = match part {
            ROTATION => {
                let unit = [1.0; 3];
                let a = Affine::from_parts(from.map(f64::from), [0.0; 3], unit).m;
                let b = Affine::from_parts(to.map(f64::from), [0.0; 3], unit).m;
                let mut frobenius2 = 0.0f64;
                for (x, y) in a.iter().flatten().zip(b.iter().flatten()) {
                    frobenius2 += (x - y) * (x - y);
                }
                frobenius2.sqrt() * self.rotation
            }
            TRANSLATION => length([delta(0), delta(1), delta(2)]) * self.translation,
            _ => length([delta(0), delta(1), delta(2)]) * self.linear,
        };
        let bound = bound * (1.0 + 1e-6);
        if bound.is_nan() {
            f64::INFINITY
        } else {
            bound
        }
    }
}

/// An upper bound of the spectral norm of the 3×3 matrix of columns `m`: the square
/// root of the largest absolute row sum of `mᵀm` (which bounds its largest
/// eigenvalue); exact for a rotation times a uniform scale.
fn spectral_bound(m: &[[f64; 3]; 3]) -> f64 {
    let dot = |i: usize, j: usize| m[i][0] * m[j][0] + m[i][1] * m[j][1] + m[i][2] * m[j][2];
    let g = [[dot(0, 0), dot(0, 1), dot(0, 2)], [dot(0, 1), dot(1, 1), dot(1, 2)], [dot(0, 2), dot(1, 2), dot(2, 2)]];
    let rows = g.map(|r| r[0].abs() + r[1].abs() + r[2].abs());
    let largest = rows[0].max(rows[1]).max(rows[2]);
    // NaN stays NaN (`max` would drop it), so that the caller refuses the lever.
    if rows.iter().any(|r| r.is_nan()) {
        f64::NAN
    } else {
        largest.sqrt()
    }
}

/// The length of `v`.
#[inline]
pub fn length(v: [f64; 3]) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::raw_clip::{Bone, BoneTrack, RawTransform, RootPlacement, SourceSkeleton};

    /// A small deterministic generator: the test needs varied numbers, not quality.
    struct Numbers(u64);
    impl Numbers {
        fn next(&mut self) -> f64 {
            self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (self.0 >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        }
        fn affine(&mut self, scale: f64) -> Affine {
            let q = [self.next(), self.next(), self.next(), self.next()];
            let t = [self.next() * 30.0, self.next() * 30.0, self.next() * 30.0];
            let s = [scale * (1.0 + self.next() * 0.5), scale * (1.0 + self.next() * 0.5), scale * self.next()];
            Affine::from_parts(q, t, s)
        }
    }

    /// The reference of a clip of `parents`' hierarchy whose root the source places
    /// in a scene (rotated, scaled unevenly, moved), each bone's samples from `track`.
    fn placed_reference(
        parents: &[Option<usize>],
        shell: impl Fn(usize) -> f64,
        samples: usize,
        mut track: impl FnMut() -> BoneTrack,
    ) -> Reference {
        let bones: Vec<Bone> = parents
            .iter()
            .enumerate()
            .map(|(i, &parent)| Bone {
                name: format!("b{i}"),
                parent,
                shell_distance: shell(i),
                bind_pose: RawTransform::IDENTITY,
            })
            .collect();
        let tracks: Vec<BoneTrack> = parents.iter().map(|_| track()).collect();
        let placement =
            RootPlacement { bone: 0, matrix: [0.0, -2.0, 0.0, 1.0, 2.0, 0.0, 0.0, -3.0, 0.0, 0.0, 2.0, 0.5] };
        let source = SourceSkeleton { root_placements: vec![placement], ..Default::default() };
        let clip = RawClip {
            name: "placed".into(),
            sample_rate: 30.0,
            sample_count: samples,
            bones,
            tracks,
            additive: None,
            source,
        };
        Reference::new(&clip).unwrap()
    }

    #[test]
    fn no_descendant_vertex_moves_further_than_the_change_bound() {
        // Two branches under a root, with rotations, non-uniform (and negative)
        // scales and long translations; the root's transform is then disturbed by
        // changes from tiny to large, and every vertex of every bone below is moved.
        let parents = [None, Some(0), Some(1), Some(2), Some(1), Some(4), Some(0)];
        let shells = [3.0, 2.0, 5.0, 1.0, 0.5, 4.0, 3.0];
        let mut numbers = Numbers(7);
        let mut tightest = f64::INFINITY;
        for round in 0..200 {
            let scale = if round % 2 == 0 { 1.0 } else { 1.5 };
            let local: Vec<Affine> = (0..parents.len()).map(|_| numbers.affine(scale)).collect();
            let mut object = Vec::new();
            crate::error_metric::to_object_space(&local, &parents, &mut object);
            let mut reach = vec![0.0; parents.len()];
            reach_of_sample(&parents, &shells, &local, &mut reach);
            for bone in [0, 1, 4] {
                let size = 10f64.powi(round % 5 - 4);
                let mut changed = local[bone];
                for c in &mut changed.m {
                    for v in c {
                        *v += numbers.next() * size;
                    }
                }
                changed.t[0] += numbers.next() * size;
                let lossy_bone = match parents[bone] {
                    Some(p) => object[p].then(&changed),
                    None => changed,
                };
                let bound = change_bound(&object[bone], &lossy_bone, reach[bone]);
                let mut lossy = object.clone();
                lossy[bone] = lossy_bone;
                for d in bone + 1..parents.len() {
                    if let Some(p) = parents[d] {
                        if p >= bone && (p == bone || lossy[p] != object[p]) {
                            lossy[d] = lossy[p].then(&local[d]);
                        }
                    }
                }
                let moved = (bone..parents.len())
                    .map(|d| transform_error(&object[d], &lossy[d], shells[d]))
                    .fold(0.0f64, f64::max);
                assert!(moved > 0.0 && moved <= bound, "round {round} bone {bone}: moved {moved}, bound {bound}");
                tightest = tightest.min(bound / moved);
            }
        }
        // A bound so loose that it never helps would pass the check above: it must be
        // within a small factor of the real displacement somewhere.
        assert!(tightest < 3.0, "the bound is never close: {tightest}");
    }

    #[test]
    fn a_non_finite_change_has_no_bound() {
        let mut lossy = Affine::IDENTITY;
        lossy.t[1] = f64::NAN;
        assert_eq!(change_bound(&Affine::IDENTITY, &lossy, 1.0), f64::INFINITY);
        let mut reach = [0.0; 2];
        let mut local = [Affine::IDENTITY; 2];
        local[1].m[0][0] = f64::NAN;
        reach_of_sample(&[None, Some(0)], &[1.0, 1.0], &local, &mut reach);
        assert_eq!(reach[0], f64::INFINITY);
    }

    /// [`ConstantLevers::change`] against the vertices themselves: one part of a
    /// bone's local transform set to a value at every sample, then to another, every
    /// vertex of its subtree compared, at roots placed in a scene and below, with
    /// non-uniform and negative scales.
    #[test]
    fn no_vertex_moves_further_than_the_constant_levers_say() {
        let mut numbers = Numbers(13);
        let samples = 8;
        let parents = [None, Some(0), Some(1), Some(2), Some(1), Some(0)];
        let reference = placed_reference(
            &parents,
            |b| 1.0 + b as f64,
            samples,
            || BoneTrack {
                rotations: (0..samples)
                    .map(|_| normalize([numbers.next(), numbers.next(), numbers.next(), numbers.next()]).unwrap())
                    .collect(),
                translations: (0..samples).map(|_| [numbers.next() * 10.0, numbers.next() * 5.0, 1.0]).collect(),
                scales: (0..samples).map(|_| [1.0 + numbers.next() * 0.5, -1.5, 1.0 + numbers.next() * 0.3]).collect(),
            },
        );
        // Object transforms of every bone at `sample` with `bone`'s `part` set to `value`.
        let pose = |sample: usize, bone: usize, part: usize, value: Lane4| {
            let mut object: Vec<Affine> = Vec::new();
            for b in 0..reference.bone_count {
                let mut local = reference.local[reference.at(sample, b)];
                if b == bone {
                    local.parts[part] = value;
                }
                let l = reference.affine_of(sample, b, &local);
                object.push(match reference.parent(b) {
                    Some(p) => object[p].then(&l),
                    None => reference.root_object(b, l),
                });
            }
            object
        };
        let mut tightest = f64::INFINITY;
        for round in 0..60usize {
            let size = 10f64.powi(round as i32 % 4 - 4) as f32;
            for bone in 0..reference.bone_count {
                let levers = reference.constant_levers(bone).unwrap();
                for part in 0..3 {
                    let from = reference.local[reference.at(round % samples, bone)].parts[part];
                    let mut to = from;
                    for v in to.iter_mut().take(if part == ROTATION { 4 } else { 3 }) {
                        *v += numbers.next() as f32 * size;
                    }
                    if part == ROTATION {
                        let n = to.iter().map(|v| v * v).sum::<f32>().sqrt();
                        to = to.map(|v| v / n);
                    }
                    let bound = levers.change(part, from, to);
                    let moved = (0..samples)
                        .map(|s| {
                            let (a, b) = (pose(s, bone, part, from), pose(s, bone, part, to));
                            reference
                                .hierarchy
                                .subtree(bone)
                                .iter()
                                .map(|&d| transform_error(&a[d], &b[d], reference.shells[d]))
                                .fold(0.0f64, f64::max)
                        })
                        .fold(0.0f64, f64::max);
                    assert!(moved <= bound, "round {round} bone {bone} part {part}: moved {moved}, bound {bound}");
                    if moved > 0.0 {
                        tightest = tightest.min(bound / moved);
                    }
                }
            }
        }
        // A bound too loose to ever help would pass too: it must come close somewhere.
        assert!(tightest < 3.0, "the bound is never close: {tightest}");
    }

    /// `object_with` takes shortcuts (the reference's linear part for a changed
    /// translation, the last linear part for a repeated rotation and scale): every
    /// result must be the plain composition's, bit for bit, for each part, at roots
    /// placed in a scene and below, with scales and zeros of both signs.
    #[test]
    fn object_with_is_the_plain_composition_bit_for_bit() {
        let mut numbers = Numbers(11);
        let samples = 6;
        let parents = [None, Some(0), Some(1), Some(0)];
        let reference = placed_reference(
            &parents,
            |_| 2.0,
            samples,
            || BoneTrack {
                rotations: (0..samples)
                    .map(|_| normalize([numbers.next(), numbers.next(), -0.0, numbers.next()]).unwrap())
                    .collect(),
                translations: (0..samples).map(|_| [numbers.next() * 10.0, 0.0, -0.0]).collect(),
                scales: (0..samples).map(|_| [1.0 + numbers.next() * 0.5, 1.0, 2.0]).collect(),
            },
        );
        let bits = |a: &Affine| (a.m.map(|c| c.map(f64::to_bits)), a.t.map(f64::to_bits));
        let values: [Lane4; 5] = [
            [0.25, -0.0, 0.5, 0.8],
            [0.0, 0.0, 0.0, 1.0],
            [-0.0, 0.0, -0.0, 1.0],
            [3.0, -0.0, 7.5, 0.0],
            [1.5, 1.5, 0.5, 0.0],
        ];
        for part in 0..3 {
            for bone in 0..reference.bone_count {
                let mut linear = LinearParts::default();
                // Each value at every sample, then again: repeats use the kept part.
                for v in values.iter().chain(&values) {
                    for s in 0..samples {
                        let mut local = reference.local[reference.at(s, bone)];
                        local.parts[part] = *v;
                        let l = reference.affine_of(s, bone, &local);
                        let plain = match reference.parent(bone) {
                            Some(p) => reference.object[reference.at(s, p)].then(&l),
                            None => reference.root_object(bone, l),
                        };
                        let fast = reference.object_with(s, bone, &local, part, &mut linear);
                        assert_eq!(bits(&fast), bits(&plain), "part {part} bone {bone} sample {s} value {v:?}");
                    }
                }
            }
        }
    }
}
