//! `ossa compress --loop auto|clamp|wrap`, and what `info` and `decompress` say about
//! a wrapping loop.

use ossa_encoder::formats::acl_text;

use crate::{assert_error, ossa, s, stderr, stdout};

fn cycle() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/cycle.acl.sjson")
}

fn json(o: &std::process::Output) -> serde_json::Value {
    assert!(o.status.success(), "{}", stderr(o));
    serde_json::from_str(stdout(o).trim()).unwrap()
}

#[test]
fn a_loop_wraps_by_default_and_decompresses_to_every_source_sample() {
    let dir = tempfile::tempdir().unwrap();
    let (wrapped, clamped) = (dir.path().join("w.ossa"), dir.path().join("c.ossa"));
    let w = json(&ossa(&["compress", s(&cycle()), "-o", s(&wrapped), "--json"]));
    assert_eq!(w["looping"], "wrap");
    let c = json(&ossa(&["compress", s(&cycle()), "-o", s(&clamped), "--loop", "clamp", "--json"]));
    assert_eq!(c["looping"], "clamp");
    assert!(w["compressed_bytes"].as_u64() < c["compressed_bytes"].as_u64(), "{w} {c}");

    let info = json(&ossa(&["info", s(&wrapped), "--json"]));
    assert_eq!(info["looping"], "wrap");
    // 4.1: its constants are packed.
    assert_eq!(info["version"], "4.2");
    assert_eq!(info["samples"], 40);
    assert_eq!(info["source_samples"], 41);
    assert_eq!(info["duration"].as_f64().unwrap(), f64::from(40.0f32 / 30.0));
    let info = json(&ossa(&["info", s(&clamped), "--json"]));
    assert_eq!((info["looping"].as_str(), info["version"].as_str()), (Some("clamp"), Some("4.2")));
    assert_eq!(info["duration"].as_f64().unwrap(), f64::from(40.0f32 / 30.0));
    let text = stdout(&ossa(&["info", s(&wrapped)]));
    assert!(text.contains("(wrap)") && text.contains("loop-wrap"), "{text}");

    // Decompressed, the wrapped clip has its source's 41 samples again; the last is
    // the first, decoded at the duration.
    let back = dir.path().join("back.acl.sjson");
    let o = ossa(&["decompress", s(&wrapped), "-o", s(&back)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let back = acl_text::read_clip(&std::fs::read_to_string(&back).unwrap(), "back").unwrap();
    let source = acl_text::read_clip(&std::fs::read_to_string(cycle()).unwrap(), "cycle").unwrap();
    assert_eq!(back.sample_count, source.sample_count);
    for track in &back.tracks {
        assert_eq!(track.rotations[40], track.rotations[0]);
        assert_eq!(track.translations[40], track.translations[0]);
    }
}

#[test]
fn loop_mistakes_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let pose = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/pose.acl.sjson");
    let out = dir.path().join("p.ossa");
    let o = ossa(&["compress", s(&pose), "-o", s(&out), "--loop", "wrap"]);
    assert_error(&o, &["pose.acl.sjson", "single sample cannot wrap"]);
    assert!(!out.exists());
    let o = ossa(&["compress", s(&pose), "-o", s(&out), "--loop", "sometimes"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("auto") && stderr(&o).contains("wrap"), "{}", stderr(&o));
    assert!(!out.exists());
}

fn stride() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/stride.acl.sjson")
}

/// A walk that travels: clamped by default (its root travels), wrapped once its root
/// motion is extracted (the in-place pose closes), the hips' end kept; `info` says so.
#[test]
fn extracting_root_motion_lets_a_travelling_walk_wrap() {
    let dir = tempfile::tempdir().unwrap();
    let (plain, extracted) = (dir.path().join("p.ossa"), dir.path().join("e.ossa"));
    let p = json(&ossa(&["compress", s(&stride()), "-o", s(&plain), "--json"]));
    assert_eq!(p["looping"], "clamp");
    let e = json(&ossa(&[
        "compress",
        s(&stride()),
        "-o",
        s(&extracted),
        "--root-motion-bone",
        "hips",
        "--extract-root-motion",
        "--json",
    ]));
    assert_eq!(e["looping"], "wrap");
    assert!(e["max_error"].as_f64().unwrap() <= 0.01);
    let info = json(&ossa(&["info", s(&extracted), "--json"]));
    let root = &info["root_motion"];
    assert_eq!((root["bone"].as_u64(), root["name"].as_str()), (Some(1), Some("hips")));
    assert_eq!((root["in_place"].as_bool(), root["end_stored"].as_bool()), (Some(true), Some(true)));
    let info = json(&ossa(&["info", s(&plain), "--json"]));
    assert_eq!(info["root_motion"]["bone"], 0);
    assert_eq!(info["root_motion"]["in_place"], false);

    // Decompressed, the motion is back in the hips: the source's travel, sample by sample.
    let back = dir.path().join("back.acl.sjson");
    assert!(ossa(&["decompress", s(&extracted), "-o", s(&back)]).status.success());
    let back = acl_text::read_clip(&std::fs::read_to_string(&back).unwrap(), "back").unwrap();
    let source = acl_text::read_clip(&std::fs::read_to_string(stride()).unwrap(), "stride").unwrap();
    assert_eq!(back.sample_count, 41);
    for s in [0, 10, 39, 40] {
        let (a, b) = (back.tracks[1].translations[s], source.tracks[1].translations[s]);
        assert!((a[0] - b[0]).abs() < 0.01, "sample {s}: {a:?} vs {b:?}");
    }
}

#[test]
fn an_unknown_root_motion_bone_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.ossa");
    let o = ossa(&["compress", s(&stride()), "-o", s(&out), "--root-motion-bone", "tail_tip"]);
    assert_error(&o, &["stride.acl.sjson", "no bone is named 'tail_tip'"]);
    assert!(!out.exists());
}
