//! `ossa database`, `ossa info` on a database and `ossa decompress --database`,
//! run as a user would, on the example clips.

use serde_json::Value;

use crate::{assert_error, example, leftovers, ossa, s, stderr, stdout};

fn json(args: &[&str]) -> Value {
    let o = ossa(args);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_str(stdout(&o).trim()).unwrap()
}

fn examples(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| example().with_file_name(format!("{n}.acl.sjson")).display().to_string()).collect()
}

#[test]
fn a_database_is_built_described_and_decoded_at_each_fidelity() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("db");
    let inputs = examples(&["wave", "cycle", "glide", "stride"]);
    let mut args = vec!["database"];
    args.extend(inputs.iter().map(String::as_str));
    args.extend(["-o", s(&out), "--tiers", "medium=0.3,low=0.2", "--chunk-size", "256", "--json"]);
    let built = json(&args);
    let stored: u64 = built["clips"].as_array().unwrap().iter().map(|c| c["stored_frames"].as_u64().unwrap()).sum();
    let frames = |tier: &str| built["tiers"][tier]["frames"].as_u64().unwrap();
    assert_eq!(frames("medium"), (0.3 * stored as f64).round() as u64, "{built}");
    assert_eq!(frames("low"), (0.2 * stored as f64).round() as u64, "{built}");
    assert!(built["tiers"]["medium"]["chunks"].as_u64().unwrap() > 1, "256-byte chunks: several");
    assert!(built["max_error"]["highest"].as_f64().unwrap() <= 0.01);
    assert!(built["max_error"]["lowest"].as_f64() > built["max_error"]["highest"].as_f64());
    let mut names: Vec<String> =
        std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(names, ["cycle.ossa", "database.ossadb", "glide.ossa", "stride.ossa", "wave.ossa"]);

    let db = out.join("database.ossadb");
    let info = json(&["info", s(&db), "--json"]);
    assert_eq!(info["kind"], "database");
    assert_eq!(info["clips"].as_array().unwrap().len(), 4);
    assert_eq!(info["id"], built["id"]);
    let text = stdout(&ossa(&["info", s(&db)]));
    assert!(text.contains("checksums ok") && text.contains("glide"), "{text}");
    let clip = json(&["info", s(&out.join("wave.ossa")), "--json"]);
    assert_eq!(clip["database"]["id"], built["id"]);
    // 4.1: its constants are packed.
    assert_eq!(clip["version"], "4.2");

    // The highest fidelity decodes as the clip compressed on its own; the lowest as
    // the database clip without its database.
    let wave = out.join("wave.ossa");
    let text = |name: &str| std::fs::read(dir.path().join(name)).unwrap();
    let decode = |extra: &[&str], name: &str| {
        let mut args = vec!["decompress", s(&wave), "-o"];
        let target = dir.path().join(name);
        args.push(s(&target));
        args.extend(extra);
        let o = ossa(&args);
        assert!(o.status.success(), "{}", stderr(&o));
    };
    decode(&["--database", s(&db)], "highest.acl.sjson");
    decode(&["--database", s(&db), "--fidelity", "medium"], "medium.acl.sjson");
    decode(&["--database", s(&db), "--fidelity", "lowest"], "lowest.acl.sjson");
    decode(&[], "alone.acl.sjson");
    let standalone = dir.path().join("standalone.ossa");
    assert!(ossa(&["compress", &inputs[0], "-o", s(&standalone)]).status.success());
    assert!(ossa(&["decompress", s(&standalone), "-o", s(&dir.path().join("plain.acl.sjson"))]).status.success());
    assert_eq!(text("highest.acl.sjson"), text("plain.acl.sjson"));
    assert_eq!(text("lowest.acl.sjson"), text("alone.acl.sjson"));

    // --strip-lowest: no low chunk, the highest fidelity is the medium one.
    let stripped = dir.path().join("stripped");
    let mut args = vec!["database"];
    args.extend(inputs.iter().map(String::as_str));
    args.extend(["-o", s(&stripped), "--strip-lowest", "--json"]);
    let built = json(&args);
    assert_eq!(built["tiers"]["low"]["chunks"], 0);
    assert_eq!(built["tiers"]["low"]["stripped"], true);
    assert_eq!(built["max_error"]["highest"], built["max_error"]["medium"]);
    let line = stdout(&ossa(&["info", s(&stripped.join("database.ossadb"))]));
    assert!(line.contains("stripped when built"), "{line}");
}

#[test]
fn database_mistakes_are_refused_by_name_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("db");
    let inputs = examples(&["wave", "glide"]);
    let run = |extra: &[&str]| {
        let mut args = vec!["database", &inputs[0], &inputs[1], "-o", s(&out)];
        args.extend(extra);
        ossa(&args)
    };
    assert_error(&run(&["--tiers", "medium=0.7,low=0.5"]), &["--tiers", "more than 1"]);
    assert_error(&run(&["--tiers", "high=0.2"]), &["--tiers", "unknown tier 'high'"]);
    assert_error(&run(&["--chunk-size", "1MB"]), &["--chunk-size", "power of two"]);
    assert_error(&run(&["--chunk-size", "64"]), &["--chunk-size", "256 B to 1 GiB"]);
    assert!(!out.exists());

    // A broken clip among good ones: every failure named, nothing written.
    let broken = dir.path().join("broken.acl.sjson");
    std::fs::write(&broken, "version = 1\nclip = {").unwrap();
    let o = ossa(&["database", &inputs[0], s(&broken), &inputs[1], "-o", s(&out)]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("broken.acl.sjson") && err.contains("nothing was written"), "{err}");
    assert!(std::fs::read_dir(&out).map_or(true, |mut d| d.next().is_none()), "nothing written");

    // Two clips of one name.
    let twin = dir.path().join("wave.acl.sjson");
    std::fs::copy(&inputs[0], &twin).unwrap();
    let o = ossa(&["database", &inputs[0], s(&twin), "-o", s(&out)]);
    assert!(stderr(&o).contains("names in a database must differ"), "{}", stderr(&o));

    // The output is a file.
    assert_error(&ossa(&["database", &inputs[0], "-o", &inputs[1]]), &["not a folder"]);

    // A clip decoded with a database it does not belong to, or a truncated one.
    let other = dir.path().join("other");
    assert!(ossa(&["database", &inputs[0], "-o", s(&other)]).status.success());
    assert!(ossa(&["database", &inputs[1], "-o", s(&out)]).status.success());
    let target = dir.path().join("x.acl.sjson");
    let o = ossa(&[
        "decompress",
        s(&other.join("wave.ossa")),
        "--database",
        s(&out.join("database.ossadb")),
        "-o",
        s(&target),
    ]);
    assert_error(&o, &["database.ossadb", "another database"]);
    let db = std::fs::read(other.join("database.ossadb")).unwrap();
    let cut = dir.path().join("cut.ossadb");
    std::fs::write(&cut, &db[..db.len() - 8]).unwrap();
    let o = ossa(&["decompress", s(&other.join("wave.ossa")), "--database", s(&cut), "-o", s(&target)]);
    assert_error(&o, &["cut.ossadb", "truncated"]);
    assert!(!target.exists());
    assert_error(&ossa(&["info", s(&cut)]), &["cut.ossadb", "truncated"]);
    let o = ossa(&["decompress", s(&other.join("wave.ossa")), "--fidelity", "medium", "-o", s(&target)]);
    assert_error(&o, &["--database"]);
    assert!(leftovers(&out).is_empty() && leftovers(dir.path()).is_empty());
}

/// Clips of one skeleton sharing a pose (`--shared-poses always`: two small clips,
/// which the estimate alone would leave their constants): they decode with their
/// database and refuse, by name, to decode without it; `info` describes them without
/// it; `--shared-poses never` keeps every clip decodable on its own.
#[test]
fn clips_sharing_a_pose_decode_only_with_their_database() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("db");
    let inputs = examples(&["cycle", "stride", "wave"]);
    let mut args = vec!["database", &inputs[0], &inputs[1], &inputs[2], "-o", s(&out), "--json"];
    args.extend(["--shared-poses", "always"]);
    let built = json(&args);
    assert_eq!(built["shared_poses"], 1, "{built}");
    assert_eq!(built["shared_pose_bytes"], 7 * 40, "{built}");
    let poses: Vec<&Value> = built["clips"].as_array().unwrap().iter().map(|c| &c["shared_pose"]).collect();
    assert_eq!(poses, [&Value::from(0), &Value::from(0), &Value::Null]);
    assert!(built["max_error"]["highest"].as_f64().unwrap() <= 0.01);

    let cycle = out.join("cycle.ossa");
    let db = out.join("database.ossadb");
    let target = dir.path().join("cycle.acl.sjson");
    let o = ossa(&["decompress", s(&cycle), "-o", s(&target)]);
    assert_error(&o, &["cycle.ossa", "shared pose", "--database"]);
    assert!(!target.exists());
    let o = ossa(&["bench", s(&cycle)]);
    assert_error(&o, &["cycle.ossa", "--database"]);
    let o = ossa(&["decompress", s(&cycle), "--database", s(&db), "--fidelity", "lowest", "-o", s(&target)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read_to_string(&target).unwrap().contains("cycle"));
    let info = json(&["info", s(&cycle), "--json"]);
    assert_eq!(info["database"]["shared_pose"], 0, "{info}");
    assert!(info["flags"].as_array().unwrap().contains(&Value::from("shared-pose")), "{info}");
    let text = stdout(&ossa(&["info", s(&db)]));
    assert!(text.contains("shared pose 0: 7 bones"), "{text}");
    let o = ossa(&["bench", s(&cycle), "--database", s(&db), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));

    let alone = dir.path().join("alone");
    let mut args = vec!["database", &inputs[0], &inputs[1], "-o", s(&alone), "--json"];
    args.extend(["--shared-poses", "never"]);
    let built = json(&args);
    assert_eq!(built["shared_poses"], 0, "{built}");
    let o = ossa(&["decompress", s(&alone.join("cycle.ossa")), "-o", s(&target)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_error(&ossa(&["database", &inputs[0], "-o", s(&alone), "--shared-poses", "sometimes"]), &["sometimes"]);
}
