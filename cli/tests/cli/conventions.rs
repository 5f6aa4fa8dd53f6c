//! Command-line conventions: a closed pipe ends quietly, numbers parse as values of
//! their option, unrepresentable values are refused up front, usage errors are one
//! line, and commands over many inputs go past the bad ones.

use std::fs;
use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};

use crate::{assert_error, example, ossa, s, stderr, stdout};

#[test]
fn a_closed_pipe_ends_the_program_quietly() {
    // Enough rows that the tool is still writing when the reader has gone.
    let clip = example();
    let mut args = vec!["stats"];
    args.extend(std::iter::repeat_n(s(&clip), 200));
    let mut child = Command::new(env!("CARGO_BIN_EXE_ossa"))
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    assert!(first.contains("wave.acl.sjson"));
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).is_empty(), "nothing to say about a closed pipe: {}", stderr(&o));

    // The same for data: decompress into a reader that stops early.
    let dir = tempfile::tempdir().unwrap();
    let packed = dir.path().join("wave.ossa");
    assert!(ossa(&["compress", s(&clip), "-o", s(&packed)]).status.success());
    let mut child = Command::new(env!("CARGO_BIN_EXE_ossa"))
        .args(["decompress", s(&packed), "-o", "-"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stderr(&o).contains("Broken pipe") && !stderr(&o).contains("internal error"), "{}", stderr(&o));
}

#[test]
fn negative_and_unrepresentable_numbers_are_refused_as_values() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.ossa");
    for (value, needle) in [
        ("-1", "precision -1 is not a positive number"),
        ("-0.5", "precision -0.5 is not a positive number"),
        ("0", "precision 0 is not a positive number"),
        ("1e39", "precision 1e39 exceeds the single-precision range"),
        ("NaN", "precision is not a number (NaN)"),
        ("inf", "precision inf is not a positive number"),
        ("1e-50", "precision 1e-50 is below the single-precision range"),
        ("ten", "'ten' is not a number"),
    ] {
        let o = ossa(&["compress", s(&example()), "-o", s(&out), "--precision", value]);
        assert_error(&o, &["--precision", needle]);
        assert!(!stderr(&o).contains("unexpected argument"), "{value}: {}", stderr(&o));
        let o = ossa(&["stats", s(&example()), "--precision", value]);
        assert_error(&o, &[needle]);
        assert!(stdout(&o).is_empty());
    }
    assert!(!out.exists());
    // And the largest and smallest that single precision holds are taken.
    let o = ossa(&["compress", s(&example()), "-o", s(&out), "--precision", "3e38", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn usage_errors_are_one_line_with_the_suggestion() {
    let o = ossa(&["compress", s(&example()), "-o", "x.ossa", "--precison", "0.1"]);
    assert_error(&o, &["unexpected argument '--precison'", "'--precision'", "ossa compress --help"]);
    let o = ossa(&["compress", s(&example())]);
    assert_error(&o, &["required arguments were not provided: --output"]);
    assert_error(&ossa(&["compres"]), &["unrecognized subcommand 'compres'"]);
    assert_error(&ossa(&["info", "x", "--memory-limit", "lots"]), &["expected a size such as 512M"]);
    let o = ossa(&["--help"]);
    assert!(o.status.success() && stdout(&o).contains("Usage"));
    // The help of the commands that read clips names every format they read.
    for command in ["compress", "stats", "database"] {
        let help = stdout(&ossa(&[command, "--help"]));
        for format in [".acl.sjson", ".bvh", ".gltf", ".glb"] {
            assert!(help.contains(format), "{command} --help omits {format}: {help}");
        }
    }
    assert!(stdout(&ossa(&["decompress", "--help"])).contains(".gltf"));
}

#[test]
fn stats_goes_past_bad_clips_and_lists_them_at_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bad = d.join("bad.acl.sjson");
    fs::write(&bad, b"version = 5\nclip = { num_samples = 1 sample_rate = 30 }\nbones = [ ]\ntrack = [ ]\n").unwrap();
    let pose = example().with_file_name("pose.acl.sjson");
    let missing = d.join("missing.acl.sjson");
    let o = ossa(&["stats", s(&example()), s(&bad), s(&pose), s(&missing)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("wave.acl.sjson") && out.contains("pose.acl.sjson"), "{out}");
    assert!(out.contains("total (2 clips"), "{out}");
    let err = stderr(&o);
    let err: Vec<&str> = err.lines().collect();
    assert_eq!(err.len(), 3, "{err:?}");
    assert!(err[0].contains("bad.acl.sjson") && err[0].contains("did you mean 'tracks'"), "{err:?}");
    assert!(err[1].contains("missing.acl.sjson") && err[1].contains("cannot read"), "{err:?}");
    assert!(err[2].contains("2 of 4 clips failed"), "{err:?}");

    let o = ossa(&["stats", s(&example()), s(&bad), s(&pose), "--json"]);
    assert_eq!(o.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["clips"].as_array().unwrap().len(), 2);
    assert_eq!(v["total"]["clips"], 2);
    assert_eq!(v["failures"].as_array().unwrap().len(), 1);
    assert!(v["failures"][0]["clip"].as_str().unwrap().ends_with("bad.acl.sjson"));
    assert!(v["failures"][0]["error"].as_str().unwrap().contains("unknown key 'track'"));

    // A folder stands for its clips.
    fs::copy(example(), d.join("wave.acl.sjson")).unwrap();
    fs::write(d.join("notes.txt"), b"not a clip").unwrap();
    let o = ossa(&["stats", s(d), "--json"]);
    assert_eq!(o.status.code(), Some(2), "bad.acl.sjson is in the folder too");
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["total"]["clips"], 1);
    assert_eq!(v["failures"].as_array().unwrap().len(), 1);
    fs::remove_file(&bad).unwrap();
    assert!(ossa(&["stats", s(d)]).status.success());
}
