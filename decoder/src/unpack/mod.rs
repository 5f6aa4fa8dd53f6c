//! Stored values to numbers: raw floats, integers on a grid and packed samples through
//! their segment and clip ranges ([`values`], every backend), and the same arithmetic
//! one value at a time for the encoder ([`quantization`]).

pub(crate) mod quad;
pub mod quantization;
pub(crate) mod values;
