//! Scalar track lists through the command line: `compress` reads a `track_list`
//! file, `info` describes the result, `decompress` writes a `track_list` file back
//! whose values are the decoded ones, and list mistakes are one-line errors.

use ossa_encoder::formats::acl_text::read_track_list;

use crate::{assert_error, assert_refused, ossa, s, stderr, stdout};

fn weights() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/weights.acl.sjson")
}

#[test]
fn a_track_list_compresses_describes_itself_and_decompresses_back() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("w.ossa");
    let o = ossa(&["compress", s(&weights()), "-o", s(&out), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(
        (v["kind"].as_str(), v["track_type"].as_str(), v["tracks"].as_u64()),
        (Some("track_list"), Some("float3f"), Some(5))
    );
    assert!(v["max_error_of_precision"].as_f64().unwrap() <= 1.0);
    // The metadata (names, precisions, the track left out) is not what a game ships.
    let (shipped, file) = (v["compressed_bytes"].as_u64().unwrap(), std::fs::metadata(&out).unwrap().len());
    assert!(shipped < file, "{shipped} B shipped of {file}");
    let stripped = dir.path().join("stripped.ossa");
    let o = ossa(&["compress", s(&weights()), "-o", s(&stripped), "--strip-metadata"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::metadata(&stripped).unwrap().len(), shipped);

    let o = ossa(&["info", s(&out), "--json"]);
    let info: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(info["kind"], "track_list");
    assert_eq!(
        (info["tracks"].as_u64(), info["output_count"].as_u64()),
        (Some(4), Some(4)),
        "the stripped track is gone"
    );
    assert_eq!(info["output_indices"], serde_json::json!([3, 0, 2, 1]));
    assert!(stdout(&ossa(&["info", s(&out)])).contains("scalar track list"));

    let back = dir.path().join("back.acl.sjson");
    let o = ossa(&["decompress", s(&out), "-o", s(&back)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let decoded = read_track_list(&std::fs::read_to_string(&back).unwrap(), "back").unwrap();
    let source = read_track_list(&std::fs::read_to_string(weights()).unwrap(), "weights").unwrap();
    // Everything but the sample values comes back: the list's name, rate and length,
    // and every track, the one without an output included, in the source's order.
    assert_eq!(
        (&decoded.name, decoded.sample_rate, decoded.sample_count, decoded.track_type),
        (&source.name, source.sample_rate, source.sample_count, source.track_type)
    );
    assert_eq!(decoded.tracks.len(), source.tracks.len());
    for (d, track) in decoded.tracks.iter().zip(&source.tracks) {
        assert_eq!((&d.name, d.output_index), (&track.name, track.output_index));
        assert_eq!(d.precision as f32, track.precision as f32, "{}", track.name);
        for (a, b) in d.values.iter().zip(&track.values) {
            for m in 0..3 {
                let expected = if track.output_index == u32::MAX { 0.0 } else { b[m] };
                assert!((a[m] - expected).abs() <= track.precision * 1.0001, "{}: {a:?} vs {b:?}", track.name);
            }
        }
    }
    // Stripped, the tracks are the stored ones, named by their place.
    let o = ossa(&["decompress", s(&stripped), "-o", s(&back)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let bare = read_track_list(&std::fs::read_to_string(&back).unwrap(), "back").unwrap();
    let names: Vec<&str> = bare.tracks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["track_0", "track_1", "track_2", "track_3"]);
}

#[test]
fn track_list_mistakes_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(weights()).unwrap();
    // The second track of another type than the first.
    let mixed = text.replacen("name = \"tint\"\n\t\ttype = \"float3f\"", "name = \"tint\"\n\t\ttype = \"float2f\"", 1);
    assert_ne!(mixed, text);
    assert_refused(dir.path(), "mixed.acl.sjson", mixed.as_bytes(), "the list's tracks are");
    let typo = text.replacen("type = \"float3f\"", "type = \"float5f\"", 1);
    assert_refused(dir.path(), "type.acl.sjson", typo.as_bytes(), "not one of float1f");
    let twice = text.replacen("output_index = 3", "output_index = 0", 1);
    assert_refused(dir.path(), "twice.acl.sjson", twice.as_bytes(), "used twice");
    let short = text.replacen("\t\t\t[ 0.0, 0.0, 0.0 ]\n", "", 1);
    assert_refused(dir.path(), "short.acl.sjson", short.as_bytes(), "samples");
    let out = dir.path().join("w.ossa");
    let o = ossa(&["compress", s(&weights()), "-o", s(&out), "--loop", "wrap"]);
    assert_error(&o, &["weights.acl.sjson", "--loop wrap"]);
    assert!(!out.exists());
}
