//! Kept poses with a plan (`KeptPose::with_plan`, `QuadPlan`): the plan keeps what
//! the keys' segment gives each quad of animated sub-tracks, made again when the keys
//! move to another segment or the pose to another clip. Each case here is one way it
//! could be stale or misused: seeks in any order across segments, keys on both sides
//! of a segment's end, a weight of 0, two samplers, two clips in turn, storage too
//! short for the clip. (A buffer reused for another clip resets the plan as it resets
//! the kept pose: `kept_pose.rs`.) (That planned poses equal fresh
//! ones at every time, on every shared clip, golden file and backend, is in
//! `backends.rs`.)

mod common;

use ossa_decoder::{Clip, KeptPose, QuadPlan, Rounding, Sampler, Transform};
use ossa_encoder::{compress, RawClip, Settings};

fn bits(pose: &[Transform]) -> Vec<u32> {
    pose.iter().flat_map(common::transform_bits).collect()
}

/// A chain of `bones` bones where every other bone moves (rotation and translation),
/// so that each list's last quad holds one lane when `bones / 2` is one more than a
/// multiple of four; each bone's motion has its own amplitude, so the lanes of a quad
/// have their own bit rates.
fn chain(bones: usize, samples: usize, seed: f64) -> RawClip {
    common::chain(&format!("chain{seed}"), bones, samples, |b, s| {
        let t = s as f64 / samples as f64;
        let moving = if b % 2 == 0 { (t * 6.0 + b as f64).sin() * 0.3 * (b + 1) as f64 } else { 0.0 };
        let (sin, cos) = ((seed * (b + 1) as f64 * 0.1 + moving) / 2.0).sin_cos();
        ([sin, 0.0, 0.0, cos], [seed + b as f64, moving * 10.0, 0.0])
    })
}

/// Short segments: several of them, so that key 1's segment changes too.
fn short_segments(raw: &RawClip) -> Vec<u8> {
    let settings = Settings { include_metadata: false, segment_len: 8, ..Settings::default() };
    compress(raw, &settings).unwrap().bytes.to_vec()
}

/// A plan reused across segments, in any order, by two samplers of the clip, on the
/// native and the scalar backend, gives the fresh pose; so does a kept pose whose
/// plan storage is one quad short (which decodes without a plan).
#[test]
fn a_plan_reused_across_segments_in_any_order_decodes_as_the_pose() {
    let stride = common::load(&common::repo_root().join("examples/stride.acl.sjson"));
    for raw in [stride, chain(18, 60, 1.0), chain(10, 40, 2.0)] {
        let bytes = ossa_encoder::AlignedBytes::new(&short_segments(&raw));
        let clip = Clip::from_bytes(&bytes).unwrap();
        assert!(clip.segment_count() >= 3, "{}: needs several segments, has {}", raw.name, clip.segment_count());
        let quads = clip.quad_count();
        assert!(quads >= 2, "{}: {quads} quads", raw.name);
        let bones = clip.bone_count() as usize;
        let (mut a, mut b) = (Sampler::new(clip), Sampler::new(clip));
        let mut fresh = vec![Transform::IDENTITY; bones];
        let (mut native, mut scalar, mut short) =
            (vec![Transform::IDENTITY; bones], vec![Transform::IDENTITY; bones], vec![Transform::IDENTITY; bones]);
        let mut plans = [vec![QuadPlan::EMPTY; quads], vec![QuadPlan::EMPTY; quads], vec![QuadPlan::EMPTY; quads - 1]];
        let [p0, p1, p2] = &mut plans;
        let mut native = KeptPose::with_plan(&mut native, p0);
        let mut scalar = KeptPose::with_plan(&mut scalar, p1);
        let mut short = KeptPose::with_plan(&mut short, p2);
        for (i, &time) in common::segment_crossing_times(&clip).iter().enumerate() {
            // A weight of 0 with key 1 in the next segment, and keys on both sides.
            let rounding = match i % 4 {
                1 => Rounding::Nearest,
                3 => Rounding::Floor,
                _ => Rounding::None,
            };
            // The planned poses move between two samplers of the clip.
            let sampler = if i % 2 == 0 { &mut a } else { &mut b };
            sampler.seek(time, rounding);
            sampler.decompress_pose(&mut fresh).unwrap();
            sampler.decompress_kept_pose(&mut native).unwrap();
            sampler.decompress_kept_pose_scalar(&mut scalar).unwrap();
            sampler.decompress_kept_pose(&mut short).unwrap();
            let expected = bits(&fresh);
            let at = format!("{} t={time} {rounding:?}", raw.name);
            assert_eq!(bits(native.transforms()), expected, "{at}: planned");
            assert_eq!(bits(scalar.transforms()), expected, "{at}: planned, scalar");
            assert_eq!(bits(short.transforms()), expected, "{at}: plan too short");
        }
    }
}

/// One planned pose decoding two clips in turn (with storage for the larger plan):
/// each switch makes the plan again for the clip it now decodes.
#[test]
fn a_planned_pose_switching_clips_makes_its_plan_again() {
    let (one, two) = (chain(18, 60, 1.0), chain(10, 40, 2.0));
    let (one, two) = (short_segments(&one), short_segments(&two));
    let (one, two) = (ossa_encoder::AlignedBytes::new(&one), ossa_encoder::AlignedBytes::new(&two));
    let clips = [Clip::from_bytes(&one).unwrap(), Clip::from_bytes(&two).unwrap()];
    let mut storage = vec![Transform::IDENTITY; 18];
    let mut plan = vec![QuadPlan::EMPTY; clips[0].quad_count().max(clips[1].quad_count())];
    let mut kept = KeptPose::with_plan(&mut storage, &mut plan);
    for k in 0..12 {
        let clip = clips[k % 2];
        // The same segment of each clip, in turn (a plan kept by segment alone would
        // be taken for the other clip's).
        let time = clip.duration() * 0.1 + (k / 2) as f32 * 0.001;
        let mut sampler = Sampler::new(clip);
        sampler.seek(time, Rounding::None);
        sampler.decompress_kept_pose(&mut kept).unwrap();
        let n = clip.bone_count() as usize;
        let mut fresh = vec![Transform::IDENTITY; n];
        sampler.decompress_pose(&mut fresh).unwrap();
        assert_eq!(bits(&kept.transforms()[..n]), bits(&fresh), "call {k}");
    }
}
