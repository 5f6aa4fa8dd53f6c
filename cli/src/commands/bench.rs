//! `ossa bench`: how fast this machine decodes a clip, measured the way engines play
//! it: forward over 100 evenly spaced times in `[0, duration]`, interpolating, each
//! call a `seek` and a whole pose (fresh, then fresh without the clip's static pose,
//! then kept between calls, then decoded bone by bone, then four bones as a subset).
//! Every figure but the one without it decodes the clip with its static pose attached
//! (`Clip::with_static_pose`), as README advises a game to load a clip.
//!
//! Timings on a shared machine are noisy: the command reports the median and the
//! minimum of many rounds, and README.md says how to get stable instruction counts
//! (callgrind) for comparisons between versions.

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use ossa_decoder::{Clip, Database, KeptPose, QuadPlan, Rounding, Sampler, Subset, Transform};
use ossa_encoder::message::path as shown;
use ossa_encoder::AlignedBytes;
use serde_json::json;

use crate::failure::{say, Failure};
use crate::input::Input;
use crate::memory_limit::MemoryLimit;

/// Poses per round: one pass over the 100 playback times.
const TIMES: usize = 100;
/// Rounds timed for each figure (after one untimed warm-up round).
const ROUNDS: usize = 301;
/// Bytes the clip's copies are spread over with `--cold`, so that each call finds its
/// clip out of the caches.
const COLD_BYTES: usize = 64 << 20;

pub fn run(input: &Path, json: bool, cold: bool, database: Option<&Path>, limit: &MemoryLimit) -> Result<(), Failure> {
    let source = Input::open(input)?;
    let input = source.shown.clone();
    let bytes = source.read_ossa(limit)?;
    // A database clip opens through its database (which gives it its shared pose).
    let file = match database {
        Some(path) => Some((path, Input::open(path)?.read_database(limit)?)),
        None => None,
    };
    let database = match &file {
        Some((path, file)) => Some(Database::from_bytes_verified(file).map_err(|e| Failure::at(path, e))?),
        None => None,
    };
    let clip = super::decompress::open_clip(&input, &bytes, database.as_ref())?;
    // One copy warm; with --cold, enough copies to cover COLD_BYTES, visited in turn.
    let copies = if cold { COLD_BYTES.div_ceil(bytes.len()).max(2) } else { 1 };
    let needed = (copies * bytes.len()) as u64;
    if !limit.allows(needed) {
        return Err(Failure::at(&input, limit.refusal("the cold-cache benchmark's copies of the clip", needed)));
    }
    let stored: Vec<AlignedBytes> = (0..copies).map(|_| AlignedBytes::new(&bytes)).collect();
    let clips: Vec<Clip<'_>> = stored
        .iter()
        .map(|b| match &database {
            Some(database) => database.open_clip(b),
            None => Clip::from_bytes(b),
        })
        .collect::<Result<_, _>>()
        .map_err(|e| Failure::at(&input, e))?;
    let times: Vec<f32> = (0..TIMES).map(|i| clip.duration() * i as f32 / (TIMES - 1) as f32).collect();
    let bones = clip.bone_count();
    let mut pose = vec![Transform::IDENTITY; bones as usize];

    // Each copy of the clip with its static pose attached, as a game loading it would
    // (README, Decoding): its parts that do not change with time decoded once.
    let mut statics = vec![vec![Transform::IDENTITY; bones as usize]; copies];
    let fixed: Vec<Clip<'_>> = clips
        .iter()
        .zip(&mut statics)
        .map(|(c, s)| c.with_static_pose(s))
        .collect::<Result<_, _>>()
        .map_err(|e| Failure::at(&input, e))?;
    // One sampler per copy, made once: each timed call is exactly a seek and a decode.
    let mut samplers: Vec<Sampler<'_>> = fixed.iter().map(|&c| Sampler::new(c)).collect();
    let (pose_median, pose_min) = stats(&mut samplers, &times, |_, sampler| {
        // The output was sized from the clip: this cannot fail.
        let _ = sampler.decompress_pose(black_box(&mut pose));
    });
    // The same without a static pose: the constants decoded in every pose.
    let mut plain: Vec<Sampler<'_>> = clips.iter().map(|&c| Sampler::new(c)).collect();
    let (plain_median, plain_min) = stats(&mut plain, &times, |_, sampler| {
        let _ = sampler.decompress_pose(black_box(&mut pose));
    });
    // A pose kept between calls (one per copy of the clip, as an engine keeps one per
    // playing clip), with its plan (README, Decoding): after the first call only the
    // animated sub-tracks are written, and within a segment only their bits read.
    let mut kept_storage = vec![vec![Transform::IDENTITY; bones as usize]; copies];
    let mut plans = vec![vec![QuadPlan::EMPTY; clip.quad_count()]; copies];
    let mut kept: Vec<KeptPose<'_>> =
        kept_storage.iter_mut().zip(&mut plans).map(|(s, p)| KeptPose::with_plan(s, p)).collect();
    let (kept_median, kept_min) = stats(&mut samplers, &times, |i, sampler| {
        let _ = sampler.decompress_kept_pose(black_box(&mut kept[i]));
    });
    // The same without a plan.
    let mut unplanned_storage = vec![vec![Transform::IDENTITY; bones as usize]; copies];
    let mut unplanned: Vec<KeptPose<'_>> = unplanned_storage.iter_mut().map(|s| KeptPose::new(s)).collect();
    let (unplanned_median, unplanned_min) = stats(&mut samplers, &times, |i, sampler| {
        let _ = sampler.decompress_kept_pose(black_box(&mut unplanned[i]));
    });
    let (bone_median, bone_min) = stats(&mut samplers, &times, |_, sampler| {
        for bone in 0..bones {
            let _ = black_box(sampler.decompress_bone(bone));
        }
    });
    // Partial decoding: four bones spread over the skeleton (the second, a third and
    // two thirds of the way, the last), one plan per copy of the clip.
    let n = bones.max(1);
    let mut subset_bones = vec![1.min(n - 1), n / 3, 2 * n / 3, n - 1];
    subset_bones.dedup();
    let mut subsets: Vec<Subset<4>> = fixed
        .iter()
        .map(|c| Subset::new(c, &subset_bones))
        .collect::<Result<_, _>>()
        .map_err(|e| Failure::at(&input, e))?;
    let mut partial = [Transform::IDENTITY; 4];
    let (subset_median, subset_min) = stats(&mut samplers, &times, |i, sampler| {
        let _ = sampler.decompress_subset(&mut subsets[i], black_box(&mut partial));
    });
    let cache = if cold { "cold" } else { "warm" };
    let backend = Sampler::backend();
    if json {
        return say(json!({
            "file": input.display().to_string(),
            "bones": bones,
            "backend": backend,
            "cache": cache,
            "copies": copies,
            "pose_ns_median": pose_median,
            "pose_ns_min": pose_min,
            "pose_without_static_pose_ns_median": plain_median,
            "pose_without_static_pose_ns_min": plain_min,
            "kept_pose_ns_median": kept_median,
            "kept_pose_ns_min": kept_min,
            "kept_pose_without_plan_ns_median": unplanned_median,
            "kept_pose_without_plan_ns_min": unplanned_min,
            "bone_pose_ns_median": bone_median,
            "bone_pose_ns_min": bone_min,
            "subset_bones": subset_bones,
            "subset_ns_median": subset_median,
            "subset_ns_min": subset_min,
        }));
    }
    say(format!(
        "{}: {bones} bones, {backend} backend, {cache} cache ({copies} cop{})",
        shown(&input),
        if copies == 1 { "y" } else { "ies" }
    ))?;
    say(format!("  seek + decompress_pose               median {pose_median:>9.1} ns, min {pose_min:>9.1} ns"))?;
    say(format!(
        "    without a static pose              median {plain_median:>9.1} ns, min {plain_min:>9.1} ns ({:.2} of a pose)",
        plain_median / pose_median
    ))?;
    say(format!(
        "  seek + decompress_kept_pose          median {kept_median:>9.1} ns, min {kept_min:>9.1} ns ({:.2} of a pose)",
        kept_median / pose_median
    ))?;
    say(format!(
        "    without a plan                     median {unplanned_median:>9.1} ns, min {unplanned_min:>9.1} ns ({:.2} of a pose)",
        unplanned_median / pose_median
    ))?;
    say(format!("  seek + decompress_bone × {bones:<5}       median {bone_median:>9.1} ns, min {bone_min:>9.1} ns"))?;
    say(format!(
        "  seek + decompress_subset of {} bones    median {subset_median:>9.1} ns, min {subset_min:>9.1} ns ({:.2} of a pose)",
        subset_bones.len(),
        subset_median / pose_median
    ))
}

/// Median and minimum, in nanoseconds per call, of `ROUNDS` timed rounds (after one
/// untimed round). A round seeks to each of `times` in turn and calls `decode`, each
/// call on the next sampler (the next copy of the clip, for `--cold`).
fn stats(samplers: &mut [Sampler<'_>], times: &[f32], mut decode: impl FnMut(usize, &Sampler<'_>)) -> (f64, f64) {
    let (count, mut next) = (samplers.len(), 0usize);
    let mut round = || {
        let started = Instant::now();
        for &t in times {
            let (index, sampler) = (next, &mut samplers[next]);
            next = if next + 1 == count { 0 } else { next + 1 };
            sampler.seek(t, Rounding::None);
            decode(index, sampler);
        }
        started.elapsed().as_nanos() as f64 / times.len() as f64
    };
    round();
    let mut samples: Vec<f64> = (0..ROUNDS).map(|_| round()).collect();
    samples.sort_by(f64::total_cmp);
    (samples[ROUNDS / 2], samples[0])
}
