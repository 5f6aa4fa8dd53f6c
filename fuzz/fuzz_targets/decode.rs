//! Arbitrary bytes → `Clip::from_bytes` → when valid, sample at times, rounding
//! modes and bone indices taken from the input (fresh and kept poses, with a plan and without, compared with
//! the scalar backend), and query root motion. A clip that
//! needs a shared pose is given one made of the control bytes' values. Must never
//! crash.
//!
//! `cargo +nightly fuzz run decode` from `fuzz/`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ossa_decoder::{Clip, KeptPose, QuadPlan, Rounding, Sampler, ScalarClip, ScalarSampler, Subset, Transform};

/// 16-byte aligned storage for the input, as the decoder requires.
#[repr(C, align(16))]
struct Aligned([u8; 1 << 16]);

fuzz_target!(|data: &[u8]| {
    // The first 8 bytes steer sampling; the rest is the buffer.
    if data.len() < 8 || data.len() - 8 > (1 << 16) {
        return;
    }
    let (control, bytes) = data.split_at(8);
    let mut storage = Box::new(Aligned([0; 1 << 16]));
    storage.0[..bytes.len()].copy_from_slice(bytes);
    let bytes = &storage.0[..bytes.len()];
    let _ = Clip::from_bytes_verified(bytes);
    // A scalar track list (kind 1): validated, sampled at the control's time.
    if let Ok(list) = ScalarClip::from_bytes(bytes) {
        let _ = ScalarClip::from_bytes_verified(bytes);
        let mut sampler = ScalarSampler::new(list);
        let mut out = [0.0f32; 256];
        for t in [f32::from_le_bytes([control[0], control[1], control[2], control[3]]), list.duration()] {
            sampler.seek(t);
            let _ = sampler.decompress_tracks(&mut out);
            let _ = sampler.decompress_stored_tracks(&mut out);
        }
        if let Some(meta) = list.metadata() {
            // (3.2) The tracks with an output are the stored ones.
            let stored = meta.tracks().filter(|t| t.output_index.is_some()).count();
            assert_eq!(stored, list.track_count() as usize);
        }
        return;
    }
    // A clip with a shared pose (flag SHARED_POSE) opens with one of its bone count
    // (up to 64): every value the control's first float (finite), so that the pose
    // path is fuzzed too.
    let value = f32::from_le_bytes([control[0], control[1], control[2], control[3]]);
    let value = if value.is_finite() { value } else { 0.5 };
    let pose_values: Vec<u8> = value.to_le_bytes().repeat(10 * 64);
    let clip = match Clip::from_bytes(bytes) {
        Ok(clip) => clip,
        Err(ossa_decoder::Error::NeedsSharedPose) => {
            let bones = u32::from_le_bytes([bytes[24], bytes[25], bytes[26], bytes[27]]);
            let Ok(pose) = ossa_decoder::SharedPose::from_bytes(&pose_values, bones) else { return };
            let Ok(clip) = Clip::from_bytes_with_pose(bytes, pose) else { return };
            clip
        }
        Err(_) => return,
    };
    let time = f32::from_le_bytes([control[0], control[1], control[2], control[3]]);
    let rounding = match control[4] & 3 {
        0 => Rounding::None,
        1 => Rounding::Floor,
        2 => Rounding::Ceil,
        _ => Rounding::Nearest,
    };
    let mut sampler = Sampler::new(clip);
    let mut pose = [Transform::IDENTITY; 64];
    let mut scalar = [Transform::IDENTITY; 64];
    // A pose kept across the three times: after the first, only the animated
    // sub-tracks are written, and it must still be the fresh pose.
    let mut kept_storage = [Transform::IDENTITY; 64];
    let mut kept = KeptPose::new(&mut kept_storage);
    // Also with a plan (when the clip's quads fit in the storage), made for each
    // segment the times fall in.
    let mut planned_storage = [Transform::IDENTITY; 64];
    let mut plan = [QuadPlan::EMPTY; 48];
    let mut planned = KeptPose::with_plan(&mut planned_storage, &mut plan);
    // The clip with its static pose attached: copied static parts, the same bits.
    let mut statics = [Transform::IDENTITY; 64];
    let mut fixed = clip.with_static_pose(&mut statics).ok().map(Sampler::new);
    for t in [time, time * 0.5, clip.duration() * f32::from(control[5]) / 255.0] {
        sampler.seek(t, rounding);
        let _ = sampler.decompress_pose(&mut pose);
        // Every backend decodes the same bits, corrupted input included.
        if sampler.decompress_pose_scalar(&mut scalar).is_ok() {
            for (a, b) in pose.iter().zip(&scalar).take(clip.bone_count() as usize) {
                assert_eq!(bits(a), bits(b), "native and scalar backends differ");
            }
            // The base backend too (SSE2 where the CPU also runs AVX2).
            let mut base = sampler;
            for name in ["sse2", "neon"] {
                if base.use_backend(name) {
                    base.decompress_pose(&mut pose).expect("the fresh pose fitted");
                    for (a, b) in pose.iter().zip(&scalar).take(clip.bone_count() as usize) {
                        assert_eq!(bits(a), bits(b), "the base and scalar backends differ");
                    }
                }
            }
            sampler.decompress_kept_pose(&mut kept).expect("the fresh pose fitted");
            for (a, b) in kept.transforms().iter().zip(&scalar).take(clip.bone_count() as usize) {
                assert_eq!(bits(a), bits(b), "the kept pose differs from the fresh one");
            }
            sampler.decompress_kept_pose(&mut planned).expect("the fresh pose fitted");
            for (a, b) in planned.transforms().iter().zip(&scalar).take(clip.bone_count() as usize) {
                assert_eq!(bits(a), bits(b), "the planned pose differs from the fresh one");
            }
            if let Some(fixed) = &mut fixed {
                fixed.seek(t, rounding);
                fixed.decompress_pose(&mut pose).expect("the fresh pose fitted");
                for (b, (a, s)) in pose.iter().zip(&scalar).take(clip.bone_count() as usize).enumerate() {
                    assert_eq!(bits(a), bits(s), "the pose with a static pose differs from the fresh one");
                    let one = fixed.decompress_bone(b as u32).expect("a bone in range");
                    assert_eq!(bits(&one), bits(s), "a bone with a static pose differs from the fresh pose");
                }
            }
        }
        let _ = sampler.decompress_bone(u32::from(control[6]));
        let _ = sampler.decompress_bone(u32::from(control[7]) * 1000);
    }
    // Partial decoding: a plan of up to four ascending bones and a one-off list, from
    // the control bytes, compared with the whole pose.
    let n = clip.bone_count().max(1);
    let mut list: Vec<u32> = control[4..8].iter().map(|&c| u32::from(c) % n).collect();
    list.sort_unstable();
    list.dedup();
    if let Ok(mut subset) = Subset::<4>::new(&clip, &list) {
        let mut partial = [Transform::IDENTITY; 4];
        if sampler.decompress_subset(&mut subset, &mut partial).is_ok() && sampler.decompress_pose(&mut pose).is_ok() {
            for (t, &b) in partial.iter().zip(&list) {
                if let Some(whole) = pose.get(b as usize) {
                    assert_eq!(bits(t), bits(whole), "subset and pose differ");
                }
            }
        }
    }
    let _ = sampler.decompress_bones(&list, &mut scalar);
    if let Some(meta) = clip.metadata() {
        for (b, bone) in meta.bones().enumerate() {
            let _ = bone.name.len();
            // (3.2) Every bone's source joint is in range.
            assert!(meta.source_index(b as u32).is_some_and(|j| j < clip.bone_count()));
        }
        for p in meta.root_placements() {
            assert!(p.bone < clip.bone_count() && p.matrix.iter().all(|v| v.is_finite()));
        }
    }
    let _ = clip.layout();
    // Root motion: any times, any number of wraps (a corrupted block is refused by
    // validation; a valid one is read without a panic).
    let wraps = i32::from(control[6] as i8) * i32::from(control[7]);
    let d = clip.root_motion(time, time * 0.5, wraps);
    let _ = d.transform_point(ossa_decoder::glam::Vec3::ONE);
    let _ = clip.root_transform(time);
});

/// A transform's bits, NaNs compared as NaNs (their payload is not part of the contract).
fn bits(t: &Transform) -> [u32; 10] {
    let mut out = [0u32; 10];
    let values = t.rotation.to_array().into_iter().chain(t.translation.to_array()).chain(t.scale.to_array());
    for (o, v) in out.iter_mut().zip(values) {
        *o = if v.is_nan() { f32::NAN.to_bits() } else { v.to_bits() };
    }
    out
}
