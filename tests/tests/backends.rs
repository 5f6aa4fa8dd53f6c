//! Bit-exactness across backends: the native SIMD backend of this build (SSE2, AVX2
//! when compiled with it, NEON on aarch64) against the portable scalar reference, on
//! every shared clip, on synthetic extreme clips and on the golden files, at many times with every
//! rounding mode, for whole poses (fresh and kept), bone by bone and for subsets of bones (partial
//! decoding). Lockstep networking and replays
//! depend on every target decoding the same bits.

mod common;

use common::Rng;
use ossa_decoder::{Clip, KeptPose, QuadPlan, Rounding, Sampler, Subset, Transform};
use ossa_encoder::{compress, AlignedBytes, Bone, BoneTrack, RawClip, RawTransform, Settings};

fn bits(t: &Transform) -> [u32; 10] {
    let mut out = [0u32; 10];
    let values = t.rotation.to_array().into_iter().chain(t.translation.to_array()).chain(t.scale.to_array());
    for (o, v) in out.iter_mut().zip(values) {
        // A NaN's payload is not part of the contract (it can only come from corrupted
        // raw samples): compare NaNs as NaNs.
        *o = if v.is_nan() { f32::NAN.to_bits() } else { v.to_bits() };
    }
    out
}

/// Checks `bytes` at `steps + 1` times; returns the number of values compared.
fn check(name: &str, bytes: &[u8], steps: u32) -> usize {
    check_clip(name, Clip::from_bytes(bytes).unwrap(), steps)
}

/// The SIMD backends this machine runs besides the scalar reference (SSE2 and, on a
/// CPU with it, AVX2 on x86_64; NEON on aarch64).
fn simd_backends(clip: Clip<'_>) -> Vec<&'static str> {
    ["sse2", "avx2", "neon"].into_iter().filter(|name| Sampler::new(clip).use_backend(name)).collect()
}

/// [`check`] of a clip already opened (a database's, with its shared pose): every SIMD
/// backend this machine runs against the scalar reference, for whole poses (fresh and
/// kept), single bones, lists of bones and subsets.
fn check_clip(name: &str, clip: Clip<'_>, steps: u32) -> usize {
    let bones = clip.bone_count() as usize;
    // Partial decoding: every seventh bone, the first four and the last one (at most
    // 64 bones each), as plans and as one-off lists.
    let n = bones as u32;
    let lists: Vec<Vec<u32>> =
        vec![(0..n).step_by(7).take(64).collect(), (0..n.min(4)).collect(), n.checked_sub(1).into_iter().collect()];
    let mut partial = vec![Transform::IDENTITY; 64];
    let backends = simd_backends(clip);
    assert!(!backends.is_empty(), "no SIMD backend on this machine");
    // Each backend samples the clip as it is and with its static pose attached (built
    // on this machine's fastest backend): both must give the scalar reference's bits.
    let mut statics = vec![Transform::IDENTITY; bones];
    let fixed = clip.with_static_pose(&mut statics).unwrap();
    assert!(fixed.has_static_pose() && !clip.has_static_pose());
    let mut labels = Vec::new();
    let mut samplers: Vec<Sampler<'_>> = Vec::new();
    for b in &backends {
        for (source, label) in [(clip, b.to_string()), (fixed, format!("{b} with a static pose"))] {
            let mut s = Sampler::new(source);
            assert!(s.use_backend(b));
            samplers.push(s);
            labels.push(label);
        }
    }
    // Plans built from the clip as it is and from the clip with its static pose.
    let mut subsets: Vec<Subset<64>> = lists
        .iter()
        .enumerate()
        .map(|(i, l)| Subset::new(if i % 2 == 0 { &clip } else { &fixed }, l).unwrap())
        .collect();
    let mut reference = Sampler::new(clip);
    let (mut native, mut scalar) = (vec![Transform::IDENTITY; bones], vec![Transform::IDENTITY; bones]);
    // Kept poses live across every seek below: after the first call they write only
    // the animated sub-tracks, and must still hold the whole pose.
    // Each also with a plan, kept across the segments the times go through.
    let mut kept_storage = vec![vec![Transform::IDENTITY; bones]; samplers.len() + 1];
    let mut kept: Vec<KeptPose<'_>> = kept_storage.iter_mut().map(|s| KeptPose::new(s)).collect();
    let mut planned_storage = vec![vec![Transform::IDENTITY; bones]; samplers.len() + 1];
    let mut plans = vec![vec![QuadPlan::EMPTY; clip.quad_count()]; samplers.len() + 1];
    let mut planned: Vec<KeptPose<'_>> =
        planned_storage.iter_mut().zip(&mut plans).map(|(s, p)| KeptPose::with_plan(s, p)).collect();
    let mut compared = 0;
    for k in 0..=steps {
        // Times past both ends too: clamping is part of the contract.
        let time = clip.duration() * (k as f32 / steps as f32 * 1.1 - 0.05);
        for rounding in [Rounding::None, Rounding::Floor, Rounding::Ceil, Rounding::Nearest] {
            reference.seek(time, rounding);
            reference.decompress_pose_scalar(&mut scalar).unwrap();
            let (kept_scalar, kept_simd) = kept.split_last_mut().unwrap();
            let (planned_scalar, planned_simd) = planned.split_last_mut().unwrap();
            reference.decompress_kept_pose_scalar(kept_scalar).unwrap();
            reference.decompress_kept_pose_scalar(planned_scalar).unwrap();
            for (bone, value) in scalar.iter().enumerate() {
                let expected = bits(value);
                let kept = bits(&kept_scalar.transforms()[bone]);
                assert_eq!(kept, expected, "{name} t={time} {rounding:?} bone {bone} (scalar kept pose)");
                let planned = bits(&planned_scalar.transforms()[bone]);
                assert_eq!(planned, expected, "{name} t={time} {rounding:?} bone {bone} (scalar planned pose)");
                let single = reference.decompress_bone_scalar(bone as u32).unwrap();
                assert_eq!(bits(&single), expected, "{name} t={time} {rounding:?} bone {bone} (scalar bone)");
            }
            for (((backend, sampler), kept), planned) in
                labels.iter().zip(&mut samplers).zip(kept_simd).zip(planned_simd)
            {
                sampler.seek(time, rounding);
                sampler.decompress_pose(&mut native).unwrap();
                sampler.decompress_kept_pose(kept).unwrap();
                sampler.decompress_kept_pose(planned).unwrap();
                for bone in 0..bones {
                    let expected = bits(&scalar[bone]);
                    let at = format!("{name} t={time} {rounding:?} bone {bone} on {backend}");
                    assert_eq!(bits(&native[bone]), expected, "{at} (pose)");
                    assert_eq!(bits(&kept.transforms()[bone]), expected, "{at} (kept pose)");
                    assert_eq!(bits(&planned.transforms()[bone]), expected, "{at} (planned pose)");
                    let single = sampler.decompress_bone(bone as u32).unwrap();
                    assert_eq!(bits(&single), expected, "{at} (bone)");
                    compared += 30;
                }
                for (list, subset) in lists.iter().zip(&mut subsets) {
                    for way in 0..3 {
                        match way {
                            0 => sampler.decompress_subset(subset, &mut partial).unwrap(),
                            1 => reference.decompress_subset_scalar(subset, &mut partial).unwrap(),
                            _ => sampler.decompress_bones(list, &mut partial).unwrap(),
                        }
                        for (i, &bone) in list.iter().enumerate() {
                            let expected = bits(&scalar[bone as usize]);
                            assert_eq!(
                                bits(&partial[i]),
                                expected,
                                "{name} t={time} {rounding:?} bone {bone} on {backend} (subset {way})"
                            );
                            compared += 10;
                        }
                    }
                }
            }
        }
    }
    compared
}

#[test]
#[cfg_attr(shared_clips_missing, ignore = "skipped: ../shared/clips is missing")]
fn native_and_scalar_backends_agree_bit_for_bit_on_every_shared_clip() {
    let mut compared = 0;
    let Some(dir) = common::shared_clips() else { return };
    for path in common::transform_clips(&dir) {
        let raw = common::load(&path);
        let out = compress(&raw, &Settings { include_metadata: false, ..Settings::default() }).unwrap();
        compared += check(&path.display().to_string(), &out.bytes, 3 * raw.sample_count as u32 + 7);
    }
    eprintln!("{compared} values compared against the scalar backend");
    assert!(compared > 1_000_000, "only {compared} values compared");
}

/// A skeleton whose rotations swing through half turns (`w` near 0: stored with four
/// components), with large translations, zero and negative scales, noise that no
/// low bit rate holds, compressed at `precision` (tiny ones force raw 32-bit samples).
fn extreme(bones: usize, samples: usize, precision: f64, seed: u64) -> (RawClip, Settings) {
    let mut rng = Rng(seed);
    let mut clip = RawClip {
        name: "extreme".into(),
        sample_rate: 30.0,
        sample_count: samples,
        bones: vec![],
        tracks: vec![],
        additive: None,
        source: Default::default(),
    };
    for b in 0..bones {
        clip.bones.push(Bone {
            name: format!("b{b}"),
            // A chain for the first bones, then a wide tree (shallow, so fast to measure).
            parent: if b < 8 { b.checked_sub(1) } else { Some((b - 8) / 16 + 7) },
            shell_distance: 1.0 + 10.0 * rng.next(),
            bind_pose: RawTransform::IDENTITY,
        });
        let mut track = BoneTrack::default();
        let (speed, axis) = (rng.next() * 7.0, rng.next());
        for s in 0..samples {
            let angle = std::f64::consts::PI * (0.9 + 0.2 * (s as f64 * speed * 0.1).sin()) + 0.01 * rng.next();
            let (sin, cos) = (angle / 2.0).sin_cos();
            let n = (1.0 + axis * axis).sqrt();
            track.rotations.push([sin / n, sin * axis / n, 0.0, cos]);
            let far = if b < 8 { 1e4 * (b % 3) as f64 } else { 1.0 };
            track.translations.push([far + rng.next() * 100.0, (s as f64).sin(), 0.0]);
            let scale = match b % 4 {
                0 => [1.0; 3],
                1 => [0.0, 1.0, 1.0],
                2 => [-1.0 - rng.next(), 2.0, 1.0],
                _ => [1.0 + 0.5 * (s as f64 * 0.3).sin(), 1.0, 1.0],
            };
            track.scales.push(scale);
        }
        clip.tracks.push(track);
    }
    (clip, Settings { precision, include_metadata: false, ..Settings::default() })
}

#[test]
fn native_and_scalar_backends_agree_on_synthetic_extremes() {
    for (bones, samples, precision, seed) in [(12, 70, 0.01, 1), (6, 40, 0.008, 2), (9, 17, 1.0, 3), (300, 35, 0.01, 4)]
    {
        let (raw, settings) = extreme(bones, samples, precision, seed);
        let out = compress(&raw, &settings).unwrap();
        let clip = Clip::from_bytes(&out.bytes).unwrap();
        let rot4 = (0..bones as u32).filter(|&b| clip.full_quaternion_rotation(b) == Some(true)).count();
        eprintln!(
            "extreme {bones}×{samples} at {precision}: {} B, {rot4} four-component rotations",
            out.compressed_bytes
        );
        check(&format!("extreme {bones}×{samples}"), &out.bytes, 2 * samples as u32 + 3);
    }
}

/// The golden files, crafted ones included (`unnormalised`: a constant rotation of
/// norm above 1; `degenerate`: rotations of infinite and NaN squared norm), decode to
/// the same bits on both backends.
#[test]
fn native_and_scalar_backends_agree_on_the_golden_files() {
    let dir = common::repo_root().join("format-spec/golden");
    // The database clips open through their database (some take its shared pose).
    let index = AlignedBytes::new(&std::fs::read(dir.join("stream.ossadb")).unwrap());
    let database = ossa_decoder::Database::from_bytes(&index).unwrap();
    let mut files = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "ossa") {
            let bytes = AlignedBytes::new(&std::fs::read(&path).unwrap());
            // Scalar track lists (kind 1) decode on the portable path only.
            if bytes[20] == ossa_decoder::format::KIND_SCALAR_TRACKS {
                continue;
            }
            check_clip(&path.display().to_string(), database.open_clip(&bytes).unwrap(), 60);
            files += 1;
        }
    }
    assert!(files >= 6, "the golden files are in {}", dir.display());
}
