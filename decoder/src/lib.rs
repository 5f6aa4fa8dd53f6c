//! # ossa-decoder
//!
//! Reads `.ossa` compressed skeletal animation clips, zero-copy, from a caller's
//! `&[u8]`, and samples poses from them. `#![no_std]`, no heap, ever.
//!
//! ```
//! use ossa_decoder::{Clip, Rounding, Sampler, Transform};
//!
//! fn sample(bytes: &[u8], time: f32, pose: &mut [Transform]) -> Result<(), ossa_decoder::Error> {
//!     let clip = Clip::from_bytes(bytes)?;   // validates once
//!     let mut sampler = Sampler::new(clip);  // lives on the stack
//!     sampler.seek(time, Rounding::None);
//!     sampler.decompress_pose(pose)
//! }
//! # let mut pose = [Transform::IDENTITY; 4];
//! # assert!(sample(&[], 0.0, &mut pose).is_err());
//! ```
//!
//! Validation ([`Clip::from_bytes`]) checks every offset, count and bit rate, in
//! time proportional to the metadata; after it, sampling cannot panic or read out of
//! bounds whatever the bytes were.
//!
//! Module map: [`format`] is the binary layout shared with the encoder;
//! [`quantization`] and [`interpolation`] give the encoder the decoder's arithmetic one
//! value at a time (the `decode` functions run on the scalar backend), so that it
//! measures exactly what the decoder produces; `clip` validates; `track_lists`
//! reads the bone bit sets; `sampler` seeks and is the public entry; `pose` decodes a
//! whole pose list by list, `bone` one bone by rank; `decode` is the per-value
//! arithmetic, written once over the per-target vectors of `simd`;
//! `metadata` reads the optional tool-only section; `database` validates a streaming
//! database's index and binds its clips, `residency` holds which of its chunks are in
//! memory, and [`Sampler::seek_streamed`] samples with them (format-spec/database.md);
//! `shared_pose` holds the default values a database's clips share.
#![no_std]
// `unsafe` only in the SIMD backends (`simd/sse2.rs`, `simd/neon.rs`), which allow it
// for their intrinsics, each block with a `SAFETY:` argument.
#![deny(unsafe_code)]
#![warn(missing_docs)]
// The decoder must not panic on any input: no unwrap/expect/panic, no unchecked
// indexing, no arithmetic that can overflow, unless an `#[allow]` beside it proves
// why it cannot fire. (Tests may panic: that is how they fail.)
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing,
        clippy::arithmetic_side_effects,
        clippy::unreachable,
        clippy::todo,
        clippy::unimplemented
    )
)]

mod additive;
mod bone;
mod bytes;
mod clip;
mod database;
mod decode;
mod error;
pub mod format;
pub mod interpolation;
mod kept_pose;
mod layout;
mod metadata;
mod pose;
pub mod quantization;
mod residency;
mod root_motion;
mod sampler;
mod scalar;
mod scalar_metadata;
mod shared_pose;
mod simd;
mod subset;
mod track_lists;
mod transform;

pub use additive::Additive;
pub use clip::Clip;
pub use database::{chunk_checksum, Binding, Chunk, Database, DatabaseClip, Tier, TierFrames};
pub use error::{Error, Mismatch, Section};
pub use glam;
pub use kept_pose::{KeptPose, KeptState};
pub use layout::Layout;
pub use metadata::{BoneInfo, BoneIter, Metadata, RootPlacement};
pub use residency::{Residency, Slot};
pub use root_motion::Displacement;
pub use sampler::{Rounding, Sampler};
pub use scalar::{ScalarClip, ScalarSampler, ScalarType};
pub use scalar_metadata::{ScalarMetadata, TrackInfo, TrackIter};
pub use shared_pose::SharedPose;
pub use subset::Subset;
pub use transform::Transform;

/// Reads bits from a sample stream; exposed for the encoder's own bit writer tests.
pub use bytes::read_bits;
