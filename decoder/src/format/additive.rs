//! Additive clips: what a clip's poses mean when they are meant to be applied on top
//! of another pose (the *base*), and how to apply them.
//!
//! The header's `additive` byte (format 2.1) names the way. The decoder decodes an
//! additive clip like any other; the game applies each bone's decoded transform to the
//! base pose it is blending over with [`Additive::apply`], in the bones' local space.
//! The reference encoder measures an additive clip's error on the base with the
//! additive applied, as a game sees it.

use glam::{Quat, Vec3};

use crate::transform::Transform;

/// How an additive clip's transforms combine with a base pose.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Additive {
    /// Not additive: the clip is a pose of its own.
    #[default]
    None,
    /// The additive transform is expressed in the base's space: the result is the base
    /// transform composed with it (`base · additive`: scale, rotate and move the
    /// additive translation by the base).
    Relative,
    /// Rotations compose (`base_rotation · additive_rotation`), translations add, and
    /// scales multiply: `base_scale · additive_scale` (default additive scale 1).
    Additive0,
    /// As [`Additive::Additive0`], except that scales combine as
    /// `base_scale · (1 + additive_scale)`: an additive scale of 0 changes nothing, so
    /// a bone without a scale track decodes a scale of 0.
    Additive1,
}

impl Additive {
    /// The mode stored as header byte `value`, `None` for a value no version defines.
    pub const fn from_byte(value: u8) -> Option<Additive> {
        match value {
            0 => Some(Additive::None),
            1 => Some(Additive::Relative),
            2 => Some(Additive::Additive0),
            3 => Some(Additive::Additive1),
            _ => None,
        }
    }

    /// The header byte of this mode.
    pub const fn to_byte(self) -> u8 {
        match self {
            Additive::None => 0,
            Additive::Relative => 1,
            Additive::Additive0 => 2,
            Additive::Additive1 => 3,
        }
    }

    /// Its name in ACL's text format and in tools' output.
    pub const fn name(self) -> &'static str {
        match self {
            Additive::None => "none",
            Additive::Relative => "relative",
            Additive::Additive0 => "additive0",
            Additive::Additive1 => "additive1",
        }
    }

    /// The transform of a bone whose sub-tracks are all default (not stored): the
    /// identity, with a scale of 0 for [`Additive::Additive1`] (which adds 1 itself).
    pub const fn default_transform(self) -> Transform {
        match self {
            Additive::Additive1 => Transform { scale: Vec3::ZERO, ..Transform::IDENTITY },
            _ => Transform::IDENTITY,
        }
    }

    /// Applies the decoded `additive` transform of a bone to its `base` transform
    /// (both local, in the bone's parent space). For [`Additive::None`] the result is
    /// `additive` itself. Rotations are normalised after composing.
    pub fn apply(self, base: &Transform, additive: &Transform) -> Transform {
        let rotation = |a: Quat, b: Quat| (a * b).normalize();
        match self {
            Additive::None => *additive,
            Additive::Relative => Transform {
                rotation: rotation(base.rotation, additive.rotation),
                translation: base.rotation * (base.scale * additive.translation) + base.translation,
                scale: base.scale * additive.scale,
            },
            Additive::Additive0 => Transform {
                rotation: rotation(base.rotation, additive.rotation),
                translation: base.translation + additive.translation,
                scale: base.scale * additive.scale,
            },
            Additive::Additive1 => Transform {
                rotation: rotation(base.rotation, additive.rotation),
                translation: base.translation + additive.translation,
                scale: base.scale * (Vec3::ONE + additive.scale),
            },
        }
    }
}
