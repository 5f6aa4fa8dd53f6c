//! Decodes poses of a clip of a streaming database in a loop, for instruction counts
//! (`scripts/database_instructions.sh`):
//! `cargo run --release -p ossa-encoder --example stream_loop -- CLIP.acl.sjson [POSES [OTHER.acl.sjson…]]`.
//! Builds a database of the clip and the others (default tiers: a quarter of the key
//! frames medium, a quarter low; clips of one skeleton share a pose), then plays the
//! clip forward over 100 evenly spaced times, interpolating, POSES times in each of
//! five loops, each its own function so that a profiler counts it alone: the clip
//! compressed on its own (`plain_poses`), the database clip sampled without its
//! tiers (`holes_poses`: the normal path over the key frames it keeps), and with its
//! database with no tier resident (`lowest_poses`), the medium tier (`medium_poses`)
//! and both (`highest_poses`), each a seek and a whole pose.

use std::hint::black_box;

use ossa_decoder::{Binding, Clip, Database, Error, Residency, Rounding, Sampler, Slot, Tier, Transform};
use ossa_encoder::database::{build, DatabaseSettings};
use ossa_encoder::formats::acl_text;
use ossa_encoder::{compress, Settings};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: stream_loop CLIP.acl.sjson [POSES]")?;
    let poses: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(100_000);
    let raw = acl_text::read_clip(&std::fs::read_to_string(&path)?, "clip")?;
    let mut clips = vec![("clip".to_owned(), raw.clone())];
    for (i, other) in args.filter(|p| *p != path).enumerate() {
        clips.push((format!("other{i}"), acl_text::read_clip(&std::fs::read_to_string(&other)?, "clip")?));
    }
    let settings = Settings { include_metadata: false, ..Settings::default() };
    let plain = compress(&raw, &settings)?;
    let built = build(&clips, &DatabaseSettings { compression: settings, ..Default::default() })?;
    let database = Database::from_bytes(&built.file)?;
    let bytes = &built.clips[0].bytes;
    let clip = database.open_clip(bytes)?;
    let binding = database.bind(&clip)?;
    let mut pose = vec![Transform::IDENTITY; raw.bones.len()];

    let mut sampler = Sampler::new(Clip::from_bytes(&plain.bytes)?);
    plain_poses(&mut sampler, &mut pose, poses)?;
    let mut residency = Residency::new(&database, vec![Slot::None; database.chunk_slots() as usize])?;
    let mut sampler = Sampler::new(clip);
    holes_poses(&mut sampler, &mut pose, poses)?;
    lowest_poses(&mut sampler, &binding, &residency, &mut pose, poses)?;
    for tier in Tier::ALL {
        for i in 0..database.chunk_count(tier) {
            let chunk = database.chunk(tier, i).ok_or("no chunk")?;
            let start = chunk.file_offset as usize;
            residency.bind(&database, tier, i, &built.file[start..start + chunk.size as usize])?;
        }
        if tier == Tier::Medium {
            medium_poses(&mut sampler, &binding, &residency, &mut pose, poses)?;
        }
    }
    highest_poses(&mut sampler, &binding, &residency, &mut pose, poses)?;
    println!(
        "{} bones; key frames: {} in the clip, {} medium, {} low; {}",
        raw.bones.len(),
        built.clips[0].clip_frames,
        built.clips[0].tier_frames[0],
        built.clips[0].tier_frames[1],
        if built.clips[0].shared_pose.is_some() { "shared pose" } else { "no shared pose" }
    );
    Ok(())
}

/// The time of pose `i`: forward over 100 evenly spaced times.
fn time(clip: &Clip, i: usize) -> f32 {
    clip.duration() * (i % 100) as f32 / 99.0
}

#[inline(never)]
fn plain_poses(sampler: &mut Sampler, pose: &mut [Transform], poses: usize) -> Result<(), Error> {
    let clip = *sampler.clip();
    for i in 0..poses {
        sampler.seek(time(&clip, i), Rounding::None);
        sampler.decompress_pose(black_box(&mut *pose))?;
    }
    Ok(())
}

/// The database clip sampled on its own, without looking at the database: the
/// normal path over the key frames the clip keeps.
#[inline(never)]
fn holes_poses(sampler: &mut Sampler, pose: &mut [Transform], poses: usize) -> Result<(), Error> {
    let clip = *sampler.clip();
    black_box(4);
    for i in 0..poses {
        sampler.seek(time(&clip, i), Rounding::None);
        sampler.decompress_pose(black_box(&mut *pose))?;
    }
    Ok(())
}

/// Seek with the tiers `residency` holds, and a whole pose.
#[inline(always)]
fn streamed_poses<'a>(
    sampler: &mut Sampler<'a>,
    binding: &Binding<'_>,
    residency: &Residency<'a, Vec<Slot<'a>>>,
    pose: &mut [Transform],
    poses: usize,
) -> Result<(), Error> {
    let clip = *sampler.clip();
    for i in 0..poses {
        sampler.seek_streamed(time(&clip, i), Rounding::None, binding, black_box(residency))?;
        sampler.decompress_pose(black_box(&mut *pose))?;
    }
    Ok(())
}

/// [`streamed_poses`] as a function of its own per fidelity, named for the profiler
/// (the tag keeps the linker from merging the identical bodies).
macro_rules! fidelity_loop {
    ($name:ident, $tag:literal) => {
        #[inline(never)]
        fn $name<'a>(
            sampler: &mut Sampler<'a>,
            binding: &Binding<'_>,
            residency: &Residency<'a, Vec<Slot<'a>>>,
            pose: &mut [Transform],
            poses: usize,
        ) -> Result<(), Error> {
            black_box($tag);
            streamed_poses(sampler, binding, residency, pose, poses)
        }
    };
}
fidelity_loop!(lowest_poses, 1);
fidelity_loop!(medium_poses, 2);
fidelity_loop!(highest_poses, 3);
