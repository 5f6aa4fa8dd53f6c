//! Scalar track lists (format 2.1, header kind 1): tracks of one to four floats each
//! (blend-shape weights, IK weights, a camera's field of view…), compressed with the
//! same segments, bit rates and ranges as bone transforms, and sampled into a
//! caller's slice of floats, each track at its output index.
//!
//! [`ScalarClip`] validates once, like [`crate::Clip`]; [`ScalarSampler`] seeks like
//! [`crate::Sampler`] and decodes every track, walking them in order (bit offsets summed
//! as it goes). The values are decoded one component at a time with the encoder's
//! own arithmetic ([`crate::unpack::quantization`]), which is the decoder's on the portable
//! backend: a list holds few tracks, and every target gives the same bits.

//!
//! Files: `kind` (the value types), `list` ([`ScalarClip`]: validation and queries),
//! `sampler` ([`ScalarSampler`]), `metadata` (names and precisions, 3.2).

pub(crate) mod kind;
pub(crate) mod list;
pub(crate) mod metadata;
pub(crate) mod sampler;

pub use kind::ScalarType;
pub use list::ScalarClip;
pub use sampler::ScalarSampler;
