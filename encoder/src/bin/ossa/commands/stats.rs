//! `ossa stats`: compress clips in memory and report sizes, errors and times. Every
//! clip is tried; the failures are listed at the end and make the exit status 2,
//! after the rows and the total of the clips that worked.

use std::path::{Path, PathBuf};
use std::time::Instant;

use ossa_encoder::message::{number, path as shown};
use ossa_encoder::{compress, Settings};
use serde_json::{json, Value};

use crate::failure::{say, Failure};
use crate::input::Input;
use crate::memory_limit::MemoryLimit;

/// What one clip gave.
struct Row {
    path: PathBuf,
    json: Value,
    raw: u64,
    compressed: u64,
    seconds: f64,
    max_error: f64,
    pairs: f64,
    within: f64,
}

pub fn run(inputs: &[PathBuf], precision: f64, json: bool, limit: &MemoryLimit) -> Result<(), Failure> {
    let settings = Settings { precision, include_metadata: false };
    let mut rows = Vec::new();
    let mut failures: Vec<(PathBuf, Failure)> = Vec::new();
    for item in expand(inputs) {
        let path = match item {
            Ok(path) => path,
            Err((path, f)) => {
                failures.push((path, f));
                continue;
            }
        };
        match one(&path, &settings, limit) {
            Ok(row) => {
                if !json {
                    say(text_row(&row))?;
                }
                rows.push(row);
            }
            Err(Failure::ClosedPipe) => return Err(Failure::ClosedPipe),
            Err(f) => failures.push((path, f)),
        }
    }

    let raw: u64 = rows.iter().map(|r| r.raw).sum();
    let compressed: u64 = rows.iter().map(|r| r.compressed).sum();
    let seconds: f64 = rows.iter().map(|r| r.seconds).sum();
    let worst = rows.iter().fold(0.0f64, |m, r| m.max(r.max_error));
    let pairs: f64 = rows.iter().map(|r| r.pairs).sum();
    let within = if pairs > 0.0 { rows.iter().map(|r| r.within).sum::<f64>() / pairs } else { 1.0 };
    let ratio = raw as f64 / compressed.max(1) as f64;
    if json {
        let failed: Vec<Value> = failures
            .iter()
            .map(|(path, f)| {
                let error = match f {
                    Failure::Problem { message, .. } => message.clone(),
                    Failure::ClosedPipe => String::new(),
                };
                json!({ "clip": path.display().to_string(), "error": error })
            })
            .collect();
        say(json!({
            "precision": precision,
            "clips": rows.iter().map(|r| r.json.clone()).collect::<Vec<_>>(),
            "total": {
                "clips": rows.len(),
                "raw_bytes": raw,
                "compressed_bytes": compressed,
                "ratio": ratio,
                "max_error": worst,
                "within_precision": within,
                "seconds": seconds,
            },
            "failures": failed,
        }))?;
    } else {
        say(format!(
            "{:<40} raw {:>8} B  compressed {:>7} B  ratio {:>6.2}  max {:.5}  within {:>6.2}%  {:.3} s",
            format!("total ({} clips, precision {})", rows.len(), number(precision)),
            raw,
            compressed,
            ratio,
            worst,
            within * 100.0,
            seconds
        ))?;
    }
    if failures.is_empty() {
        return Ok(());
    }
    for (_, f) in &failures {
        f.report();
    }
    let total = rows.len() + failures.len();
    Err(Failure::general(format!("{} of {total} clips failed (listed above)", failures.len())))
}

/// The clips named: files as given, folders replaced by the `.acl.sjson` files in
/// them (sorted by name, not recursive).
fn expand(inputs: &[PathBuf]) -> Vec<Result<PathBuf, (PathBuf, Failure)>> {
    let mut out = Vec::new();
    for input in inputs {
        if !input.is_dir() {
            out.push(Ok(input.clone()));
            continue;
        }
        let entries = match std::fs::read_dir(input) {
            Ok(entries) => entries,
            Err(e) => {
                out.push(Err((input.clone(), Failure::at(input, format!("cannot list the folder: {e}")))));
                continue;
            }
        };
        let mut clips: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().to_lowercase().ends_with(".acl.sjson")))
            .collect();
        clips.sort();
        if clips.is_empty() {
            out.push(Err((input.clone(), Failure::at(input, "the folder holds no .acl.sjson clip"))));
        }
        out.extend(clips.into_iter().map(Ok));
    }
    out
}

fn one(path: &Path, settings: &Settings, limit: &MemoryLimit) -> Result<Row, Failure> {
    let source = Input::open(path)?;
    let clip = super::load_clip(source, limit)?;
    let started = Instant::now();
    let result = compress(&clip, settings).map_err(|e| Failure::at(path, e))?;
    let seconds = started.elapsed().as_secs_f64();
    let raw = clip.raw_bytes();
    let e = &result.errors;
    let pairs = (clip.bones.len() * clip.sample_count) as f64;
    Ok(Row {
        path: path.to_owned(),
        json: json!({
            "clip": path.display().to_string(),
            "raw_bytes": raw,
            "compressed_bytes": result.compressed_bytes,
            "ratio": raw as f64 / result.compressed_bytes as f64,
            "max_error": e.max_error,
            "p99_error": e.p99_error,
            "within_precision": e.within_precision,
            "seconds": seconds,
        }),
        raw,
        compressed: result.compressed_bytes as u64,
        seconds,
        max_error: e.max_error,
        pairs,
        within: pairs * e.within_precision,
    })
}

fn text_row(row: &Row) -> String {
    let j = &row.json;
    format!(
        "{:<40} raw {:>8} B  compressed {:>7} B  ratio {:>6.2}  max {:.5}  p99 {:.5}  within {:>6.2}%  {:.3} s",
        shown(&row.path),
        row.raw,
        row.compressed,
        row.raw as f64 / row.compressed.max(1) as f64,
        row.max_error,
        j["p99_error"].as_f64().unwrap_or_default(),
        j["within_precision"].as_f64().unwrap_or_default() * 100.0,
        row.seconds
    )
}
