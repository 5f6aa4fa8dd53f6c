//! Seeking: from a time to the two stored key frames a pose blends and the weight
//! between them ([`position`]), then to where each key's samples are ([`keys`]; in a
//! streaming database, in the clip or a resident tier chunk: [`streamed`]).

pub(crate) mod keys;
pub(crate) mod position;
pub(crate) mod streamed;

pub(crate) use keys::Key;
pub(crate) use position::Position;
pub use position::Rounding;
