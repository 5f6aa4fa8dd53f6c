//! glTF 2.0 export of a clip (`ossa decompress IN.ossa -o OUT.gltf`), so that an
//! artist can watch a compressed animation in any glTF viewer beside its source.
//!
//! One self-contained `.gltf` file (its buffer embedded as base64): a node per bone
//! (names, parents and bind pose from the clip), one animation with a LINEAR channel
//! per bone and property keyed at every sample (the values exactly as given, as
//! `f32`), and something to look at: a skinned mesh of one small box per bone
//! (half a fifth of its shell distance), each box bound wholly to its bone, so the
//! boxes move as the skeleton does.
//!
//! What the source said of the skeleton comes back: the skin lists the joints in the
//! source's order ([`crate::SourceSkeleton::joint_order`]; node `j` is joint `j`), and a
//! root the source placed in its scene hangs under a node with that transform
//! ([`crate::SourceSkeleton::root_placements`]), so the model has its size and
//! orientation again.

use base64::Engine as _;
use serde_json::{json, Value};

use crate::raw_clip::{RawClip, RawTransform};

/// The clip as a glTF document (JSON text).
pub fn write_gltf(clip: &RawClip) -> String {
    let bones = clip.bones.len();
    // Bone `b` is node (and joint) `node_of[b]`: the source's joint order.
    let node_of: Vec<usize> =
        if clip.source.joint_order.len() == bones { clip.source.joint_order.clone() } else { (0..bones).collect() };
    let samples = clip.sample_count;
    let mut buffer: Vec<u8> = Vec::new();
    let mut views: Vec<Value> = Vec::new();
    let mut accessors: Vec<Value> = Vec::new();
    // Appends `data` as a buffer view (4-byte aligned) and an accessor over it.
    let mut add = |data: &[u8], accessor: Value, target: Option<u32>| -> usize {
        while buffer.len() % 4 != 0 {
            buffer.push(0);
        }
        let mut view = json!({ "buffer": 0, "byteOffset": buffer.len(), "byteLength": data.len() });
        if let Some(t) = target {
            view["target"] = json!(t);
        }
        buffer.extend_from_slice(data);
        views.push(view);
        let mut accessor = accessor;
        accessor["bufferView"] = json!(views.len() - 1);
        accessors.push(accessor);
        accessors.len() - 1
    };
    let floats =
        |values: &mut dyn Iterator<Item = f64>| -> Vec<u8> { values.flat_map(|v| (v as f32).to_le_bytes()).collect() };

    // Key times: sample i at i / rate (as f32, as a decoder would compute them).
    let times: Vec<f32> = (0..samples).map(|s| s as f32 / clip.sample_rate as f32).collect();
    let time_bytes: Vec<u8> = times.iter().flat_map(|t| t.to_le_bytes()).collect();
    let time_accessor = add(
        &time_bytes,
        json!({
            "componentType": 5126, "count": samples, "type": "SCALAR",
            "min": [times.first().copied().unwrap_or(0.0)], "max": [times.last().copied().unwrap_or(0.0)],
        }),
        None,
    );
    let mut channels = Vec::new();
    let mut samplers = Vec::new();
    for (b, track) in clip.tracks.iter().enumerate() {
        let parts: [(&str, &str, Vec<u8>); 3] = [
            ("rotation", "VEC4", floats(&mut track.rotations.iter().flatten().copied())),
            ("translation", "VEC3", floats(&mut track.translations.iter().flatten().copied())),
            ("scale", "VEC3", floats(&mut track.scales.iter().flatten().copied())),
        ];
        for (path, kind, data) in parts {
            let output = add(&data, json!({ "componentType": 5126, "count": samples, "type": kind }), None);
            samplers.push(json!({ "input": time_accessor, "output": output, "interpolation": "LINEAR" }));
            channels.push(json!({ "sampler": samplers.len() - 1, "target": { "node": node_of[b], "path": path } }));
        }
    }

    // The skeleton's bind pose in model space, and a box per bone.
    let globals = global_bind(clip);
    let mut positions: Vec<[f32; 3]> = Vec::with_capacity(bones * 8);
    let mut joints: Vec<u8> = Vec::with_capacity(bones * 8 * 8);
    let mut indices: Vec<u32> = Vec::with_capacity(bones * 36);
    const FACES: [[u32; 6]; 6] = [
        [0, 1, 3, 0, 3, 2],
        [4, 6, 7, 4, 7, 5],
        [0, 4, 5, 0, 5, 1],
        [2, 3, 7, 2, 7, 6],
        [0, 2, 6, 0, 6, 4],
        [1, 5, 7, 1, 7, 3],
    ];
    for (b, bone) in clip.bones.iter().enumerate() {
        let centre = [globals[b][0][3], globals[b][1][3], globals[b][2][3]];
        let half = 0.1 * bone.shell_distance;
        let first = positions.len() as u32;
        for corner in 0..8 {
            let sign = |bit: usize| if corner >> bit & 1 == 1 { half } else { -half };
            positions.push([(centre[0] + sign(2)) as f32, (centre[1] + sign(1)) as f32, (centre[2] + sign(0)) as f32]);
            for j in [node_of[b] as u16, 0, 0, 0] {
                joints.extend_from_slice(&j.to_le_bytes());
            }
        }
        indices.extend(FACES.iter().flatten().map(|i| first + i));
    }
    let (lo, hi) = positions.iter().fold(([f32::MAX; 3], [f32::MIN; 3]), |(lo, hi), p| {
        ([0, 1, 2].map(|i| lo[i].min(p[i])), [0, 1, 2].map(|i| hi[i].max(p[i])))
    });
    let position_bytes: Vec<u8> = positions.iter().flatten().flat_map(|v| v.to_le_bytes()).collect();
    let weight_bytes: Vec<u8> =
        (0..positions.len()).flat_map(|_| [1.0f32, 0.0, 0.0, 0.0]).flat_map(|w| w.to_le_bytes()).collect();
    let index_bytes: Vec<u8> = indices.iter().flat_map(|i| i.to_le_bytes()).collect();
    // Inverse bind matrices in joint order.
    let mut bone_of_node = vec![0usize; bones];
    for (b, &n) in node_of.iter().enumerate() {
        bone_of_node[n] = b;
    }
    let inverse_bytes: Vec<u8> = bone_of_node
        .iter()
        .flat_map(|&b| column_major(&invert(&globals[b])))
        .flat_map(|v| (v as f32).to_le_bytes())
        .collect();
    let count = positions.len();
    let position = add(
        &position_bytes,
        json!({ "componentType": 5126, "count": count, "type": "VEC3", "min": lo, "max": hi }),
        Some(34962),
    );
    let joint = add(&joints, json!({ "componentType": 5123, "count": count, "type": "VEC4" }), Some(34962));
    let weight = add(&weight_bytes, json!({ "componentType": 5126, "count": count, "type": "VEC4" }), Some(34962));
    let index =
        add(&index_bytes, json!({ "componentType": 5125, "count": indices.len(), "type": "SCALAR" }), Some(34963));
    let inverse = add(&inverse_bytes, json!({ "componentType": 5126, "count": bones, "type": "MAT4" }), None);

    let mut nodes: Vec<Value> = bone_of_node
        .iter()
        .map(|&b| {
            let bone = &clip.bones[b];
            let RawTransform { rotation, translation, scale } = bone.bind_pose;
            json!({
                "name": bone.name,
                "rotation": rotation.map(|v| v as f32),
                "translation": translation.map(|v| v as f32),
                "scale": scale.map(|v| v as f32),
            })
        })
        .collect();
    for (b, bone) in clip.bones.iter().enumerate() {
        if let Some(p) = bone.parent {
            let children = nodes[node_of[p]].get("children").cloned().unwrap_or(json!([]));
            let mut children = children.as_array().cloned().unwrap_or_default();
            children.push(json!(node_of[b]));
            nodes[node_of[p]]["children"] = json!(children);
        }
    }
    // The scene: each root, under a node of its placement when it has one, and the
    // boxes.
    let mut roots = Vec::new();
    for (b, bone) in clip.bones.iter().enumerate().filter(|(_, bone)| bone.parent.is_none()) {
        match clip.source.root_placements.iter().find(|p| p.bone == b) {
            Some(placement) => {
                let m = placement.matrix;
                let rows = [[m[0], m[1], m[2], m[3]], [m[4], m[5], m[6], m[7]], [m[8], m[9], m[10], m[11]]];
                let matrix: Vec<f32> = column_major(&rows).iter().map(|&v| v as f32).collect();
                nodes.push(
                    json!({ "name": format!("{} (placement)", bone.name), "matrix": matrix, "children": [node_of[b]] }),
                );
                roots.push(nodes.len() - 1);
            }
            None => roots.push(node_of[b]),
        }
    }
    let mesh_node = nodes.len();
    nodes.push(json!({ "name": format!("{} (bone boxes)", clip.name), "mesh": 0, "skin": 0 }));
    roots.push(mesh_node);
    let uri =
        format!("data:application/octet-stream;base64,{}", base64::engine::general_purpose::STANDARD.encode(&buffer));
    let document = json!({
        "asset": { "version": "2.0", "generator": concat!("ossa ", env!("CARGO_PKG_VERSION")) },
        "scene": 0,
        "scenes": [{ "name": clip.name, "nodes": roots }],
        "nodes": nodes,
        "meshes": [{ "name": "bone boxes", "primitives": [{
            "attributes": { "POSITION": position, "JOINTS_0": joint, "WEIGHTS_0": weight },
            "indices": index,
        }]}],
        "skins": [{ "name": clip.name, "joints": (0..bones).collect::<Vec<_>>(), "inverseBindMatrices": inverse }],
        "animations": [{ "name": clip.name, "channels": channels, "samplers": samplers }],
        "buffers": [{ "byteLength": buffer.len(), "uri": uri }],
        "bufferViews": views,
        "accessors": accessors,
    });
    let mut text = serde_json::to_string_pretty(&document).unwrap_or_default();
    text.push('\n');
    text
}

/// Each bone's bind pose in model space, as a row-major 3×4 affine matrix.
fn global_bind(clip: &RawClip) -> Vec<[[f64; 4]; 3]> {
    let mut out: Vec<[[f64; 4]; 3]> = Vec::with_capacity(clip.bones.len());
    for bone in &clip.bones {
        let local = affine(&bone.bind_pose);
        let global = match bone.parent.and_then(|p| out.get(p)) {
            Some(parent) => compose(parent, &local),
            None => local,
        };
        out.push(global);
    }
    out
}

/// `r · (s ⊙ p) + t` as a 3×4 matrix.
fn affine(t: &RawTransform) -> [[f64; 4]; 3] {
    let [x, y, z, w] = t.rotation;
    let n = (x * x + y * y + z * z + w * w).sqrt().max(f64::MIN_POSITIVE);
    let (x, y, z, w) = (x / n, y / n, z / n, w / n);
    let r = [
        [1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - z * w), 2.0 * (x * z + y * w)],
        [2.0 * (x * y + z * w), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - x * w)],
        [2.0 * (x * z - y * w), 2.0 * (y * z + x * w), 1.0 - 2.0 * (x * x + y * y)],
    ];
    let s = t.scale;
    [0, 1, 2].map(|i| [r[i][0] * s[0], r[i][1] * s[1], r[i][2] * s[2], t.translation[i]])
}

fn compose(a: &[[f64; 4]; 3], b: &[[f64; 4]; 3]) -> [[f64; 4]; 3] {
    [0, 1, 2].map(|i| {
        let row = |j: usize| (0..3).map(|k| a[i][k] * b[k][j]).sum::<f64>();
        [row(0), row(1), row(2), row(3) + a[i][3]]
    })
}

/// The inverse of an affine 3×4 matrix (the identity when it is singular).
fn invert(m: &[[f64; 4]; 3]) -> [[f64; 4]; 3] {
    let a = |i: usize, j: usize| m[i][j];
    let det = a(0, 0) * (a(1, 1) * a(2, 2) - a(1, 2) * a(2, 1)) - a(0, 1) * (a(1, 0) * a(2, 2) - a(1, 2) * a(2, 0))
        + a(0, 2) * (a(1, 0) * a(2, 1) - a(1, 1) * a(2, 0));
    if det.abs() < 1e-300 || !det.is_finite() {
        return [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]];
    }
    let cof = |i: usize, j: usize| {
        let (r0, r1) = ((i + 1) % 3, (i + 2) % 3);
        let (c0, c1) = ((j + 1) % 3, (j + 2) % 3);
        a(r0, c0) * a(r1, c1) - a(r0, c1) * a(r1, c0)
    };
    // The adjugate over the determinant, then the translation undone.
    [0, 1, 2].map(|i| {
        let r = [cof(0, i) / det, cof(1, i) / det, cof(2, i) / det];
        [r[0], r[1], r[2], -(r[0] * m[0][3] + r[1] * m[1][3] + r[2] * m[2][3])]
    })
}

/// A 3×4 affine matrix as glTF's column-major 4×4.
fn column_major(m: &[[f64; 4]; 3]) -> [f64; 16] {
    let mut out = [0.0; 16];
    for col in 0..4 {
        for row in 0..3 {
            out[col * 4 + row] = m[row][col];
        }
        out[col * 4 + 3] = if col == 3 { 1.0 } else { 0.0 };
    }
    out
}
