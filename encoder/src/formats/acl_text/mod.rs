//! ACL's text clip format (`.acl.sjson`, file versions 1 to 5): reading and writing.
//!
//! Reading ([`read_clip`], [`read_clip_checked`]) turns the text into a validated
//! [`crate::RawClip`]; every error names the line and column and, where it applies,
//! the bone and the sample. Writing ([`write_clip`], [`TextWriter`]) produces a clip
//! any ACL-format tool can read, with the exact `f32` values that were decoded.

mod decoded;
pub mod keys;
mod read;
pub mod sjson;
mod structural;
mod write;

pub use decoded::{
    write_text, write_text_playing, write_text_within, write_track_list, WriteTextError, DECODE_BUFFER_BYTES,
};
pub use read::{read_clip, read_clip_checked, read_clip_unskimmed, read_file_checked, read_track_list, AclFile};
use write::{list_f32, Quoted};
pub use write::{write_clip, TextWriter};

use super::ImportError;

impl From<sjson::SyntaxError> for ImportError {
    fn from(e: sjson::SyntaxError) -> ImportError {
        ImportError { line: Some(e.line), column: Some(e.column), message: e.message }
    }
}
