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

/// Reads a text clip and refuses, before its samples are loaded, a clip whose
/// compression would need more memory than `limit`.
pub fn load_clip(input: Input, limit: &MemoryLimit) -> Result<RawClip, Failure> {
    let shown = input.shown.clone();
    let text = input.read_text(limit)?;
    acl_text::read_clip_checked(&text, &clip_name(&shown), memory_check(text.len() as u64, limit))
        .map_err(|e| Failure::at(&shown, e))
}

/// Reads a text file holding a clip or a scalar track list (a track list is small:
/// its text is the larger part of its memory).
pub fn load_file(input: Input, limit: &MemoryLimit) -> Result<AclFile, Failure> {
    let shown = input.shown.clone();
    let text = input.read_text(limit)?;
    acl_text::read_file_checked(&text, &clip_name(&shown), memory_check(text.len() as u64, limit))
        .map_err(|e| Failure::at(&shown, e))
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
    file.strip_suffix(".acl.sjson").or_else(|| file.strip_suffix(".sjson")).unwrap_or(&file).to_owned()
}

/// The clips named: files as given, folders replaced by the `.acl.sjson` files in
/// them (sorted by name, not recursive).
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
            .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().to_lowercase().ends_with(".acl.sjson")))
            .collect();
        clips.sort();
        if clips.is_empty() {
            out.push(Err((input.clone(), Failure::at(input, "the folder holds no .acl.sjson clip"))));
        }
        out.extend(clips.into_iter().map(Ok));
    }
    out
}
