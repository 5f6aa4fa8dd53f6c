//! Key frames through the command line: left out under the bound by default, all
//! kept with `--keep-every-frame`, stripped beyond the bound with `--strip-frames`.

use serde_json::Value;

use crate::{assert_error, example, ossa, s, stderr, stdout};

fn json(args: &[&str]) -> Value {
    let o = ossa(args);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_str(stdout(&o).trim()).unwrap()
}

#[test]
fn key_frames_are_left_out_kept_or_stripped_as_asked() {
    let dir = tempfile::tempdir().unwrap();
    let glide = example().with_file_name("glide.acl.sjson");
    let out = dir.path().join("g.ossa");
    let default = json(&["compress", s(&glide), "-o", s(&out), "--json"]);
    assert_eq!(default["stripped_frames"], 0);
    assert!(default["max_error"].as_f64().unwrap() <= 0.01);
    let info = json(&["info", s(&out), "--json"]);
    assert!(info["key_frames_stored"].as_u64().unwrap() < info["samples"].as_u64().unwrap() / 4, "{info}");
    assert!(stdout(&ossa(&["info", s(&out)])).contains("are interpolated"));

    let all = json(&["compress", s(&glide), "-o", s(&out), "--keep-every-frame", "--json"]);
    let info = json(&["info", s(&out), "--json"]);
    assert_eq!(info["key_frames_stored"], info["samples"]);
    assert!(all["compressed_bytes"].as_u64() > default["compressed_bytes"].as_u64());

    // The wave example keeps every frame within the bound; half of them stripped.
    let wave = example();
    let stripped = json(&["compress", s(&wave), "-o", s(&out), "--strip-frames", "0.5", "--json"]);
    let info = json(&["info", s(&out), "--json"]);
    assert_eq!(stripped["stripped_frames"], 24);
    assert_eq!(info["key_frames_stored"], 24);
    assert!(stripped["max_error_kept"].as_f64().unwrap() <= 0.01);
    assert!(stripped["max_error"].as_f64().unwrap() > 0.01, "{stripped}");
    let line = stdout(&ossa(&["compress", s(&wave), "-o", s(&out), "--strip-frames", "0.5"]));
    assert!(line.contains("24 key frames stripped"), "{line}");

    for bad in ["2", "-0.5", "half"] {
        let o = ossa(&["compress", s(&wave), "-o", s(&out), "--strip-frames", bad]);
        assert_error(&o, &["--strip-frames"]);
    }
}
