//! # ossa-encoder
//!
//! Imports skeletal animation clips, compresses them into the `.ossa` format with a
//! hard bound on object-space error, and measures the result through the real
//! decoder. The `ossa` command-line tool is built on this library.
//!
//! ```no_run
//! let text = std::fs::read_to_string("walk.acl.sjson")?;
//! let clip = ossa_encoder::formats::acl_text::read_clip(&text, "walk")?;
//! let out = ossa_encoder::compress(&clip, &ossa_encoder::Settings::default())?;
//! std::fs::write("walk.ossa", &*out.bytes)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod aligned;
pub mod compress;
pub mod database;
pub mod decompress;
pub mod error_metric;
pub mod formats;
pub mod measure;
pub mod memory;
pub mod message;
pub mod playback;
pub mod raw_clip;
pub mod raw_track_list;

pub use aligned::AlignedBytes;
pub use compress::{compress, CompressError, Compressed, LoopSetting, Settings};
pub use raw_clip::{AdditiveBase, Bone, BoneTrack, ClipError, RawClip, RawTransform, RootPlacement, SourceSkeleton};
