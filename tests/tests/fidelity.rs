//! What goes in comes out: a clip written back (`.acl.sjson`, `.gltf`) keeps its
//! names, order, types, precisions, units and last frame, not only its values.
//!
//! - every shared transform clip and every example: the clip's name, rate, length,
//!   bones (names, order, parents, shell distances, bind poses) and precision;
//! - every shared scalar track list: the list's name, rate and length, every track's
//!   name, type, precision and output index in the source's order, tracks without an
//!   output included; ACL's own compressor reads what is written;
//! - every shared glTF model, and models built here the way exporters write them
//!   (Blender with a Mixamo rig: an armature turned Y-up and scaled by 0.01; three.js:
//!   an armature scaled by 100 and four identical skins; a scale of 0.0254; joints
//!   listed child first; a last key between two samples; a morph-weight animation):
//!   bone `i` is joint `i` when the skin lists parents first, the precision holds in
//!   the scene's units, the last key is a sample, the notes say what was left out, and
//!   the export lists the joints in the source's order under the source's placement.

mod common;

use std::fmt::Write as _;
use std::path::Path;

use base64::Engine as _;
use ossa_decoder::Clip;
use ossa_encoder::compress::scalar::compress_tracks;
use ossa_encoder::decompress::decompress;
use ossa_encoder::formats::acl_text::{read_clip, read_track_list, write_text, write_track_list};
use ossa_encoder::formats::gltf::{read_gltf, write_gltf, AnimationChoice, GltfImport, DEFAULT_PRECISION};
use ossa_encoder::{compress, RawClip, Settings};

/// ACL's own compressor (`../shared/acl/bin`), which must read what ossa writes.
fn acl_reads(text: &str, what: &str) {
    let binary = common::repo_root().join("../shared/acl/bin/acl_compressor");
    assert!(binary.exists(), "{} is missing", binary.display());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("written.acl.sjson");
    std::fs::write(&path, text).unwrap();
    let out = std::process::Command::new(&binary).arg(format!("-acl={}", path.display())).output().unwrap();
    assert!(
        out.status.success(),
        "{what}: ACL's compressor refuses what ossa wrote: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The value of `key = …` in the `settings` block of an ACL text.
fn setting(text: &str, key: &str) -> Option<f64> {
    let block = text.split_once("settings =")?.1.split_once('}')?.0;
    let line = block.lines().find(|l| l.trim_start().starts_with(key))?;
    line.split_once('=')?.1.trim().parse().ok()
}

/// `clip` compressed with `settings`, decompressed as ACL text, and read again: the
/// name, rate, length, additive format and skeleton come back, and the precision as
/// the settings' error threshold.
fn text_round_trip(clip: &RawClip, settings: &Settings, what: &str) -> String {
    let out = compress(clip, settings).unwrap_or_else(|e| panic!("{what}: {e}"));
    let decoded = Clip::from_bytes(&out.bytes).unwrap();
    let text = String::from_utf8(write_text(&decoded, "unused", Vec::new()).unwrap()).unwrap();
    let back = read_clip(&text, "other").unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(back.name, clip.name, "{what}: name");
    assert_eq!(back.sample_rate as f32, clip.sample_rate as f32, "{what}: rate");
    assert_eq!(back.sample_count, clip.sample_count, "{what}: samples");
    assert_eq!(back.additive.as_ref().map(|a| a.format), clip.additive.as_ref().map(|a| a.format), "{what}: additive");
    assert_eq!(back.bones.len(), clip.bones.len(), "{what}: bones");
    for (a, b) in back.bones.iter().zip(&clip.bones) {
        assert_eq!((&a.name, a.parent), (&b.name, b.parent), "{what}: bone order, names and parents");
        assert_eq!(a.shell_distance as f32, b.shell_distance as f32, "{what}: {} shell distance", b.name);
        let f = |v: &[f64]| v.iter().map(|&x| x as f32).collect::<Vec<f32>>();
        assert_eq!(f(&a.bind_pose.translation), f(&b.bind_pose.translation), "{what}: {} bind translation", b.name);
        assert_eq!(f(&a.bind_pose.scale), f(&b.bind_pose.scale), "{what}: {} bind scale", b.name);
        let q = common::normalize(b.bind_pose.rotation);
        let same = a.bind_pose.rotation.iter().zip(q).all(|(x, y)| (x - y).abs() < 1e-6);
        assert!(same, "{what}: {} bind rotation {:?} against {:?}", b.name, a.bind_pose.rotation, q);
    }
    let threshold = setting(&text, "error_threshold").map(|p| p as f32);
    assert_eq!(threshold, Some(settings.precision as f32), "{what}: the precision as the error threshold");
    // The values within the bound of the source's (measured independently).
    let again = compress(&back, &Settings { precision: settings.precision, ..Settings::default() }).unwrap();
    let (error, ..) = common::max_error(&back, &again.bytes);
    assert!(error <= settings.precision, "{what}: {error}");
    text
}

#[test]
#[cfg_attr(shared_clips_missing, ignore = "skipped: ../shared/clips not found")]
fn every_shared_clip_comes_back_with_its_names_order_and_precision() {
    let dir = common::shared_clips().unwrap();
    for path in common::transform_clips(&dir) {
        let clip = common::load(&path);
        let what = path.display().to_string();
        let text = text_round_trip(&clip, &Settings::default(), &what);
        acl_reads(&text, &what);
    }
}

/// The examples (additive, looping, root motion among them), at precisions other
/// than the default.
#[test]
fn every_example_comes_back_with_its_names_order_and_precision() {
    let dir = common::repo_root().join("examples");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        if !path.to_string_lossy().ends_with(".acl.sjson") || text.contains("track_list") {
            continue;
        }
        let clip = common::load(&path);
        for precision in [0.01, 0.0005] {
            text_round_trip(&clip, &Settings { precision, ..Settings::default() }, &path.display().to_string());
        }
        seen += 1;
    }
    assert!(seen >= 8, "{seen} examples");
}

/// A scalar track list written back: everything but the sample values is the
/// source's.
fn list_round_trip(path: &Path) -> String {
    let what = path.display().to_string();
    let source = read_track_list(&std::fs::read_to_string(path).unwrap(), "file name").unwrap();
    let out = compress_tracks(&source, &Default::default()).unwrap();
    let list = ossa_decoder::ScalarClip::from_bytes_verified(&out.bytes).unwrap();
    let text = String::from_utf8(write_track_list(&list, "file name", Vec::new()).unwrap()).unwrap();
    let back = read_track_list(&text, "other").unwrap();
    assert_eq!(
        (&back.name, back.sample_rate, back.sample_count, back.track_type),
        (&source.name, source.sample_rate, source.sample_count, source.track_type),
        "{what}"
    );
    assert_eq!(back.tracks.len(), source.tracks.len(), "{what}: every track, those without an output included");
    let c = source.track_type.components();
    for (a, b) in back.tracks.iter().zip(&source.tracks) {
        assert_eq!((&a.name, a.output_index), (&b.name, b.output_index), "{what}: track order, names, outputs");
        assert_eq!(a.precision as f32, b.precision as f32, "{what}: {} precision", b.name);
        for (x, y) in a.values.iter().zip(&b.values) {
            for m in 0..c {
                let want = if b.output_index == u32::MAX { 0.0 } else { y[m] };
                assert!((x[m] - want).abs() <= b.precision * 1.0001, "{what}: {}", b.name);
            }
        }
    }
    text
}

#[test]
#[cfg_attr(shared_clips_missing, ignore = "skipped: ../shared/clips not found")]
fn every_shared_track_list_comes_back_whole_and_acl_reads_it() {
    let dir = common::shared_clips().unwrap();
    let mut lists = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("track_list") || name == "no_output_scalar_tracks.acl.sjson" {
            let text = list_round_trip(&path);
            acl_reads(&text, &name);
            lists += 1;
        }
    }
    assert_eq!(lists, 7);
    // The example list, remapped, with a track of no output.
    list_round_trip(&common::repo_root().join("examples/weights.acl.sjson"));
}

// ---------------------------------------------------------------------------------
// glTF

/// A joint of a model built here: name, parent (by name), translation.
type Joint = (&'static str, Option<&'static str>, [f64; 3]);

/// How a model is built: its joints in the skin's order, the armature node above the
/// root (rotation, uniform scale), how many identical skins, when the last key is, and
/// whether a second animation moves morph weights only.
struct Model {
    joints: Vec<Joint>,
    armature: Option<([f64; 4], f64)>,
    skins: usize,
    last_key: f64,
    morph: bool,
}

/// A humanoid's joints in the skin's order, parents first, in `unit`s per metre.
fn humanoid(unit: f64) -> Vec<Joint> {
    let j = |name, parent, t: [f64; 3]| (name, parent, t.map(|v| v * unit));
    vec![
        j("Hips", None, [0.0, 1.0, 0.0]),
        j("Spine", Some("Hips"), [0.0, 0.12, 0.0]),
        j("Chest", Some("Spine"), [0.0, 0.15, 0.01]),
        j("Neck", Some("Chest"), [0.0, 0.2, 0.0]),
        j("Head", Some("Neck"), [0.0, 0.1, 0.02]),
        j("LeftArm", Some("Chest"), [0.18, 0.15, 0.0]),
        j("LeftForeArm", Some("LeftArm"), [0.28, 0.0, 0.0]),
        j("LeftHand", Some("LeftForeArm"), [0.25, 0.0, 0.0]),
        j("RightArm", Some("Chest"), [-0.18, 0.15, 0.0]),
        j("RightForeArm", Some("RightArm"), [-0.28, 0.0, 0.0]),
        j("RightHand", Some("RightForeArm"), [-0.25, 0.0, 0.0]),
        j("LeftUpLeg", Some("Hips"), [0.1, -0.05, 0.0]),
        j("LeftLeg", Some("LeftUpLeg"), [0.0, -0.45, 0.0]),
        j("LeftFoot", Some("LeftLeg"), [0.0, -0.42, 0.0]),
        j("RightUpLeg", Some("Hips"), [-0.1, -0.05, 0.0]),
        j("RightLeg", Some("RightUpLeg"), [0.0, -0.45, 0.0]),
        j("RightFoot", Some("RightLeg"), [0.0, -0.42, 0.0]),
    ]
}

fn axis_angle(axis: [f64; 3], angle: f64) -> [f64; 4] {
    let n = (axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]).sqrt();
    let s = (angle / 2.0).sin() / n;
    [axis[0] * s, axis[1] * s, axis[2] * s, (angle / 2.0).cos()]
}

/// The key times of the walk: irregular, from 0 to `last`.
fn key_times(last: f64) -> Vec<f64> {
    let mut t: Vec<f64> = (0..24).map(|i| last * (i as f64 / 23.0).powf(1.1)).collect();
    t[23] = last;
    t
}

/// The model as glTF JSON, its buffer embedded: the joints as nodes (in skin order),
/// the armature above the root, `skins` skins of the same joints, a mesh node per
/// skin, an animation "Walk" turning every joint and moving the root (LINEAR), and
/// with `morph` a morph-target mesh and an animation "Blink" moving only its weights.
fn build(model: &Model) -> Vec<u8> {
    let mut buffer: Vec<u8> = Vec::new();
    let mut views = Vec::new();
    let mut accessors = Vec::new();
    let mut add = |values: &[f32], kind: &str, count: usize, minmax: bool| -> usize {
        let offset = buffer.len();
        buffer.extend(values.iter().flat_map(|v| v.to_le_bytes()));
        views.push(serde_json::json!({ "buffer": 0, "byteOffset": offset, "byteLength": values.len() * 4 }));
        let mut accessor =
            serde_json::json!({ "bufferView": views.len() - 1, "componentType": 5126, "count": count, "type": kind });
        if minmax {
            // Per component (what glTF asks of key times and positions).
            let c = values.len() / count;
            let lo: Vec<f32> =
                (0..c).map(|m| values.iter().skip(m).step_by(c).copied().fold(f32::INFINITY, f32::min)).collect();
            let hi: Vec<f32> =
                (0..c).map(|m| values.iter().skip(m).step_by(c).copied().fold(f32::NEG_INFINITY, f32::max)).collect();
            accessor["min"] = serde_json::json!(lo);
            accessor["max"] = serde_json::json!(hi);
        }
        accessors.push(accessor);
        accessors.len() - 1
    };
    let index = |name: &str| model.joints.iter().position(|j| j.0 == name).unwrap();
    let times = key_times(model.last_key);
    let time_values: Vec<f32> = times.iter().map(|&t| t as f32).collect();
    let input = add(&time_values, "SCALAR", times.len(), true);
    let (mut samplers, mut channels) = (Vec::new(), Vec::new());
    for (j, joint) in model.joints.iter().enumerate() {
        let axis = [(j % 3) as f64 + 0.5, ((j + 1) % 3) as f64, 1.0];
        let values: Vec<f32> = times
            .iter()
            .flat_map(|&t| {
                let angle = 0.4 * (t * (3.0 + j as f64)).sin() + 0.15 * (t * 17.0 + j as f64).sin();
                axis_angle(axis, angle).map(|v| v as f32)
            })
            .collect();
        let output = add(&values, "VEC4", times.len(), false);
        samplers.push(serde_json::json!({ "input": input, "output": output, "interpolation": "LINEAR" }));
        channels
            .push(serde_json::json!({ "sampler": samplers.len() - 1, "target": { "node": j, "path": "rotation" } }));
        if joint.1.is_none() {
            let moves: Vec<f32> = times
                .iter()
                .flat_map(|&t| {
                    [joint.2[0] + 0.3 * t * joint.2[1], joint.2[1] * (1.0 + 0.02 * (t * 9.0).sin()), joint.2[2]]
                })
                .map(|v| v as f32)
                .collect();
            let output = add(&moves, "VEC3", times.len(), false);
            samplers.push(serde_json::json!({ "input": input, "output": output, "interpolation": "LINEAR" }));
            channels.push(
                serde_json::json!({ "sampler": samplers.len() - 1, "target": { "node": j, "path": "translation" } }),
            );
        }
    }
    let mut nodes: Vec<serde_json::Value> =
        model.joints.iter().map(|(name, _, t)| serde_json::json!({ "name": name, "translation": t })).collect();
    for (j, (_, parent, _)) in model.joints.iter().enumerate() {
        if let Some(p) = parent {
            let children = nodes[index(p)].get("children").cloned().unwrap_or(serde_json::json!([]));
            let mut children = children.as_array().cloned().unwrap_or_default();
            children.push(serde_json::json!(j));
            nodes[index(p)]["children"] = serde_json::json!(children);
        }
    }
    let roots: Vec<usize> = (0..model.joints.len()).filter(|&j| model.joints[j].1.is_none()).collect();
    let mut scene: Vec<usize> = Vec::new();
    match model.armature {
        Some((rotation, scale)) => {
            nodes.push(serde_json::json!({
                "name": "Armature", "rotation": rotation, "scale": [scale, scale, scale], "children": roots,
            }));
            scene.push(nodes.len() - 1);
        }
        None => scene.extend(&roots),
    }
    let mut meshes = Vec::new();
    let triangle = add(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0], "VEC3", 3, true);
    let skins: Vec<serde_json::Value> = (0..model.skins)
        .map(|k| {
            meshes.push(serde_json::json!({ "name": format!("Part{k}"), "primitives": [{ "attributes": { "POSITION": triangle } }] }));
            nodes.push(serde_json::json!({ "name": format!("Part{k}"), "mesh": meshes.len() - 1, "skin": k }));
            scene.push(nodes.len() - 1);
            serde_json::json!({ "name": format!("Skin{k}"), "joints": (0..model.joints.len()).collect::<Vec<_>>() })
        })
        .collect();
    let mut animations = vec![serde_json::json!({ "name": "Walk", "channels": channels, "samplers": samplers })];
    if model.morph {
        let target = add(&[0.0, 0.0, 0.1, 0.0, 0.0, 0.1, 0.0, 0.0, 0.1], "VEC3", 3, true);
        meshes.push(serde_json::json!({
            "name": "Face", "weights": [0.0],
            "primitives": [{ "attributes": { "POSITION": triangle }, "targets": [{ "POSITION": target }] }],
        }));
        nodes.push(serde_json::json!({ "name": "Face", "mesh": meshes.len() - 1 }));
        scene.push(nodes.len() - 1);
        let blink_times = add(&[0.0, 0.5], "SCALAR", 2, true);
        let weights = add(&[0.0, 1.0], "SCALAR", 2, false);
        animations.push(serde_json::json!({
            "name": "Blink",
            "samplers": [{ "input": blink_times, "output": weights, "interpolation": "LINEAR" }],
            "channels": [{ "sampler": 0, "target": { "node": nodes.len() - 1, "path": "weights" } }],
        }));
    }
    let uri =
        format!("data:application/octet-stream;base64,{}", base64::engine::general_purpose::STANDARD.encode(&buffer));
    let document = serde_json::json!({
        "asset": { "version": "2.0", "generator": "ossa tests (as an exporter writes)" },
        "scene": 0,
        "scenes": [{ "nodes": scene }],
        "nodes": nodes,
        "meshes": meshes,
        "skins": skins,
        "animations": animations,
        "buffers": [{ "byteLength": buffer.len(), "uri": uri }],
        "bufferViews": views,
        "accessors": accessors,
    });
    serde_json::to_vec_pretty(&document).unwrap()
}

fn import(bytes: &[u8], what: &str) -> GltfImport {
    read_gltf(bytes, None, 30.0, &AnimationChoice::All).unwrap_or_else(|e| panic!("{what}: {e}"))
}

/// The rotation about x turning a Z-up armature Y-up, as Blender's exporter writes it.
const Y_UP: [f64; 4] = [-std::f64::consts::FRAC_1_SQRT_2, 0.0, 0.0, std::f64::consts::FRAC_1_SQRT_2];

/// Checks the clip imported from `model` (as `imported`): bone `i` is joint `i` (the
/// skin lists parents first), the armature is the root's placement, the last key is
/// the last sample, the precision holds in the scene's units and is used there (not
/// many times stricter), and the export gives back the joints, in order, under the
/// armature's transform.
fn check_model(model: &Model, imported: &GltfImport, what: &str) {
    let clip = imported.clips.iter().find(|c| c.name == "Walk").expect("the walk");
    let names: Vec<&str> = clip.bones.iter().map(|b| b.name.as_str()).collect();
    let joints: Vec<&str> = model.joints.iter().map(|j| j.0).collect();
    assert_eq!(names, joints, "{what}: bone i is joint i");
    assert!(clip.source.joint_order.is_empty(), "{what}: no reordering");
    assert!(!imported.notes.iter().any(|n| n.contains("reordered")), "{what}: {:?}", imported.notes);
    let placements = &clip.source.root_placements;
    match model.armature {
        Some((_, scale)) => {
            assert_eq!(placements.len(), 1, "{what}: the armature places the root");
            assert!((placements[0].stretch() - scale).abs() < scale * 1e-6, "{what}: {}", placements[0].stretch());
        }
        None => assert!(placements.is_empty(), "{what}"),
    }
    // The last key is the last sample: the duration is the animation's.
    let duration = (clip.sample_count - 1) as f64 / clip.sample_rate;
    assert!((duration - model.last_key).abs() < 1e-5, "{what}: {duration} s for a last key at {}", model.last_key);
    assert!(clip.sample_rate >= 30.0 && clip.sample_rate < 31.0, "{what}: {} Hz", clip.sample_rate);
    // The precision in the scene's units: held, and used (the error reaches a good
    // share of it, where reading it in the skeleton's units would give 100 times less
    // room with an armature of 0.01, or 100 times more with one of 100).
    let settings = Settings { precision: DEFAULT_PRECISION, ..Settings::default() };
    let out = compress(clip, &settings).unwrap();
    let (error, bone, sample) = common::max_error(clip, &out.bytes);
    assert!(error <= DEFAULT_PRECISION, "{what}: {error} at bone {bone}, sample {sample}");
    assert!(error > DEFAULT_PRECISION / 5.0, "{what}: {error}: the precision is not used in the scene's units");
    assert!(
        (out.errors.max_error - error).abs() < DEFAULT_PRECISION * 1e-3,
        "{what}: the reported error is the scene's"
    );
    // Exported and read again: the same joints, parents and placement.
    let decoded = decompress(&Clip::from_bytes(&out.bytes).unwrap(), "x").unwrap();
    let text = write_gltf(&decoded);
    let document: serde_json::Value = serde_json::from_str(&text).unwrap();
    let exported: Vec<String> = document["skins"][0]["joints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| document["nodes"][j.as_u64().unwrap() as usize]["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(exported, joints, "{what}: the export lists the joints in the source's order");
    let again = import(text.as_bytes(), what);
    let back = &again.clips[0];
    assert_eq!(
        back.bones.iter().map(|b| (&b.name, b.parent)).collect::<Vec<_>>(),
        clip.bones.iter().map(|b| (&b.name, b.parent)).collect::<Vec<_>>()
    );
    assert_eq!(back.source.root_placements.len(), placements.len(), "{what}");
    for (a, b) in back.source.root_placements.iter().zip(placements) {
        assert!(a.matrix.iter().zip(&b.matrix).all(|(x, y)| (x - y).abs() < 1e-6), "{what}: {a:?} against {b:?}");
    }
}

/// Blender's exporter with a Mixamo rig: joints in centimetres under an armature
/// turned Y-up and scaled by 0.01; a last key between two samples at 30 Hz; an
/// animation that moves only morph weights.
#[test]
fn a_blender_mixamo_model_keeps_its_joints_units_and_last_key() {
    let model =
        Model { joints: humanoid(100.0), armature: Some((Y_UP, 0.01)), skins: 1, last_key: 1.0167, morph: true };
    let imported = import(&build(&model), "blender");
    check_model(&model, &imported, "blender");
    assert_eq!(imported.clips.len(), 1, "the morph animation moves no bone: {:?}", imported.notes);
    let note = imported.notes.iter().find(|n| n.contains("'Blink'")).expect("a note on the morph animation");
    assert!(note.contains("moves no bone") && note.contains("morph-target weights") && note.contains("Face"), "{note}");
    let between = imported.notes.iter().find(|n| n.contains("falls between two samples"));
    assert!(between.is_some_and(|n| n.contains("keep its last pose")), "{:?}", imported.notes);
}

/// three.js's exporter (RobotExpressive): an armature scaled by 100 over joints in
/// hundredths, and four identical skins, one per mesh: one skeleton, no note.
#[test]
fn a_threejs_model_of_several_identical_skins_keeps_its_scale() {
    let model = Model {
        joints: humanoid(0.01),
        armature: Some(([0.0, 0.0, 0.0, 1.0], 100.0)),
        skins: 4,
        last_key: 1.2,
        morph: false,
    };
    let imported = import(&build(&model), "three.js");
    check_model(&model, &imported, "three.js");
    assert!(
        !imported.notes.iter().any(|n| n.starts_with("skin ")),
        "identical skins lose nothing: {:?}",
        imported.notes
    );
    assert!(!imported.notes.iter().any(|n| n.contains("between two samples")), "{:?}", imported.notes);
}

/// A model in inches (an armature scaled by 0.0254, as the glTF sample Fox).
#[test]
fn a_model_in_inches_is_held_to_metres() {
    let model = Model {
        joints: humanoid(39.37),
        armature: Some(([0.0, 0.0, 0.0, 1.0], 0.0254)),
        skins: 1,
        last_key: 0.9,
        morph: false,
    };
    check_model(&model, &import(&build(&model), "inches"), "inches");
}

/// Joints listed child first: the bones are reordered parents first, which is said,
/// the source's order is kept, and the export lists the joints in it again.
#[test]
fn joints_listed_child_first_are_reordered_and_written_back_in_their_order() {
    let mut joints = humanoid(1.0);
    joints.reverse();
    let model = Model { joints, armature: None, skins: 1, last_key: 0.5, morph: false };
    let imported = import(&build(&model), "reversed");
    assert!(imported.notes.iter().any(|n| n.contains("reordered")), "{:?}", imported.notes);
    let clip = &imported.clips[0];
    let source: Vec<&str> = model.joints.iter().map(|j| j.0).collect();
    assert_eq!(clip.source.joint_order.len(), source.len());
    for (b, bone) in clip.bones.iter().enumerate() {
        assert_eq!(bone.name, source[clip.source.joint_order[b]], "bone {b} is its source joint");
        assert!(bone.parent.is_none_or(|p| p < b), "parents first");
    }
    let out = compress(clip, &Settings { precision: DEFAULT_PRECISION, ..Settings::default() }).unwrap();
    let decoded = decompress(&Clip::from_bytes(&out.bytes).unwrap(), "x").unwrap();
    assert_eq!(decoded.source.joint_order, clip.source.joint_order, "the order comes back from the metadata");
    let document: serde_json::Value = serde_json::from_str(&write_gltf(&decoded)).unwrap();
    let exported: Vec<&str> = document["skins"][0]["joints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| document["nodes"][j.as_u64().unwrap() as usize]["name"].as_str().unwrap())
        .collect();
    assert_eq!(exported, source, "the export lists the joints in the source's order");
}

/// A chain of 40,000 joints (one under the other, listed parents first) imports
/// bone for joint: every step of the skeleton's construction is linear (a sort by
/// depth took 33 s here).
#[test]
fn a_chain_of_forty_thousand_joints_imports_joint_for_joint() {
    let count = 40_000;
    let mut nodes = String::from("[");
    for j in 0..count {
        let children = if j + 1 < count { format!(", \"children\": [{}]", j + 1) } else { String::new() };
        let _ = write!(
            nodes,
            "{}{{ \"name\": \"j{j}\", \"translation\": [0, 0.01, 0]{children} }}",
            if j > 0 { "," } else { "" }
        );
    }
    nodes.push(']');
    let times = [0.0f32, 1.0];
    let values = [0.0f32, 0.0, 0.0, 1.0, 0.0, 0.0, 0.1, 0.995];
    let bytes: Vec<u8> = times.iter().chain(&values).flat_map(|v| v.to_le_bytes()).collect();
    let uri =
        format!("data:application/octet-stream;base64,{}", base64::engine::general_purpose::STANDARD.encode(&bytes));
    let joints: Vec<usize> = (0..count).collect();
    let text = format!(
        "{{ \"asset\": {{ \"version\": \"2.0\" }}, \"nodes\": {nodes}, \"skins\": [{{ \"joints\": {joints:?} }}],
           \"buffers\": [{{ \"byteLength\": 40, \"uri\": \"{uri}\" }}],
           \"bufferViews\": [{{ \"buffer\": 0, \"byteLength\": 8 }}, {{ \"buffer\": 0, \"byteOffset\": 8, \"byteLength\": 32 }}],
           \"accessors\": [{{ \"bufferView\": 0, \"componentType\": 5126, \"count\": 2, \"type\": \"SCALAR\", \"min\": [0], \"max\": [1] }},
                           {{ \"bufferView\": 1, \"componentType\": 5126, \"count\": 2, \"type\": \"VEC4\" }}],
           \"animations\": [{{ \"channels\": [{{ \"sampler\": 0, \"target\": {{ \"node\": 7, \"path\": \"rotation\" }} }}],
                               \"samplers\": [{{ \"input\": 0, \"output\": 1 }}] }}] }}"
    );
    let imported = read_gltf(text.as_bytes(), None, 2.0, &AnimationChoice::All).unwrap();
    let clip = &imported.clips[0];
    assert_eq!(clip.bones.len(), count);
    assert!(clip.source.joint_order.is_empty());
    assert!(clip
        .bones
        .iter()
        .enumerate()
        .all(|(b, bone)| bone.name == format!("j{b}") && bone.parent == b.checked_sub(1)));
}

#[test]
#[cfg_attr(shared_gltf_missing, ignore = "skipped: ../shared/gltf not found")]
fn every_shared_gltf_model_keeps_its_joints_in_order_and_its_last_key() {
    let dir = common::shared_gltf().unwrap();
    for file in ["cesium_man.gltf", "rigged_simple.gltf", "interpolation_test.gltf"] {
        let path = dir.join(file);
        let bytes = std::fs::read(&path).unwrap();
        let document = gltf::Gltf::from_slice(&bytes).unwrap().document;
        let imported = read_gltf(&bytes, path.parent(), 30.0, &AnimationChoice::All).unwrap();
        for clip in &imported.clips {
            let what = format!("{file} {}", clip.name);
            // With a skin listing parents first, bone i is joint i.
            if let Some(skin) = document.skins().next() {
                let joints: Vec<String> = skin
                    .joints()
                    .map(|j| j.name().map_or_else(|| format!("node {}", j.index()), str::to_owned))
                    .collect();
                let names: Vec<String> = clip.bones.iter().map(|b| b.name.clone()).collect();
                if clip.source.joint_order.is_empty() {
                    assert_eq!(names, joints, "{what}");
                } else {
                    for (b, &j) in clip.source.joint_order.iter().enumerate() {
                        assert_eq!(names[b], joints[j], "{what}");
                    }
                }
            }
            // The last key is the last sample.
            let animation = document
                .animations()
                .find(|a| a.name() == Some(clip.name.as_str()))
                .or_else(|| document.animations().next())
                .unwrap();
            let last = animation
                .channels()
                .map(|c| c.sampler().input().max().unwrap().as_array().unwrap()[0].as_f64().unwrap())
                .fold(0.0, f64::max);
            let duration = (clip.sample_count - 1) as f64 / clip.sample_rate;
            assert!((duration - last).abs() < 1e-5, "{what}: {duration} against {last}");
            // Held in the scene's units.
            let out = compress(clip, &Settings { precision: DEFAULT_PRECISION, ..Settings::default() }).unwrap();
            let (error, ..) = common::max_error(clip, &out.bytes);
            assert!(error <= DEFAULT_PRECISION, "{what}: {error}");
        }
    }
}
