//! `ossa info`: validate an `.ossa` file, verify its checksum, and describe it.

use std::path::Path;

use ossa_decoder::format::Looping;
use ossa_decoder::{Clip, Database, DatabaseClip, Tier};
use ossa_encoder::message::{number32, path as shown};
use serde_json::json;

use crate::failure::{say, Failure};
use crate::input::{Input, Loaded};
use crate::memory_limit::MemoryLimit;

pub fn run(input: &Path, json: bool, limit: &MemoryLimit) -> Result<(), Failure> {
    let source = Input::open(input)?;
    let input = source.shown.clone();
    let bytes = match source.read_ossa_or_database(limit)? {
        Loaded::Clip(bytes) => bytes,
        Loaded::Database(bytes) => return database(&input, &bytes, json),
    };
    // Header byte 20: the kind (format-spec/header.md); 1 is a scalar track list.
    if bytes.get(20) == Some(&ossa_decoder::format::KIND_SCALAR_TRACKS) {
        return track_list(&input, &bytes, json);
    }
    // A clip with a shared pose is described without its database: its structure
    // does not depend on the pose's values, so placeholder identities stand for them.
    let placeholder;
    let clip = match Clip::from_bytes_verified(&bytes) {
        Err(ossa_decoder::Error::NeedsSharedPose) => {
            placeholder = identity_pose(&bytes);
            ossa_decoder::SharedPose::from_bytes(&placeholder, bone_count(&bytes))
                .and_then(|pose| Clip::from_bytes_with_pose(&bytes, pose))
                .and_then(|clip| clip.verify_checksum().map(|()| clip))
        }
        other => other,
    }
    .map_err(|e| Failure::at(&input, e))?;
    let layout = clip.layout();
    let (major, minor) = clip.version();
    let mut flags: Vec<&str> = if clip.metadata().is_some() { vec!["metadata"] } else { vec![] };
    if clip.looping() == Looping::Wrap {
        flags.push("loop-wrap");
    }
    if clip.flags() & ossa_decoder::format::FLAG_ROOT_MOTION != 0 {
        flags.push("root-motion");
    }
    if clip.database_reference().is_some() {
        flags.push("database");
    }
    if clip.shared_pose_index().is_some() {
        flags.push("shared-pose");
    }
    let root_bone = clip.root_motion_bone();
    let root_name =
        root_bone.and_then(|b| clip.metadata().and_then(|m| m.bones().nth(b as usize)).map(|b| b.name.to_owned()));
    if json {
        let v = json!({
            "file": input.display().to_string(),
            "version": format!("{major}.{minor}"),
            "bones": clip.bone_count(),
            "samples": clip.sample_count(),
            "source_samples": clip.source_sample_count(),
            "sample_rate": clip.sample_rate(),
            "looping": clip.looping().name(),
            "additive": clip.additive().name(),
            "duration": clip.duration(),
            "root_motion": root_bone.map(|b| json!({
                "bone": b,
                "name": root_name,
                "in_place": clip.root_motion_in_place(),
                "end_stored": clip.root_end_stored(),
            })),
            "segments": clip.segment_count(),
            "segment_len": clip.segment_len(),
            "animated_sub_tracks": clip.animated_sub_tracks(),
            "key_frames_stored": clip.stored_key_frames(),
            "database": clip.database_reference().map(|(id, index)| json!({
                "id": format!("{id:016x}"),
                "clip_index": index,
                "shared_pose": clip.shared_pose_index(),
            })),
            "flags": flags,
            "checksum": format!("{:08x}", clip.checksum()),
            "bytes": super::bytes::json(&layout),
            "name": clip.metadata().map(|m| m.clip_name().to_owned()),
            "precision": clip.metadata().map(|m| m.precision()),
            "joint_order": clip.metadata().filter(|m| m.has_joint_order())
                .map(|m| (0..clip.bone_count()).filter_map(|b| m.source_index(b)).collect::<Vec<_>>()),
            "root_placements": clip.metadata().map(|m| m.root_placements()
                .map(|p| json!({ "bone": p.bone, "matrix": p.matrix })).collect::<Vec<_>>()),
        });
        return say(v);
    }
    say(format!("{}: ossa format {major}.{minor}, checksum {:08x} ok", shown(&input), clip.checksum()))?;
    if let Some(m) = clip.metadata() {
        let units = if m.root_placements().next().is_some() { " (in the scene's units)" } else { "" };
        say(format!("  clip        {:?}, encoded with precision {}{units}", m.clip_name(), number32(m.precision())))?;
        if m.has_joint_order() {
            let moved = (0..clip.bone_count()).filter(|&b| m.source_index(b) != Some(b)).count();
            say(format!(
                "  joint order the source's joints were not parents first: {moved} bones are at another index \
                 than their joint (written back in the source's order on export)"
            ))?;
        }
        for p in m.root_placements() {
            let name = m.bones().nth(p.bone as usize).map(|b| b.name).unwrap_or_default();
            let stretch = ossa_encoder::RootPlacement { bone: 0, matrix: p.matrix.map(f64::from) }.stretch();
            say(format!(
                "  placement   root bone {} ({name:?}) sits in the scene under a transform that scales by up to {}",
                p.bone,
                number32(stretch as f32)
            ))?;
        }
    }
    say(format!(
        "  bones {}, samples {} at {} Hz, {} s ({}), segments {} of {} samples, animated sub-tracks {}",
        clip.bone_count(),
        samples_shown(&clip),
        number32(clip.sample_rate()),
        number32(clip.duration()),
        clip.looping().name(),
        clip.segment_count(),
        clip.segment_len(),
        clip.animated_sub_tracks()
    ))?;
    if clip.additive() != ossa_decoder::Additive::None {
        say(format!("  additive    {} (apply each pose to a base pose: Additive::apply)", clip.additive().name()))?;
    }
    if let Some(b) = root_bone {
        let mut how = vec![];
        if clip.root_motion_in_place() {
            how.push("poses in place");
        }
        if clip.root_end_stored() {
            how.push("loop end kept");
        }
        let name = root_name.map(|n| format!(" ({n:?})")).unwrap_or_default();
        let how = if how.is_empty() { String::new() } else { format!(", {}", how.join(", ")) };
        say(format!("  root motion bone {b}{name}{how}"))?;
    }
    let stored = clip.stored_key_frames();
    if stored < clip.sample_count() {
        say(format!(
            "  key frames  {stored} of {} stored; the other {} are interpolated",
            clip.sample_count(),
            clip.sample_count() - stored
        ))?;
    }
    if let Some((id, index)) = clip.database_reference() {
        say(format!(
            "  database    {id:016x}, clip {index}: the key frames left out may stream in from its tiers \
             ('ossa decompress --database')"
        ))?;
    }
    if let Some(pose) = clip.shared_pose_index() {
        say(format!(
            "  shared pose {pose} of the database: its default sub-tracks take their values from it, \
             so it decodes only with the database"
        ))?;
    }
    say(format!("  flags       {}", if flags.is_empty() { "none".to_string() } else { flags.join(", ") }))?;
    say("  where the bytes go")?;
    for line in super::bytes::lines(&layout) {
        say(format!("  {line}"))?;
    }
    Ok(())
}

/// The bone count in a clip's header (bytes 24 to 27), 0 when it is too short.
fn bone_count(bytes: &[u8]) -> u32 {
    bytes.get(24..28).map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// Identity transforms, as shared-pose values, for the bones a clip's header
/// declares (at most the format's limit).
fn identity_pose(bytes: &[u8]) -> Vec<u8> {
    let bones = bone_count(bytes).min(ossa_decoder::format::MAX_BONES) as usize;
    let one: [f32; 10] = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0];
    let values: Vec<u8> = one.iter().flat_map(|v| v.to_le_bytes()).collect();
    values.repeat(bones)
}

/// The bytes of chunk `index` of `tier` in the database `file`.
pub fn chunk_bytes<'f>(database: &Database<'_>, file: &'f [u8], tier: Tier, index: u32) -> Result<&'f [u8], String> {
    let chunk = database.chunk(tier, index).ok_or_else(|| format!("the {} tier has no chunk {index}", tier.name()))?;
    let start = chunk.file_offset as usize;
    file.get(start..start.saturating_add(chunk.size as usize)).ok_or_else(|| {
        format!(
            "{} chunk {index} ({} B at offset {}) lies past the end of the file ({} B): truncated?",
            tier.name(),
            chunk.size,
            chunk.file_offset,
            file.len()
        )
    })
}

/// `ossa info` of a database: its index verified, every chunk's size and checksum
/// checked, then its tiers, chunks and clips.
fn database(input: &Path, file: &[u8], json: bool) -> Result<(), Failure> {
    let database = Database::from_bytes_verified(file).map_err(|e| Failure::at(input, e))?;
    let mut tiers = Vec::new();
    for tier in Tier::ALL {
        let mut bytes = 0u64;
        for i in 0..database.chunk_count(tier) {
            let chunk = chunk_bytes(&database, file, tier, i).map_err(|e| Failure::at(input, e))?;
            database.verify_chunk(tier, i, chunk).map_err(|e| Failure::at(input, e))?;
            bytes += chunk.len() as u64;
        }
        tiers.push((tier, database.chunk_count(tier), bytes));
    }
    let clips: Vec<DatabaseClip<'_>> = (0..database.clip_count()).filter_map(|i| database.clip(i)).collect();
    let frames = |t: usize| clips.iter().map(|c| u64::from(c.tier_frames[t])).sum::<u64>();
    // Shared poses: bones, and how many of their values differ from the identity.
    let poses: Vec<(u32, u32)> = (0..database.pose_count())
        .filter_map(|p| database.shared_pose(p))
        .map(|pose| {
            let moved = (0..pose.bone_count()).filter(|&b| pose.transform(b) != ossa_decoder::Transform::IDENTITY);
            (pose.bone_count(), moved.count() as u32)
        })
        .collect();
    let (major, minor) = database.version();
    if json {
        let tiers: Vec<_> = tiers
            .iter()
            .map(|&(tier, chunks, bytes)| {
                json!({ "tier": tier.name(), "chunks": chunks, "bytes": bytes, "key_frames": frames(tier.index()) })
            })
            .collect();
        let clips: Vec<_> = clips
            .iter()
            .map(|c| {
                json!({
                    "name": c.name,
                    "checksum": format!("{:08x}", c.checksum),
                    "segments": c.segment_count,
                    "tier_key_frames": { "medium": c.tier_frames[0], "low": c.tier_frames[1] },
                })
            })
            .collect();
        return say(json!({
            "file": input.display().to_string(),
            "kind": "database",
            "version": format!("{major}.{minor}"),
            "id": format!("{:016x}", database.id()),
            "index_bytes": database.index_size(),
            "file_bytes": file.len(),
            "chunk_size": database.chunk_size(),
            "low_stripped": database.low_stripped(),
            "tiers": tiers,
            "shared_poses": poses.iter().map(|&(bones, moved)| json!({
                "bones": bones,
                "bytes": bones as usize * ossa_decoder::format::database::POSE_BONE_SIZE,
                "bones_not_identity": moved,
            })).collect::<Vec<_>>(),
            "clips": clips,
        }));
    }
    say(format!(
        "{}: ossa database {major}.{minor}, id {:016x}, index {} B (checksum ok), file {} B",
        shown(input),
        database.id(),
        database.index_size(),
        file.len()
    ))?;
    say(format!("  chunk size  {} B", database.chunk_size()))?;
    for &(tier, chunks, bytes) in &tiers {
        let stripped = if tier == Tier::Low && database.low_stripped() { " (stripped when built)" } else { "" };
        say(format!(
            "  {:<6} tier {chunks} chunk(s), {bytes} B, {} key frames, checksums ok{stripped}",
            tier.name(),
            frames(tier.index())
        ))?;
    }
    for (p, &(bones, moved)) in poses.iter().enumerate() {
        say(format!(
            "  shared pose {p}: {bones} bones ({} B), {moved} not at the identity: the default values of its clips",
            bones as usize * ossa_decoder::format::database::POSE_BONE_SIZE
        ))?;
    }
    say(format!("  clips       {}", clips.len()))?;
    for c in &clips {
        say(format!(
            "    {:<32} {:>4} segments, key frames in tiers: {:>4} medium, {:>4} low",
            c.name, c.segment_count, c.tier_frames[0], c.tier_frames[1]
        ))?;
    }
    Ok(())
}

/// The stored sample count, and the source's when a wrapping loop dropped its last.
fn samples_shown(clip: &Clip<'_>) -> String {
    match clip.looping() {
        Looping::Clamp => clip.sample_count().to_string(),
        Looping::Wrap => {
            format!("{} (of {}, the last one the first again)", clip.sample_count(), clip.source_sample_count())
        }
    }
}

/// `ossa info` of a scalar track list.
fn track_list(input: &Path, bytes: &[u8], json: bool) -> Result<(), Failure> {
    let clip = ossa_decoder::ScalarClip::from_bytes_verified(bytes).map_err(|e| Failure::at(input, e))?;
    let (major, minor) = clip.version();
    let outputs: Vec<Option<u32>> = (0..clip.track_count()).map(|t| clip.output_index(t)).collect();
    if json {
        return say(json!({
            "file": input.display().to_string(),
            "version": format!("{major}.{minor}"),
            "kind": "track_list",
            "track_type": clip.track_type().name(),
            "tracks": clip.track_count(),
            "output_count": clip.output_count(),
            "output_indices": outputs,
            "animated_tracks": clip.animated_tracks(),
            "samples": clip.sample_count(),
            "sample_rate": clip.sample_rate(),
            "looping": clip.looping().name(),
            "duration": clip.duration(),
            "segments": clip.segment_count(),
            "checksum": format!("{:08x}", clip.checksum()),
            "bytes": { "total": clip.total_size(), "compressed": clip.total_size() },
        }));
    }
    say(format!("{}: ossa format {major}.{minor}, checksum {:08x} ok", shown(input), clip.checksum()))?;
    say(format!(
        "  scalar track list: {} {} tracks ({} animated), {} output slots, samples {} at {} Hz, {} s, segments {}",
        clip.track_count(),
        clip.track_type().name(),
        clip.animated_tracks(),
        clip.output_count(),
        clip.sample_count(),
        number32(clip.sample_rate()),
        number32(clip.duration()),
        clip.segment_count()
    ))?;
    say(format!("  total             {:>8} B (what a game ships)", clip.total_size()))
}
