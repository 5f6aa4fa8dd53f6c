//! glTF 2.0: animations imported as clips ([`import`]), and clips exported for viewing
//! in any glTF viewer ([`export`]).

pub mod export;
pub mod import;

pub use export::write_gltf;

/// The precision a glTF model is compressed to by default, in its scene's units:
/// metres by the glTF specification, so a tenth of a millimetre, the visual quality
/// of ACL's 0.01 cm default for its centimetre clips.
pub const DEFAULT_PRECISION: f64 = 1e-4;
pub use import::{read_gltf, read_gltf_checked, AnimationChoice, GltfImport};
