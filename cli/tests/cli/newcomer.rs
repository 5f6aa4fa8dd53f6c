//! What a new user meets first: the README's commands, summaries, and inputs of
//! other formats recognised for what they are.

use std::fs;
use std::path::Path;

use crate::{assert_error, example, ossa, s, stderr, stdout};

#[test]
fn decompress_prints_a_one_line_summary() {
    let dir = tempfile::tempdir().unwrap();
    let packed = dir.path().join("wave.ossa");
    assert!(ossa(&["compress", s(&example()), "-o", s(&packed)]).status.success());
    let text = dir.path().join("wave.acl.sjson");
    let o = ossa(&["decompress", s(&packed), "-o", s(&text)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(out.contains("8 bones, 48 samples at 30 Hz"), "{out}");
    assert!(out.contains(&format!("{} B of text", fs::metadata(&text).unwrap().len())), "{out}");
}

#[test]
fn other_formats_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = d.join("o.ossa");
    let cases: [(&str, &[u8], &str); 7] = [
        ("model.gltf", b"{ \"asset\": { \"version\": \"2.0\" } }", "no skin and no animated node"),
        ("model.glb", b"glTF\x02\x00\x00\x00", "not a valid glTF file"),
        (
            "renamed.acl.sjson",
            b"{\n  \"asset\": { \"version\": \"2.0\" },\n  \"nodes\": []\n}",
            "a glTF model: ossa reads glTF from a file named .gltf or .glb",
        ),
        ("binary.acl.sjson", b"glTF\x02\x00\x00\x00\x10\x00\x00\x00", "a glTF model"),
        ("mocap.bvh", b"HIERARCHY\nROOT Hips\n{\n}\n", "line 4: expected 'OFFSET', found '}'"),
        ("scene.fbx", b"Kaydara FBX Binary  \x00\x1a\x00", "FBX files are not supported"),
        ("packed.acl.sjson", b"OSSA\x01\x00\x00\x00", "this is a compressed .ossa clip"),
    ];
    for (name, bytes, needle) in cases {
        let input = d.join(name);
        fs::write(&input, bytes).unwrap();
        assert_error(&ossa(&["compress", s(&input), "-o", s(&out)]), &[name, needle]);
    }
    // A text clip handed to `info` is named too.
    assert_error(&ossa(&["info", s(&example())]), &["not an ossa clip", "use 'ossa compress'"]);
    // A glTF model of the examples.
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/skinned.gltf");
    assert!(!out.exists());
    let o = ossa(&["compress", s(&model), "-o", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// The README's first two commands work on a fresh clone and leave nothing in the
/// working tree; it says how to put `ossa` on the PATH.
#[test]
fn the_readme_opens_with_commands_that_leave_the_tree_clean() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let readme = fs::read_to_string(root.join("README.md")).unwrap();
    let block = readme.split("```sh").nth(1).and_then(|b| b.split("```").next()).unwrap();
    let commands: Vec<&str> = block.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(commands[0].starts_with("cargo run --release -- compress examples/"), "{}", commands[0]);
    let output = commands[0].split(" -o ").nth(1).unwrap().split_whitespace().next().unwrap();
    assert!(output.starts_with("target/"), "the example output {output} must go to an ignored folder");
    let ignored = fs::read_to_string(root.join(".gitignore")).unwrap();
    assert!(ignored.lines().any(|l| l.trim() == "target/"));
    assert!(commands[1].starts_with("cargo test --workspace"), "{}", commands[1]);
    assert!(readme.contains("cargo install --path cli"), "the README says how to install ossa");
}
