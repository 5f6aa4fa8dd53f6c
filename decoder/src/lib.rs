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
//! Module map, one folder per stage, each using only the ones listed before it:
//! - `simd`: the per-target vectors every backend implements ([`Sampler::backend`]);
//! - [`format`]: the binary layout shared with the encoder, and the validated views of
//!   a buffer ([`Clip`], its track bit sets, metadata, a database's shared pose);
//! - `stream`: a streaming database's index ([`Database`]) and which of its chunks
//!   are in memory ([`Residency`]);
//! - `seek`: from a time to the two key frames a pose blends and where their samples
//!   are (in the clip, or in a resident chunk of a database tier);
//! - `unpack`: stored bits and integers to numbers ([`quantization`] gives the encoder
//!   the same arithmetic one value at a time, on the scalar backend);
//! - `pose`: finishing values (rotations, interpolation: [`interpolation`]) and
//!   writing them — a whole pose, a [`KeptPose`] (and its plan, [`QuadPlan`]), one
//!   bone, a [`Subset`];
//! - `sampler`: the public entry, [`Sampler`]; `root_motion` on top of it;
//! - `scalar`: scalar track lists ([`ScalarClip`], [`ScalarSampler`]).
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

mod error;
pub mod format;
mod pose;
mod root_motion;
mod sampler;
mod scalar;
mod seek;
mod simd;
mod stream;
mod transform;
mod unpack;

pub use error::{Error, Mismatch, Section};
pub use format::additive::Additive;
pub use format::clip::Clip;
pub use format::layout::Layout;
pub use format::metadata::{BoneInfo, BoneIter, Metadata, RootPlacement};
pub use format::shared_pose::SharedPose;
pub use glam;
pub use pose::interpolation;
pub use pose::kept::{KeptPose, KeptState};
pub use pose::kept_plan::QuadPlan;
pub use pose::subset::Subset;
pub use root_motion::Displacement;
pub use sampler::Sampler;
pub use scalar::metadata::{ScalarMetadata, TrackInfo, TrackIter};
pub use scalar::{ScalarClip, ScalarSampler, ScalarType};
pub use seek::Rounding;
pub use stream::database::{chunk_checksum, Binding, Chunk, Database, DatabaseClip, Tier, TierFrames};
pub use stream::residency::{Residency, Slot};
pub use transform::Transform;
pub use unpack::quantization;

/// Reads bits from a sample stream; exposed for the encoder's own bit writer tests.
pub use format::bytes::read_bits;
