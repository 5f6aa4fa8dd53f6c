//! The uncompressed clip: skeleton, sample rate and one transform per bone per sample.

use std::fmt;

use rayon::prelude::*;

use ossa_decoder::format::{self, MAX_BONES, MAX_SAMPLES};
use ossa_decoder::Additive;

use crate::message::{name as shown, number};

/// The largest clip the encoder takes, in transform samples (bones × samples): at the
/// compressor's cost per transform sample (see [`crate::compress::memory_estimate::compress_estimate`])
/// this is about 12 GiB. A larger clip is refused up front. (1,000 bones × 30,000
/// samples fit.) Below it, the tool compares the estimate with the memory it may use.
pub const MAX_TRANSFORM_SAMPLES: u64 = 1 << 25;

/// A bone of the skeleton.
#[derive(Clone, Debug, PartialEq)]
pub struct Bone {
    /// Name, unique within the clip.
    pub name: String,
    /// Index of the parent bone (always lower than this bone's), `None` for a root.
    pub parent: Option<usize>,
    /// Distance of this bone's virtual vertices, in the clip's units.
    pub shell_distance: f64,
    /// The skeleton's reference pose, in the parent's space.
    pub bind_pose: RawTransform,
}

/// A transform in double precision: `p' = rotation * (scale * p) + translation`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RawTransform {
    /// Quaternion `[x, y, z, w]`.
    pub rotation: [f64; 4],
    /// Translation.
    pub translation: [f64; 3],
    /// Per-axis scale.
    pub scale: [f64; 3],
}

impl RawTransform {
    /// Identity rotation, zero translation, unit scale.
    pub const IDENTITY: RawTransform =
        RawTransform { rotation: [0.0, 0.0, 0.0, 1.0], translation: [0.0; 3], scale: [1.0; 3] };
}

/// The samples of one bone: `sample_count` rotations, translations and scales.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct BoneTrack {
    /// Quaternions `[x, y, z, w]`, normalised on import.
    pub rotations: Vec<[f64; 4]>,
    /// Translations.
    pub translations: Vec<[f64; 3]>,
    /// Scales.
    pub scales: Vec<[f64; 3]>,
}

/// An uncompressed clip.
#[derive(Clone, Debug, PartialEq)]
pub struct RawClip {
    /// Clip name.
    pub name: String,
    /// Samples per second.
    pub sample_rate: f64,
    /// Samples per track (at least 1).
    pub sample_count: usize,
    /// Bones, parents before children.
    pub bones: Vec<Bone>,
    /// One track per bone, same order.
    pub tracks: Vec<BoneTrack>,
    /// For an additive clip: how it applies and the base it applies to.
    pub additive: Option<AdditiveBase>,
    /// What the source says of the skeleton beyond its bones: its own joint order
    /// and the transforms above its roots (glTF). Empty for ACL and BVH clips.
    pub source: SourceSkeleton,
}

/// What a source says of its skeleton beyond the bones themselves, kept so that the
/// clip goes back out as it came in (`ossa decompress -o X.gltf`) and the bound is
/// held in the units the model is seen in.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SourceSkeleton {
    /// For bone `i`, its index among the source's joints; empty when bone `i` is
    /// joint `i` (the importer reorders only joints listed before their parents).
    pub joint_order: Vec<usize>,
    /// The transforms above some of the skeleton's roots in the source's scene (a
    /// glTF armature node's scale and orientation), by increasing root bone. The
    /// precision is held, and the error measured, in the scene they place the roots
    /// in.
    pub root_placements: Vec<RootPlacement>,
}

/// The transform above one of the skeleton's roots: a point `p` of the root's parent
/// space is at `matrix · (p, 1)` in the scene.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RootPlacement {
    /// The root bone.
    pub bone: usize,
    /// A 3 × 4 affine matrix, row by row.
    pub matrix: [f64; 12],
}

impl RootPlacement {
    /// The placement as the error metric's affine transform.
    pub fn affine(&self) -> crate::error_metric::Affine {
        let m = &self.matrix;
        crate::error_metric::Affine {
            m: [[m[0], m[4], m[8]], [m[1], m[5], m[9]], [m[2], m[6], m[10]]],
            t: [m[3], m[7], m[11]],
        }
    }

    /// The largest factor by which the placement stretches a length (the largest
    /// singular value of its linear part): an error of `e` below it is at most
    /// `e` times this in the scene.
    pub fn stretch(&self) -> f64 {
        let a = self.affine().m;
        // Power iteration on AᵀA (symmetric, positive semi-definite): its largest
        // eigenvalue is the square of the largest singular value.
        let ata: [[f64; 3]; 3] =
            std::array::from_fn(|i| std::array::from_fn(|j| (0..3).map(|k| a[i][k] * a[j][k]).sum()));
        let mut v = [1.0, 0.7548776662466927, 0.5698402909980532];
        let mut lambda = 0.0;
        for _ in 0..100 {
            let w: [f64; 3] = std::array::from_fn(|i| (0..3).map(|j| ata[i][j] * v[j]).sum());
            let n = (w[0] * w[0] + w[1] * w[1] + w[2] * w[2]).sqrt();
            if !(n > 0.0 && n.is_finite()) {
                return 0.0;
            }
            let done = (n - lambda).abs() <= n * 1e-15;
            lambda = n;
            v = w.map(|x| x / n);
            if done {
                break;
            }
        }
        lambda.sqrt()
    }
}

/// The base of an additive clip: the pose the additive tracks apply to, which the
/// error is measured on (as a game sees it), and how they combine.
#[derive(Clone, Debug, PartialEq)]
pub struct AdditiveBase {
    /// How the clip's transforms apply to the base's ([`Additive::apply`]); never
    /// [`Additive::None`].
    pub format: Additive,
    /// The base clip's name.
    pub name: String,
    /// Its samples per second.
    pub sample_rate: f64,
    /// Its samples per track (at least 1). The base is sampled at the additive clip's
    /// sample times, interpolated, and held at its ends past them.
    pub sample_count: usize,
    /// One track per bone of the additive clip, same order.
    pub tracks: Vec<BoneTrack>,
}

/// What is wrong with a raw clip. Names the bone and the sample where one applies.
#[derive(Clone, Debug, PartialEq)]
pub enum ClipError {
    /// The clip has no samples.
    NoSamples,
    /// The sample rate is not finite and positive, or out of single-precision range
    /// for this many samples (see [`sample_rate_problem`]).
    BadSampleRate {
        /// Samples per second.
        rate: f64,
        /// Samples in the clip.
        samples: usize,
    },
    /// More bones or samples than the format supports.
    TooLarge(String),
    /// The additive base is inconsistent with the clip.
    BadAdditiveBase(String),
    /// The source's joint order or root placements are inconsistent with the bones.
    BadSource(String),
    /// A bone's parent is not an earlier bone.
    BadParent {
        /// Bone name.
        bone: String,
    },
    /// Two bones share a name.
    DuplicateBone(String),
    /// The number of tracks differs from the number of bones.
    TrackCountMismatch {
        /// Bones.
        bones: usize,
        /// Tracks.
        tracks: usize,
    },
    /// A sub-track has the wrong number of samples.
    SampleCountMismatch {
        /// Bone name.
        bone: String,
        /// `rotations`, `translations` or `scales`.
        sub_track: &'static str,
        /// Samples found.
        found: usize,
        /// Samples expected.
        expected: usize,
    },
    /// A NaN or infinite value.
    NonFinite {
        /// Bone name.
        bone: String,
        /// Where: `rotations`, `translations`, `scales`, `bind pose` or `shell distance`.
        sub_track: &'static str,
        /// Sample index (none for bind pose and shell distance).
        sample: Option<usize>,
    },
    /// A value too large for single precision, which the decoder produces.
    OutOfRange {
        /// Bone name.
        bone: String,
        /// Where.
        sub_track: &'static str,
        /// Sample index (none for bind pose).
        sample: Option<usize>,
    },
    /// A quaternion of zero length cannot be a rotation.
    ZeroQuaternion {
        /// Bone name.
        bone: String,
        /// Sample index (none for the bind pose).
        sample: Option<usize>,
    },
    /// The shell distance is not positive.
    BadShellDistance {
        /// Bone name.
        bone: String,
    },
}

impl fmt::Display for ClipError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = |s: &Option<usize>| s.map(|s| format!(", sample {s}")).unwrap_or_default();
        match self {
            ClipError::NoSamples => f.write_str("the clip has no samples"),
            ClipError::BadSampleRate { rate, samples } => match sample_rate_problem(*rate, *samples) {
                Some(problem) => f.write_str(&problem),
                None => write!(f, "sample_rate {} is not valid", number(*rate)),
            },
            ClipError::TooLarge(what) => write!(f, "{what}"),
            ClipError::BadAdditiveBase(what) => write!(f, "additive base: {what}"),
            ClipError::BadSource(what) => write!(f, "skeleton source: {what}"),
            ClipError::BadParent { bone } => {
                write!(f, "bone '{}': parent must be a bone listed before it", shown(bone))
            }
            ClipError::DuplicateBone(name) => write!(f, "two bones are named '{}'", shown(name)),
            ClipError::TrackCountMismatch { bones, tracks } => {
                write!(f, "{tracks} tracks for {bones} bones")
            }
            ClipError::SampleCountMismatch { bone, sub_track, found, expected } => {
                write!(f, "bone '{}': {sub_track} has {found} samples, the clip has {expected}", shown(bone))
            }
            ClipError::NonFinite { bone, sub_track, sample } => {
                write!(f, "bone '{}': {sub_track}{}: value is NaN or infinite", shown(bone), at(sample))
            }
            ClipError::OutOfRange { bone, sub_track, sample } => write!(
                f,
                "bone '{}': {sub_track}{}: value exceeds the single-precision range (about 3.4e38)",
                shown(bone),
                at(sample)
            ),
            ClipError::ZeroQuaternion { bone, sample } => {
                write!(f, "bone '{}'{}: rotation quaternion has zero length", shown(bone), at(sample))
            }
            ClipError::BadShellDistance { bone } => {
                write!(f, "bone '{}': vertex distance must be a positive number", shown(bone))
            }
        }
    }
}

impl std::error::Error for ClipError {}

impl RawClip {
    /// Duration in seconds.
    pub fn duration(&self) -> f64 {
        (self.sample_count.saturating_sub(1)) as f64 / self.sample_rate
    }

    /// Raw size as ACL counts it: bones × samples × 10 floats × 4 bytes.
    pub fn raw_bytes(&self) -> u64 {
        self.bones.len() as u64 * self.sample_count as u64 * 40
    }

    /// Checks everything the compressor relies on, and normalises rotations.
    pub fn validate(&mut self) -> Result<(), ClipError> {
        self.check()?;
        for bone in &mut self.bones {
            // `check` proved every quaternion normalisable.
            bone.bind_pose.rotation = normalize(bone.bind_pose.rotation).unwrap_or([0.0, 0.0, 0.0, 1.0]);
        }
        // Tracks are independent: normalised on every core.
        let normalize_track = |track: &mut BoneTrack| {
            for q in &mut track.rotations {
                *q = normalize(*q).unwrap_or([0.0, 0.0, 0.0, 1.0]);
            }
        };
        self.tracks.par_iter_mut().for_each(normalize_track);
        if let Some(base) = &mut self.additive {
            base.tracks.par_iter_mut().for_each(normalize_track);
        }
        Ok(())
    }

    /// Checks everything the compressor relies on, changing nothing (rotations need
    /// not be normalised, only normalisable).
    pub fn check(&self) -> Result<(), ClipError> {
        if self.sample_count == 0 {
            return Err(ClipError::NoSamples);
        }
        if self.sample_count > MAX_SAMPLES as usize {
            return Err(ClipError::TooLarge(format!(
                "{} samples, the format supports at most {MAX_SAMPLES}",
                self.sample_count
            )));
        }
        if self.bones.len() > MAX_BONES as usize {
            return Err(ClipError::TooLarge(format!(
                "{} bones, the format supports at most {MAX_BONES}",
                self.bones.len()
            )));
        }
        let transform_samples = self.bones.len() as u64 * self.sample_count as u64;
        if transform_samples > MAX_TRANSFORM_SAMPLES {
            return Err(ClipError::TooLarge(format!(
                "{} bones × {} samples = {transform_samples} transform samples, more than the encoder's limit of {MAX_TRANSFORM_SAMPLES}",
                self.bones.len(),
                self.sample_count
            )));
        }
        if sample_rate_problem(self.sample_rate, self.sample_count).is_some() {
            return Err(ClipError::BadSampleRate { rate: self.sample_rate, samples: self.sample_count });
        }
        if self.tracks.len() != self.bones.len() {
            return Err(ClipError::TrackCountMismatch { bones: self.bones.len(), tracks: self.tracks.len() });
        }
        let mut names = std::collections::HashSet::new();
        for (index, bone) in self.bones.iter().enumerate() {
            if bone.name.len() > usize::from(u16::MAX) {
                return Err(ClipError::TooLarge(format!("bone {index}: name longer than 65535 bytes")));
            }
            if !names.insert(bone.name.as_str()) {
                return Err(ClipError::DuplicateBone(bone.name.clone()));
            }
            if bone.parent.is_some_and(|p| p >= index) {
                return Err(ClipError::BadParent { bone: bone.name.clone() });
            }
            if !bone.shell_distance.is_finite() {
                return Err(ClipError::NonFinite {
                    bone: bone.name.clone(),
                    sub_track: "shell distance",
                    sample: None,
                });
            }
            if bone.shell_distance <= 0.0 {
                return Err(ClipError::BadShellDistance { bone: bone.name.clone() });
            }
            let bind = &bone.bind_pose;
            let finite = bind.rotation.iter().chain(&bind.translation).chain(&bind.scale).all(|v| v.is_finite());
            if !finite {
                return Err(ClipError::NonFinite { bone: bone.name.clone(), sub_track: "bind pose", sample: None });
            }
            if !fits_f32(&bind.translation) || !fits_f32(&bind.scale) || bone.shell_distance > f64::from(f32::MAX) {
                return Err(ClipError::OutOfRange { bone: bone.name.clone(), sub_track: "bind pose", sample: None });
            }
            if normalize(bind.rotation).is_none() {
                return Err(ClipError::ZeroQuaternion { bone: bone.name.clone(), sample: None });
            }
        }
        check_tracks(&self.bones, &self.tracks, self.sample_count, ["rotations", "translations", "scales"])?;
        self.check_source()?;
        if let Some(base) = &self.additive {
            if base.format == Additive::None {
                return Err(ClipError::BadAdditiveBase("an additive base needs an additive format".into()));
            }
            if base.sample_count == 0 || base.sample_count > MAX_SAMPLES as usize {
                return Err(ClipError::BadAdditiveBase(format!(
                    "additive_base_num_samples {} is not 1 to {MAX_SAMPLES}",
                    base.sample_count
                )));
            }
            let transform_samples = self.bones.len() as u64 * base.sample_count as u64;
            if transform_samples > MAX_TRANSFORM_SAMPLES {
                return Err(ClipError::TooLarge(format!(
                    "the additive base's {} bones × {} samples = {transform_samples} transform samples, more than the encoder's limit of {MAX_TRANSFORM_SAMPLES}",
                    self.bones.len(),
                    base.sample_count
                )));
            }
            if let Some(problem) = sample_rate_problem(base.sample_rate, base.sample_count) {
                return Err(ClipError::BadAdditiveBase(format!("additive_base_sample_rate: {problem}")));
            }
            if base.tracks.len() != self.bones.len() {
                return Err(ClipError::BadAdditiveBase(format!(
                    "{} base tracks for {} bones",
                    base.tracks.len(),
                    self.bones.len()
                )));
            }
            check_tracks(
                &self.bones,
                &base.tracks,
                base.sample_count,
                ["base rotations", "base translations", "base scales"],
            )?;
        }
        Ok(())
    }
}

impl RawClip {
    /// Checks [`RawClip::source`]: a joint order is a permutation of the bones, and
    /// placements are of distinct roots, in increasing order, finite and invertible.
    fn check_source(&self) -> Result<(), ClipError> {
        let source = &self.source;
        let bad = |what: String| Err(ClipError::BadSource(what));
        if !source.joint_order.is_empty() {
            let mut seen = vec![false; self.bones.len()];
            if source.joint_order.len() != self.bones.len() {
                return bad(format!(
                    "a joint order of {} entries for {} bones",
                    source.joint_order.len(),
                    self.bones.len()
                ));
            }
            for (b, &j) in source.joint_order.iter().enumerate() {
                if j >= seen.len() || std::mem::replace(&mut seen[j], true) {
                    return bad(format!("bone {b}'s joint index {j} is out of range or repeated"));
                }
            }
        }
        let mut previous = None;
        for p in &source.root_placements {
            let Some(bone) = self.bones.get(p.bone) else {
                return bad(format!("a placement of bone {}, beyond the {} bones", p.bone, self.bones.len()));
            };
            if bone.parent.is_some() || previous.is_some_and(|q| p.bone <= q) {
                return bad(format!(
                    "a placement of bone '{}', which is not a root or is placed twice",
                    shown(&bone.name)
                ));
            }
            if p.matrix.iter().any(|v| !v.is_finite() || v.abs() > f64::from(f32::MAX)) || p.stretch() <= 0.0 {
                return bad(format!(
                    "the placement of root '{}' is not a finite, invertible transform",
                    shown(&bone.name)
                ));
            }
            previous = Some(p.bone);
        }
        Ok(())
    }
}

/// Checks the tracks of `bones` (the clip's or its additive base's): `expected`
/// samples in each sub-track (`names` in messages), finite values within `f32`,
/// normalisable rotations.
fn check_tracks(
    bones: &[Bone],
    tracks: &[BoneTrack],
    expected: usize,
    names: [&'static str; 3],
) -> Result<(), ClipError> {
    // Bones are independent: checked on every core (the compressor's first step
    // waits for this), the problem of the first bad bone in bone order reported.
    let problem =
        bones.par_iter().zip(tracks).find_map_first(|(bone, track)| check_track(bone, track, expected, names).err());
    problem.map_or(Ok(()), Err)
}

/// [`check_tracks`] for one bone.
fn check_track(bone: &Bone, track: &BoneTrack, expected: usize, names: [&'static str; 3]) -> Result<(), ClipError> {
    let [rotations, translations, scales] = names;
    let count = |sub_track, found| {
        if found == expected {
            Ok(())
        } else {
            Err(ClipError::SampleCountMismatch { bone: bone.name.clone(), sub_track, found, expected })
        }
    };
    count(rotations, track.rotations.len())?;
    count(translations, track.translations.len())?;
    count(scales, track.scales.len())?;
    let non_finite =
        |sub_track, sample| ClipError::NonFinite { bone: bone.name.clone(), sub_track, sample: Some(sample) };
    for (sample, q) in track.rotations.iter().enumerate() {
        if !q.iter().all(|v| v.is_finite()) {
            return Err(non_finite(rotations, sample));
        }
        if normalize(*q).is_none() {
            return Err(ClipError::ZeroQuaternion { bone: bone.name.clone(), sample: Some(sample) });
        }
    }
    if let Some(s) = track.translations.iter().position(|v| !v.iter().all(|c| c.is_finite())) {
        return Err(non_finite(translations, s));
    }
    if let Some(s) = track.scales.iter().position(|v| !v.iter().all(|c| c.is_finite())) {
        return Err(non_finite(scales, s));
    }
    let too_large =
        |sub_track, sample| ClipError::OutOfRange { bone: bone.name.clone(), sub_track, sample: Some(sample) };
    if let Some(s) = track.translations.iter().position(|v| !fits_f32(v)) {
        return Err(too_large(translations, s));
    }
    if let Some(s) = track.scales.iter().position(|v| !fits_f32(v)) {
        return Err(too_large(scales, s));
    }
    Ok(())
}

/// What is wrong with `rate` as the sample rate of a clip of `samples` samples, if
/// anything. The decoder works in `f32`: the rate must be a positive `f32`, the
/// duration `(samples − 1) / rate` must be finite in `f32` (the decoder refuses it
/// otherwise), and the time of one sample, `1 / rate`, must be a normal `f32` (a
/// subnormal time has too few bits for `i / rate * rate` to land back on sample `i`).
pub fn sample_rate_problem(rate: f64, samples: usize) -> Option<String> {
    let shown = number(rate);
    if rate.is_nan() {
        return Some("sample_rate is not a number (NaN)".into());
    }
    if rate.is_infinite() {
        return Some("sample_rate is infinite (or written with too many digits for double precision)".into());
    }
    if rate <= 0.0 {
        return Some(format!("sample_rate {shown} is not a positive number"));
    }
    if rate > f64::from(f32::MAX) {
        return Some(format!("sample_rate {shown} exceeds the single-precision range (about 3.4e38)"));
    }
    let rate32 = rate as f32;
    if rate32 <= 0.0 {
        return Some(format!("sample_rate {shown} is too small for single precision (it rounds to 0)"));
    }
    let count = u32::try_from(samples).unwrap_or(u32::MAX);
    if !format::duration(count, rate32, format::Looping::Clamp).is_finite() {
        return Some(format!(
            "sample_rate {shown} is too small: {samples} samples at that rate last longer than single precision can count"
        ));
    }
    if samples > 1 && !(1.0 / rate32).is_normal() {
        return Some(format!(
            "sample_rate {shown} is too large: the time between samples is below single precision's normal range"
        ));
    }
    None
}

fn fits_f32(v: &[f64; 3]) -> bool {
    v.iter().all(|c| c.abs() <= f64::from(f32::MAX))
}

/// Normalises a quaternion; `None` when its length is zero (or underflows, or
/// overflows: the components are finite but their squares are not).
pub(crate) fn normalize(q: [f64; 4]) -> Option<[f64; 4]> {
    // Scale by the largest component first so that huge or tiny but valid
    // quaternions normalise without overflow or underflow.
    let largest = q.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if largest == 0.0 || !largest.is_finite() {
        return None;
    }
    let s = q.map(|v| v / largest);
    let len = (s[0] * s[0] + s[1] * s[1] + s[2] * s[2] + s[3] * s[3]).sqrt();
    Some(s.map(|v| v / len))
}
