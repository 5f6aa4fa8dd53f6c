//! The visual report (`ossa stats … --report report.html`): one self-contained HTML
//! page that shows what compression did to a set of clips, for people who would rather
//! look than read.
//!
//! - SVG plots ([`plots`], drawn with `plotters`): compression ratio against max error
//!   per clip, the distribution of the error over every bone at every sample, the
//!   error over time of the chosen clip's worst bones, and where the bytes go;
//! - a table of the clips;
//! - the chosen clip (the one with the largest error, or the one asked for) playing on
//!   a plain canvas, the source skeleton beside the decoded one, bones coloured by
//!   their error at each sample (`playback.js`).
//!
//! [`trace`] measures a clip for it: the error of every bone at every sample and the
//! joints' object-space positions, source and decoded.

pub mod plots;

use std::fmt::Write as _;

use ossa_decoder::Layout;
use serde_json::json;

use ossa_encoder::compress::reference::Reference;
use ossa_encoder::compress::Compressed;
use ossa_encoder::measure::{measure_visiting, MeasureError};
use ossa_encoder::playback::Playback;
use ossa_encoder::raw_clip::RawClip;

/// What the report shows of one clip.
#[derive(Clone, Debug)]
pub struct ClipTrace {
    /// The clip's name (its file's, or `MODEL (ANIMATION)`).
    pub name: String,
    /// Bone names and parents.
    pub bones: Vec<(String, Option<usize>)>,
    /// Samples per second.
    pub sample_rate: f64,
    /// Source samples.
    pub samples: usize,
    /// Bytes of the raw clip (bones × samples × 40).
    pub raw_bytes: u64,
    /// Bytes a game ships.
    pub compressed_bytes: u64,
    /// Where they go.
    pub layout: Layout,
    /// The precision held.
    pub precision: f64,
    /// The error of bone `b` at sample `s`, `[s * bones + b]`.
    pub errors: Vec<f32>,
    /// Each joint's object-space position, source, `[s * bones + b]`.
    pub source: Vec<[f32; 3]>,
    /// The same, decoded.
    pub decoded: Vec<[f32; 3]>,
}

impl ClipTrace {
    /// The largest error.
    pub fn max_error(&self) -> f64 {
        self.errors.iter().fold(0.0f64, |m, &e| m.max(f64::from(e)))
    }

    /// Raw bytes over compressed bytes.
    pub fn ratio(&self) -> f64 {
        self.raw_bytes as f64 / self.compressed_bytes.max(1) as f64
    }

    /// The `n` bones of the largest max error, largest first.
    pub fn worst_bones(&self, n: usize) -> Vec<usize> {
        let bones = self.bones.len();
        let mut max = vec![0.0f32; bones];
        for (i, &e) in self.errors.iter().enumerate() {
            let b = i % bones.max(1);
            max[b] = max[b].max(e);
        }
        let mut order: Vec<usize> = (0..bones).collect();
        order.sort_by(|&a, &b| max[b].total_cmp(&max[a]).then(a.cmp(&b)));
        order.truncate(n);
        order
    }
}

/// Measures `compressed` (of `clip`, at `precision`) for the report: decodes every
/// source sample and records each bone's error and both skeletons' joints.
pub fn trace(name: &str, clip: &RawClip, compressed: &Compressed, precision: f64) -> Result<ClipTrace, MeasureError> {
    let reference = Reference::new(clip).map_err(MeasureError::OutOfMemory)?;
    let bones = clip.bones.len();
    let samples = clip.sample_count;
    let mut errors = vec![0.0f32; bones * samples];
    let mut decoded = vec![[0.0f32; 3]; bones * samples];
    let opened = ossa_decoder::Clip::from_bytes(&compressed.bytes)?;
    measure_visiting(opened, &reference, precision, true, &[], Playback::Alone, &mut |s, b, e, object| {
        if let (Some(slot), Some(joint)) = (errors.get_mut(s * bones + b), decoded.get_mut(s * bones + b)) {
            *slot = e as f32;
            *joint = object.t.map(|v| v as f32);
        }
    })?;
    let source = (0..samples * bones).map(|i| reference.object[i].t.map(|v| v as f32)).collect();
    Ok(ClipTrace {
        name: name.to_owned(),
        bones: clip.bones.iter().map(|b| (b.name.clone(), b.parent)).collect(),
        sample_rate: clip.sample_rate,
        samples,
        raw_bytes: clip.raw_bytes(),
        compressed_bytes: compressed.compressed_bytes as u64,
        layout: compressed.layout,
        precision,
        errors,
        source,
        decoded,
    })
}

/// The report page for `clips`, the clip `chosen` (an index of `clips`) playing.
pub fn html(clips: &[ClipTrace], chosen: usize) -> String {
    let chosen_clip = &clips[chosen.min(clips.len().saturating_sub(1))];
    let mut page = String::new();
    let title = "ossa compression report";
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{title}</title>\n<style>{}</style>\n</head>\n<body>\n",
        include_str!("report.css")
    );
    let raw: u64 = clips.iter().map(|c| c.raw_bytes).sum();
    let compressed: u64 = clips.iter().map(|c| c.compressed_bytes).sum();
    let worst = clips.iter().map(ClipTrace::max_error).fold(0.0, f64::max);
    let precision = clips.iter().map(|c| c.precision).fold(0.0, f64::max);
    let _ = write!(
        page,
        "<h1>{title}</h1>\n<p class=\"summary\">{} clips: {} B compressed from {} B (ratio {:.2}:1); largest error {:.5} \
         (precision {})</p>\n",
        clips.len(),
        compressed,
        raw,
        raw as f64 / compressed.max(1) as f64,
        worst,
        precision
    );
    let _ = write!(
        page,
        "<section id=\"playback\"><h2>{} playing: source and decoded</h2>\n\
         <p>Bones are coloured by their error at each sample: green at 0, yellow at half the precision, red at the \
         precision and beyond. Drag to turn the view.</p>\n\
         <div class=\"controls\"><button id=\"play\">pause</button> <input id=\"time\" type=\"range\" min=\"0\" \
         value=\"0\" step=\"1\"> <span id=\"label\"></span></div>\n\
         <div class=\"views\"><figure><canvas id=\"source\" width=\"520\" height=\"440\"></canvas>\
         <figcaption>source</figcaption></figure><figure><canvas id=\"decoded\" width=\"520\" height=\"440\"></canvas>\
         <figcaption>decoded</figcaption></figure></div>\n</section>\n",
        escape(&chosen_clip.name)
    );
    let _ = write!(
        page,
        "<section class=\"plots\"><h2>Size and accuracy</h2>\n<div class=\"grid\">\n{}\n{}\n{}\n{}\n</div></section>\n",
        plots::ratio_against_error(clips),
        plots::error_distribution(clips),
        plots::error_over_time(chosen_clip),
        plots::bytes(clips)
    );
    page.push_str(
        "<section><h2>Clips</h2>\n<table>\n<tr><th>clip</th><th>bones</th><th>samples</th><th>raw B</th>\
                   <th>compressed B</th><th>ratio</th><th>max error</th></tr>\n",
    );
    for c in clips {
        let over = if c.max_error() > c.precision { " class=\"over\"" } else { "" };
        let _ = writeln!(
            page,
            "<tr{over}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.2}</td><td>{:.5}</td></tr>",
            escape(&c.name),
            c.bones.len(),
            c.samples,
            c.raw_bytes,
            c.compressed_bytes,
            c.ratio(),
            c.max_error()
        );
    }
    page.push_str("</table></section>\n");
    // The chosen clip's skeletons and errors, for the canvas.
    let round = |v: f32| (f64::from(v) * 1e4).round() / 1e4;
    let data = json!({
        "name": chosen_clip.name,
        "rate": chosen_clip.sample_rate,
        "precision": chosen_clip.precision,
        "samples": chosen_clip.samples,
        "parents": chosen_clip.bones.iter().map(|b| b.1).collect::<Vec<_>>(),
        "names": chosen_clip.bones.iter().map(|b| b.0.clone()).collect::<Vec<_>>(),
        "source": chosen_clip.source.iter().flatten().map(|&v| round(v)).collect::<Vec<_>>(),
        "decoded": chosen_clip.decoded.iter().flatten().map(|&v| round(v)).collect::<Vec<_>>(),
        "errors": chosen_clip.errors.iter().map(|&e| (f64::from(e) * 1e7).round() / 1e7).collect::<Vec<_>>(),
    });
    // `</` cannot end the script early: every `<` in the JSON is escaped.
    let data = data.to_string().replace('<', "\\u003c");
    let _ = write!(
        page,
        "<script id=\"clip-data\" type=\"application/json\">{data}</script>\n<script>{}</script>\n</body>\n</html>\n",
        include_str!("playback.js")
    );
    page
}

/// `text` safe inside HTML.
pub(crate) fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}
