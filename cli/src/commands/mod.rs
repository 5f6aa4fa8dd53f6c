//! One module per command; what they share lives here.

pub mod batch;
pub mod bench;
pub mod breakdown;
pub mod bytes;
pub mod compress;
pub mod database;
pub mod decompress;
pub mod info;
pub mod stats;

use std::path::{Path, PathBuf};

use ossa_encoder::compress::memory_estimate;
use ossa_encoder::formats::acl_text;
use ossa_encoder::formats::acl_text::AclFile;
use ossa_encoder::formats::Declared;
use ossa_encoder::RawClip;

use crate::failure::Failure;
use crate::input::Input;
use crate::memory_limit::MemoryLimit;

/// Reads a file holding a clip or a scalar track list (a track list is small: its
/// text is the larger part of its memory): ACL text, or BVH by its extension.
pub fn load_file(input: Input, limit: &MemoryLimit) -> Result<AclFile, Failure> {
    let shown = input.shown.clone();
    let text = input.read_text(limit)?;
    let check = memory_check(text.len() as u64, limit);
    // BVH by its extension, or by its first word (standard input, another name).
    if is_bvh(&shown) || text.trim_start_matches('\u{feff}').trim_start().starts_with("HIERARCHY") {
        return ossa_encoder::formats::bvh::read_bvh_checked(&text, &clip_name(&shown), check)
            .map(AclFile::Clip)
            .map_err(|e| Failure::at(&shown, e));
    }
    acl_text::read_file_checked(&text, &clip_name(&shown), check).map_err(|e| Failure::at(&shown, e))
}

/// Whether `path` names a glTF model (`.gltf` or `.glb`, in any case).
pub fn is_gltf(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("gltf") || e.eq_ignore_ascii_case("glb"))
}

/// How glTF animations are imported and compressed (`--rate`, `--animation`, and
/// `--precision` or glTF's default, in metres).
#[derive(Clone, Debug)]
pub struct GltfOptions {
    /// Samples per second.
    pub rate: f64,
    /// The precision, in the scene's units.
    pub precision: f64,
    /// Which animations.
    pub animation: ossa_encoder::formats::gltf::AnimationChoice,
}

/// Reads a glTF model's animations (each checked against `limit` before its samples
/// are stored), and what the import left out, as notes to print.
pub fn load_gltf(
    input: Input,
    limit: &MemoryLimit,
    options: &GltfOptions,
) -> Result<(Vec<RawClip>, Vec<String>), Failure> {
    let shown = input.shown.clone();
    let bytes = input.read_bytes(limit)?;
    let dir = shown.parent().map(|d| if d.as_os_str().is_empty() { Path::new(".") } else { d });
    // Each clip alone against the limit (they are compressed one after another).
    let text_bytes = bytes.len() as u64;
    let imported = ossa_encoder::formats::gltf::read_gltf_checked(&bytes, dir, options.rate, &options.animation, |d| {
        memory_need(text_bytes, limit, d)
    })
    .map_err(|e| Failure::at(&shown, e))?;
    let notes =
        imported.notes.iter().map(|n| format!("ossa: note: {}: {n}", ossa_encoder::message::path(&shown))).collect();
    Ok((imported.clips, notes))
}

/// `name` with every character but letters, digits, `-` and `_` replaced by `_`: a
/// glTF animation's name in a file name (`MODEL_ANIMATION.ossa`).
pub fn file_safe(name: &str) -> String {
    name.chars().map(|c| if c.is_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect()
}

/// Whether `path` names a BVH file (by its extension, in any case).
fn is_bvh(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("bvh"))
}

/// The check of a clip's declared counts against `limit`.
fn memory_check(text_bytes: u64, limit: &MemoryLimit) -> impl FnOnce(Declared) -> Result<(), String> + '_ {
    move |declared| memory_need(text_bytes, limit, declared)
}

/// Whether compressing a clip of the `declared` counts, read from `text_bytes` of
/// input, fits `limit`.
fn memory_need(text_bytes: u64, limit: &MemoryLimit, declared: Declared) -> Result<(), String> {
    let threads = rayon::current_num_threads() as u64;
    // An additive base is sampled at the clip's times: count its samples too.
    let (bones, samples) = (declared.bones as u64, (declared.samples + declared.base_samples) as u64);
    let needed = memory_estimate::compress_estimate(bones, samples, text_bytes, threads);
    if limit.allows(needed) {
        Ok(())
    } else {
        Err(limit.refusal(&format!("compressing this clip ({bones} bones × {samples} samples)"), needed))
    }
}

/// The name of a clip read from `path` whose text names none.
pub fn clip_name(path: &Path) -> String {
    let file = path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
    for suffix in [".acl.sjson", ".sjson", ".bvh", ".gltf", ".glb"] {
        let cut = file.len().saturating_sub(suffix.len());
        if file.len() > suffix.len() && file.is_char_boundary(cut) && file[cut..].eq_ignore_ascii_case(suffix) {
            return file[..cut].to_owned();
        }
    }
    file
}

/// The clips named: files as given, folders replaced by the `.acl.sjson`, `.bvh`,
/// `.gltf` and `.glb` files in them (sorted by name, not recursive).
pub fn expand(inputs: &[PathBuf]) -> Vec<Result<PathBuf, (PathBuf, Failure)>> {
    let mut out = Vec::new();
    for input in inputs {
        if !input.is_dir() {
            out.push(Ok(input.clone()));
            continue;
        }
        let entries = match std::fs::read_dir(input) {
            Ok(entries) => entries,
            Err(e) => {
                out.push(Err((input.clone(), Failure::at(input, format!("cannot list the folder: {e}")))));
                continue;
            }
        };
        let mut clips: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name().is_some_and(|n| {
                    let n = n.to_string_lossy().to_lowercase();
                    n.ends_with(".acl.sjson") || n.ends_with(".bvh") || n.ends_with(".gltf") || n.ends_with(".glb")
                })
            })
            .collect();
        clips.sort();
        if clips.is_empty() {
            out.push(Err((
                input.clone(),
                Failure::at(input, "the folder holds no .acl.sjson, .bvh, .gltf or .glb clip"),
            )));
        }
        out.extend(clips.into_iter().map(Ok));
    }
    out
}
