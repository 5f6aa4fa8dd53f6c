//! [`SharedPose`]: the values a clip's default sub-tracks take when its database
//! stores them (`format-spec/database.md`, Shared poses).
//!
//! Clips of one skeleton mostly hold the same constant sub-tracks (translations at the
//! bind pose, bones the capture never moves). A database stores those values once per
//! skeleton, and each of its clips leaves them out: a sub-track in none of the clip's
//! lists is *default*, and with [`crate::format::FLAG_SHARED_POSE`] its value is the
//! shared pose's for that bone rather than the identity. The values are stored as the
//! decoder returns them (a rotation already normalised), so decoding them is a copy.

use zerocopy::little_endian::F32;
use zerocopy::FromBytes;

use crate::error::{Error, Section};
use crate::format::database::{PoseBone, POSE_BONE_SIZE};
use crate::transform::Transform;

/// A validated shared pose: one transform per bone, every value finite. Cheap to copy.
#[derive(Clone, Copy, Debug)]
pub struct SharedPose<'d> {
    bones: &'d [PoseBone],
}

impl<'d> SharedPose<'d> {
    /// Validates the values of a pose of `bone_count` bones at the start of `bytes`
    /// (40 bytes per bone: rotation `x, y, z, w`, translation `x, y, z`, scale
    /// `x, y, z`, little-endian `f32`, each finite). A database's poses come from
    /// [`crate::Database::shared_pose`]; this is for a runtime that keeps them
    /// elsewhere, and for the encoder.
    pub fn from_bytes(bytes: &'d [u8], bone_count: u32) -> Result<Self, Error> {
        let len = (bone_count as usize).saturating_mul(POSE_BONE_SIZE);
        let truncated = Error::Truncated { needed: len as u64, available: bytes.len() as u64 };
        let values = bytes.get(..len).ok_or(truncated)?;
        let floats = <[F32]>::ref_from_bytes(values).map_err(|_| truncated)?;
        if floats.iter().any(|f| !f.get().is_finite()) {
            return Err(Error::BadValue(Section::SharedPose));
        }
        let bones = <[PoseBone]>::ref_from_bytes(values).map_err(|_| truncated)?;
        Ok(SharedPose { bones })
    }

    /// Number of bones.
    pub fn bone_count(&self) -> u32 {
        self.bones.len() as u32
    }

    /// Bone `bone`'s values (the identity past the last bone).
    pub fn transform(&self, bone: u32) -> Transform {
        self.bones.get(bone as usize).map_or(Transform::IDENTITY, transform_of)
    }

    /// Every bone's values.
    pub(crate) fn bones(&self) -> &'d [PoseBone] {
        self.bones
    }
}

/// One bone's pose values as a transform.
#[inline(always)]
pub(crate) fn transform_of(bone: &PoseBone) -> Transform {
    let [x, y, z, w] = bone.rotation.map(|v| v.get());
    Transform {
        rotation: glam::Quat::from_xyzw(x, y, z, w),
        translation: glam::Vec3::from_array(bone.translation.map(|v| v.get())),
        scale: glam::Vec3::from_array(bone.scale.map(|v| v.get())),
    }
}
