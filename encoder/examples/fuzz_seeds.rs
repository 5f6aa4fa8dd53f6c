//! Writes seed corpora for the fuzz targets, at run time, from the clips in
//! `../shared/clips` (when present) and the project's own examples:
//! `cargo run -p ossa-encoder --example fuzz_seeds -- fuzz/corpus`. Nothing fetched
//! is committed; the corpora are rebuilt wherever the fuzzers run.

use std::path::{Path, PathBuf};

use ossa_encoder::database::{build, DatabaseSettings};
use ossa_encoder::formats::acl_text;
use ossa_encoder::{compress, LoopSetting, Settings};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = PathBuf::from(std::env::args().nth(1).ok_or("usage: fuzz_seeds OUT_DIR")?);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut sources: Vec<PathBuf> = Vec::new();
    for dir in [root.join("examples"), root.join("../shared/clips")] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            eprintln!("fuzz_seeds: {} not found, skipped", dir.display());
            continue;
        };
        let mut found: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.to_string_lossy().ends_with(".sjson"))
            .collect();
        found.sort();
        sources.extend(found);
    }
    for target in ["decode", "decode_structured", "text", "encode", "database", "bvh", "gltf"] {
        std::fs::create_dir_all(out.join(target))?;
    }
    let mut written = 0;
    for (i, path) in sources.iter().enumerate() {
        let text = std::fs::read_to_string(path)?;
        std::fs::write(out.join("text").join(format!("clip{i}")), &text)?;
        // Track lists: compressed as scalar lists (kind 1) for the decoder targets.
        if let Ok(list) = acl_text::read_track_list(&text, "seed") {
            if let Ok(compressed) = ossa_encoder::compress::scalar::compress_tracks(&list, &Default::default()) {
                let mut decode = vec![0x00, 0x00, 0x00, 0x3f, 0, 0, 0, 0];
                decode.extend_from_slice(&compressed.bytes);
                std::fs::write(out.join("decode").join(format!("list{i}")), &decode)?;
                let mut structured = vec![0u8, 0u8];
                structured.extend_from_slice(&compressed.bytes);
                std::fs::write(out.join("decode_structured").join(format!("list{i}")), &structured)?;
                written += 1;
            }
            continue;
        }
        let Ok(raw) = acl_text::read_clip(&text, "seed") else { continue };
        // Long clips make slow seeds; the short ones cover the same structure.
        if raw.sample_count > 64 {
            continue;
        }
        // Plain, stripped, and (format 2.1) forced to wrap with the root motion of its
        // second bone extracted: a root-motion block with a chain, an end and an
        // in-place transform.
        let mut variants = vec![
            ("meta", Settings::default()),
            ("stripped", Settings { include_metadata: false, ..Settings::default() }),
            // Key frames left out beyond the bound: segments with holes.
            ("frames", Settings { strip_frames: 0.5, ..Settings::default() }),
        ];
        if raw.sample_count > 1 && raw.bones.len() > 1 {
            variants.push((
                "root_motion",
                Settings {
                    looping: LoopSetting::Wrap,
                    root_motion_bone: Some(raw.bones[1].name.clone()),
                    extract_root_motion: true,
                    ..Settings::default()
                },
            ));
        }
        // (3.2) Metadata records: the bones in reverse of their source's order, the
        // first root placed at half size, turned.
        let mut placed = raw.clone();
        placed.source.joint_order = (0..raw.bones.len()).rev().collect();
        placed.source.root_placements = vec![ossa_encoder::RootPlacement {
            bone: 0,
            matrix: [0.0, -0.5, 0.0, 1.0, 0.5, 0.0, 0.0, 2.0, 0.0, 0.0, 0.5, 3.0],
        }];
        let clips = [&raw, &placed];
        variants.push(("placed", Settings::default()));
        for (variant, settings) in variants {
            let clip = if variant == "placed" { clips[1] } else { clips[0] };
            let Ok(compressed) = compress(clip, &settings) else { continue };
            let mut decode = vec![0x00, 0x00, 0x00, 0x3f, i as u8, 0x80, 0x03, 0x01];
            decode.extend_from_slice(&compressed.bytes);
            std::fs::write(out.join("decode").join(format!("clip{i}_{variant}")), &decode)?;
            let mut structured = vec![0u8, 0u8];
            structured.extend_from_slice(&compressed.bytes);
            std::fs::write(out.join("decode_structured").join(format!("clip{i}_{variant}")), &structured)?;
            written += 1;
        }
    }
    // Streaming databases of the examples, small and large chunks: for each clip, the
    // clip, the database, then operations binding every chunk and seeking. `cycle` and
    // `stride` share a pose.
    let examples: Vec<(String, ossa_encoder::RawClip)> = ["wave", "glide", "cycle", "blink", "stride"]
        .iter()
        .filter_map(|n| {
            let text = std::fs::read_to_string(root.join(format!("examples/{n}.acl.sjson"))).ok()?;
            Some((n.to_string(), acl_text::read_clip(&text, n).ok()?))
        })
        .collect();
    for shift in [8u8, 12] {
        let settings = DatabaseSettings {
            chunk_shift: shift,
            medium: 0.3,
            low: 0.3,
            shared_poses: ossa_encoder::database::poses::PosePolicy::Always,
            ..DatabaseSettings::default()
        };
        let Ok(built) = build(&examples, &settings) else { continue };
        for clip in &built.clips {
            let mut seed = Vec::new();
            seed.extend_from_slice(&(clip.bytes.len() as u32).to_le_bytes());
            seed.extend_from_slice(&(built.file.len() as u32).to_le_bytes());
            seed.extend_from_slice(&clip.bytes);
            seed.extend_from_slice(&built.file);
            for i in 0..8u8 {
                seed.extend_from_slice(&[0, i % 2, i / 2, 0]);
            }
            for k in 0..8u8 {
                seed.extend_from_slice(&[4 + k % 4, k, k * 32, 0]);
            }
            std::fs::write(out.join("database").join(format!("{}_{shift}", clip.name)), &seed)?;
            // The database clip alone, for the decode target (with a shared pose, it
            // takes one from the control bytes).
            let mut decode = vec![0u8, 0, 0x80, 0x3f, 1, 128, 1, 0];
            decode.extend_from_slice(&clip.bytes);
            std::fs::write(out.join("decode").join(format!("database_{}_{shift}", clip.name)), &decode)?;
            written += 2;
        }
    }
    // The BVH reader: the project's example, and a short one of two roots.
    if let Ok(walk) = std::fs::read(root.join("examples/walk.bvh")) {
        std::fs::write(out.join("bvh").join("walk"), &walk)?;
        written += 1;
    }
    let small = "HIERARCHY\nROOT a\n{\n OFFSET 0 0 0\n CHANNELS 3 Yrotation Xrotation Zrotation\n End Site\n {\n  OFFSET 0 1 0\n }\n}\nROOT b\n{\n OFFSET 1 0 0\n CHANNELS 1 Xposition\n}\nMOTION\nFrames: 2\nFrame Time: 0.5\n1 2 3 4\n5 6 7 8\n";
    std::fs::write(out.join("bvh").join("two_roots"), small)?;
    written += 1;
    // The glTF importer: the shared models with embedded buffers, and the export of
    // an example clip (a rate byte first: 30 Hz).
    for name in ["rigged_simple.gltf", "cesium_man.gltf"] {
        if let Ok(model) = std::fs::read(root.join("../shared/gltf").join(name)) {
            std::fs::write(out.join("gltf").join(name), [&[29u8][..], &model].concat())?;
            written += 1;
        }
    }
    if let Ok(text) = std::fs::read_to_string(root.join("examples/wave.acl.sjson")) {
        let clip = acl_text::read_clip(&text, "wave")?;
        let model = ossa_encoder::formats::gltf::write_gltf(&clip);
        std::fs::write(out.join("gltf").join("wave"), [&[29u8][..], model.as_bytes()].concat())?;
        written += 1;
    }
    // The encoder target builds clips from raw bytes: a few deterministic seeds.
    let mut state = 0x1234_5678_9abc_def1u64;
    for i in 0..16 {
        let bytes: Vec<u8> = (0..64 + i * 32)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            })
            .collect();
        std::fs::write(out.join("encode").join(format!("seed{i}")), bytes)?;
    }
    println!("fuzz_seeds: {} sources, {written} encoded seeds in {}", sources.len(), out.display());
    Ok(())
}
