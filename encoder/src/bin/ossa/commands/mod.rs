//! One module per command; what they share lives here.

pub mod batch;
pub mod bench;
pub mod bytes;
pub mod compress;
pub mod database;
pub mod decompress;
pub mod info;
pub mod stats;

use std::path::{Path, PathBuf};

use ossa_encoder::acl_text::AclFile;
use ossa_encoder::{acl_text, memory, RawClip};

use crate::failure::Failure;
use crate::input::Input;
use crate::memory_limit::MemoryLimit;

/// Reads a clip (ACL text, or BVH motion capture by its `.bvh` extension) and
/// refuses, before its samples are loaded, a clip whose compression would need more
/// memory than `limit`.
pub fn load_clip(input: Input, limit: &MemoryLimit) -> Result<RawClip, Failure> {
    match load_file(input, limit)? {
        AclFile::Clip(clip) => Ok(clip),
        AclFile::TrackList(list) => Err(Failure::general(format!(
            "'{}' is a scalar track list: this command measures transform clips",
            list.name
        ))),
    }
}

/// Reads a file holding a clip or a scalar track list (a track list is small: its
/// text is the larger part of its memory): ACL text, or BVH by its extension.
pub fn load_file(input: Input, limit: &MemoryLimit) -> Result<AclFile, Failure> {
    let shown = input.shown.clone();
    let text = input.read_text(limit)?;
    let check = memory_check(text.len() as u64, limit);
    // BVH by its extension, or by its first word (standard input, another name).
    if is_bvh(&shown) || text.trim_start_matches('\u{feff}').trim_start().starts_with("HIERARCHY") {
        return ossa_encoder::bvh::read_bvh_checked(&text, &clip_name(&shown), check)
            .map(AclFile::Clip)
            .map_err(|e| Failure::at(&shown, e));
    }
    acl_text::read_file_checked(&text, &clip_name(&shown), check).map_err(|e| Failure::at(&shown, e))
}

/// Whether `path` names a BVH file (by its extension, in any case).
fn is_bvh(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("bvh"))
}

/// The check of a clip's declared counts against `limit`.
fn memory_check(text_bytes: u64, limit: &MemoryLimit) -> impl FnOnce(acl_text::Declared) -> Result<(), String> + '_ {
    let threads = rayon::current_num_threads() as u64;
    move |declared| {
        // An additive base is sampled at the clip's times: count its samples too.
        let (bones, samples) = (declared.bones as u64, (declared.samples + declared.base_samples) as u64);
        let needed = memory::compress_estimate(bones, samples, text_bytes, threads);
        if limit.allows(needed) {
            Ok(())
        } else {
            Err(limit.refusal(&format!("compressing this clip ({bones} bones × {samples} samples)"), needed))
        }
    }
}

/// The name of a clip read from `path` whose text names none.
pub fn clip_name(path: &Path) -> String {
    let file = path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
    for suffix in [".acl.sjson", ".sjson", ".bvh"] {
        let cut = file.len().saturating_sub(suffix.len());
        if file.len() > suffix.len() && file.is_char_boundary(cut) && file[cut..].eq_ignore_ascii_case(suffix) {
            return file[..cut].to_owned();
        }
    }
    file
}

/// The clips named: files as given, folders replaced by the `.acl.sjson` and `.bvh`
/// files in them (sorted by name, not recursive).
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
                    n.ends_with(".acl.sjson") || n.ends_with(".bvh")
                })
            })
            .collect();
        clips.sort();
        if clips.is_empty() {
            out.push(Err((input.clone(), Failure::at(input, "the folder holds no .acl.sjson or .bvh clip"))));
        }
        out.extend(clips.into_iter().map(Ok));
    }
    out
}
