//! `ossa compress`: a text clip in, an `.ossa` file out; or many clips (files and
//! folders) into a folder, on every core ([`super::batch`]).

use std::io::{IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::time::Instant;

use ossa_encoder::compress::scalar::{compress_tracks, TrackSettings};
use ossa_encoder::formats::acl_text::AclFile;
use ossa_encoder::message::{number, path as shown};
use ossa_encoder::raw_track_list::RawTrackList;
use ossa_encoder::{compress, LoopSetting, Settings};
use serde_json::{json, Value};

use super::batch::{self, Shard};
use super::GltfOptions;
use crate::failure::{note, say, Failure};
use crate::input::Input;
use crate::memory_limit::MemoryLimit;
use crate::output::{Destination, OutputFolder};

/// What compressing one input gave: its summary as text and JSON, and a warning.
pub struct Report {
    text: String,
    json: Value,
    warning: Option<String>,
}

/// `ossa compress INPUT… -o OUTPUT`: one file to `OUTPUT` (a file, `-`, or a folder:
/// one that exists, or a path ending in `/`, created); several inputs, or a folder of
/// clips, into the folder `OUTPUT`. A glTF model gives a clip per animation
/// (`NAME_ANIMATION.ossa` in a folder).
pub fn run(
    inputs: &[PathBuf],
    output: &Path,
    settings: &Settings,
    json: bool,
    shard: Option<Shard>,
    gltf: &GltfOptions,
    limit: &MemoryLimit,
) -> Result<(), Failure> {
    let single = inputs.len() == 1 && !inputs[0].is_dir() && shard.is_none();
    // A shard writes into a folder: an output named like a file is a mistake.
    let file_like = output.extension().is_some_and(|e| e.eq_ignore_ascii_case("ossa")) || output.is_file();
    if shard.is_some() && (file_like || output.as_os_str() == "-") && !names_a_folder(output) {
        return Err(Failure::at(
            output,
            "--shard writes each clip of its share into a folder: give -o a folder (OUT_DIR/), not a file",
        ));
    }
    if single && !names_a_folder(output) {
        let reports = one(&inputs[0], output, None, settings, gltf, limit)?;
        let to_stdout = output.as_os_str() == "-";
        for report in reports {
            let line = if json { report.json.to_string() } else { report.text };
            // With the clip itself on standard output, the summary goes to standard error.
            if to_stdout {
                note(line);
            } else {
                say(line)?;
            }
            if let Some(w) = report.warning {
                note(w);
            }
        }
        return Ok(());
    }
    let (paths, mut failures) = batch::inputs(inputs, shard);
    // Nothing to compress (an empty folder, say): no output folder either.
    if paths.is_empty() {
        return batch::finish(0, failures);
    }
    // Removed again if nothing lands in it (every clip failed).
    let _folder = OutputFolder::prepare(output)?;
    let names = batch::output_names(&paths, "ossa", &mut failures);
    let results = batch::run_parallel(&names, "compressing", limit, |(path, name), limit| {
        let stem = name.strip_suffix(".ossa").unwrap_or(name);
        one(path, output, Some(stem), settings, gltf, limit)
    });
    let mut reports = Vec::new();
    for ((path, _), result) in names.iter().zip(results) {
        match result {
            Ok(r) => reports.extend(r),
            Err(Failure::ClosedPipe) => return Err(Failure::ClosedPipe),
            Err(f) => failures.push((path.clone(), f)),
        }
    }
    if json {
        say(json!({
            "clips": reports.iter().map(|r| r.json.clone()).collect::<Vec<_>>(),
            "failures": batch::failures_json(&failures),
        }))?;
    } else {
        for r in &reports {
            say(&r.text)?;
        }
    }
    for w in reports.iter().filter_map(|r| r.warning.as_ref()) {
        note(w);
    }
    batch::finish(reports.len(), failures)
}

/// Compresses what `input` holds: into the file `output`, or with `folder` (the
/// input's output name without extension) into `output/NAME.ossa`, one per clip of a
/// glTF model (`NAME_ANIMATION.ossa` when it has several).
fn one(
    input: &Path,
    output: &Path,
    folder: Option<&str>,
    settings: &Settings,
    gltf: &GltfOptions,
    limit: &MemoryLimit,
) -> Result<Vec<Report>, Failure> {
    let target = |name: &str| output.join(format!("{name}.ossa"));
    if super::is_gltf(input) {
        let source = Input::open(input)?;
        let shown = source.shown.clone();
        let (clips, notes) = super::load_gltf(source, limit, gltf)?;
        let targets: Vec<PathBuf> = match folder {
            Some(stem) if clips.len() == 1 => vec![target(stem)],
            Some(stem) => {
                let mut seen = std::collections::HashSet::new();
                clips
                    .iter()
                    .enumerate()
                    .map(|(i, c)| {
                        let mut name = format!("{stem}_{}", super::file_safe(&c.name));
                        if !seen.insert(name.clone()) {
                            name = format!("{name}_{i}");
                        }
                        target(&name)
                    })
                    .collect()
            }
            None if clips.len() == 1 => vec![output.to_owned()],
            None => {
                let names: Vec<&str> = clips.iter().map(|c| c.name.as_str()).collect();
                return Err(Failure::at(
                    &shown,
                    format!(
                        "holds {} animations ({}): choose one with --animation NAME|INDEX, or give -o a folder (OUT_DIR/)",
                        clips.len(),
                        names.join(", ")
                    ),
                ));
            }
        };
        for n in notes {
            note(n);
        }
        let probe = Input::open(input)?;
        let settings = Settings { precision: gltf.precision, ..settings.clone() };
        return clips
            .iter()
            .zip(&targets)
            .map(|(clip, path)| {
                let destination = Destination::resolve(path)?;
                probe.check_not(destination.identity().as_ref())?;
                compress_clip(&shown, clip, path, destination, &settings)
            })
            .collect();
    }
    let output = match folder {
        Some(stem) => target(stem),
        None => output.to_owned(),
    };
    let destination = Destination::resolve(&output)?;
    let source = Input::open(input)?;
    source.check_not(destination.identity().as_ref())?;
    if destination.is_stdout() && std::io::stdout().is_terminal() {
        return Err(Failure::general(
            "refusing to write binary .ossa data to a terminal: redirect standard output, or give -o a file",
        ));
    }
    let input = source.shown.clone();
    let clip = match super::load_file(source, limit)? {
        AclFile::Clip(clip) => clip,
        AclFile::TrackList(list) => return Ok(vec![track_list(&input, &output, destination, &list, settings)?]),
    };
    Ok(vec![compress_clip(&input, &clip, &output, destination, settings)?])
}

/// Whether `-o` names a folder: one that exists, or a path ending in a separator
/// (`out/`, which is then created), as a shell user writes a folder to be.
fn names_a_folder(output: &Path) -> bool {
    output.is_dir() || output.as_os_str().to_string_lossy().ends_with(std::path::is_separator)
}

/// Compresses `clip` (read from `input`) into `output` (`destination`).
fn compress_clip(
    input: &Path,
    clip: &ossa_encoder::RawClip,
    output: &Path,
    destination: Destination,
    settings: &Settings,
) -> Result<Report, Failure> {
    let input = input.to_owned();
    let precision = settings.precision;
    let started = Instant::now();
    let result = compress(clip, settings).map_err(|e| Failure::at(&input, e))?;
    let seconds = started.elapsed().as_secs_f64();
    let mut out = destination.create(output)?;
    out.write_all(&result.bytes).map_err(|e| out.failure(e))?;
    out.commit()?;

    let raw = clip.raw_bytes();
    let ratio = raw as f64 / result.compressed_bytes as f64;
    // The largest error at the samples held to the bound (all but stripped frames).
    let kept_error = result.errors.segment_max.iter().fold(0.0f64, |m, &e| m.max(e));
    let json = json!({
        "input": input.display().to_string(),
        "clip": clip.name,
        "output": output.display().to_string(),
        "raw_bytes": raw,
        "compressed_bytes": result.compressed_bytes,
        "file_bytes": result.bytes.len(),
        "ratio": ratio,
        "max_error": result.errors.max_error,
        "precision": precision,
        "skeleton_size": result.skeleton_size,
        "max_error_of_size": result.errors.max_error / result.skeleton_size,
        "looping": result.looping.name(),
        "loop_end_error": result.errors.loop_end_error,
        "stripped_frames": result.stripped_frames,
        "max_error_kept": kept_error,
        "seconds": seconds,
    });
    let stripped = if result.stripped_frames > 0 {
        format!(
            ", {} key frames stripped (max error {:.6} there, {:.6} at the frames kept)",
            result.stripped_frames, result.errors.max_error, kept_error
        )
    } else {
        String::new()
    };
    let text = format!(
        "{} -> {}: raw {raw} B, compressed {} B (ratio {ratio:.2}:1), file {} B, max error {} (precision {}; {} of the \
         skeleton's size, {}), {}{stripped}, {seconds:.3} s",
        shown(&input),
        shown(output),
        result.compressed_bytes,
        result.bytes.len(),
        significant(result.errors.max_error),
        number(precision),
        share(result.errors.max_error / result.skeleton_size),
        significant(result.skeleton_size),
        result.looping.name(),
    );
    let warning = result.errors.loop_end_error.filter(|&e| e > precision).map(|end| {
        format!(
            "ossa: warning: {}: wrapped although its last sample is {end:.6} from its first (precision {}): \
             playback reaches the first sample again instead of the last",
            shown(&input),
            number(precision)
        )
    });
    Ok(Report { text, json, warning })
}

/// A measured quantity for a summary: three significant digits, whatever its scale
/// (`0.00998`, `9.98e-5`, `178`).
fn significant(v: f64) -> String {
    let rounded: f64 = format!("{v:.2e}").parse().unwrap_or(v);
    number(rounded).to_string()
}

/// A share as a percentage with two significant digits (`0.0056 %`).
fn share(v: f64) -> String {
    format!("{} %", significant(v * 100.0))
}

/// `ossa compress` of a scalar track list: each track's own precision (from the
/// file) bounds its error; the clip options that do not apply are refused.
fn track_list(
    input: &Path,
    output: &Path,
    destination: Destination,
    list: &RawTrackList,
    settings: &Settings,
) -> Result<Report, Failure> {
    if settings.looping == LoopSetting::Wrap || settings.root_motion_bone.is_some() || settings.extract_root_motion {
        return Err(Failure::at(
            input,
            "a scalar track list is clamped and has no root motion: --loop wrap, --root-motion-bone and --extract-root-motion do not apply",
        ));
    }
    let started = Instant::now();
    let track_settings =
        TrackSettings { segment_len: settings.segment_len, include_metadata: settings.include_metadata };
    let result = compress_tracks(list, &track_settings).map_err(|e| Failure::at(input, e))?;
    let seconds = started.elapsed().as_secs_f64();
    let mut out = destination.create(output)?;
    out.write_all(&result.bytes).map_err(|e| out.failure(e))?;
    out.commit()?;
    let c = list.track_type.components();
    let raw = (list.tracks.len() * list.sample_count * c * 4) as u64;
    let ratio = raw as f64 / result.compressed_bytes as f64;
    let json = json!({
        "input": input.display().to_string(),
        "output": output.display().to_string(),
        "kind": "track_list",
        "track_type": list.track_type.name(),
        "tracks": list.tracks.len(),
        "raw_bytes": raw,
        "compressed_bytes": result.compressed_bytes,
        "file_bytes": result.bytes.len(),
        "ratio": ratio,
        "max_error": result.max_error,
        "max_error_of_precision": result.max_error_ratio,
        "seconds": seconds,
    });
    let text = format!(
        "{} -> {}: track list of {} {} tracks, raw {raw} B, compressed {} B (ratio {ratio:.2}:1), max error {:.6} ({:.2} of each track's precision at worst), {seconds:.3} s",
        shown(input),
        shown(output),
        list.tracks.len(),
        list.track_type.name(),
        result.compressed_bytes,
        result.max_error,
        result.max_error_ratio,
    );
    Ok(Report { text, json, warning: None })
}
