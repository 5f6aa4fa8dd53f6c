//! The values the compressor works in: one sub-track's decoded value at one sample
//! ([`Lane4`]), one bone's local values ([`LocalValues`]), and what a default
//! sub-track decodes to. Shared by the reference, the additive combination and the
//! sub-tracks, which build on each other in that order.

use ossa_decoder::format::SubTrackKind;
use ossa_decoder::Additive;

use crate::error_metric::Affine;

/// Decoded value of one sub-track at one sample: a unit quaternion `[x, y, z, w]`,
/// or a 3-D vector in the first three lanes.
pub type Lane4 = [f32; 4];

/// Local values of one bone at one sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LocalValues {
    /// Rotation, translation, scale (vectors in the first three lanes).
    pub parts: [Lane4; 3],
}

impl LocalValues {
    /// The affine transform these values describe.
    #[inline]
    pub fn affine(&self) -> Affine {
        let [r, t, s] = self.parts;
        Affine::from_parts(r.map(f64::from), [t[0], t[1], t[2]].map(f64::from), [s[0], s[1], s[2]].map(f64::from))
    }
}

/// The value a default sub-track decodes to: identity rotation, zero translation,
/// unit scale (zero in an additive1 clip: [`Additive::default_transform`]).
pub fn default_value(kind: SubTrackKind, additive: Additive) -> Lane4 {
    match kind {
        SubTrackKind::Rotation => [0.0, 0.0, 0.0, 1.0],
        SubTrackKind::Translation => [0.0; 4],
        SubTrackKind::Scale if additive == Additive::Additive1 => [0.0; 4],
        SubTrackKind::Scale => [1.0, 1.0, 1.0, 0.0],
    }
}
