//! glTF through the command line, on models the tool writes itself (so no shared
//! files are needed): a compressed clip exported with `decompress -o X.gltf`, that
//! model imported again by `compress` (`--rate`, `--animation`), models of several
//! animations into a folder, and the mistakes named.

use serde_json::Value;

use crate::{assert_error, example, ossa, s, stderr, stdout};

#[test]
fn a_clip_exports_to_gltf_and_imports_back_within_the_bound() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let walk = example().with_file_name("walk.bvh");
    let packed = d.join("walk.ossa");
    assert!(ossa(&["compress", s(&walk), "-o", s(&packed)]).status.success());
    let model = d.join("walk.gltf");
    let o = ossa(&["decompress", s(&packed), "-o", s(&model)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let document: Value = serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
    assert_eq!(document["asset"]["version"], "2.0");
    assert_eq!(document["skins"][0]["joints"].as_array().unwrap().len(), 6);
    let names: Vec<&str> = document["nodes"].as_array().unwrap().iter().filter_map(|n| n["name"].as_str()).collect();
    assert!(names.starts_with(&["hips", "thigh_l", "shin_l", "thigh_r", "shin_r", "tail"]), "{names:?}");

    // Imported again at the clip's rate: within the precision of the source values.
    let again = d.join("again.ossa");
    let o = ossa(&["compress", s(&model), "-o", s(&again), "--rate", "30", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert!(v["max_error"].as_f64().unwrap() <= 0.01, "{v}");
    let info: Value = serde_json::from_str(stdout(&ossa(&["info", s(&again), "--json"])).trim()).unwrap();
    assert_eq!(info["bones"], 6);
    assert_eq!(info["source_samples"], 41, "{info}");

    // A binary glTF output is refused by name; a bad rate too.
    assert_error(&ossa(&["decompress", s(&packed), "-o", s(&d.join("x.glb"))]), &["x.glb", ".gltf"]);
    assert_error(&ossa(&["compress", s(&model), "-o", s(&again), "--rate", "0"]), &["--rate"]);
}

#[test]
fn models_of_several_animations_go_into_a_folder_or_one_is_chosen() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A model of two animations: the tool's export of one clip, its animation copied
    // and renamed.
    let packed = d.join("wave.ossa");
    assert!(ossa(&["compress", s(&example()), "-o", s(&packed)]).status.success());
    let single = d.join("single.gltf");
    assert!(ossa(&["decompress", s(&packed), "-o", s(&single)]).status.success());
    let mut document: Value = serde_json::from_str(&std::fs::read_to_string(&single).unwrap()).unwrap();
    let mut second = document["animations"][0].clone();
    second["name"] = Value::from("wave again");
    document["animations"].as_array_mut().unwrap().push(second);
    let model = d.join("two.gltf");
    std::fs::write(&model, serde_json::to_string(&document).unwrap()).unwrap();

    let o = ossa(&["compress", s(&model), "-o", s(&d.join("x.ossa"))]);
    assert_error(&o, &["two.gltf", "2 animations", "--animation"]);
    let out = d.join("out");
    let o = ossa(&["compress", s(&model), "-o", s(&out)]);
    assert!(!o.status.success() || out.is_dir());
    std::fs::create_dir_all(&out).unwrap();
    let o = ossa(&["compress", s(&model), "-o", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut files: Vec<String> =
        std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    files.sort();
    assert_eq!(files, ["two_wave.ossa", "two_wave_again.ossa"]);
    // A folder that does not exist yet, named as one by its trailing separator.
    let new = d.join("new").join("");
    let o = ossa(&["compress", s(&model), "-o", s(&new)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(new.join("two_wave.ossa").is_file() && new.join("two_wave_again.ossa").is_file());
    // One chosen by name, or by index.
    for choice in ["wave again", "1"] {
        let target = d.join("chosen.ossa");
        let o = ossa(&["compress", s(&model), "-o", s(&target), "--animation", choice]);
        assert!(o.status.success(), "{choice}: {}", stderr(&o));
    }
    assert_error(
        &ossa(&["compress", s(&model), "-o", s(&d.join("y.ossa")), "--animation", "run"]),
        &["no animation 'run'"],
    );
}

/// The smaller mistakes, each named precisely: an animation index past the last
/// (the valid range given), a buffer at a web address (not "no such file"), a node
/// that is its own ancestor (a cycle, not a parent out of order).
#[test]
fn model_mistakes_name_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let model = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/skinned.gltf");
    let out = d.join("x.ossa");
    let o = ossa(&["compress", s(&model), "-o", s(&out), "--animation", "99"]);
    assert_error(&o, &["no animation '99'", "an index from 0 to 0", "Walk"]);
    let document: Value = serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
    let mut web = document.clone();
    web["buffers"][0]["uri"] = Value::from("http://example.com/walk.bin");
    let path = d.join("web.gltf");
    std::fs::write(&path, web.to_string()).unwrap();
    assert_error(&ossa(&["compress", s(&path), "-o", s(&out)]), &["web.gltf", "http address", "relative path"]);
    let mut cycle = document;
    // "spine" (node 0) is a child of "hips" (node 1): make hips a child of spine too.
    let mut children: Vec<Value> = cycle["nodes"][0]["children"].as_array().cloned().unwrap_or_default();
    children.push(Value::from(1));
    cycle["nodes"][0]["children"] = Value::from(children);
    cycle["nodes"][5]["children"] = Value::from(vec![6]);
    let path = d.join("cycle.gltf");
    std::fs::write(&path, cycle.to_string()).unwrap();
    assert_error(&ossa(&["compress", s(&path), "-o", s(&out)]), &["cycle.gltf", "cycle", "its own ancestor"]);
    assert!(!out.exists());
}
