//! The optional metadata section: what tools need and a game usually does not.
//!
//! Bone names, parents, shell distances, the bind pose, the clip name and the
//! precision the encoder held; since 3.2, records of where the bones came from (the
//! source's joint order, the transforms above the skeleton's roots). None of it is
//! needed to sample poses, so it can be stripped (`ossa compress --strip-metadata`)
//! and is not counted as compressed size.

use crate::error::Error;
use crate::format::bytes::{f32_at, str_at, u16_at, u32_at};
use crate::format::{METADATA_JOINT_ORDER, METADATA_RECORD_HEADER, METADATA_ROOT_PLACEMENTS, ROOT_PLACEMENT_SIZE};
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
    // Offsets inside the section (which lies in a buffer of at most 4 GiB), as `u32`
    // to keep `Clip` small.
    bones_offset: u32,
    /// Offset of the joint-order record's payload (3.2); 0: none (a payload follows
    /// at least the 12-byte head).
    joint_order: u32,
    /// Offset of the root-placement record's entries (3.2), and their count.
    placements_at: u32,
    placement_count: u32,
}

/// The transform above one of the skeleton's roots in the source's scene: a point `p`
/// of the root's parent space (the clip's object space) is at `M · (p, 1)` in the
/// scene.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RootPlacement {
    /// The root bone.
    pub bone: u32,
    /// The 3 × 4 affine matrix, row by row: `x' = m[0]·x + m[1]·y + m[2]·z + m[3]`…
    pub matrix: [f32; 12],
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
        let clip_name = str_at(bytes, 12, name_end).ok_or(Error::BadMetadata)?;
        let mut meta = Metadata {
            bytes,
            bone_count,
            precision,
            clip_name,
            bones_offset: name_end as u32,
            joint_order: 0,
            placements_at: 0,
            placement_count: 0,
        };
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
        // Records (3.2), by increasing tag, until only zero padding is left.
        let mut last_tag = 0u16;
        loop {
            let rest = bytes.get(at..).ok_or(Error::BadMetadata)?;
            if rest.len() < 16 && rest.iter().all(|&b| b == 0) {
                break;
            }
            let tag = u16_at(bytes, at).ok_or(Error::BadMetadata)?;
            let reserved = u16_at(bytes, at.saturating_add(2)).ok_or(Error::BadMetadata)?;
            let size = u32_at(bytes, at.saturating_add(4)).ok_or(Error::BadMetadata)? as usize;
            if tag <= last_tag || reserved != 0 {
                return Err(Error::BadMetadata);
            }
            let payload = at.saturating_add(METADATA_RECORD_HEADER);
            let end = payload.checked_add(size).filter(|&e| e <= bytes.len()).ok_or(Error::BadMetadata)?;
            match tag {
                METADATA_JOINT_ORDER => meta.joint_order = meta.parse_joint_order(payload, size)? as u32,
                METADATA_ROOT_PLACEMENTS => {
                    let (at, count) = meta.parse_placements(payload, size)?;
                    (meta.placements_at, meta.placement_count) = (at as u32, count);
                }
                _ => return Err(Error::BadMetadata),
            }
            last_tag = tag;
            at = end;
        }
        Ok(meta)
    }

    /// Checks the joint-order record: one `u32` per bone, each below the bone count.
    /// (They are distinct in files the reference encoder writes; checking that needs
    /// memory in proportion to the bones, which this decoder does not take: a tool
    /// that writes the source order back checks it.)
    fn parse_joint_order(&self, payload: usize, size: usize) -> Result<usize, Error> {
        if size != (self.bone_count as usize).saturating_mul(4) {
            return Err(Error::BadMetadata);
        }
        for b in 0..self.bone_count as usize {
            let index = u32_at(self.bytes, payload.saturating_add(b.saturating_mul(4))).ok_or(Error::BadMetadata)?;
            if index >= self.bone_count {
                return Err(Error::BadMetadata);
            }
        }
        Ok(payload)
    }

    /// Checks the root-placement record: a `u32` count, then that many entries of
    /// strictly increasing root bones with finite matrices.
    fn parse_placements(&self, payload: usize, size: usize) -> Result<(usize, u32), Error> {
        let count = u32_at(self.bytes, payload).ok_or(Error::BadMetadata)?;
        if count > self.bone_count || size != (count as usize).saturating_mul(ROOT_PLACEMENT_SIZE).saturating_add(4) {
            return Err(Error::BadMetadata);
        }
        let entries = payload.saturating_add(4);
        // One walk over the bones beside the entries (both in increasing bone order).
        let mut bones = self.bones().enumerate();
        let mut previous: Option<u32> = None;
        for i in 0..count as usize {
            let placement = self.placement_at(entries, i).ok_or(Error::BadMetadata)?;
            if previous.is_some_and(|p| placement.bone <= p) || placement.bone >= self.bone_count {
                return Err(Error::BadMetadata);
            }
            let root =
                bones.find(|(b, _)| *b == placement.bone as usize).is_some_and(|(_, info)| info.parent.is_none());
            if !root || placement.matrix.iter().any(|v| !v.is_finite()) {
                return Err(Error::BadMetadata);
            }
            previous = Some(placement.bone);
        }
        Ok((entries, count))
    }

    fn placement_at(&self, entries: usize, i: usize) -> Option<RootPlacement> {
        let at = entries.saturating_add(i.saturating_mul(ROOT_PLACEMENT_SIZE));
        let bone = u32_at(self.bytes, at)?;
        let mut matrix = [0.0f32; 12];
        let mut value_at = at;
        for m in &mut matrix {
            value_at = value_at.saturating_add(4);
            *m = f32_at(self.bytes, value_at)?;
        }
        Some(RootPlacement { bone, matrix })
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
        let name = str_at(b, start, end).ok_or(Error::BadMetadata)?;
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
        BoneIter { meta: *self, at: self.bones_offset as usize, remaining: self.bone_count }
    }

    /// The index in the source of bone `bone` (a glTF skin's joint index), when the
    /// clip records a joint order (3.2); without one, bone `i` was source joint `i`.
    /// `None` past the last bone.
    pub fn source_index(&self, bone: u32) -> Option<u32> {
        if bone >= self.bone_count {
            return None;
        }
        match self.joint_order {
            0 => Some(bone),
            at => u32_at(self.bytes, (at as usize).saturating_add((bone as usize).saturating_mul(4))),
        }
    }

    /// Whether the clip records a joint order other than the bones' own.
    pub fn has_joint_order(&self) -> bool {
        self.joint_order != 0
    }

    /// The transforms above the skeleton's roots in the source's scene (3.2), in
    /// increasing bone order; empty when the roots sit at the scene's origin.
    pub fn root_placements(&self) -> impl Iterator<Item = RootPlacement> + 'a {
        let meta = *self;
        let (entries, count) = (self.placements_at as usize, self.placement_count);
        (0..count as usize).filter_map(move |i| meta.placement_at(entries, i))
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
