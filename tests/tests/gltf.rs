//! glTF end to end on the shared models (CesiumMan, RiggedSimple, the interpolation
//! test): every animation imports, compresses within the precision at every sample of
//! every bone, exports to glTF and re-imports to the decoded values bit for bit; and
//! the resampled values are the glTF specification's STEP, LINEAR and CUBICSPLINE
//! curves, evaluated here from the accessors independently of the importer.

mod common;

use std::path::Path;

use ossa_encoder::formats::gltf::{read_gltf, write_gltf, AnimationChoice};
use ossa_encoder::{compress, decompress::decompress, Settings};

fn import(path: &Path, rate: f64) -> ossa_encoder::formats::gltf::GltfImport {
    let bytes = std::fs::read(path).unwrap();
    read_gltf(&bytes, path.parent(), rate, &AnimationChoice::All).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
#[cfg_attr(shared_gltf_missing, ignore = "skipped: ../shared/gltf not found")]
fn every_animation_compresses_within_the_bound_and_exports_back_to_its_decoded_values() {
    let Some(dir) = common::shared_gltf() else { return };
    let mut animations = 0;
    for (file, expected_animations, bones) in
        [("cesium_man.gltf", 1, 19), ("rigged_simple.gltf", 1, 2), ("interpolation_test.gltf", 9, 9)]
    {
        let imported = import(&dir.join(file), 30.0);
        assert_eq!(imported.clips.len(), expected_animations, "{file}: {:?}", imported.notes);
        for clip in &imported.clips {
            assert_eq!(clip.bones.len(), bones, "{file} {}", clip.name);
            // glTF is in metres: a tenth of a millimetre.
            let settings = Settings { precision: 1e-4, ..Settings::default() };
            let out = compress(clip, &settings).unwrap();
            let (error, bone, sample) = common::max_error(clip, &out.bytes);
            assert!(error <= settings.precision, "{file} {}: {error} at bone {bone}, sample {sample}", clip.name);

            // Decoded, exported, imported again at the same rate: the same values.
            let decoded = decompress(&ossa_decoder::Clip::from_bytes(&out.bytes).unwrap(), "x").unwrap();
            let text = write_gltf(&decoded);
            let again = read_gltf(text.as_bytes(), None, clip.sample_rate, &AnimationChoice::All).unwrap();
            assert_eq!(again.clips.len(), 1);
            let back = &again.clips[0];
            assert_eq!(back.sample_count, decoded.sample_count, "{file} {}", clip.name);
            let bits = |v: &[f64]| v.iter().map(|&x| (x as f32).to_bits()).collect::<Vec<_>>();
            for (b, (t0, t1)) in decoded.tracks.iter().zip(&back.tracks).enumerate() {
                assert_eq!(back.bones[b].name, decoded.bones[b].name);
                assert_eq!(back.bones[b].parent, decoded.bones[b].parent);
                for s in 0..decoded.sample_count {
                    assert_eq!(bits(&t0.rotations[s]), bits(&t1.rotations[s]), "{file} bone {b} sample {s}");
                    assert_eq!(bits(&t0.translations[s]), bits(&t1.translations[s]), "{file} bone {b} sample {s}");
                    assert_eq!(bits(&t0.scales[s]), bits(&t1.scales[s]), "{file} bone {b} sample {s}");
                }
            }
            animations += 1;
        }
    }
    assert_eq!(animations, 11);
}

/// A channel of the interpolation test, read straight from its accessors.
struct Keys {
    times: Vec<f64>,
    values: Vec<Vec<f64>>,
    interpolation: gltf::animation::Interpolation,
    node: usize,
    path: gltf::animation::Property,
}

fn keys(path: &Path) -> Vec<(String, Keys)> {
    let (document, buffers) = {
        let gltf = gltf::Gltf::open(path).unwrap();
        let bin = std::fs::read(path.with_file_name("interpolation_test.bin")).unwrap();
        (gltf.document, vec![bin])
    };
    document
        .animations()
        .map(|a| {
            let channel = a.channels().next().unwrap();
            let reader = channel.reader(|b| Some(&buffers[b.index()][..]));
            let times = reader.read_inputs().unwrap().map(f64::from).collect();
            use gltf::animation::util::ReadOutputs;
            let values = match reader.read_outputs().unwrap() {
                ReadOutputs::Rotations(r) => r.into_f32().map(|q| q.map(f64::from).to_vec()).collect(),
                ReadOutputs::Translations(t) | ReadOutputs::Scales(t) => t.map(|v| v.map(f64::from).to_vec()).collect(),
                _ => unreachable!(),
            };
            let keys = Keys {
                times,
                values,
                interpolation: channel.sampler().interpolation(),
                node: channel.target().node().index(),
                path: channel.target().property(),
            };
            (a.name().unwrap().to_owned(), keys)
        })
        .collect()
}

/// The glTF specification's value of `keys` at `t` (Appendix C), written out here.
fn spec_value(keys: &Keys, t: f64) -> Vec<f64> {
    use gltf::animation::Interpolation::*;
    let n = keys.times.len();
    let cubic = keys.interpolation == CubicSpline;
    let v = |k: usize| keys.values[if cubic { 3 * k + 1 } else { k }].clone();
    if t <= keys.times[0] {
        return v(0);
    }
    if t >= keys.times[n - 1] {
        return v(n - 1);
    }
    let k = (0..n - 1).find(|&k| keys.times[k] <= t && t < keys.times[k + 1]).unwrap();
    let (t0, t1) = (keys.times[k], keys.times[k + 1]);
    let u = (t - t0) / (t1 - t0);
    let rotation = keys.path == gltf::animation::Property::Rotation;
    let out: Vec<f64> = match keys.interpolation {
        Step => v(k),
        Linear if rotation => {
            let (a, mut b) = (v(k), v(k + 1));
            let mut d: f64 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            if d < 0.0 {
                b.iter_mut().for_each(|x| *x = -*x);
                d = -d;
            }
            let angle = d.min(1.0).acos();
            if angle < 1e-9 {
                a
            } else {
                let (wa, wb) = (((1.0 - u) * angle).sin() / angle.sin(), (u * angle).sin() / angle.sin());
                a.iter().zip(&b).map(|(x, y)| wa * x + wb * y).collect()
            }
        }
        Linear => v(k).iter().zip(&v(k + 1)).map(|(a, b)| a * (1.0 - u) + b * u).collect(),
        CubicSpline => {
            let td = t1 - t0;
            let (p0, m0) = (&keys.values[3 * k + 1], &keys.values[3 * k + 2]);
            let (m1, p1) = (&keys.values[3 * (k + 1)], &keys.values[3 * (k + 1) + 1]);
            (0..p0.len())
                .map(|i| {
                    (2.0 * u.powi(3) - 3.0 * u.powi(2) + 1.0) * p0[i]
                        + td * (u.powi(3) - 2.0 * u.powi(2) + u) * m0[i]
                        + (-2.0 * u.powi(3) + 3.0 * u.powi(2)) * p1[i]
                        + td * (u.powi(3) - u.powi(2)) * m1[i]
                })
                .collect()
        }
    };
    // A cubic spline's rotation is normalised; a key (STEP, or LINEAR at a key) is
    // taken as stored.
    if rotation && keys.interpolation == CubicSpline {
        let len = out.iter().map(|x| x * x).sum::<f64>().sqrt();
        out.iter().map(|x| x / len).collect()
    } else {
        out
    }
}

#[test]
#[cfg_attr(shared_gltf_missing, ignore = "skipped: ../shared/gltf not found")]
fn resampled_values_follow_the_gltf_interpolation_rules() {
    let Some(dir) = common::shared_gltf() else { return };
    let path = dir.join("interpolation_test.gltf");
    let channels = keys(&path);
    // An odd rate, so that samples fall between keys, not on them.
    let rate = 17.0;
    let imported = import(&path, rate);
    let bytes = std::fs::read(&path).unwrap();
    let document = gltf::Gltf::from_slice(&bytes).unwrap().document;
    let mut kinds = std::collections::BTreeSet::new();
    for (name, keys) in &channels {
        let clip = imported.clips.iter().find(|c| &c.name == name).unwrap_or_else(|| panic!("{name} imported"));
        let node_name = document.nodes().nth(keys.node).unwrap().name().unwrap().to_owned();
        let bone = clip.bones.iter().position(|b| b.name == node_name).unwrap();
        let track = &clip.tracks[bone];
        let mut between = 0;
        // The samples run from 0 to the last key, that key included: at 17 Hz, or
        // just above when the last key falls between samples.
        let last = *keys.times.last().unwrap();
        assert!(clip.sample_rate >= rate && clip.sample_rate < rate * (1.0 + 1.0 / (last * rate)), "{name}");
        for s in 0..clip.sample_count {
            let t = if s + 1 == clip.sample_count { last } else { s as f64 / clip.sample_rate };
            let expected = spec_value(keys, t.min(last));
            let got: Vec<f64> = match keys.path {
                gltf::animation::Property::Rotation => track.rotations[s].to_vec(),
                gltf::animation::Property::Translation => track.translations[s].to_vec(),
                _ => track.scales[s].to_vec(),
            };
            // The same quaternion either way round; within the keys' f32 precision (a
            // key quaternion is unit only to about 1e-7, which slerp may or may not
            // correct: either way far below what tells the interpolations apart).
            let sign = if keys.path == gltf::animation::Property::Rotation
                && got.iter().zip(&expected).map(|(a, b)| a * b).sum::<f64>() < 0.0
            {
                -1.0
            } else {
                1.0
            };
            for (g, e) in got.iter().zip(&expected) {
                assert!((g * sign - e).abs() < 1e-6, "{name} at {t}: {got:?} against {expected:?}");
            }
            if keys.times.iter().all(|&k| (k - t).abs() > 1e-3) && t < *keys.times.last().unwrap() {
                between += 1;
            }
        }
        assert!(between > 3, "{name}: samples between keys");
        kinds.insert(format!("{:?}", keys.interpolation));
    }
    assert_eq!(kinds.len(), 3, "STEP, LINEAR and CUBICSPLINE all checked: {kinds:?}");
}

/// Accessors that lie about what they hold (found by fuzz/gltf: the gltf crate's
/// readers and validation assert or index on them) are refused with a message, never a
/// panic: key times of another type, rotations of a component type glTF does not
/// allow, a stride shorter than an element, a count past the buffer, a mesh attribute
/// naming no accessor.
#[test]
fn malformed_accessors_are_refused_not_trusted() {
    let clip = common::load(&common::repo_root().join("examples/wave.acl.sjson"));
    let text = write_gltf(&clip);
    let document: serde_json::Value = serde_json::from_str(&text).unwrap();
    let sampler = &document["animations"][0]["samplers"][0];
    let (input, output) = (sampler["input"].as_u64().unwrap() as usize, sampler["output"].as_u64().unwrap() as usize);
    type Change = Box<dyn Fn(&mut serde_json::Value)>;
    let cases: Vec<(&str, Change)> = vec![
        ("key times", Box::new(move |d| d["accessors"][input]["type"] = "VEC3".into())),
        ("key values", Box::new(move |d| d["accessors"][output]["componentType"] = 5125.into())),
        (
            "does not fit",
            Box::new(move |d| {
                let view = d["accessors"][output]["bufferView"].as_u64().unwrap() as usize;
                d["bufferViews"][view]["byteStride"] = 4.into();
            }),
        ),
        ("does not fit", Box::new(move |d| d["accessors"][input]["count"] = 1_000_000_000u64.into())),
        // The gltf crate's validation indexes a primitive's POSITION accessor unchecked.
        (
            "attribute accessor 9999 does not exist",
            Box::new(|d| d["meshes"][0]["primitives"][0]["attributes"]["POSITION"] = 9999.into()),
        ),
        // Nor does it check a channel's target.
        ("its target", Box::new(|d| d["animations"][0]["channels"][0]["target"]["node"] = 999.into())),
        ("its target", Box::new(|d| d["animations"][0]["channels"][0]["target"]["path"] = "colour".into())),
    ];
    for (needle, change) in cases {
        let mut changed = document.clone();
        change(&mut changed);
        let bytes = serde_json::to_vec(&changed).unwrap();
        let result = std::panic::catch_unwind(|| read_gltf(&bytes, None, 30.0, &AnimationChoice::All));
        let error = result.expect("no panic").expect_err("refused");
        assert!(error.to_string().contains(needle), "{needle}: {error}");
    }
    // The fuzzer's own input, when present.
    let crash = common::repo_root().join("fuzz/artifacts/gltf");
    for entry in std::fs::read_dir(crash).into_iter().flatten().flatten() {
        let bytes = std::fs::read(entry.path()).unwrap();
        let rate = f64::from(bytes[0]) + 1.0;
        assert!(std::panic::catch_unwind(|| read_gltf(&bytes[1..], None, rate, &AnimationChoice::All)).is_ok());
    }
}

/// The same model as binary glTF (`.glb`: a JSON chunk, then the buffer as a BIN
/// chunk) imports to the same clip as its JSON form.
#[test]
fn binary_gltf_imports_like_its_json_form() {
    use base64::Engine as _;
    let clip = common::load(&common::repo_root().join("examples/cycle.acl.sjson"));
    let text = write_gltf(&clip);
    let mut document: serde_json::Value = serde_json::from_str(&text).unwrap();
    let uri = document["buffers"][0]["uri"].as_str().unwrap().to_owned();
    let mut bin = base64::engine::general_purpose::STANDARD.decode(uri.split_once(",").unwrap().1).unwrap();
    document["buffers"][0].as_object_mut().unwrap().remove("uri");
    let mut json = serde_json::to_vec(&document).unwrap();
    while json.len() % 4 != 0 {
        json.push(b' ');
    }
    while bin.len() % 4 != 0 {
        bin.push(0);
    }
    let total = 12 + 8 + json.len() + 8 + bin.len();
    let mut glb = Vec::new();
    glb.extend_from_slice(b"glTF");
    glb.extend_from_slice(&2u32.to_le_bytes());
    glb.extend_from_slice(&(total as u32).to_le_bytes());
    glb.extend_from_slice(&(json.len() as u32).to_le_bytes());
    glb.extend_from_slice(b"JSON");
    glb.extend_from_slice(&json);
    glb.extend_from_slice(&(bin.len() as u32).to_le_bytes());
    glb.extend_from_slice(b"BIN\0");
    glb.extend_from_slice(&bin);
    // A declared length below the header's own (the gltf crate subtracts unchecked).
    let mut short = glb.clone();
    short[8..12].copy_from_slice(&4u32.to_le_bytes());
    let e = std::panic::catch_unwind(|| read_gltf(&short, None, 30.0, &AnimationChoice::All)).expect("no panic");
    assert!(e.unwrap_err().to_string().contains("less than its 12-byte header"));
    let from_json = read_gltf(text.as_bytes(), None, 30.0, &AnimationChoice::All).unwrap();
    let from_glb = read_gltf(&glb, None, 30.0, &AnimationChoice::All).unwrap();
    assert_eq!(from_glb.clips, from_json.clips);
    assert_eq!(from_glb.clips[0].bones.len(), clip.bones.len());
}
