//! The optional metadata section: what tools need and a game usually does not.
//!
//! Bone names, parents, shell distances, the bind pose, the clip name and the
//! precision the encoder held. None of it is needed to sample poses, so it can be
//! stripped (`ossa compress --strip-metadata`) and is not counted as compressed size.

use crate::bytes::{f32_at, u16_at, u32_at};
use crate::error::Error;
use crate::transform::Transform;
use glam::{Quat, Vec3};

/// Size of one bone record before its name.
const BONE_RECORD: usize = 4 + 4 + 16 + 12 + 12 + 2;

/// Validated view of the metadata section.
#[derive(Clone, Copy, Debug)]
pub struct Metadata<'a> {
    bytes: &'a [u8],
    bone_count: u32,
    precision: f32,
    clip_name: &'a str,
    bones_offset: usize,
}

/// What the metadata says about one bone.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoneInfo<'a> {
    /// The bone's name (may be empty).
    pub name: &'a str,
    /// Index of the parent bone, always lower than this bone's; `None` for a root.
    pub parent: Option<u32>,
    /// Distance of the virtual vertices used to measure this bone's error.
    pub shell_distance: f32,
    /// The skeleton's reference pose for this bone, in its parent's space.
    pub bind_pose: Transform,
}

impl<'a> Metadata<'a> {
    /// Validates the section for a clip of `bone_count` bones.
    pub(crate) fn parse(bytes: &'a [u8], bone_count: u32) -> Result<Self, Error> {
        let count = u32_at(bytes, 0).ok_or(Error::BadMetadata)?;
        let precision = f32_at(bytes, 4).ok_or(Error::BadMetadata)?;
        let name_len = u32_at(bytes, 8).ok_or(Error::BadMetadata)? as usize;
        if count != bone_count || !precision.is_finite() {
            return Err(Error::BadMetadata);
        }
        let name_end = 12usize.checked_add(name_len).ok_or(Error::BadMetadata)?;
        let clip_name = str_at(bytes, 12, name_end)?;
        let meta = Metadata { bytes, bone_count, precision, clip_name, bones_offset: name_end };
        let mut at = name_end;
        for index in 0..bone_count {
            let (bone, next) = meta.bone_at(at)?;
            if let Some(p) = bone.parent {
                if p >= index {
                    return Err(Error::BadMetadata);
                }
            }
            let t = bone.bind_pose;
            let finite = bone.shell_distance.is_finite()
                && t.rotation.is_finite()
                && t.translation.is_finite()
                && t.scale.is_finite();
            if !finite {
                return Err(Error::BadMetadata);
            }
            at = next;
        }
        // Only zero padding may follow the last record.
        if bytes.get(at..).is_none_or(|rest| rest.len() >= 16 || rest.iter().any(|&b| b != 0)) {
            return Err(Error::BadMetadata);
        }
        Ok(meta)
    }

    /// Reads the bone record at `at`; returns it and the offset of the next one.
    fn bone_at(&self, at: usize) -> Result<(BoneInfo<'a>, usize), Error> {
        // Offsets saturate: past the end they fail the bounds-checked reads.
        let b = self.bytes;
        let f = |o: usize| f32_at(b, at.saturating_add(o)).ok_or(Error::BadMetadata);
        let parent = u32_at(b, at).ok_or(Error::BadMetadata)?;
        let start = at.saturating_add(BONE_RECORD);
        let name_len = u16_at(b, start.saturating_sub(2)).ok_or(Error::BadMetadata)? as usize;
        let end = start.saturating_add(name_len);
        let name = str_at(b, start, end)?;
        let bone = BoneInfo {
            name,
            parent: (parent != u32::MAX).then_some(parent),
            shell_distance: f(4)?,
            bind_pose: Transform {
                rotation: Quat::from_xyzw(f(8)?, f(12)?, f(16)?, f(20)?),
                translation: Vec3::new(f(24)?, f(28)?, f(32)?),
                scale: Vec3::new(f(36)?, f(40)?, f(44)?),
            },
        };
        Ok((bone, end))
    }

    /// The clip's name.
    pub fn clip_name(&self) -> &'a str {
        self.clip_name
    }

    /// The error bound the encoder held, in the clip's units.
    pub fn precision(&self) -> f32 {
        self.precision
    }

    /// The bones, in index order.
    pub fn bones(&self) -> BoneIter<'a> {
        BoneIter { meta: *self, at: self.bones_offset, remaining: self.bone_count }
    }
}

/// Iterator over [`BoneInfo`] records.
#[derive(Clone, Debug)]
pub struct BoneIter<'a> {
    meta: Metadata<'a>,
    at: usize,
    remaining: u32,
}

impl<'a> Iterator for BoneIter<'a> {
    type Item = BoneInfo<'a>;
    fn next(&mut self) -> Option<BoneInfo<'a>> {
        if self.remaining == 0 {
            return None;
        }
        // Validated in `parse`, so this cannot fail; stop cleanly if it ever did.
        let (bone, next) = self.meta.bone_at(self.at).ok()?;
        self.at = next;
        self.remaining = self.remaining.saturating_sub(1);
        Some(bone)
    }
}

fn str_at(bytes: &[u8], start: usize, end: usize) -> Result<&str, Error> {
    let raw = bytes.get(start..end).ok_or(Error::BadMetadata)?;
    core::str::from_utf8(raw).map_err(|_| Error::BadMetadata)
}
