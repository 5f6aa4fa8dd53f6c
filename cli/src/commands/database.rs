//! `ossa database`: many text clips in, a streaming database out (the clips, each
//! without the key frames its tiers took, and `database.ossadb`).
//!
//! Nothing is written unless everything worked: every clip is read and compressed
//! first, every output is then written beside its target, and only then are they
//! all moved into place.

use std::collections::HashMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use ossa_encoder::compress::memory_estimate;
use ossa_encoder::database::{build_each, ClipInput, DatabaseError, DatabaseSettings, Fidelity};
use ossa_encoder::formats::acl_text::AclFile;
use ossa_encoder::message::{number, path as shown};
use ossa_encoder::{RawClip, Settings};
use serde_json::{json, Value};

use crate::failure::{note, say, Failure};
use crate::input::Input;
use crate::memory_limit::MemoryLimit;
use crate::output::{Destination, Output, OutputFolder};

/// The clips read for a database: each with its name and settings (a glTF model's
/// at its own precision, in metres), the file it came from, every failure, and the
/// memory their compressions will hold together.
#[derive(Default)]
struct Gathered {
    clips: Vec<(String, RawClip, Settings)>,
    paths: HashMap<String, PathBuf>,
    failures: Vec<Failure>,
    estimate: u64,
}

impl Gathered {
    /// Adds the clip `name` read from `path`, unless another clip has its name (then a
    /// failure).
    fn add(&mut self, path: &Path, name: String, clip: RawClip, settings: Settings) {
        if let Some(first) = self.paths.get(&name) {
            self.failures.push(Failure::at(
                path,
                format!("its name '{name}' is also {}'s: clip names in a database must differ", shown(first)),
            ));
            return;
        }
        // Every clip's compression is kept until the database is laid out.
        let bytes = memory_estimate::compress_estimate(clip.bones.len() as u64, clip.sample_count as u64, 0, 1);
        self.estimate = self.estimate.saturating_add(bytes);
        self.paths.insert(name.clone(), path.to_owned());
        self.clips.push((name, clip, settings));
    }
}

/// The database's file name in the output folder.
pub const DATABASE_FILE: &str = "database.ossadb";

pub fn run(
    inputs: &[PathBuf],
    out_dir: &Path,
    settings: &DatabaseSettings,
    gltf: &super::GltfOptions,
    json: bool,
    limit: &MemoryLimit,
) -> Result<(), Failure> {
    // The folder this run alone writes into (another run at the same time is refused),
    // removed again if nothing lands in it.
    let mut folder = OutputFolder::prepare(out_dir)?;
    folder.lock()?;
    // Every clip read; every failure reported, and then nothing written.
    let mut gathered = Gathered::default();
    for item in super::expand(inputs) {
        let path = match item {
            Ok(path) => path,
            Err((_, f)) => {
                gathered.failures.push(f);
                continue;
            }
        };
        if super::is_gltf(&path) {
            match Input::open(&path).and_then(|source| super::load_gltf(source, limit, gltf)) {
                Ok((models, notes)) => {
                    notes.into_iter().for_each(note);
                    let stem = super::clip_name(&path);
                    let several = models.len() > 1;
                    let own = Settings { precision: gltf.precision, ..settings.compression.clone() };
                    for clip in models {
                        let name =
                            if several { format!("{stem}_{}", super::file_safe(&clip.name)) } else { stem.clone() };
                        gathered.add(&path, name, clip, own.clone());
                    }
                }
                Err(f) => gathered.failures.push(f),
            }
            continue;
        }
        let clip = match Input::open(&path).and_then(|source| super::load_file(source, limit)) {
            Ok(AclFile::Clip(clip)) => clip,
            // A scalar track list has no place in a database: one found in a folder
            // is skipped (and said so), one named is refused.
            Ok(AclFile::TrackList(_)) if !inputs.contains(&path) => {
                note(format!(
                    "ossa: {}: skipped, a scalar track list (a database holds transform clips)",
                    shown(&path)
                ));
                continue;
            }
            Ok(AclFile::TrackList(_)) => {
                let refusal = "a scalar track list cannot go in a database (it holds transform clips)";
                gathered.failures.push(Failure::at(&path, refusal));
                continue;
            }
            Err(f) => {
                gathered.failures.push(f);
                continue;
            }
        };
        gathered.add(&path, super::clip_name(&path), clip, settings.compression.clone());
    }
    let Gathered { clips, paths, failures, estimate } = gathered;
    if !failures.is_empty() {
        let count = failures.len();
        for f in &failures {
            f.report();
        }
        return Err(Failure::general(format!("{count} input(s) failed (listed above); nothing was written")));
    }
    if !limit.allows(estimate) {
        return Err(Failure::general(
            limit.refusal(&format!("building a database of {} clips", clips.len()), estimate),
        ));
    }

    let started = Instant::now();
    let inputs: Vec<ClipInput<'_>> =
        clips.iter().map(|(name, clip, settings)| ClipInput { name, clip, settings }).collect();
    let built = build_each(&inputs, settings).map_err(|e| match &e {
        DatabaseError::Clip { name, error } => match paths.get(name) {
            Some(path) => Failure::at(path, error),
            None => Failure::general(e),
        },
        DatabaseError::ChunkTooSmall { clip, segment, needed, chunk_size } => match paths.get(clip) {
            Some(path) => Failure::at(
                path,
                format!(
                    "segment {segment} puts {needed} bytes in one tier, more than a chunk of {chunk_size} bytes; \
                     use a larger --chunk-size"
                ),
            ),
            None => Failure::general(e),
        },
        _ => Failure::general(e),
    })?;
    let seconds = started.elapsed().as_secs_f64();

    // Every output written beside its target and synced (a full disk stops the run
    // here, before any lands), then all moved into place: all or nothing.
    let mut outputs: Vec<Output> = Vec::new();
    let mut written: Vec<(PathBuf, usize)> = Vec::new();
    for clip in &built.clips {
        let path = out_dir.join(format!("{}.ossa", clip.name));
        outputs.push(write_beside(&path, &clip.bytes, paths.get(&clip.name))?);
        written.push((path, clip.bytes.len()));
    }
    let database_path = out_dir.join(DATABASE_FILE);
    outputs.push(write_beside(&database_path, &built.file, None)?);
    for output in outputs {
        output.commit()?;
    }

    let fidelity_max = |f: usize| built.clips.iter().fold(0.0f64, |m, c| m.max(c.errors[f].max_error));
    let clip_bytes: usize = built.clips.iter().map(|c| c.compressed_bytes).sum();
    let standalone: usize = built.clips.iter().map(|c| c.standalone_bytes).sum();
    let precision = settings.compression.precision;
    if json {
        let tier = |t: usize| {
            let s = &built.tiers[t];
            json!({ "frames": s.frames, "bytes": s.bytes, "chunks": s.chunks, "stripped": s.stripped })
        };
        let clips: Vec<Value> = built
            .clips
            .iter()
            .zip(&written)
            .map(|(c, (path, file_bytes))| {
                json!({
                    "name": c.name,
                    "output": path.display().to_string(),
                    "compressed_bytes": c.compressed_bytes,
                    "file_bytes": file_bytes,
                    "standalone_bytes": c.standalone_bytes,
                    "stored_frames": c.stored_frames,
                    "clip_frames": c.clip_frames,
                    "tier_frames": { "medium": c.tier_frames[0], "low": c.tier_frames[1] },
                    "shared_pose": c.shared_pose,
                    "max_error": fidelities(|f| c.errors[f].max_error),
                })
            })
            .collect();
        say(json!({
            "database": database_path.display().to_string(),
            "id": format!("{:016x}", built.id),
            "precision": precision,
            "chunk_size": 1u64 << settings.chunk_shift,
            "index_bytes": built.index_size,
            "file_bytes": built.file.len(),
            "clip_bytes": clip_bytes,
            "standalone_bytes": standalone,
            "tiers": { "medium": tier(0), "low": tier(1) },
            "shared_poses": built.poses,
            "shared_pose_bytes": built.pose_bytes,
            "max_error": fidelities(fidelity_max),
            "clips": clips,
            "seconds": seconds,
        }))
    } else {
        for (c, (path, _)) in built.clips.iter().zip(&written) {
            say(format!(
                "{:<32} {:>7} B (alone {:>7} B)  key frames {:>4} in clip, {:>4} medium, {:>4} low  max error {:.5} / {:.5} / {:.5}",
                shown(path),
                c.compressed_bytes,
                c.standalone_bytes,
                c.clip_frames,
                c.tier_frames[0],
                c.tier_frames[1],
                c.errors[0].max_error,
                c.errors[1].max_error,
                c.errors[2].max_error,
            ))?;
        }
        let tier_line = |t: usize| {
            let s = &built.tiers[t];
            if s.stripped {
                format!("{} key frames stripped", s.frames)
            } else {
                format!("{} B in {} chunk(s), {} key frames", s.bytes, s.chunks, s.frames)
            }
        };
        say(format!(
            "{}: {} clips, {clip_bytes} B in the clips (alone: {standalone} B), index {} B; medium tier {}; low tier {}; {seconds:.3} s",
            shown(&database_path),
            built.clips.len(),
            built.index_size,
            tier_line(0),
            tier_line(1),
        ))?;
        if built.poses > 0 {
            let sharing = built.clips.iter().filter(|c| c.shared_pose.is_some()).count();
            say(format!(
                "shared poses: {} ({} B in the index), the constants {sharing} clips have in common; \
                 those clips decode only with the database",
                built.poses, built.pose_bytes
            ))?;
        }
        say(format!(
            "max error (precision {}): lowest fidelity {:.6}, medium {:.6}, highest {:.6}",
            number(precision),
            fidelity_max(0),
            fidelity_max(1),
            fidelity_max(2)
        ))
    }
}

/// A JSON object of one value per fidelity.
fn fidelities(value: impl Fn(usize) -> f64) -> Value {
    let mut map = serde_json::Map::new();
    for (i, f) in Fidelity::ALL.iter().enumerate() {
        map.insert(f.name().to_owned(), json!(value(i)));
    }
    Value::Object(map)
}

/// `bytes` written to a temporary file beside `path`, to be committed; `source` (the
/// clip's input) may not be the output.
fn write_beside(path: &Path, bytes: &[u8], source: Option<&PathBuf>) -> Result<Output, Failure> {
    let destination = Destination::resolve(path)?;
    if destination.is_stdout() {
        return Err(Failure::at(path, "the output is standard output: give a folder of files"));
    }
    if let Some(source) = source {
        Input::open(source)?.check_not(destination.identity().as_ref())?;
    }
    let mut out = destination.create(path)?;
    out.write_all(bytes).map_err(|e| out.failure(e))?;
    // Synced now: a full disk fails here, before any output is renamed into place.
    out.prepare()?;
    Ok(out)
}
