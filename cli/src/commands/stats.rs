//! `ossa stats`: compress clips in memory, on every core ([`super::batch`]), and
//! report sizes, errors and times. Every clip is tried; the failures are listed at the
//! end and make the exit status 2, after the rows and the total of the clips that
//! worked.

use std::path::{Path, PathBuf};
use std::time::Instant;

use ossa_encoder::measure::ErrorStats;
use ossa_encoder::message::{number, path as shown};
use ossa_encoder::{compress, Settings};
use serde_json::{json, Value};

use super::batch::{self, Shard};
use super::breakdown::Breakdown;
use super::GltfOptions;
use crate::failure::{say, Failure};
use crate::input::Input;
use crate::memory_limit::MemoryLimit;
use crate::output::Destination;

/// What one clip gave.
struct Row {
    path: PathBuf,
    raw: u64,
    compressed: u64,
    /// Where the compressed bytes go.
    layout: ossa_decoder::Layout,
    /// Its sub-tracks by class, before and after.
    breakdown: Breakdown,
    seconds: f64,
    /// Bone × sample pairs measured.
    pairs: f64,
    errors: ErrorStats,
    /// What the report shows of it, when one is written.
    trace: Option<crate::report::ClipTrace>,
}

/// `--report PATH [--report-clip NAME]`.
pub struct ReportRequest {
    /// Where to write the page.
    pub path: PathBuf,
    /// The clip it plays.
    pub clip: Option<String>,
}

impl Row {
    fn ratio(&self) -> f64 {
        self.raw as f64 / self.compressed.max(1) as f64
    }

    fn json(&self) -> Value {
        json!({
            "clip": self.path.display().to_string(),
            "raw_bytes": self.raw,
            "compressed_bytes": self.compressed,
            "bytes": super::bytes::json(&self.layout),
            "breakdown": self.breakdown.json(&self.layout),
            "ratio": self.ratio(),
            "max_error": self.errors.max_error,
            "p99_error": self.errors.p99_error,
            "within_precision": self.errors.within_precision,
            "seconds": self.seconds,
        })
    }

    fn text(&self) -> String {
        format!(
            "{:<40} raw {:>8} B  compressed {:>7} B  ratio {:>6.2}  max {:.5}  p99 {:.5}  within {:>6.2}%  {:.3} s\n    bytes: {}\n    before → after: {}",
            shown(&self.path),
            self.raw,
            self.compressed,
            self.ratio(),
            self.errors.max_error,
            self.errors.p99_error,
            self.errors.within_precision * 100.0,
            self.seconds,
            super::bytes::short(&self.layout),
            self.breakdown.line(&self.layout)
        )
    }
}

pub fn run(
    inputs: &[PathBuf],
    precision: f64,
    json: bool,
    shard: Option<Shard>,
    gltf: &GltfOptions,
    report: Option<&ReportRequest>,
    limit: &MemoryLimit,
) -> Result<(), Failure> {
    let settings = Settings { precision, include_metadata: false, ..Settings::default() };
    let (paths, mut failures) = batch::inputs(inputs, shard);
    // Clips compressed on every core; rows printed in input order.
    let results = batch::run_parallel(&paths, "measuring", limit, |path, limit| {
        rows_of(path, inputs.contains(path), &settings, gltf, report.is_some(), limit)
    });
    let mut rows = Vec::new();
    for (path, result) in paths.iter().zip(results) {
        match result {
            Ok(file_rows) => {
                for row in file_rows {
                    if !json {
                        say(row.text())?;
                    }
                    rows.push(row);
                }
            }
            Err(Failure::ClosedPipe) => return Err(Failure::ClosedPipe),
            Err(f) => failures.push((path.clone(), f)),
        }
    }

    let raw: u64 = rows.iter().map(|r| r.raw).sum();
    let compressed: u64 = rows.iter().map(|r| r.compressed).sum();
    // Folded from +0.0 (an empty `sum` of f64 is -0.0, shown as "-0.000 s").
    let seconds = rows.iter().fold(0.0f64, |t, r| t + r.seconds);
    let worst = rows.iter().fold(0.0f64, |m, r| m.max(r.errors.max_error));
    let pairs: f64 = rows.iter().map(|r| r.pairs).sum();
    let within_pairs: f64 = rows.iter().map(|r| r.pairs * r.errors.within_precision).sum();
    let within = if pairs > 0.0 { within_pairs / pairs } else { 1.0 };
    let ratio = raw as f64 / compressed.max(1) as f64;
    let layout = super::bytes::sum(rows.iter().map(|r| &r.layout));
    let breakdown = rows.iter().fold(Breakdown::default(), |t, r| t.plus(r.breakdown));
    if json {
        let failed = batch::failures_json(&failures);
        say(json!({
            "precision": precision,
            "clips": rows.iter().map(Row::json).collect::<Vec<_>>(),
            "total": {
                "clips": rows.len(),
                "raw_bytes": raw,
                "compressed_bytes": compressed,
                "bytes": super::bytes::json(&layout),
                "breakdown": breakdown.json(&layout),
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
        say("where the bytes go, all clips")?;
        for line in super::bytes::lines(&layout) {
            say(line)?;
        }
        say(format!("  before → after: {}", breakdown.line(&layout)))?;
    }
    if let Some(request) = report {
        write_report(request, &mut rows)?;
    }
    batch::finish(rows.len(), failures)
}

/// Writes the report page of `rows` (whole or not at all).
fn write_report(request: &ReportRequest, rows: &mut [Row]) -> Result<(), Failure> {
    let traces: Vec<crate::report::ClipTrace> = rows.iter_mut().filter_map(|r| r.trace.take()).collect();
    if traces.is_empty() {
        return Err(Failure::at(&request.path, "no clip was measured: nothing to report"));
    }
    let chosen = match &request.clip {
        Some(name) => traces.iter().position(|t| &t.name == name).ok_or_else(|| {
            let names: Vec<&str> = traces.iter().map(|t| t.name.as_str()).collect();
            Failure::at(&request.path, format!("--report-clip: no clip '{name}' (the clips: {})", names.join(", ")))
        })?,
        None => (0..traces.len()).max_by(|&a, &b| traces[a].max_error().total_cmp(&traces[b].max_error())).unwrap_or(0),
    };
    let page = crate::report::html(&traces, chosen);
    let destination = Destination::resolve(&request.path)?;
    let mut out = destination.create(&request.path)?;
    std::io::Write::write_all(&mut out, page.as_bytes()).map_err(|e| out.failure(e))?;
    out.commit()?;
    crate::failure::note(format!(
        "ossa: report: {} ({} clips, playing {})",
        shown(&request.path),
        traces.len(),
        traces[chosen].name
    ));
    Ok(())
}

/// The rows of the clips in `path`: one, or one per animation of a glTF model.
fn rows_of(
    path: &Path,
    named: bool,
    settings: &Settings,
    gltf: &GltfOptions,
    report: bool,
    limit: &MemoryLimit,
) -> Result<Vec<Row>, Failure> {
    if super::is_gltf(path) {
        let (clips, notes) = super::load_gltf(Input::open(path)?, limit, gltf)?;
        for n in notes {
            crate::failure::note(n);
        }
        // Each animation's row is named `MODEL (ANIMATION)`.
        let settings = Settings { precision: gltf.precision, ..settings.clone() };
        return clips
            .iter()
            .map(|clip| one(&PathBuf::from(format!("{} ({})", path.display(), clip.name)), clip, &settings, report))
            .collect();
    }
    // A scalar track list found in a folder is skipped (and said so), one named is
    // refused: as `ossa database` does.
    let clip =
        match super::load_file(Input::open(path)?, limit)? {
            ossa_encoder::formats::acl_text::AclFile::Clip(clip) => clip,
            ossa_encoder::formats::acl_text::AclFile::TrackList(_) if !named => {
                crate::failure::note(format!(
                    "ossa: {}: skipped, a scalar track list (stats measures transform clips)",
                    shown(path)
                ));
                return Ok(Vec::new());
            }
            ossa_encoder::formats::acl_text::AclFile::TrackList(_) => return Err(Failure::at(
                path,
                "a scalar track list: stats measures transform clips ('ossa compress' reports a list's size and error)",
            )),
        };
    Ok(vec![one(path, &clip, settings, report)?])
}

/// The row of `clip`, read from `path`.
fn one(path: &Path, clip: &ossa_encoder::RawClip, settings: &Settings, report: bool) -> Result<Row, Failure> {
    let started = Instant::now();
    let result = compress(clip, settings).map_err(|e| Failure::at(path, e))?;
    let seconds = started.elapsed().as_secs_f64();
    let trace = if report {
        let name = super::clip_name(path);
        let trace = crate::report::trace(&name, clip, &result, settings.precision)
            .map_err(|e| Failure::at(path, format!("measuring for the report: {e:?}")))?;
        Some(trace)
    } else {
        None
    };
    // The encoder's own output: it opens (a failure here is the encoder's bug, named).
    let opened = ossa_decoder::Clip::from_bytes(&result.bytes)
        .map_err(|e| Failure::at(path, format!("the compressed clip does not open: {e}")))?;
    let breakdown = Breakdown::of(&opened);
    Ok(Row {
        breakdown,
        trace,
        path: path.to_owned(),
        raw: clip.raw_bytes(),
        compressed: result.compressed_bytes as u64,
        layout: result.layout,
        seconds,
        pairs: (clip.bones.len() * clip.sample_count) as f64,
        errors: result.errors,
    })
}
