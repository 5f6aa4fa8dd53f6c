//! Additive clips through the command line: the text format's `additive_format`, base
//! clip fields and `base_tracks` are imported, the mode is stored and shown, and a
//! mistake in them is a one-line error naming the file.

use ossa_encoder::formats::acl_text;

use crate::{assert_refused, ossa, s, stderr, stdout};

fn example() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/wave_additive.acl.sjson")
}

#[test]
fn an_additive_clip_compresses_shows_its_mode_and_decompresses_as_additive() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("a.ossa");
    let o = ossa(&["compress", s(&example()), "-o", s(&out), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert!(v["max_error"].as_f64().unwrap() <= 0.01);
    let o = ossa(&["info", s(&out), "--json"]);
    let info: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!((info["additive"].as_str(), info["version"].as_str()), (Some("additive1"), Some("4.2")));
    assert!(stdout(&ossa(&["info", s(&out)])).contains("additive    additive1"));

    let back = dir.path().join("back.acl.sjson");
    assert!(ossa(&["decompress", s(&out), "-o", s(&back)]).status.success());
    let text = std::fs::read_to_string(&back).unwrap();
    assert!(text.contains("additive_format = \"additive1\""), "the mode survives decompression");
    let clip = acl_text::read_clip(&text, "back").unwrap();
    let base = clip.additive.expect("an additive clip");
    assert_eq!(base.format, ossa_decoder::Additive::Additive1);
    // The source's bones without scales decode the additive1 default, 0.
    assert_eq!(clip.tracks[0].scales[10], [0.0; 3]);
}

#[test]
fn mistakes_in_additive_fields_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(example()).unwrap();
    let bad_format = text.replace("\"additive1\"", "\"additive2\"");
    assert_refused(
        dir.path(),
        "format.acl.sjson",
        bad_format.as_bytes(),
        "not one of none, relative, additive0, additive1",
    );
    let bad_count = text.replace("additive_base_num_samples = 1", "additive_base_num_samples = 2");
    assert_refused(dir.path(), "count.acl.sjson", bad_count.as_bytes(), "has 1 samples, the additive base has 2");
    let bad_bone = text.replacen("name = \"root\"\n\t\ttranslations", "name = \"rot\"\n\t\ttranslations", 1);
    assert_ne!(bad_bone, text);
    assert_refused(dir.path(), "bone.acl.sjson", bad_bone.as_bytes(), "names no bone");
}
