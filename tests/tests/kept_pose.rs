//! Kept poses (`KeptPose`, `Sampler::decompress_kept_pose`): after the first call
//! they write only the animated sub-tracks, so what they hold must never go stale.
//! Each case here is one way it could: another clip decoded into the same pose, a
//! clip's buffer reused for another clip at the same address, the caller changing
//! the transforms, an output too short. (That kept poses equal fresh ones at every
//! time, on every shared clip, golden file and backend, is in `backends.rs`; while
//! streaming, in the decoder's `streaming.rs`.)

mod common;

use ossa_decoder::{Clip, Error, KeptPose, Rounding, Sampler, Transform};
use ossa_encoder::{compress, RawClip, Settings};

/// A clip of `bones` bones in a chain where every other bone is constant, the
/// constants and the motion set by `seed`.
fn clip(bones: usize, seed: f64) -> RawClip {
    common::chain(&format!("kept{seed}"), bones, 20, |b, s| {
        let moving = if b % 2 == 0 { s as f64 * 0.05 } else { 0.0 };
        let (sin, cos) = ((seed * (b + 1) as f64 * 0.1 + moving) / 2.0).sin_cos();
        ([sin, 0.0, 0.0, cos], [seed + b as f64, moving, 0.0])
    })
}

fn compressed(raw: &RawClip) -> Vec<u8> {
    compress(raw, &Settings { include_metadata: false, ..Settings::default() }).unwrap().bytes.to_vec()
}

fn bits(pose: &[Transform]) -> Vec<u32> {
    pose.iter().flat_map(common::transform_bits).collect()
}

/// The fresh pose of `clip` at `time`.
fn fresh(clip: Clip<'_>, time: f32) -> Vec<u32> {
    let mut sampler = Sampler::new(clip);
    sampler.seek(time, Rounding::None);
    let mut pose = vec![Transform::IDENTITY; clip.bone_count() as usize];
    sampler.decompress_pose(&mut pose).unwrap();
    bits(&pose)
}

/// A 16-byte aligned buffer the clips are copied into, one after the other, at the
/// same address.
#[repr(C, align(16))]
struct Buffer([u8; 4096]);

#[test]
fn switching_clips_rewrites_the_whole_pose() {
    let (a, b) = (compressed(&clip(8, 1.0)), compressed(&clip(6, 2.0)));
    let (a_bytes, b_bytes) = (ossa_encoder::AlignedBytes::new(&a), ossa_encoder::AlignedBytes::new(&b));
    let (a, b) = (Clip::from_bytes(&a_bytes).unwrap(), Clip::from_bytes(&b_bytes).unwrap());
    let mut storage = vec![Transform::IDENTITY; 8];
    let mut kept = KeptPose::new(&mut storage);
    for (round, clip) in [a, b, a, b, b, a].into_iter().enumerate() {
        let time = 0.1 * round as f32;
        let mut sampler = Sampler::new(clip);
        sampler.seek(time, Rounding::None);
        sampler.decompress_kept_pose(&mut kept).unwrap();
        let n = clip.bone_count() as usize;
        assert_eq!(bits(&kept.transforms()[..n]), fresh(clip, time), "round {round}");
    }
}

#[test]
fn a_buffer_reused_for_another_clip_is_not_taken_for_the_first() {
    // Two clips of the same structure and size whose constants differ: the same
    // address and length, another checksum. The bit rates the encoder picks depend on
    // the values, so the second is the first of a few seeds that gives the same size.
    let a = compressed(&clip(8, 1.0));
    let b = [1.5, 1.25, 1.75, 2.0, 1.1, 1.9, 2.5, 3.0]
        .into_iter()
        .map(|seed| compressed(&clip(8, seed)))
        .find(|b| b.len() == a.len())
        .expect("the case needs two clips of one size");
    assert_ne!(a, b);
    let mut buffer = Box::new(Buffer([0; 4096]));
    let mut storage = vec![Transform::IDENTITY; 8];
    let mut kept = KeptPose::new(&mut storage);
    for (round, bytes) in [&a, &b, &a].into_iter().enumerate() {
        buffer.0[..bytes.len()].copy_from_slice(bytes);
        let clip = Clip::from_bytes(&buffer.0[..bytes.len()]).unwrap();
        let mut sampler = Sampler::new(clip);
        for time in [0.0, 0.25, 0.5] {
            sampler.seek(time, Rounding::None);
            sampler.decompress_kept_pose(&mut kept).unwrap();
            assert_eq!(bits(kept.transforms()), fresh(clip, time), "round {round}, t={time}");
        }
    }
}

#[test]
fn changing_the_transforms_from_outside_makes_the_next_call_write_them_all() {
    let bytes = ossa_encoder::AlignedBytes::new(&compressed(&clip(8, 1.0)));
    let clip = Clip::from_bytes(&bytes).unwrap();
    let mut sampler = Sampler::new(clip);
    let mut storage = vec![Transform::IDENTITY; 8];
    let mut kept = KeptPose::new(&mut storage);
    sampler.seek(0.2, Rounding::None);
    sampler.decompress_kept_pose(&mut kept).unwrap();
    // A caller blending into the pose in place: every transform changed.
    for t in kept.transforms_mut() {
        t.translation *= 2.0;
        t.scale = ossa_decoder::glam::Vec3::splat(3.0);
    }
    sampler.seek(0.3, Rounding::None);
    sampler.decompress_kept_pose(&mut kept).unwrap();
    assert_eq!(bits(kept.transforms()), fresh(clip, 0.3));
    // `forget` does the same without touching them.
    kept.forget();
    sampler.decompress_kept_pose(&mut kept).unwrap();
    assert_eq!(bits(kept.transforms()), fresh(clip, 0.3));
}

#[test]
fn a_kept_pose_shorter_than_the_skeleton_is_refused_and_left_alone() {
    let bytes = ossa_encoder::AlignedBytes::new(&compressed(&clip(8, 1.0)));
    let clip = Clip::from_bytes(&bytes).unwrap();
    let sampler = Sampler::new(clip);
    let marker = Transform { scale: ossa_decoder::glam::Vec3::splat(7.0), ..Transform::IDENTITY };
    let mut storage = vec![marker; 7];
    let mut kept = KeptPose::new(&mut storage);
    assert_eq!(sampler.decompress_kept_pose(&mut kept), Err(Error::OutputTooSmall { len: 7, bone_count: 8 }));
    assert!(kept.transforms().iter().all(|t| *t == marker));
    // A long enough one afterwards is filled whole.
    let mut longer = vec![marker; 9];
    let mut kept = KeptPose::new(&mut longer);
    sampler.decompress_kept_pose(&mut kept).unwrap();
    assert_eq!(bits(&kept.transforms()[..8]), fresh(clip, 0.0));
    assert_eq!(kept.transforms()[8], marker, "past the skeleton nothing is written");
}
