//! The decoded pose of one bone, in its parent's space.

use glam::{Quat, Vec3};

/// Rotation, translation and 3-D scale of a bone relative to its parent. The
/// transform applies scale, then rotation, then translation: `p' = r * (s * p) + t`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transform {
    /// Unit quaternion.
    pub rotation: Quat,
    /// Translation.
    pub translation: Vec3,
    /// Per-axis scale.
    pub scale: Vec3,
}

impl Transform {
    /// Identity rotation, zero translation, unit scale.
    pub const IDENTITY: Transform = Transform { rotation: Quat::IDENTITY, translation: Vec3::ZERO, scale: Vec3::ONE };
}

impl Default for Transform {
    fn default() -> Self {
        Self::IDENTITY
    }
}
