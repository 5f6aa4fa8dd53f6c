//! Additive clips made from the shared clips: each clip relative to its first frame
//! (the base), in each additive format, compressed, decoded, applied to the base as a
//! game applies it, and compared in object space at every sample of every bone with
//! the source additive applied to the same base (the independent metric of `common`).

mod common;

use common::{conjugate, normalize, quat_mul, rotate, Local};
use ossa_decoder::{Additive, Clip, Rounding, Sampler, Transform};
use ossa_encoder::{compress, AdditiveBase, BoneTrack, RawClip, Settings};

/// The additive transform that, applied to `base` by `format`, gives `target`
/// (the inverse of [`apply`]).
fn to_additive(format: Additive, base: &Local, target: &Local) -> Local {
    let q = normalize(quat_mul(conjugate(base.q), target.q));
    let div = |a: [f64; 3], b: [f64; 3]| [a[0] / b[0], a[1] / b[1], a[2] / b[2]];
    let sub = |a: [f64; 3], b: [f64; 3]| [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
    match format {
        Additive::None => *target,
        Additive::Relative => {
            Local { q, t: div(rotate(conjugate(base.q), sub(target.t, base.t)), base.s), s: div(target.s, base.s) }
        }
        Additive::Additive0 => Local { q, t: sub(target.t, base.t), s: div(target.s, base.s) },
        Additive::Additive1 => Local { q, t: sub(target.t, base.t), s: div(target.s, base.s).map(|v| v - 1.0) },
    }
}

/// `additive` applied to `base` by `format`, in `f64` (as [`Additive::apply`] defines).
fn apply(format: Additive, base: &Local, additive: &Local) -> Local {
    let q = normalize(quat_mul(base.q, additive.q));
    let add = |a: [f64; 3], b: [f64; 3]| [a[0] + b[0], a[1] + b[1], a[2] + b[2]];
    let mul = |a: [f64; 3], b: [f64; 3]| [a[0] * b[0], a[1] * b[1], a[2] * b[2]];
    match format {
        Additive::None => *additive,
        Additive::Relative => {
            Local { q, t: add(rotate(base.q, mul(base.s, additive.t)), base.t), s: mul(base.s, additive.s) }
        }
        Additive::Additive0 => Local { q, t: add(base.t, additive.t), s: mul(base.s, additive.s) },
        Additive::Additive1 => Local { q, t: add(base.t, additive.t), s: mul(base.s, additive.s.map(|v| 1.0 + v)) },
    }
}

/// `clip` as an additive clip of `format` over its own first frame.
fn additive_of(clip: &RawClip, format: Additive) -> RawClip {
    let base = common::raw_pose(clip, 0);
    let mut out = clip.clone();
    for (b, track) in out.tracks.iter_mut().enumerate() {
        for s in 0..clip.sample_count {
            let target = &common::raw_pose(clip, s)[b];
            let a = to_additive(format, &base[b], target);
            track.rotations[s] = a.q;
            track.translations[s] = a.t;
            track.scales[s] = a.s;
        }
    }
    let base_tracks = clip
        .tracks
        .iter()
        .map(|t| BoneTrack {
            rotations: vec![t.rotations[0]],
            translations: vec![t.translations[0]],
            scales: vec![t.scales[0]],
        })
        .collect();
    out.additive = Some(AdditiveBase {
        format,
        name: format!("{} first frame", clip.name),
        sample_rate: clip.sample_rate,
        sample_count: 1,
        tracks: base_tracks,
    });
    out
}

/// Decodes `bytes` (the additive clip compressed) at every sample, applies each pose
/// to the base, and returns the largest object-space error against the source
/// additive applied to the same base, and the largest against the original clip.
fn errors(original: &RawClip, additive: &RawClip, bytes: &[u8]) -> (f64, f64) {
    let clip = Clip::from_bytes(bytes).unwrap();
    let format = clip.additive();
    let base = common::raw_pose(&additive_base_clip(additive), 0);
    let mut sampler = Sampler::new(clip);
    let mut pose = vec![Transform::IDENTITY; additive.bones.len()];
    let (mut worst, mut worst_original) = (0.0f64, 0.0f64);
    for s in 0..additive.sample_count {
        sampler.seek(s as f32 / clip.sample_rate(), Rounding::None);
        sampler.decompress_pose(&mut pose).unwrap();
        let seen: Vec<Local> = pose.iter().zip(&base).map(|(t, b)| apply(format, b, &Local::from_decoded(t))).collect();
        let source: Vec<Local> =
            common::raw_pose(additive, s).iter().zip(&base).map(|(a, b)| apply(format, b, a)).collect();
        worst = common::pose_errors(additive, &source, &seen).into_iter().fold(worst, f64::max);
        let truth = common::raw_pose(original, s);
        worst_original = common::pose_errors(original, &truth, &seen).into_iter().fold(worst_original, f64::max);
    }
    (worst, worst_original)
}

/// The base of an additive clip as a clip of its own (to read it with `common`).
fn additive_base_clip(additive: &RawClip) -> RawClip {
    let base = additive.additive.as_ref().unwrap();
    RawClip { sample_count: base.sample_count, tracks: base.tracks.clone(), additive: None, ..additive.clone() }
}

#[test]
#[cfg_attr(shared_clips_missing, ignore = "skipped: ../shared/clips not found")]
fn additive_clips_of_every_format_round_trip_within_the_precision_on_their_base() {
    let Some(dir) = common::shared_clips() else { return };
    for path in common::transform_clips(&dir) {
        let raw = common::load(&path);
        let name = path.file_name().unwrap().to_string_lossy().replace(".acl.sjson", "");
        // A base scale of 0 has no additive that restores the clip (a division by 0).
        if raw.tracks.iter().any(|t| t.scales[0].contains(&0.0)) {
            println!("{name:<26} skipped: its first frame has a scale of 0");
            continue;
        }
        let plain = compress(&raw, &Settings::default()).unwrap().compressed_bytes;
        let mut line = format!("{name:<26} plain {plain:>6} B");
        for format in [Additive::Relative, Additive::Additive0, Additive::Additive1] {
            let additive = additive_of(&raw, format);
            let out = compress(&additive, &Settings::default()).unwrap_or_else(|e| panic!("{name} {format:?}: {e}"));
            let clip = Clip::from_bytes(&out.bytes).unwrap();
            assert_eq!(clip.additive(), format);
            assert_eq!(clip.version(), (4, 2), "additive clips are the current format");
            let (error, error_original) = errors(&raw, &additive, &out.bytes);
            assert!(error <= 0.01, "{name} {format:?}: error {error} on the base with the additive applied");
            assert!(out.errors.max_error <= 0.01);
            line += &format!("  {} {:>6} B ({error:.4}, {error_original:.4})", format.name(), out.compressed_bytes);
        }
        println!("{line}");
    }
}

/// In an additive1 clip a bone without a scale track decodes a scale of 0 (which the
/// game adds 1 to), in the whole pose and bone by bone; in the others, 1.
#[test]
fn an_additive1_clip_decodes_default_scales_as_zero() {
    let raw = common::load(&common::repo_root().join("examples/wave.acl.sjson"));
    for format in [Additive::Relative, Additive::Additive0, Additive::Additive1] {
        let additive = additive_of(&raw, format);
        let out = compress(&additive, &Settings::default()).unwrap();
        let clip = Clip::from_bytes(&out.bytes).unwrap();
        let mut sampler = Sampler::new(clip);
        sampler.seek(0.3, Rounding::None);
        let mut pose = vec![Transform::IDENTITY; raw.bones.len()];
        sampler.decompress_pose(&mut pose).unwrap();
        let expected = if format == Additive::Additive1 { 0.0 } else { 1.0 };
        // Bone 0 ("root") never scales: its additive scale is the default.
        assert_eq!(pose[0].scale.to_array(), [expected; 3], "{format:?}");
        assert_eq!(sampler.decompress_bone(0).unwrap().scale.to_array(), [expected; 3], "{format:?}");
        let applied = format.apply(&Transform::IDENTITY, &pose[0]);
        assert_eq!(applied.scale.to_array(), [1.0; 3], "{format:?}: applied to an identity base, scale 1");
    }
}
