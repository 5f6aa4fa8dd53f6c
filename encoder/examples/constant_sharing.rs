//! Measures what sharing constant sub-tracks across the clips of a streaming
//! database would save (seed 002, "Is there any hope left?"):
//! `cargo run --release -p ossa-encoder --example constant_sharing -- CLIPS…`.
//!
//! Every clip is compressed as on its own; its constant sub-tracks (value and stored
//! size) are gathered. A value held by two clips or more could live once in the
//! database (raw `f32`, always resident) with each clip storing a 2-byte reference
//! instead, plus a bit per constant sub-track saying which are references. Values are
//! grouped exactly (the same `f32` bits: sharing then changes no decoded value) and,
//! as an upper bound, within a tolerance (which would need the bound checked again).

use std::collections::HashMap;

use ossa_decoder::format::{SubTrackClass, SubTrackKind};
use ossa_encoder::compress::encode;
use ossa_encoder::{acl_text, Settings};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    let settings = Settings { include_metadata: false, ..Settings::default() };
    // (kind, bone name, value bits) → clips holding it; and every constant's stored size.
    let mut constants: Vec<(usize, SubTrackKind, String, [f32; 4], u32, usize)> = Vec::new();
    let mut clip_bytes = 0usize;
    let mut constant_bytes = 0usize;
    for (c, path) in paths.iter().enumerate() {
        let raw = acl_text::read_clip(&std::fs::read_to_string(path)?, "clip")?;
        let encoded = encode(&raw, &settings)?;
        clip_bytes += encoded.compressed.compressed_bytes;
        constant_bytes += encoded.compressed.layout.constants as usize;
        for t in encoded.tracks.iter().filter(|t| t.class == SubTrackClass::Constant) {
            let size = t.components as usize * if t.constant_q.is_some() { 2 } else { 4 };
            constants.push((c, t.kind, raw.bones[t.bone].name.clone(), t.constant_exact, t.components, size));
        }
    }
    let kinds = [SubTrackKind::Rotation, SubTrackKind::Translation, SubTrackKind::Scale];
    println!(
        "{} clips: {clip_bytes} B, of which constants {constant_bytes} B ({} constant sub-tracks)",
        paths.len(),
        constants.len()
    );
    for tolerance in [0.0f32, 1e-6, 1e-4, 1e-3] {
        let mut saved_total: i64 = 0;
        for kind in kinds {
            // Groups of equal values (within the tolerance: values snapped to a grid of
            // that step, an approximation of clustering that only errs towards sharing).
            let mut groups: HashMap<Vec<i64>, Vec<usize>> = HashMap::new();
            for (i, (_, k, _, value, components, _)) in constants.iter().enumerate() {
                if *k != kind {
                    continue;
                }
                let key: Vec<i64> = value[..*components as usize]
                    .iter()
                    .map(|&v| if tolerance == 0.0 { i64::from(v.to_bits()) } else { (v / tolerance).round() as i64 })
                    .collect();
                groups.entry(key).or_default().push(i);
            }
            let mut shared_uses = 0usize;
            let mut distinct_shared = 0usize;
            let mut saved: i64 = 0;
            for members in groups.values() {
                let clips: std::collections::HashSet<usize> = members.iter().map(|&i| constants[i].0).collect();
                if clips.len() < 2 {
                    continue;
                }
                distinct_shared += 1;
                shared_uses += members.len();
                let components = constants[members[0]].4 as i64;
                // Each use: its stored size replaced by a 2-byte reference; the pool
                // holds the value once as raw f32.
                saved += members.iter().map(|&i| constants[i].5 as i64 - 2).sum::<i64>() - 4 * components;
            }
            let count = constants.iter().filter(|c| c.1 == kind).count();
            // A bit per constant sub-track of the kind, in each clip, padded to bytes.
            let flags: i64 = (0..paths.len())
                .map(|c| constants.iter().filter(|x| x.0 == c && x.1 == kind).count().div_ceil(8) as i64)
                .sum();
            let net = if shared_uses > 0 { saved - flags } else { 0 };
            saved_total += net;
            println!(
                "  tolerance {tolerance:e}, {kind:?}: {count} constants, {shared_uses} in {distinct_shared} values \
                 shared by two clips or more; saves {saved} B, minus {flags} B of flags: {net} B"
            );
        }
        println!(
            "  tolerance {tolerance:e}: {saved_total} B saved in all ({:.2} % of the clips)",
            100.0 * saved_total as f64 / clip_bytes as f64
        );
        // Within each clip alone (what a clip could share without the database): the
        // constants whose value another constant of the same clip already has.
        let mut repeats = 0usize;
        for c in 0..paths.len() {
            let mut seen = std::collections::HashSet::new();
            for (_, k, _, value, components, _) in constants.iter().filter(|x| x.0 == c) {
                let key: Vec<i64> = value[..*components as usize]
                    .iter()
                    .map(|&v| if tolerance == 0.0 { i64::from(v.to_bits()) } else { (v / tolerance).round() as i64 })
                    .collect();
                if !seen.insert((*k as u8, key)) {
                    repeats += 1;
                }
            }
        }
        println!("  tolerance {tolerance:e}: {repeats} constants repeat a value of their own clip");
    }
    Ok(())
}
