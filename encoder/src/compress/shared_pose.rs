//! A shared pose (`format-spec/database.md`, Shared poses): the values the default
//! sub-tracks of a streaming database's clips take, one transform per bone, stored
//! once in the database. A clip compressed with one stores nothing for a sub-track
//! that stays within its share of the bound of the pose's value (the same test as a
//! default sub-track against the identity, [`super::classify`]).

use ossa_decoder::format::database::POSE_BONE_SIZE;
use ossa_decoder::SharedPose;

use super::values::Lane4;

/// A shared pose as the encoder builds it.
#[derive(Clone, Debug, PartialEq)]
pub struct SharedPoseValues {
    /// Its index in the database's pose table (written in each clip using it).
    pub index: u32,
    /// Per bone: rotation `[x, y, z, w]`, translation and scale (first three lanes),
    /// exactly as the decoder returns them.
    pub bones: Vec<[Lane4; 3]>,
    /// The same values as stored: [`POSE_BONE_SIZE`] bytes per bone.
    bytes: Vec<u8>,
}

impl SharedPoseValues {
    /// The pose `index` of a database, with these values per bone (each finite).
    pub fn new(index: u32, bones: Vec<[Lane4; 3]>) -> Self {
        let mut bytes = Vec::with_capacity(bones.len() * POSE_BONE_SIZE);
        for [r, t, s] in &bones {
            for v in r.iter().chain(&t[..3]).chain(&s[..3]) {
                bytes.extend_from_slice(&v.to_le_bytes());
            }
        }
        SharedPoseValues { index, bones, bytes }
    }

    /// The values as a database stores them (40 bytes per bone).
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The decoder's view of the values: what a clip using the pose is opened with.
    pub fn view(&self) -> Result<SharedPose<'_>, ossa_decoder::Error> {
        SharedPose::from_bytes(&self.bytes, self.bones.len() as u32)
    }
}
