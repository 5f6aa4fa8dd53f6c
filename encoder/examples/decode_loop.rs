//! Decodes poses in a loop, for profilers and instruction counts
//! (`scripts/instructions.sh`, `valgrind --tool=callgrind`, `perf`):
//! `cargo run --release -p ossa-encoder --example decode_loop -- CLIP.acl.sjson [POSES]`.
//! Plays forward over 100 evenly spaced times, interpolating: POSES seeks alone, POSES
//! whole poses (seek + `decompress_pose`) of the clip with its static pose attached
//! (`Clip::with_static_pose`, as README advises), POSES whole poses of the clip
//! without (its constants decoded in every pose), POSES kept poses (seek +
//! `decompress_kept_pose` into one pose kept throughout, with its plan), POSES kept
//! poses without a plan, POSES poses decoded bone by bone (seek +
//! `decompress_bone` for every bone), then POSES partial poses of four bones (seek +
//! `decompress_subset`). Each loop is its own function so that a profiler
//! counts it alone (compressing the clip also decodes it, to measure the error).
//! `OSSA_KEEP_EVERY_FRAME=1` compresses without leaving key frames out.

use std::hint::black_box;

use ossa_decoder::{Clip, Error, KeptPose, QuadPlan, Rounding, Sampler, Subset, Transform};
use ossa_encoder::formats::acl_text;
use ossa_encoder::{compress, Settings};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: decode_loop CLIP.acl.sjson [POSES]")?;
    let poses: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(100_000);
    let raw = acl_text::read_clip(&std::fs::read_to_string(&path)?, "clip")?;
    // OSSA_KEEP_EVERY_FRAME=1 stores every sample (to weigh key-frame removal).
    let remove_key_frames = std::env::var("OSSA_KEEP_EVERY_FRAME").is_err();
    // OSSA_EXTRACT_ROOT_MOTION=1 takes the root motion out (poses show the root in place).
    let extract_root_motion = std::env::var("OSSA_EXTRACT_ROOT_MOTION").is_ok();
    let settings = Settings { include_metadata: false, remove_key_frames, extract_root_motion, ..Settings::default() };
    let out = compress(&raw, &settings)?;
    let plain = Clip::from_bytes(&out.bytes)?;
    let mut statics = vec![Transform::IDENTITY; raw.bones.len()];
    let clip = plain.with_static_pose(&mut statics)?;
    let mut sampler = Sampler::new(clip);
    let mut pose = vec![Transform::IDENTITY; raw.bones.len()];
    seeks(&mut sampler, poses);
    whole_poses(&mut sampler, &mut pose, poses)?;
    whole_poses_without_static_pose(&mut Sampler::new(plain), &mut pose, poses)?;
    kept_poses(&mut sampler, &mut pose, poses)?;
    kept_poses_without_plan(&mut sampler, &mut pose, poses)?;
    bone_poses(&mut sampler, poses)?;
    // Four bones spread over the skeleton (the second, usually the one that moves
    // the body, a third and two thirds of the way, and the last).
    let n = clip.bone_count().max(1);
    let mut subset: Vec<u32> = vec![1.min(n - 1), n / 3, 2 * n / 3, n - 1];
    subset.dedup();
    // OSSA_SUBSET=1,5,9 chooses other bones (ascending).
    if let Ok(list) = std::env::var("OSSA_SUBSET") {
        subset = list.split(',').filter(|s| !s.is_empty()).map(str::parse).collect::<Result<_, _>>()?;
    }
    // Built here, not in the counted loop: a subset is made once, when the level of
    // detail or the mask changes, as a pose's buffer is.
    let mut plan = Subset::<8>::new(&clip, &subset)?;
    let mut out = vec![Transform::IDENTITY; subset.len()];
    subset_poses(&mut sampler, &mut plan, &mut out, poses)?;
    println!("{} bones, {poses} poses decoded whole, bone by bone and {subset:?} alone", raw.bones.len());
    Ok(())
}

/// The time of pose `i`: forward over 100 evenly spaced times.
fn time(clip: &Clip, i: usize) -> f32 {
    clip.duration() * (i % 100) as f32 / 99.0
}

#[inline(never)]
fn seeks(sampler: &mut Sampler, poses: usize) {
    let clip = *sampler.clip();
    for i in 0..poses {
        sampler.seek(black_box(time(&clip, i)), Rounding::None);
        black_box(&*sampler);
    }
}

#[inline(never)]
fn whole_poses(sampler: &mut Sampler, pose: &mut [Transform], poses: usize) -> Result<(), Error> {
    pose_loop(sampler, pose, poses)
}

/// [`whole_poses`] counted apart, for a clip without a static pose.
#[inline(never)]
fn whole_poses_without_static_pose(sampler: &mut Sampler, pose: &mut [Transform], poses: usize) -> Result<(), Error> {
    // A body of its own (the linker would fold two identical functions into one name).
    black_box("without a static pose");
    pose_loop(sampler, pose, poses)
}

#[inline(always)]
fn pose_loop(sampler: &mut Sampler, pose: &mut [Transform], poses: usize) -> Result<(), Error> {
    let clip = *sampler.clip();
    for i in 0..poses {
        sampler.seek(time(&clip, i), Rounding::None);
        sampler.decompress_pose(black_box(&mut *pose))?;
    }
    Ok(())
}

#[inline(never)]
fn kept_poses_without_plan(sampler: &mut Sampler, pose: &mut [Transform], poses: usize) -> Result<(), Error> {
    let clip = *sampler.clip();
    let mut kept = KeptPose::new(pose);
    for i in 0..poses {
        sampler.seek(time(&clip, i), Rounding::None);
        sampler.decompress_kept_pose(black_box(&mut kept))?;
    }
    Ok(())
}

#[inline(never)]
fn kept_poses(sampler: &mut Sampler, pose: &mut [Transform], poses: usize) -> Result<(), Error> {
    let clip = *sampler.clip();
    let mut plan = vec![QuadPlan::EMPTY; clip.quad_count()];
    let mut kept = KeptPose::with_plan(pose, &mut plan);
    for i in 0..poses {
        sampler.seek(time(&clip, i), Rounding::None);
        sampler.decompress_kept_pose(black_box(&mut kept))?;
    }
    Ok(())
}

#[inline(never)]
fn subset_poses(
    sampler: &mut Sampler,
    subset: &mut Subset<8>,
    out: &mut [Transform],
    poses: usize,
) -> Result<(), Error> {
    let clip = *sampler.clip();
    for i in 0..poses {
        sampler.seek(time(&clip, i), Rounding::None);
        sampler.decompress_subset(subset, black_box(&mut *out))?;
    }
    Ok(())
}

#[inline(never)]
fn bone_poses(sampler: &mut Sampler, poses: usize) -> Result<(), Error> {
    let clip = *sampler.clip();
    for i in 0..poses {
        sampler.seek(time(&clip, i), Rounding::None);
        for bone in 0..clip.bone_count() {
            black_box(sampler.decompress_bone(bone)?);
        }
    }
    Ok(())
}
