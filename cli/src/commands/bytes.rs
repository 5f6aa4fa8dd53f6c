//! Where the bytes go: the breakdown of a clip's size that `ossa info` and
//! `ossa stats` print, as text and as JSON, from the decoder's [`Layout`].

use ossa_decoder::Layout;
use serde_json::{json, Map, Value};

/// The parts as a JSON object (`"constants": 528`, …) with `compressed` (what a
/// game ships) and `total`.
pub fn json(layout: &Layout) -> Value {
    let mut map = Map::new();
    for (name, bytes) in layout.parts() {
        map.insert(name.to_owned(), json!(bytes));
    }
    map.insert("compressed".to_owned(), json!(layout.compressed()));
    map.insert("total".to_owned(), json!(layout.total));
    Value::Object(map)
}

/// One line per part, each with its share of the compressed size, then the
/// compressed size and the total.
pub fn lines(layout: &Layout) -> Vec<String> {
    let compressed = layout.compressed();
    let mut out: Vec<String> = layout
        .parts()
        .iter()
        .filter(|&&(name, _)| name != "metadata")
        .map(|&(name, bytes)| {
            let share = 100.0 * f64::from(bytes) / f64::from(compressed.max(1));
            format!("  {:<20} {:>9} B {:>6.1} %", name.replace('_', " "), bytes, share)
        })
        .collect();
    out.push(format!("  {:<20} {:>9} B (what a game ships)", "compressed", compressed));
    out.push(format!("  {:<20} {:>9} B (tools only)", "metadata section", layout.metadata));
    out.push(format!("  {:<20} {:>9} B", "total", layout.total));
    out
}

/// The parts on one line, for a clip's row in a table of many.
pub fn short(layout: &Layout) -> String {
    let parts: Vec<String> = layout
        .parts()
        .iter()
        .filter(|&&(name, _)| name != "metadata")
        .map(|&(name, bytes)| format!("{} {bytes}", name.replace('_', " ")))
        .collect();
    parts.join(", ")
}

/// The sum of several layouts, part by part.
pub fn sum<'a>(layouts: impl IntoIterator<Item = &'a Layout>) -> Layout {
    layouts.into_iter().fold(Layout::default(), |t, l| Layout {
        header: t.header + l.header,
        root_motion: t.root_motion + l.root_motion,
        track_descriptions: t.track_descriptions + l.track_descriptions,
        constants: t.constants + l.constants,
        clip_ranges: t.clip_ranges + l.clip_ranges,
        segment_headers: t.segment_headers + l.segment_headers,
        segment_ranges: t.segment_ranges + l.segment_ranges,
        samples: t.samples + l.samples,
        padding: t.padding + l.padding,
        metadata: t.metadata + l.metadata,
        total: t.total + l.total,
    })
}
