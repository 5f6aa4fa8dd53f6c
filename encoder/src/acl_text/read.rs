//! ACL's text clip format (`.acl.sjson`, file versions 1 to 5): reading and writing.
//!
//! Reading turns the SJSON tree into a validated [`RawClip`]; every error names the
//! line and, where it applies, the bone and the sample. Writing produces a clip any
//! ACL-format tool can read, with the exact `f32` values that were decoded.

use std::collections::HashMap;
use std::fmt::{self, Write as _};

use ossa_decoder::format::{MAX_BONES, MAX_SAMPLES};

use crate::raw_clip::{Bone, BoneTrack, RawClip, RawTransform, MAX_TRANSFORM_SAMPLES};
use crate::sjson::{self, Node, Value};

/// Why a text clip could not be read.
#[derive(Clone, Debug, PartialEq)]
pub struct ImportError {
    /// The line the problem is on, when known.
    pub line: Option<u32>,
    /// The column, for syntax errors.
    pub column: Option<u32>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.column) {
            (Some(line), Some(column)) => write!(f, "line {line}, column {column}: {}", self.message),
            (Some(line), None) => write!(f, "line {line}: {}", self.message),
            _ => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for ImportError {}

fn err(node: Option<&Node>, message: impl Into<String>) -> ImportError {
    ImportError { line: node.map(|n| n.line), column: None, message: message.into() }
}

/// Reads a clip from the text of an `.acl.sjson` file. `default_name` names the clip
/// when the file does not.
pub fn read_clip(text: &str, default_name: &str) -> Result<RawClip, ImportError> {
    let doc = sjson::parse(text).map_err(|e| ImportError {
        line: Some(e.line),
        column: Some(e.column),
        message: e.message,
    })?;
    let version = doc.get("version").ok_or_else(|| err(None, "missing 'version': not an ACL clip file"))?;
    let v = number(version, "version")?;
    if !(1.0..=5.0).contains(&v) || v.fract() != 0.0 {
        return Err(err(Some(version), format!("unsupported ACL file version {v} (1 to 5 are read)")));
    }
    if let Some(list) = doc.get("track_list") {
        return Err(err(
            Some(list),
            "this file holds a scalar track list ('track_list'); ossa compresses transform clips only for now",
        ));
    }
    let clip = doc.get("clip").ok_or_else(|| err(None, "missing 'clip' section"))?;
    let name = match clip.get("name") {
        Some(n) => string(n, "clip name")?.to_owned(),
        None => default_name.to_owned(),
    };
    let samples_node = clip.get("num_samples").ok_or_else(|| err(Some(clip), "clip has no 'num_samples'"))?;
    let samples = number(samples_node, "num_samples")?;
    if samples.fract() != 0.0 || samples < 0.0 {
        return Err(err(Some(samples_node), format!("num_samples {samples} is not a whole number")));
    }
    if samples < 1.0 {
        return Err(err(Some(samples_node), "the clip has no samples (num_samples = 0)"));
    }
    if samples > f64::from(MAX_SAMPLES) {
        return Err(err(
            Some(samples_node),
            format!("num_samples {samples} exceeds the format's limit of {MAX_SAMPLES} samples"),
        ));
    }
    let sample_count = samples as usize;
    let rate_node = clip.get("sample_rate").ok_or_else(|| err(Some(clip), "clip has no 'sample_rate'"))?;
    let sample_rate = number(rate_node, "sample_rate")?;
    if !(sample_rate.is_finite() && (sample_rate as f32) > 0.0 && sample_rate <= f64::from(f32::MAX)) {
        return Err(err(Some(rate_node), format!("sample_rate {sample_rate} is not a positive number")));
    }
    if let Some(additive) = clip.get("additive_format") {
        let kind = string(additive, "additive_format")?;
        if kind != "none" {
            return Err(err(Some(additive), format!("additive clips ('{kind}') are not supported yet")));
        }
    }

    let bones_node = doc.get("bones").ok_or_else(|| err(None, "missing 'bones' section"))?;
    let bone_nodes = array(bones_node, "bones")?;
    if bone_nodes.len() > MAX_BONES as usize {
        return Err(err(
            Some(bones_node),
            format!("{} bones exceed the format's limit of {MAX_BONES}", bone_nodes.len()),
        ));
    }
    let mut bones = Vec::with_capacity(bone_nodes.len());
    let mut index_of: HashMap<String, usize> = HashMap::new();
    for node in bone_nodes {
        let name_node = node.get("name").ok_or_else(|| err(Some(node), "bone has no 'name'"))?;
        let name = string(name_node, "bone name")?.to_owned();
        if name.len() > u16::MAX as usize {
            return Err(err(Some(name_node), "bone name is longer than 65535 bytes"));
        }
        let parent = match node.get("parent") {
            None => None,
            Some(p) => {
                let parent = string(p, "parent")?;
                if parent.is_empty() {
                    None
                } else if let Some(&i) = index_of.get(parent) {
                    Some(i)
                } else if parent == name {
                    return Err(err(Some(p), format!("bone '{name}' is its own parent")));
                } else {
                    return Err(err(
                        Some(p),
                        format!("bone '{name}': parent '{parent}' is not a bone listed before it (unknown, later or cyclic)"),
                    ));
                }
            }
        };
        let shell_distance = match node.get("vertex_distance") {
            Some(d) => number(d, "vertex_distance")?,
            None => 3.0,
        };
        let bind_pose = RawTransform {
            rotation: optional_vector(node.get("bind_rotation"), [0.0, 0.0, 0.0, 1.0], "bind_rotation")?,
            translation: optional_vector(node.get("bind_translation"), [0.0; 3], "bind_translation")?,
            scale: optional_vector(node.get("bind_scale"), [1.0; 3], "bind_scale")?,
        };
        if index_of.insert(name.clone(), bones.len()).is_some() {
            return Err(err(Some(name_node), format!("two bones are named '{name}'")));
        }
        bones.push(Bone { name, parent, shell_distance, bind_pose });
    }

    // Refuse clips too large to hold before allocating their samples.
    let transform_samples = bones.len() as u64 * sample_count as u64;
    if transform_samples > MAX_TRANSFORM_SAMPLES {
        return Err(err(
            Some(samples_node),
            format!(
                "{} bones × {sample_count} samples = {transform_samples} transform samples, more than the encoder's limit of {MAX_TRANSFORM_SAMPLES}",
                bones.len()
            ),
        ));
    }
    let mut tracks: Vec<Option<BoneTrack>> = vec![None; bones.len()];
    let tracks_node = doc.get("tracks").ok_or_else(|| err(None, "missing 'tracks' section"))?;
    for node in array(tracks_node, "tracks")? {
        let name_node = node.get("name").ok_or_else(|| err(Some(node), "track has no 'name'"))?;
        let name = string(name_node, "track name")?;
        let &bone = index_of.get(name).ok_or_else(|| err(Some(name_node), format!("track '{name}' names no bone")))?;
        if tracks[bone].is_some() {
            return Err(err(Some(name_node), format!("bone '{name}' has two tracks")));
        }
        let sub = |key: &'static str| -> Result<Option<&Node>, ImportError> {
            let Some(n) = node.get(key) else { return Ok(None) };
            let items = array(n, key)?;
            if items.len() != sample_count {
                return Err(err(
                    Some(n),
                    format!("bone '{name}': {key} has {} samples, the clip has {sample_count}", items.len()),
                ));
            }
            Ok(Some(n))
        };
        let rotations = samples_of::<4>(sub("rotations")?, sample_count, [0.0, 0.0, 0.0, 1.0], name, "rotations")?;
        let translations = samples_of::<3>(sub("translations")?, sample_count, [0.0; 3], name, "translations")?;
        let scales = samples_of::<3>(sub("scales")?, sample_count, [1.0; 3], name, "scales")?;
        tracks[bone] = Some(BoneTrack { rotations, translations, scales });
    }
    let tracks = tracks
        .into_iter()
        .map(|t| {
            t.unwrap_or_else(|| BoneTrack {
                rotations: vec![[0.0, 0.0, 0.0, 1.0]; sample_count],
                translations: vec![[0.0; 3]; sample_count],
                scales: vec![[1.0; 3]; sample_count],
            })
        })
        .collect();
    let mut clip = RawClip { name, sample_rate, sample_count, bones, tracks };
    clip.validate().map_err(|e| {
        // Point at the offending bone's track when the problem is in the samples.
        ImportError { line: None, column: None, message: e.to_string() }
    })?;
    Ok(clip)
}

fn samples_of<const N: usize>(
    node: Option<&Node>,
    count: usize,
    default: [f64; N],
    bone: &str,
    key: &str,
) -> Result<Vec<[f64; N]>, ImportError> {
    let Some(node) = node else { return Ok(vec![default; count]) };
    let mut out = Vec::with_capacity(count);
    for (sample, item) in array(node, key)?.iter().enumerate() {
        let v = vector::<N>(item, key).map_err(|e| ImportError {
            line: e.line,
            column: None,
            message: format!("bone '{bone}': {key} sample {sample}: {}", e.message),
        })?;
        if !v.iter().all(|c| c.is_finite()) {
            return Err(err(Some(item), format!("bone '{bone}': {key} sample {sample}: value is NaN or infinite")));
        }
        if N == 4 && v.iter().all(|c| *c == 0.0) {
            return Err(err(
                Some(item),
                format!("bone '{bone}': {key} sample {sample}: rotation quaternion has zero length"),
            ));
        }
        out.push(v);
    }
    Ok(out)
}

fn number(node: &Node, what: &str) -> Result<f64, ImportError> {
    match &node.value {
        Value::Number(v) => Ok(*v),
        // Binary-exact files store the bits of an IEEE-754 double as 16 hex digits.
        Value::String(s) if s.len() == 16 && s.bytes().all(|b| b.is_ascii_hexdigit()) => u64::from_str_radix(s, 16)
            .map(f64::from_bits)
            .map_err(|_| err(Some(node), format!("{what}: bad hex number"))),
        _ => Err(err(Some(node), format!("{what} must be a number"))),
    }
}

fn string<'a>(node: &'a Node, what: &str) -> Result<&'a str, ImportError> {
    match &node.value {
        Value::String(s) => Ok(s),
        _ => Err(err(Some(node), format!("{what} must be a string"))),
    }
}

fn array<'a>(node: &'a Node, what: &str) -> Result<&'a [Node], ImportError> {
    match &node.value {
        Value::Array(items) => Ok(items),
        _ => Err(err(Some(node), format!("'{what}' must be a list"))),
    }
}

fn vector<const N: usize>(node: &Node, what: &str) -> Result<[f64; N], ImportError> {
    let items = array(node, what)?;
    if items.len() != N {
        return Err(err(Some(node), format!("expected {N} numbers, found {}", items.len())));
    }
    let mut out = [0.0; N];
    for (o, item) in out.iter_mut().zip(items) {
        *o = number(item, what)?;
    }
    Ok(out)
}

fn optional_vector<const N: usize>(
    node: Option<&Node>,
    default: [f64; N],
    what: &str,
) -> Result<[f64; N], ImportError> {
    match node {
        Some(n) => vector(n, what),
        None => Ok(default),
    }
}

/// Writes `clip` in ACL's text format (file version 5). Numbers are written in the
/// shortest decimal form that reads back to the same double, so `f32` values decoded
/// from an `.ossa` file survive the round trip exactly.
pub fn write_clip(clip: &RawClip) -> String {
    let mut s = String::with_capacity(clip.bones.len() * clip.sample_count * 160 + 1024);
    let _ = writeln!(s, "version = 5\n\nclip =\n{{");
    let _ = writeln!(s, "\tname = {}", quote(&clip.name));
    let _ = writeln!(s, "\tnum_samples = {}", clip.sample_count);
    let _ = writeln!(s, "\tsample_rate = {}", clip.sample_rate);
    let _ = writeln!(s, "\tis_binary_exact = false\n}}\n\nbones =\n[");
    for bone in &clip.bones {
        let parent = bone.parent.map(|p| clip.bones[p].name.as_str()).unwrap_or("");
        let _ = writeln!(s, "\t{{\n\t\tname = {}\n\t\tparent = {}", quote(&bone.name), quote(parent));
        let _ = writeln!(s, "\t\tvertex_distance = {}", bone.shell_distance);
        let b = &bone.bind_pose;
        let _ = writeln!(s, "\t\tbind_rotation = {}", list(&b.rotation));
        let _ = writeln!(s, "\t\tbind_translation = {}", list(&b.translation));
        let _ = writeln!(s, "\t\tbind_scale = {}\n\t}}", list(&b.scale));
    }
    let _ = writeln!(s, "]\n\ntracks =\n[");
    for (bone, track) in clip.bones.iter().zip(&clip.tracks) {
        let _ = writeln!(s, "\t{{\n\t\tname = {}", quote(&bone.name));
        write_samples(&mut s, "rotations", track.rotations.iter().map(|v| list(v)));
        write_samples(&mut s, "translations", track.translations.iter().map(|v| list(v)));
        write_samples(&mut s, "scales", track.scales.iter().map(|v| list(v)));
        let _ = writeln!(s, "\t}}");
    }
    let _ = writeln!(s, "]");
    s
}

fn write_samples(s: &mut String, key: &str, rows: impl Iterator<Item = String>) {
    let _ = writeln!(s, "\t\t{key} =\n\t\t[");
    for row in rows {
        let _ = writeln!(s, "\t\t\t{row}");
    }
    let _ = writeln!(s, "\t\t]");
}

fn list(values: &[f64]) -> String {
    let items: Vec<String> = values.iter().map(|v| format!("{v:?}")).collect();
    format!("[ {} ]", items.join(", "))
}

fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
