//! glTF 2.0 import (`.gltf` with embedded or neighbouring buffers, `.glb`): each
//! animation becomes a clip, resampled uniformly.
//!
//! - **Skeleton.** With a skin, its joints are the bones (the first skin's; joints of
//!   other skins outside it are reported), bone `i` joint `i` when the skin lists
//!   every joint after its parent (as exporters write them): a runtime that indexes
//!   skinning matrices by joint gets the right bones. Otherwise the bones are
//!   reordered parents first, which is reported, and the joint order is kept
//!   ([`crate::SourceSkeleton::joint_order`]) and written back on export. A bone's
//!   parent is the nearest ancestor node that is a joint. Without a skin, the bones
//!   are the nodes any animation moves, with their ancestors, in node order. Names
//!   are the nodes' (`node N` when unnamed, made unique), the bind pose their static
//!   transforms. Every step is linear in the nodes.
//! - **Scene units.** The nodes above a root joint (an armature scaled by 100 or
//!   0.0254, turned to Y-up) place the skeleton in the scene: their transform is kept
//!   ([`crate::SourceSkeleton::root_placements`]), and the encoder holds the
//!   precision, and measures the error, in the scene's units (metres, by the glTF
//!   specification).
//! - **Resampling.** A clip's samples run from 0 to its last key time, that key
//!   included: at `rate` when the last key falls on a sample, else at the rate just
//!   above that lands a whole number of intervals on it (reported). Each channel is
//!   evaluated as the glTF specification defines its interpolation: STEP holds the
//!   key at or before the time, LINEAR interpolates translations and scales linearly
//!   and rotations spherically (the shorter way), CUBICSPLINE evaluates the Hermite
//!   spline of the key values and their in- and out-tangents scaled by the key
//!   interval (rotations then normalised). Before the first key a channel holds its
//!   first value, after the last its last. Key times are `f32`, exact to about
//!   `6e-8 · t`; a sample time within [`KEY_SNAP`]` · max(t, 1 s)` of a key (a
//!   millionth, 16 `f32` steps) takes the key's value exactly. A property no channel
//!   animates keeps the node's static value.
//! - **Reported, not dropped silently.** Animations that move no bone (and why),
//!   channels on nodes that are not bones, morph-target weights, and joints of other
//!   skins outside the first go into [`GltfImport::notes`].
//!
//! Shell distances: as for BVH ([`crate::formats::bvh`]), a bone's length (its longest child
//! translation in the bind pose), at least a thousandth of the skeleton's extent.

use std::collections::HashMap;
use std::path::Path;

use base64::Engine as _;
use gltf::accessor::{DataType, Dimensions};
use gltf::animation::util::ReadOutputs;
use gltf::animation::{Interpolation, Property};

use crate::formats::{Declared, ImportError};
use crate::raw_clip::{Bone, BoneTrack, RawClip, RawTransform, RootPlacement, SourceSkeleton, MAX_TRANSFORM_SAMPLES};

/// What a glTF file gave.
#[derive(Clone, Debug)]
pub struct GltfImport {
    /// One clip per animation imported, in file order; named after the animation
    /// (`animation N` when unnamed).
    pub clips: Vec<RawClip>,
    /// What was in the file and not imported, one sentence each.
    pub notes: Vec<String>,
}

/// Which animations to import.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AnimationChoice {
    /// Every one.
    All,
    /// The one of this name, or of this index when the text is a number no animation
    /// is named.
    Named(String),
}

/// The largest sample rate accepted, samples per second.
pub const MAX_RATE: f64 = 10_000.0;

/// Reads the glTF file `bytes` (JSON or binary); `dir` is where its external buffers
/// are (`None`: refused, for standard input), `rate` the samples per second.
pub fn read_gltf(
    bytes: &[u8],
    dir: Option<&Path>,
    rate: f64,
    choice: &AnimationChoice,
) -> Result<GltfImport, ImportError> {
    read_gltf_checked(bytes, dir, rate, choice, |_| Ok(()))
}

/// [`read_gltf`], calling `check` with each clip's bone and sample counts before its
/// samples are stored (a caller refuses there what would not fit its memory).
pub fn read_gltf_checked(
    bytes: &[u8],
    dir: Option<&Path>,
    rate: f64,
    choice: &AnimationChoice,
    mut check: impl FnMut(Declared) -> Result<(), String>,
) -> Result<GltfImport, ImportError> {
    if !(rate.is_finite() && rate > 0.0 && rate <= MAX_RATE) {
        return Err(ImportError::whole(format!(
            "sample rate {rate} is not valid: it must be above 0 and at most {MAX_RATE}"
        )));
    }
    let gltf = parse(bytes)?;
    let buffers = load_buffers(&gltf, dir)?;
    let document = &gltf.document;
    let mut notes = Vec::new();

    let skeleton = Skeleton::of(document, &mut notes)?;
    let animations: Vec<gltf::Animation<'_>> = match choice {
        AnimationChoice::All => document.animations().collect(),
        AnimationChoice::Named(wanted) => {
            let by_name: Vec<_> = document.animations().filter(|a| a.name() == Some(wanted.as_str())).collect();
            let by_index = wanted.parse::<usize>().ok().and_then(|i| document.animations().nth(i));
            match (by_name.first(), by_index) {
                (Some(a), _) => vec![a.clone()],
                (None, Some(a)) => vec![a],
                (None, None) => {
                    let names: Vec<String> = document.animations().map(|a| animation_name(&a)).collect();
                    return Err(ImportError::whole(match names.len() {
                        0 => format!("no animation '{wanted}': the file has none"),
                        n => format!(
                            "no animation '{wanted}': give a name or an index from 0 to {} (the file has {n}: {})",
                            n - 1,
                            names.join(", ")
                        ),
                    }));
                }
            }
        }
    };
    if document.animations().count() == 0 {
        return Err(ImportError::whole("the file has no animation"));
    }
    let mut clips = Vec::new();
    for animation in animations {
        if let Some(clip) = clip_of(&animation, &skeleton, &buffers, rate, &mut notes, &mut check)? {
            clips.push(clip);
        }
    }
    if clips.is_empty() {
        let why: Vec<&str> = notes.iter().filter(|n| n.starts_with("animation '")).map(String::as_str).collect();
        return Err(ImportError::whole(format!("no animation moves a bone: {}", why.join("; "))));
    }
    Ok(GltfImport { clips, notes })
}

/// Parses and validates a glTF file. The gltf crate's validation indexes a mesh
/// primitive's POSITION accessor before checking its index (a panic on a malformed file,
/// found by fuzz/gltf): every primitive attribute's accessor index is checked first,
/// and every animation channel's target, which it does not check at all.
fn parse(bytes: &[u8]) -> Result<gltf::Gltf, ImportError> {
    let invalid = |e: &dyn std::fmt::Display| ImportError::whole(format!("not a valid glTF file: {e}"));
    // A binary glTF's declared length below its own header's 12 bytes: the crate
    // subtracts without checking.
    if bytes.starts_with(b"glTF") {
        let length = bytes.get(8..12).map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        if length < 12 {
            return Err(invalid(&format!("binary glTF declares {length} bytes, less than its 12-byte header")));
        }
    }
    let unchecked = gltf::Gltf::from_slice_without_validation(bytes).map_err(|e| invalid(&e))?;
    let json = unchecked.document.into_json();
    let accessors = json.accessors.len();
    for (m, mesh) in json.meshes.iter().enumerate() {
        for (p, primitive) in mesh.primitives.iter().enumerate() {
            if let Some(index) = primitive.attributes.values().map(|i| i.value()).find(|&i| i >= accessors) {
                return Err(invalid(&format!(
                    "mesh {m}, primitive {p}: attribute accessor {index} does not exist ({accessors} accessors)"
                )));
            }
        }
    }
    // Nor does it check a channel's target (its node index, its property), which the
    // crate's channel API then indexes and unwraps (found by fuzz/gltf too).
    let nodes = json.nodes.len();
    for (a, animation) in json.animations.iter().enumerate() {
        for (c, channel) in animation.channels.iter().enumerate() {
            let target = &channel.target;
            if target.node.value() >= nodes || !matches!(target.path, gltf::json::validation::Checked::Valid(_)) {
                return Err(invalid(&format!(
                    "animation {a}, channel {c}: its target (node {} of {nodes}, or its property) is not valid",
                    target.node.value()
                )));
            }
        }
    }
    let document = gltf::Document::from_json(json).map_err(|e| invalid(&e))?;
    Ok(gltf::Gltf { document, blob: unchecked.blob })
}

/// An animation's name, or `animation N`.
fn animation_name(animation: &gltf::Animation<'_>) -> String {
    animation.name().map_or_else(|| format!("animation {}", animation.index()), str::to_owned)
}

/// The buffers' bytes: the binary chunk of a `.glb`, base64 `data:` URIs, or files
/// beside the glTF file.
fn load_buffers(gltf: &gltf::Gltf, dir: Option<&Path>) -> Result<Vec<Vec<u8>>, ImportError> {
    let mut out = Vec::new();
    for buffer in gltf.document.buffers() {
        let data = match buffer.source() {
            gltf::buffer::Source::Bin => gltf.blob.clone().ok_or_else(|| {
                ImportError::whole(format!("buffer {} refers to a binary chunk the file lacks", buffer.index()))
            })?,
            gltf::buffer::Source::Uri(uri) => {
                if let Some(rest) = uri.strip_prefix("data:") {
                    let (_, payload) = rest.split_once(";base64,").ok_or_else(|| {
                        ImportError::whole(format!("buffer {}: only base64 data URIs are read", buffer.index()))
                    })?;
                    base64::engine::general_purpose::STANDARD
                        .decode(payload)
                        .map_err(|e| ImportError::whole(format!("buffer {}: bad base64: {e}", buffer.index())))?
                } else if let Some((scheme, _)) = uri.split_once("://") {
                    return Err(ImportError::whole(format!(
                        "buffer {} is at '{uri}', a {scheme} address: only embedded (data:) buffers and files beside \
                         the glTF file are read (download it and refer to it by a relative path)",
                        buffer.index()
                    )));
                } else {
                    let dir = dir.ok_or_else(|| {
                        ImportError::whole(format!(
                            "buffer {} is the file '{uri}', which cannot be found from standard input",
                            buffer.index()
                        ))
                    })?;
                    let name = percent_decode(uri);
                    if Path::new(&name).is_absolute() || name.split(['/', '\\']).any(|p| p == "..") {
                        return Err(ImportError::whole(format!(
                            "buffer {}: '{uri}' is outside the glTF file's folder (absolute or '..'): refused",
                            buffer.index()
                        )));
                    }
                    std::fs::read(dir.join(&name)).map_err(|e| {
                        ImportError::whole(format!("buffer {}: cannot read '{name}': {e}", buffer.index()))
                    })?
                }
            }
        };
        if data.len() < buffer.length() {
            return Err(ImportError::whole(format!(
                "buffer {} holds {} bytes, the file declares {}",
                buffer.index(),
                data.len(),
                buffer.length()
            )));
        }
        out.push(data);
    }
    Ok(out)
}

/// `%XX` escapes of a relative URI decoded.
fn percent_decode(uri: &str) -> String {
    let bytes = uri.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Ok(v) = u8::from_str_radix(&uri[i + 1..i + 3], 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The bones, in an order with parents first, and what the source says beyond them.
struct Skeleton {
    /// Bone of each node that is one.
    bone_of: HashMap<usize, usize>,
    bones: Vec<Bone>,
    /// The skin's joint order when bones had to be reordered, and the transforms above
    /// the roots.
    source: SourceSkeleton,
}

/// A row-major 3 × 4 affine matrix.
type Matrix = [[f64; 4]; 3];

const IDENTITY: Matrix = [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]];

fn compose(a: &Matrix, b: &Matrix) -> Matrix {
    std::array::from_fn(|i| {
        let row = |j: usize| (0..3).map(|k| a[i][k] * b[k][j]).sum::<f64>();
        [row(0), row(1), row(2), row(3) + a[i][3]]
    })
}

/// A node's own transform (its matrix, or its translation, rotation and scale).
fn local_matrix(node: &gltf::Node<'_>) -> Matrix {
    let m = node.transform().matrix();
    // glTF matrices are column-major.
    std::array::from_fn(|row| std::array::from_fn(|col| f64::from(m[col][row])))
}

fn node_name(node: &gltf::Node<'_>) -> String {
    node.name().map_or_else(|| format!("node {}", node.index()), str::to_owned)
}

impl Skeleton {
    /// Every step is linear in the nodes: a glTF file of 40,000 joints is as quick to
    /// read as its size says.
    fn of(document: &gltf::Document, notes: &mut Vec<String>) -> Result<Skeleton, ImportError> {
        let nodes: Vec<gltf::Node<'_>> = document.nodes().collect();
        let count = nodes.len();
        let mut parent_node: Vec<Option<usize>> = vec![None; count];
        for node in &nodes {
            for child in node.children() {
                if parent_node[child.index()].is_some() {
                    return Err(ImportError::whole(format!(
                        "node {} ('{}') has two parents",
                        child.index(),
                        node_name(&child)
                    )));
                }
                parent_node[child.index()] = Some(node.index());
            }
        }
        // Parents before children, breadth first from the nodes without a parent. A
        // node never reached is its own ancestor.
        let mut order: Vec<usize> = (0..count).filter(|&n| parent_node[n].is_none()).collect();
        let mut next = 0;
        while next < order.len() {
            order.extend(nodes[order[next]].children().map(|c| c.index()));
            next += 1;
        }
        if order.len() < count {
            let mut reached = vec![false; count];
            order.iter().for_each(|&n| reached[n] = true);
            let cycle: Vec<String> = (0..count)
                .filter(|&n| !reached[n])
                .take(8)
                .map(|n| format!("{n} ('{}')", node_name(&nodes[n])))
                .collect();
            return Err(ImportError::whole(format!(
                "the nodes' children form a cycle (a node is its own ancestor): nodes {}",
                cycle.join(", ")
            )));
        }
        let mut world = vec![IDENTITY; count];
        for &n in &order {
            let local = local_matrix(&nodes[n]);
            world[n] = match parent_node[n] {
                Some(p) => compose(&world[p], &local),
                None => local,
            };
        }

        // The source's list of bones: the first skin's joints, or without a skin the
        // nodes the animations move and their ancestors, in index order.
        let skins: Vec<gltf::Skin<'_>> = document.skins().collect();
        let chosen: Vec<usize> = match skins.first() {
            Some(skin) => {
                let joints: Vec<usize> = skin.joints().map(|j| j.index()).collect();
                skin_notes(&skins, &nodes, notes);
                joints
            }
            None => {
                let mut set = vec![false; count];
                for animation in document.animations() {
                    for channel in animation.channels() {
                        let mut at = Some(channel.target().node().index());
                        while let Some(n) = at.filter(|&n| !set[n]) {
                            set[n] = true;
                            at = parent_node[n];
                        }
                    }
                }
                (0..count).filter(|&n| set[n]).collect()
            }
        };
        if chosen.is_empty() {
            return Err(ImportError::whole("the file has no skin and no animated node: nothing to import"));
        }
        let mut joint_of: Vec<Option<usize>> = vec![None; count];
        for (j, &n) in chosen.iter().enumerate() {
            if joint_of[n].replace(j).is_some() {
                return Err(ImportError::whole(format!("skin 0 lists node {n} ('{}') twice", node_name(&nodes[n]))));
            }
        }
        // Each node's nearest ancestor that is a joint, parents first: linear.
        let mut nearest: Vec<Option<usize>> = vec![None; count];
        for &n in &order {
            nearest[n] = parent_node[n].and_then(|p| if joint_of[p].is_some() { Some(p) } else { nearest[p] });
        }
        let joint_parent: Vec<Option<usize>> = chosen.iter().map(|&n| nearest[n].and_then(|p| joint_of[p])).collect();
        // Bone `b` is joint `bone_joint[b]`: the source's order when every joint comes
        // after its parent (as exporters write them), else each joint after its
        // not-yet-placed ancestors, the source's order kept otherwise.
        let parents_first = joint_parent.iter().enumerate().all(|(j, p)| p.is_none_or(|p| p < j));
        let bone_joint: Vec<usize> = if parents_first {
            (0..chosen.len()).collect()
        } else {
            let mut placed = vec![false; chosen.len()];
            let (mut out, mut chain) = (Vec::with_capacity(chosen.len()), Vec::new());
            for j in 0..chosen.len() {
                let mut at = Some(j);
                while let Some(a) = at.filter(|&a| !placed[a]) {
                    placed[a] = true;
                    chain.push(a);
                    at = joint_parent[a];
                }
                out.extend(chain.drain(..).rev());
            }
            out
        };
        let mut bone_of_joint = vec![0usize; chosen.len()];
        for (b, &j) in bone_joint.iter().enumerate() {
            bone_of_joint[j] = b;
        }
        if let Some((b, &j)) = bone_joint.iter().enumerate().find(|&(b, &j)| b != j) {
            notes.push(format!(
                "{}: joints are not listed parents first, so the bones are reordered (joint {j} '{}' is bone {b}, \
                 the first moved); the joint order is kept and written back on export",
                skins.first().map_or_else(|| "the animated nodes".to_owned(), skin_name),
                node_name(&nodes[chosen[j]]),
            ));
        }
        let bone_of: HashMap<usize, usize> = chosen.iter().enumerate().map(|(j, &n)| (n, bone_of_joint[j])).collect();
        let mut used = std::collections::HashSet::new();
        let mut bones: Vec<Bone> = bone_joint
            .iter()
            .map(|&j| {
                let node = &nodes[chosen[j]];
                let base = node_name(node);
                let mut name = base.clone();
                let mut k = 2;
                while !used.insert(name.clone()) {
                    name = format!("{base} ({k})");
                    k += 1;
                }
                let (t, r, s) = node.transform().decomposed();
                Bone {
                    name,
                    parent: joint_parent[j].map(|p| bone_of_joint[p]),
                    shell_distance: 0.0,
                    bind_pose: RawTransform {
                        rotation: r.map(f64::from),
                        translation: t.map(f64::from),
                        scale: s.map(f64::from),
                    },
                }
            })
            .collect();
        // Where the roots sit in the scene: their parent nodes' world transforms.
        let mut root_placements = Vec::new();
        for (b, bone) in bones.iter().enumerate().filter(|(_, bone)| bone.parent.is_none()) {
            let Some(above) = parent_node[chosen[bone_joint[b]]] else { continue };
            let m = world[above];
            if m != IDENTITY {
                let matrix: [f64; 12] = std::array::from_fn(|k| m[k / 4][k % 4]);
                let placement = RootPlacement { bone: b, matrix };
                if placement.stretch() <= 0.0 || matrix.iter().any(|v| !v.is_finite()) {
                    return Err(ImportError::whole(format!(
                        "the nodes above root joint '{}' scale it to nothing (a zero scale, or not finite)",
                        bone.name
                    )));
                }
                root_placements.push(placement);
            }
        }
        // Shell distances: each bone's longest child translation.
        let mut length = vec![0.0f64; bones.len()];
        for bone in &bones {
            if let Some(p) = bone.parent {
                length[p] = length[p].max(norm(bone.bind_pose.translation));
            }
        }
        let extent = (0..bones.len()).map(|b| length[b].max(norm(bones[b].bind_pose.translation))).fold(0.0, f64::max);
        let floor = if extent > 0.0 { extent * 1e-3 } else { 1.0 };
        for (b, bone) in bones.iter_mut().enumerate() {
            let own = if length[b] > 0.0 { length[b] } else { norm(bone.bind_pose.translation) };
            bone.shell_distance = own.max(floor);
        }
        // The nodes above the roots: kept as the placement when they move them.
        let mut above = vec![false; count];
        for bone in bones.iter().enumerate().filter(|(_, b)| b.parent.is_none()) {
            let mut at = parent_node[chosen[bone_joint[bone.0]]];
            while let Some(n) = at.filter(|&n| !above[n]) {
                above[n] = true;
                at = parent_node[n];
            }
        }
        if !root_placements.is_empty() {
            let placing: Vec<String> = (0..count).filter(|&n| above[n]).map(|n| node_name(&nodes[n])).collect();
            notes.push(format!(
                "the nodes above the root joints ({}) place the skeleton in the scene: their transform is kept, and \
                 the precision and errors are in the scene's units",
                placing.join(", ")
            ));
        }
        // Nodes that are neither bones nor a kept placement.
        let kept = |n: usize| bone_of.contains_key(&n) || (above[n] && !root_placements.is_empty());
        let others: Vec<String> = nodes.iter().filter(|n| !kept(n.index())).map(node_name).collect();
        if !others.is_empty() {
            let shown: Vec<&str> = others.iter().take(12).map(String::as_str).collect();
            notes.push(format!(
                "{} node(s) are not bones (outside the skin, or not animated): {}{}",
                others.len(),
                shown.join(", "),
                if others.len() > shown.len() { ", …" } else { "" }
            ));
        }
        let joint_order = if parents_first { Vec::new() } else { bone_joint };
        Ok(Skeleton { bone_of, bones, source: SourceSkeleton { joint_order, root_placements } })
    }
}

fn skin_name(skin: &gltf::Skin<'_>) -> String {
    match skin.name() {
        Some(name) => format!("skin {} '{name}'", skin.index()),
        None => format!("skin {}", skin.index()),
    }
}

/// Notes on the skins after the first, whose joints are the bones: one whose joints
/// are all among the first's loses nothing (three.js writes one identical skin per
/// mesh); one with other joints does.
fn skin_notes(skins: &[gltf::Skin<'_>], nodes: &[gltf::Node<'_>], notes: &mut Vec<String>) {
    let Some(first) = skins.first() else { return };
    let mut in_first = vec![false; nodes.len()];
    first.joints().for_each(|j| in_first[j.index()] = true);
    for skin in &skins[1..] {
        let outside: Vec<String> = skin.joints().filter(|j| !in_first[j.index()]).map(|j| node_name(&j)).collect();
        if !outside.is_empty() {
            let shown: Vec<&str> = outside.iter().take(8).map(String::as_str).collect();
            notes.push(format!(
                "{}: {} of its {} joints are not joints of {}, whose joints are the bones: not imported ({}{})",
                skin_name(skin),
                outside.len(),
                skin.joints().count(),
                skin_name(first),
                shown.join(", "),
                if outside.len() > shown.len() { ", …" } else { "" }
            ));
        }
    }
}

fn norm(v: [f64; 3]) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

/// One channel's keys: times and values (triplets of in-tangent, value, out-tangent
/// for CUBICSPLINE), as `f64` vectors of 3 or 4 components.
struct Curve {
    times: Vec<f64>,
    values: Vec<[f64; 4]>,
    interpolation: Interpolation,
    rotation: bool,
}

/// The clip of `animation`, or `None` when it moves no bone.
fn clip_of(
    animation: &gltf::Animation<'_>,
    skeleton: &Skeleton,
    buffers: &[Vec<u8>],
    rate: f64,
    notes: &mut Vec<String>,
    check: &mut dyn FnMut(Declared) -> Result<(), String>,
) -> Result<Option<RawClip>, ImportError> {
    let name = animation_name(animation);
    let bad = |what: String| ImportError::whole(format!("animation '{name}': {what}"));
    // Per bone, per property (0 rotation, 1 translation, 2 scale): its curve.
    let mut curves: HashMap<(usize, usize), Curve> = HashMap::new();
    let (mut outside, mut weights) = (Vec::new(), Vec::new());
    for channel in animation.channels() {
        let node = channel.target().node();
        let property = match channel.target().property() {
            Property::Rotation => 0,
            Property::Translation => 1,
            Property::Scale => 2,
            Property::MorphTargetWeights => {
                weights.push(node_name(&node));
                continue;
            }
        };
        let Some(&bone) = skeleton.bone_of.get(&node.index()) else {
            outside.push(node_name(&node));
            continue;
        };
        // The gltf crate's readers trust an accessor's type, stride and extent (a
        // mismatch is an assertion or an unchecked sum in it): each is checked first.
        let sampler = channel.sampler();
        let channel_bad = |what: String| bad(format!("channel {}: {what}", channel.index()));
        check_accessor(&sampler.input(), buffers, Dimensions::Scalar, &[DataType::F32])
            .map_err(|e| channel_bad(format!("key times: {e}")))?;
        let (dimensions, types): (Dimensions, &[DataType]) = if property == 0 {
            (Dimensions::Vec4, &[DataType::F32, DataType::I8, DataType::U8, DataType::I16, DataType::U16])
        } else {
            (Dimensions::Vec3, &[DataType::F32])
        };
        check_accessor(&sampler.output(), buffers, dimensions, types)
            .map_err(|e| channel_bad(format!("key values: {e}")))?;
        let reader = channel.reader(|b| buffers.get(b.index()).map(Vec::as_slice));
        let times: Vec<f64> = reader
            .read_inputs()
            .ok_or_else(|| bad(format!("channel {}: no key times", channel.index())))?
            .map(f64::from)
            .collect();
        let values: Vec<[f64; 4]> = match reader.read_outputs() {
            Some(ReadOutputs::Rotations(r)) => r.into_f32().map(|q| q.map(f64::from)).collect(),
            Some(ReadOutputs::Translations(t)) | Some(ReadOutputs::Scales(t)) => {
                t.map(|v| [f64::from(v[0]), f64::from(v[1]), f64::from(v[2]), 0.0]).collect()
            }
            _ => return Err(bad(format!("channel {}: no key values", channel.index()))),
        };
        let interpolation = channel.sampler().interpolation();
        let per_key = if interpolation == Interpolation::CubicSpline { 3 } else { 1 };
        if times.is_empty()
            || values.len() != times.len() * per_key
            || times.iter().any(|t| !t.is_finite() || *t < 0.0)
            || times.windows(2).any(|w| w[1] <= w[0])
            || values.iter().flatten().any(|v| !v.is_finite())
        {
            return Err(bad(format!(
                "channel {}: {} key times and {} values do not make a valid {interpolation:?} curve (times increasing from 0, values finite)",
                channel.index(),
                times.len(),
                values.len()
            )));
        }
        curves.insert((bone, property), Curve { times, values, interpolation, rotation: property == 0 });
    }
    let listed = |names: &mut Vec<String>| {
        let count = names.len();
        names.sort();
        names.dedup();
        format!("{count} channel(s) on {}", names.join(", "))
    };
    let mut left_out = Vec::new();
    if !outside.is_empty() {
        left_out.push(format!("{} (nodes that are not bones)", listed(&mut outside)));
    }
    if !weights.is_empty() {
        left_out
            .push(format!("{} animating morph-target weights, which are not skeletal motion", listed(&mut weights)));
    }
    if curves.is_empty() {
        let why = if left_out.is_empty() { "it has no channels".to_owned() } else { left_out.join("; ") };
        notes.push(format!("animation '{name}' moves no bone, so it is not imported: {why}"));
        return Ok(None);
    }
    if !left_out.is_empty() {
        notes.push(format!("animation '{name}': not imported: {}", left_out.join("; ")));
    }
    // Samples from 0 to the last key, that key included: `n` intervals at the rate
    // asked for, or when the last key falls between two samples, `n` rounded up and
    // the rate raised to land the last sample on it (a share of one sample at most).
    let end = curves.values().filter_map(|c| c.times.last().copied()).fold(0.0, f64::max);
    let exact = end * rate;
    let on_a_sample = (exact - exact.round()).abs() <= exact * KEY_SNAP;
    let intervals = if on_a_sample { exact.round() } else { exact.ceil() };
    let samples = (intervals as usize).saturating_add(1);
    let clip_rate = if on_a_sample { rate } else { intervals / end };
    if clip_rate != rate {
        notes.push(format!(
            "animation '{name}': its last key ({} s) falls between two samples at {rate} Hz, so it is sampled at \
             {} Hz ({intervals} intervals) to keep its last pose",
            end as f32, clip_rate as f32
        ));
    }
    let bones = skeleton.bones.len();
    if (samples as u64).saturating_mul(bones as u64) > MAX_TRANSFORM_SAMPLES {
        return Err(bad(format!(
            "{samples} samples of {bones} bones at {clip_rate} Hz is more than the encoder takes"
        )));
    }
    check(Declared { bones, samples, base_samples: 0 }).map_err(bad)?;
    let mut tracks = Vec::with_capacity(bones);
    for (b, bone) in skeleton.bones.iter().enumerate() {
        let rest = bone.bind_pose;
        let at = |property: usize, s: usize| -> [f64; 4] {
            let time = if s + 1 == samples { end } else { (s as f64 / clip_rate).min(end) };
            match curves.get(&(b, property)) {
                Some(curve) => evaluate(curve, time),
                None => match property {
                    0 => rest.rotation,
                    1 => [rest.translation[0], rest.translation[1], rest.translation[2], 0.0],
                    _ => [rest.scale[0], rest.scale[1], rest.scale[2], 0.0],
                },
            }
        };
        let three = |v: [f64; 4]| [v[0], v[1], v[2]];
        tracks.push(BoneTrack {
            rotations: (0..samples).map(|s| at(0, s)).collect(),
            translations: (0..samples).map(|s| three(at(1, s))).collect(),
            scales: (0..samples).map(|s| three(at(2, s))).collect(),
        });
    }
    let clip = RawClip {
        name: name.clone(),
        sample_rate: clip_rate,
        sample_count: samples,
        bones: skeleton.bones.clone(),
        tracks,
        additive: None,
        source: skeleton.source.clone(),
    };
    clip.check().map_err(|e| bad(e.to_string()))?;
    Ok(Some(clip))
}

/// Checks that `accessor` holds `dimensions` of one of `types`, dense, its elements
/// inside its buffer view and the view inside its buffer.
fn check_accessor(
    accessor: &gltf::Accessor<'_>,
    buffers: &[Vec<u8>],
    dimensions: Dimensions,
    types: &[DataType],
) -> Result<(), String> {
    if accessor.sparse().is_some() {
        return Err(format!("accessor {} is sparse, which animations here do not use", accessor.index()));
    }
    if accessor.dimensions() != dimensions || !types.contains(&accessor.data_type()) {
        return Err(format!(
            "accessor {} holds {:?} of {:?}, {dimensions:?} of {types:?} expected",
            accessor.index(),
            accessor.dimensions(),
            accessor.data_type()
        ));
    }
    let view = accessor.view().ok_or_else(|| format!("accessor {} has no buffer view", accessor.index()))?;
    let element = accessor.size();
    let stride = view.stride().unwrap_or(element);
    let count = accessor.count();
    let end = (count.max(1) - 1)
        .checked_mul(stride)
        .and_then(|n| n.checked_add(element))
        .and_then(|n| n.checked_add(accessor.offset()));
    let buffer = buffers.get(view.buffer().index()).map_or(0, Vec::len);
    let view_end = view.offset().checked_add(view.length());
    match (end, view_end) {
        (Some(end), Some(view_end)) if stride >= element && count > 0 && end <= view.length() && view_end <= buffer => Ok(()),
        _ => Err(format!(
            "accessor {} ({count} elements of {element} bytes, stride {stride}, offset {}) does not fit its buffer view \
             ({} bytes at {} of a {buffer}-byte buffer)",
            accessor.index(),
            accessor.offset(),
            view.length(),
            view.offset()
        )),
    }
}

/// Within this share of a second (times the time, past one second) of a key, a time
/// takes the key's value exactly: key times are `f32` (exact to `2⁻²⁴ · t`, about
/// `6e-8 · t`), sample times `i / rate` in `f64`, so a sample meant to fall on a key
/// misses it by up to that much. A millionth is 16 such steps: ample for the key
/// times an exporter rounded, 3.6 ms at one hour. (A fixed tolerance cannot serve
/// both ends: `f32` times are 0.24 ms apart at one hour.)
pub const KEY_SNAP: f64 = 1e-6;

/// A curve's value at `time` (see the module documentation).
fn evaluate(curve: &Curve, time: f64) -> [f64; 4] {
    let snap = KEY_SNAP * time.abs().max(1.0);
    let times = &curve.times;
    let cubic = curve.interpolation == Interpolation::CubicSpline;
    let value = |k: usize| if cubic { curve.values[3 * k + 1] } else { curve.values[k] };
    let last = times.len() - 1;
    // The key at or before the time (a time a hair before a key counts as on it).
    let k = times.partition_point(|&t| t <= time + snap).saturating_sub(1);
    if time <= times[0] + snap {
        return value(0);
    }
    if k >= last || (time - times[k]).abs() <= snap {
        return value(k.min(last));
    }
    let (t0, t1) = (times[k], times[k + 1]);
    let s = (time - t0) / (t1 - t0);
    let v = match curve.interpolation {
        Interpolation::Step => return value(k),
        Interpolation::Linear if curve.rotation => return slerp(value(k), value(k + 1), s),
        Interpolation::Linear => {
            let (a, b) = (value(k), value(k + 1));
            [0, 1, 2, 3].map(|i| a[i] + (b[i] - a[i]) * s)
        }
        Interpolation::CubicSpline => {
            let td = t1 - t0;
            let (v0, out0) = (curve.values[3 * k + 1], curve.values[3 * k + 2]);
            let (in1, v1) = (curve.values[3 * (k + 1)], curve.values[3 * (k + 1) + 1]);
            let (s2, s3) = (s * s, s * s * s);
            let (h00, h10, h01, h11) = (2.0 * s3 - 3.0 * s2 + 1.0, s3 - 2.0 * s2 + s, -2.0 * s3 + 3.0 * s2, s3 - s2);
            [0, 1, 2, 3].map(|i| h00 * v0[i] + h10 * td * out0[i] + h01 * v1[i] + h11 * td * in1[i])
        }
    };
    if curve.rotation {
        normalize(v)
    } else {
        v
    }
}

fn normalize(q: [f64; 4]) -> [f64; 4] {
    let n = q.iter().map(|v| v * v).sum::<f64>().sqrt();
    if n > 0.0 && n.is_finite() {
        q.map(|v| v / n)
    } else {
        [0.0, 0.0, 0.0, 1.0]
    }
}

/// Spherical linear interpolation from `a` to `b` by `s`, the shorter way.
pub(crate) fn slerp(a: [f64; 4], b: [f64; 4], s: f64) -> [f64; 4] {
    let (a, mut b) = (normalize(a), normalize(b));
    let mut dot: f64 = (0..4).map(|i| a[i] * b[i]).sum();
    if dot < 0.0 {
        b = b.map(|v| -v);
        dot = -dot;
    }
    if dot > 0.9995 {
        return normalize([0, 1, 2, 3].map(|i| a[i] + (b[i] - a[i]) * s));
    }
    let theta = dot.clamp(-1.0, 1.0).acos();
    let (wa, wb) = (((1.0 - s) * theta).sin() / theta.sin(), (s * theta).sin() / theta.sin());
    [0, 1, 2, 3].map(|i| wa * a[i] + wb * b[i])
}
