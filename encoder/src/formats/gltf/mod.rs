//! glTF 2.0: animations imported as clips ([`import`]), and clips exported for viewing
//! in any glTF viewer ([`export`]).

pub mod export;
pub mod import;

pub use export::write_gltf;
pub use import::{read_gltf, read_gltf_checked, AnimationChoice, GltfImport};
