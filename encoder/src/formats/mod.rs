//! Importers and exporters, one folder or file per format. Each turns its format into
//! the encoder's in-memory clips ([`crate::RawClip`], [`crate::raw_track_list::RawTrackList`])
//! or writes them back out; none of them compresses.
//!
//! - [`acl_text`]: ACL's text clips and scalar track lists (`.acl.sjson`), read and written;
//! - [`bvh`]: BVH motion capture, read;
//! - [`gltf`]: glTF 2.0 models, animations read as clips and clips written as models.

pub mod acl_text;
pub mod bvh;
pub mod gltf;

use std::fmt;

/// The counts a clip declares, known before any of its samples is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Declared {
    /// Bones.
    pub bones: usize,
    /// Samples per track.
    pub samples: usize,
    /// Samples per track of an additive clip's base (0 without one).
    pub base_samples: usize,
}

/// Why a text clip could not be read.
#[derive(Clone, Debug, PartialEq)]
pub struct ImportError {
    /// The line the problem is on, when known.
    pub line: Option<u32>,
    /// The column, when known.
    pub column: Option<u32>,
    /// What is wrong.
    pub message: String,
}

impl ImportError {
    /// An error about the whole clip rather than one place in the text.
    pub fn whole(message: impl Into<String>) -> ImportError {
        ImportError { line: None, column: None, message: message.into() }
    }
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
