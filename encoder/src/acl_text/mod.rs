//! ACL's text clip format (`.acl.sjson`, file versions 1 to 5): reading and writing.
//!
//! Reading ([`read_clip`], [`read_clip_checked`]) turns the text into a validated
//! [`crate::RawClip`]; every error names the line and column and, where it applies,
//! the bone and the sample. Writing ([`write_clip`], [`TextWriter`]) produces a clip
//! any ACL-format tool can read, with the exact `f32` values that were decoded.

pub mod keys;
mod read;
mod write;

use std::fmt;

pub use read::{
    read_clip, read_clip_checked, read_clip_unskimmed, read_file_checked, read_track_list, AclFile, Declared,
};
pub(crate) use write::{list, Quoted};
pub use write::{write_clip, TextWriter};

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

impl From<crate::sjson::SyntaxError> for ImportError {
    fn from(e: crate::sjson::SyntaxError) -> ImportError {
        ImportError { line: Some(e.line), column: Some(e.column), message: e.message }
    }
}
