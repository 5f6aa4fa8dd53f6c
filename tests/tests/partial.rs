//! Partial decoding (level of detail, masked layers): a [`Subset`] plan and
//! `decompress_bones` give exactly the whole pose's values for the bones asked for
//! (checked on every shared clip by `backends.rs`); here, their contract: errors for
//! a bad plan or call, an in-place root, and plans that cannot be used with another
//! clip.

mod common;

use ossa_decoder::{Clip, Error, Rounding, Sampler, Subset, Transform};
use ossa_encoder::{compress, Settings};

fn wave() -> ossa_encoder::AlignedBytes {
    let raw = common::load(&common::repo_root().join("examples/wave.acl.sjson"));
    compress(&raw, &Settings::default()).unwrap().bytes
}

#[test]
fn plans_refuse_what_they_cannot_decode() {
    let bytes = wave();
    let clip = Clip::from_bytes(&bytes).unwrap();
    assert_eq!(Subset::<4>::new(&clip, &[2, 1]).unwrap_err(), Error::BonesNotAscending { index: 1 });
    assert_eq!(Subset::<4>::new(&clip, &[3, 3]).unwrap_err(), Error::BonesNotAscending { index: 3 });
    assert_eq!(Subset::<4>::new(&clip, &[0, 8]).unwrap_err(), Error::BoneOutOfRange { index: 8, bone_count: 8 });
    assert_eq!(Subset::<2>::new(&clip, &[0, 1, 2]).unwrap_err(), Error::SubsetFull { capacity: 2 });
    let mut subset = Subset::<4>::new(&clip, &[0, 4, 7]).unwrap();
    assert_eq!(subset.len(), 3);
    let sampler = Sampler::new(clip);
    let mut two = [Transform::IDENTITY; 2];
    assert!(matches!(sampler.decompress_subset(&mut subset, &mut two), Err(Error::OutputTooSmall { .. })));
    assert!(matches!(sampler.decompress_bones(&[1, 2, 3], &mut two), Err(Error::OutputTooSmall { .. })));
    assert_eq!(
        sampler.decompress_bones(&[9], &mut two).unwrap_err(),
        Error::BoneOutOfRange { index: 9, bone_count: 8 }
    );

    // A plan belongs to the clip it was built for: the same bytes elsewhere are
    // another clip.
    let copy = ossa_encoder::AlignedBytes::new(&bytes);
    let other = Sampler::new(Clip::from_bytes(&copy).unwrap());
    let mut out = [Transform::IDENTITY; 4];
    assert_eq!(other.decompress_subset(&mut subset, &mut out).unwrap_err(), Error::SubsetOfAnotherClip);
}

/// Any order for one-off lists, repeated bones too; the in-place root of a clip
/// whose root motion is extracted is in place in a subset and as a single bone as
/// in a pose.
#[test]
fn lists_in_any_order_and_in_place_roots_decode_as_the_pose() {
    let raw = common::load(&common::repo_root().join("examples/stride.acl.sjson"));
    let settings = Settings { root_motion_bone: Some("hips".into()), extract_root_motion: true, ..Settings::default() };
    let out = compress(&raw, &settings).unwrap();
    let clip = Clip::from_bytes(&out.bytes).unwrap();
    let mut sampler = Sampler::new(clip);
    let mut pose = vec![Transform::IDENTITY; clip.bone_count() as usize];
    let mut subset = Subset::<8>::new(&clip, &[1, 2, 5]).unwrap();
    // Single bones too, with and without the clip's static pose.
    let mut storage = vec![Transform::IDENTITY; clip.bone_count() as usize];
    let mut with_statics = Sampler::new(clip.with_static_pose(&mut storage).unwrap());
    for k in 0..=20 {
        let time = clip.duration() * k as f32 / 20.0;
        sampler.seek(time, Rounding::None);
        with_statics.seek(time, Rounding::None);
        sampler.decompress_pose(&mut pose).unwrap();
        for bone in 0..clip.bone_count() {
            assert_eq!(sampler.decompress_bone(bone).unwrap(), pose[bone as usize], "bone {bone}");
            assert_eq!(with_statics.decompress_bone(bone).unwrap(), pose[bone as usize], "bone {bone}, static pose");
        }
        let mut some = [Transform::IDENTITY; 4];
        sampler.decompress_bones(&[5, 1, 5, 0], &mut some).unwrap();
        assert_eq!(some, [pose[5], pose[1], pose[5], pose[0]]);
        let mut planned = [Transform::IDENTITY; 3];
        sampler.decompress_subset(&mut subset, &mut planned).unwrap();
        assert_eq!(planned, [pose[1], pose[2], pose[5]]);
        assert_eq!(planned[0].translation.to_array(), raw.tracks[1].translations[0].map(|v| v as f32), "in place");
    }
}

/// A plan keeps what the last frame's segments gave its sub-tracks: whatever order
/// the seeks come in (forward, backward, jumps, keys on both sides of a segment's
/// end, a weight of 0) and whichever sampler of the clip uses it, it gives the pose.
#[test]
fn a_plan_reused_across_segments_in_any_order_decodes_as_the_pose() {
    let raw = common::load(&common::repo_root().join("examples/stride.acl.sjson"));
    // Short segments: several of them, so that key 1's segment changes too.
    let out = compress(&raw, &Settings { segment_len: 8, ..Settings::default() }).unwrap();
    let clip = Clip::from_bytes(&out.bytes).unwrap();
    assert!(clip.segment_count() >= 3, "needs several segments, has {}", clip.segment_count());
    let bones: Vec<u32> = (0..clip.bone_count()).step_by(2).collect();
    let mut subset = Subset::<64>::new(&clip, &bones).unwrap();
    let (mut a, mut b) = (Sampler::new(clip), Sampler::new(clip));
    let mut pose = vec![Transform::IDENTITY; clip.bone_count() as usize];
    let mut planned = vec![Transform::IDENTITY; bones.len()];
    // Times just before and after each segment's last key frame, forward then
    // backward, then jumps across the clip.
    for (i, &time) in common::segment_crossing_times(&clip).iter().enumerate() {
        let rounding = if i % 3 == 2 { Rounding::Nearest } else { Rounding::None };
        // The plan moves between two samplers of the clip.
        let sampler = if i % 2 == 0 { &mut a } else { &mut b };
        sampler.seek(time, rounding);
        sampler.decompress_pose(&mut pose).unwrap();
        sampler.decompress_subset(&mut subset, &mut planned).unwrap();
        for (k, &bone) in bones.iter().enumerate() {
            assert_eq!(planned[k], pose[bone as usize], "t={time} {rounding:?} bone {bone}");
        }
    }
}
