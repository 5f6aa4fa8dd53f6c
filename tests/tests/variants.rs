//! The clip variants of the generalisation check (`ossa_tests::variants`): each is what
//! it says, and ossa holds the precision on every variant of every shared clip, at
//! every sample of every bone (the independent metric of `common`).

mod common;

use ossa_encoder::{compress, Settings};
use ossa_tests::variants::{Variant, STANDARD};
use rayon::prelude::*;

/// A chain of three bones whose rotations and translations move every sample.
fn moving(samples: usize) -> ossa_encoder::RawClip {
    common::chain("moving", 3, samples, |b, s| {
        let a = 0.1 * s as f64 + b as f64;
        (common::normalize([a.sin() * 0.3, 0.2, a.cos() * 0.1, 1.0]), [b as f64 * 5.0, (a * 0.5).sin(), 1.0])
    })
}

#[test]
fn mirroring_twice_gives_the_clip_back_and_reflects_every_point() {
    let clip = moving(20);
    let mirrored = Variant::Mirrored.apply(&clip);
    assert_eq!(Variant::Mirrored.apply(&mirrored), clip);
    for s in 0..clip.sample_count {
        let (a, b) = (common::raw_pose(&clip, s), common::raw_pose(&mirrored, s));
        for bone in 0..clip.bones.len() {
            for p in [[0.0; 3], [1.0, 2.0, 3.0], [-4.0, 0.5, 2.0]] {
                let q = common::to_object(&a, &clip, bone, p);
                let r = common::to_object(&b, &mirrored, bone, [-p[0], p[1], p[2]]);
                let expected = [-q[0], q[1], q[2]];
                for c in 0..3 {
                    assert!((r[c] - expected[c]).abs() < 1e-5, "bone {bone}, sample {s}: {r:?} against {expected:?}");
                }
            }
        }
    }
}

#[test]
fn resampling_at_the_source_rate_or_stretching_keeps_the_source_samples() {
    let clip = moving(17);
    let same = Variant::Resampled { rate: clip.sample_rate }.apply(&clip);
    let twice = Variant::Stretched { factor: 2.0 }.apply(&clip);
    assert_eq!(same.sample_count, clip.sample_count);
    assert_eq!(twice.sample_count, 2 * clip.sample_count - 1);
    assert_eq!(twice.sample_rate, clip.sample_rate);
    for (b, track) in clip.tracks.iter().enumerate() {
        for s in 0..clip.sample_count {
            for (variant, at) in [(&same, s), (&twice, 2 * s)] {
                let t = &variant.tracks[b];
                for c in 0..4 {
                    assert!((t.rotations[at][c] - track.rotations[s][c]).abs() < 1e-12);
                }
                assert_eq!(t.translations[at], track.translations[s]);
            }
        }
    }
    // Between two source samples, a curve through its neighbours (not the straight
    // line between the two, which key-frame removal would take out exactly).
    let between = &twice.tracks[1].translations[1];
    let line = (clip.tracks[1].translations[0][1] + clip.tracks[1].translations[1][1]) / 2.0;
    assert!((between[1] - line).abs() > 1e-6, "the in-between is the straight line");
    // 30 Hz to 60 Hz: twice the samples, less one.
    let faster = Variant::Resampled { rate: 60.0 }.apply(&clip);
    assert_eq!((faster.sample_rate, faster.sample_count), (60.0, 33));
}

#[test]
fn noise_is_deterministic_leaves_still_parts_alone_and_has_the_stated_size() {
    let mut clip = moving(400);
    // Bone 0's translation does not move: it stays exact.
    clip.tracks[0].translations.iter_mut().for_each(|t| *t = [1.0, 2.0, 3.0]);
    let variant = Variant::Noisy { degrees: 0.5, distance: 0.01, seed: 7 };
    let noisy = variant.apply(&clip);
    assert_eq!(noisy, variant.apply(&clip));
    assert_eq!(noisy.tracks[0].translations, clip.tracks[0].translations);
    // The rotation vector's three components have the stated deviation: its length's
    // root mean square is √3 of it. The translations' per-axis deviation likewise.
    let (mut angles, mut moves) = (0.0, 0.0);
    let n = clip.sample_count as f64;
    for s in 0..clip.sample_count {
        let turn = common::quat_mul(noisy.tracks[1].rotations[s], common::conjugate(clip.tracks[1].rotations[s]));
        let angle = 2.0 * turn[3].abs().min(1.0).acos();
        angles += angle * angle;
        let d: f64 =
            (0..3).map(|c| noisy.tracks[1].translations[s][c] - clip.tracks[1].translations[s][c]).map(|d| d * d).sum();
        moves += d;
    }
    let rms_angle = (angles / n).sqrt().to_degrees() / 3f64.sqrt();
    let rms_move = (moves / n / 3.0).sqrt();
    assert!((rms_angle - 0.5).abs() < 0.05, "rotation noise {rms_angle}° against 0.5°");
    assert!((rms_move - 0.01).abs() < 0.001, "translation noise {rms_move} against 0.01");
}

#[test]
#[cfg_attr(shared_clips_missing, ignore = "skipped: ../shared/clips not found")]
fn every_variant_of_every_shared_clip_holds_the_precision() {
    let Some(dir) = common::shared_clips() else { return };
    let clips: Vec<_> = common::transform_clips(&dir).iter().map(|p| common::load(p)).collect();
    assert_eq!(clips.len(), 18, "expected the 18 transform clips in {}", dir.display());
    let settings = Settings::default();
    let jobs: Vec<_> = clips.iter().flat_map(|c| STANDARD.iter().map(move |v| (c, v))).collect();
    jobs.par_iter().for_each(|(clip, (name, variant))| {
        let raw = variant.apply(clip);
        let out = compress(&raw, &settings).unwrap_or_else(|e| panic!("{} {name}: {e}", clip.name));
        let (err, bone, sample) = common::max_error(&raw, &out.bytes);
        assert!(
            err <= settings.precision,
            "{} {name}: error {err} at bone {bone}, sample {sample}, above {}",
            clip.name,
            settings.precision
        );
    });
}
