//! Where the bytes go: `ossa info` and `ossa stats` break a clip's size into its
//! parts, and the parts account for every byte.

use serde_json::Value;

use crate::{example, ossa, s, stderr, stdout};

const PARTS: [&str; 10] = [
    "header",
    "root_motion",
    "track_descriptions",
    "constants",
    "clip_ranges",
    "segment_headers",
    "segment_ranges",
    "samples",
    "padding",
    "metadata",
];

fn json(args: &[&str]) -> Value {
    let o = ossa(args);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_str(stdout(&o).trim()).unwrap()
}

fn sum_of_parts(bytes: &Value) -> u64 {
    PARTS.iter().map(|p| bytes[p].as_u64().unwrap_or_else(|| panic!("no {p} in {bytes}"))).sum()
}

#[test]
fn info_parts_add_up_to_the_file() {
    let dir = tempfile::tempdir().unwrap();
    for (clip, animated) in [(example(), true), (example().with_file_name("pose.acl.sjson"), false)] {
        let out = dir.path().join("x.ossa");
        assert!(ossa(&["compress", s(&clip), "-o", s(&out)]).status.success());
        let info = json(&["info", s(&out), "--json"]);
        let bytes = &info["bytes"];
        let file_len = std::fs::metadata(&out).unwrap().len();
        assert_eq!(sum_of_parts(bytes), file_len, "{bytes}");
        assert_eq!(bytes["total"].as_u64().unwrap(), file_len);
        assert_eq!(bytes["compressed"].as_u64().unwrap(), file_len - bytes["metadata"].as_u64().unwrap());
        assert_eq!(bytes["header"], 64);
        // A single pose has no animated sub-track: no ranges, no samples.
        assert_eq!(bytes["samples"].as_u64().unwrap() > 0, animated, "{bytes}");
        assert_eq!(bytes["clip_ranges"].as_u64().unwrap() > 0, animated, "{bytes}");
        assert!(bytes["constants"].as_u64().unwrap() > 0, "{bytes}");
        // Sections start on 16-byte boundaries, and 8 bytes of slack follow samples.
        assert!(bytes["padding"].as_u64().unwrap() >= u64::from(animated) * 8, "{bytes}");

        let o = ossa(&["info", s(&out)]);
        let text = stdout(&o);
        for part in ["constants", "clip ranges", "segment headers", "segment ranges", "samples", "padding"] {
            assert!(text.contains(part), "{part} missing from {text}");
        }
    }
}

#[test]
fn stats_breaks_down_every_clip_and_the_total() {
    let pose = example().with_file_name("pose.acl.sjson");
    let v = json(&["stats", s(&example()), s(&pose), "--json"]);
    let clips = v["clips"].as_array().unwrap();
    for clip in clips {
        assert_eq!(sum_of_parts(&clip["bytes"]), clip["compressed_bytes"].as_u64().unwrap(), "{clip}");
        assert_eq!(clip["bytes"]["metadata"], 0, "stats counts what a game ships");
    }
    for part in PARTS {
        let each: u64 = clips.iter().map(|c| c["bytes"][part].as_u64().unwrap()).sum();
        assert_eq!(v["total"]["bytes"][part].as_u64().unwrap(), each, "{part}");
    }
    let o = ossa(&["stats", s(&example()), s(&pose)]);
    let text = stdout(&o);
    assert!(text.contains("where the bytes go") && text.contains("bytes: header 64"), "{text}");
    assert!(text.contains("before → after: animated"), "{text}");
}

#[test]
fn stats_says_what_each_class_of_sub_track_takes_before_and_after() {
    let pose = example().with_file_name("pose.acl.sjson");
    let v = json(&["stats", s(&example()), s(&pose), "--json"]);
    let clips = v["clips"].as_array().unwrap();
    let classes = ["default", "constant", "animated"];
    for clip in clips {
        let b = &clip["breakdown"];
        let n = |class: &str, field: &str| b["sub_tracks"][class][field].as_u64().unwrap();
        // Every sub-track is in one class; their raw bytes are the clip's.
        let raw: u64 = classes.iter().map(|c| n(c, "raw_bytes")).sum();
        assert_eq!(raw, clip["raw_bytes"].as_u64().unwrap(), "{b}");
        let count: u64 = classes.iter().map(|c| n(c, "count")).sum();
        assert_eq!(count * 40 * b["source_samples"].as_u64().unwrap(), raw * 3, "three sub-tracks a bone: {b}");
        // Compressed: the classes and the shared bytes are the whole.
        let compressed: u64 =
            classes.iter().map(|c| n(c, "compressed_bytes")).sum::<u64>() + b["shared_bytes"].as_u64().unwrap();
        assert_eq!(compressed, clip["compressed_bytes"].as_u64().unwrap(), "{b}");
        assert_eq!(n("default", "compressed_bytes"), 0);
        assert_eq!(n("constant", "compressed_bytes"), clip["bytes"]["constants"].as_u64().unwrap());
        let animated = n("animated", "count") > 0;
        let bits = b["bits_per_animated_value"].as_f64().unwrap();
        assert!(if animated { bits > 0.0 && bits <= 32.0 } else { bits == 0.0 }, "{b}");
    }
    // The total is the sum of the clips.
    for class in classes {
        for field in ["count", "raw_bytes", "compressed_bytes"] {
            let each: u64 = clips.iter().map(|c| c["breakdown"]["sub_tracks"][class][field].as_u64().unwrap()).sum();
            assert_eq!(v["total"]["breakdown"]["sub_tracks"][class][field].as_u64().unwrap(), each, "{class} {field}");
        }
    }
}
