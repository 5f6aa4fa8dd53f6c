//! A clip's static pose: the parts of every bone that do not change with time,
//! decoded once into storage the caller gives ([`Clip::with_static_pose`]), so that
//! every fresh pose, bone and subset copies them instead of decoding them again.
//!
//! Most of a pose does not move: the defaults (the identity, or a database's shared
//! pose) and the constant sub-tracks. A fresh pose must write them on every call, since
//! it cannot know what its buffer holds; decoding them costs about as much as the
//! animated part. Decoded once per clip, they cost a copy of `bone_count` transforms
//! per pose and nothing per single bone that has no animated sub-track.

use crate::error::Error;
use crate::format::clip::Clip;
use crate::pose::whole;
use crate::simd::{self, Backend, Job, Lanes};
use crate::transform::Transform;

impl<'a> Clip<'a> {
    /// This clip with its static pose attached: the parts of every bone that do not
    /// change with time (defaults and constant sub-tracks), decoded now into
    /// `storage[..bone_count]`, which the clip then borrows. Every
    /// [`crate::Sampler`] made from the returned clip copies them where it would decode
    /// them — a fresh pose ([`crate::Sampler::decompress_pose`]) writes the animated
    /// sub-tracks over one copy of `bone_count` transforms, a single bone with no
    /// animated sub-track is one read — and gives the same bits as without.
    ///
    /// Build it once per clip, when the clip is loaded: it costs about one pose, and
    /// `bone_count` transforms (48 bytes each) that all the clip's samplers share.
    /// Fails with [`Error::OutputTooSmall`] when `storage` is shorter than the bone
    /// count.
    ///
    /// ```
    /// # use ossa_decoder::{Clip, Rounding, Sampler, Transform};
    /// # fn play(bytes: &[u8]) -> Result<(), ossa_decoder::Error> {
    /// let mut statics = [Transform::IDENTITY; 64]; // once per clip, beside its bytes
    /// let clip = Clip::from_bytes(bytes)?.with_static_pose(&mut statics)?;
    /// let mut sampler = Sampler::new(clip);
    /// let mut pose = [Transform::IDENTITY; 64];
    /// sampler.seek(0.5, Rounding::None);
    /// sampler.decompress_pose(&mut pose)?; // a copy of the statics, then the animated part
    /// # Ok(()) }
    /// ```
    pub fn with_static_pose(mut self, storage: &'a mut [Transform]) -> Result<Clip<'a>, Error> {
        let bone_count = self.bone_count;
        let len = storage.len();
        let Some(storage) = storage.get_mut(..bone_count as usize) else {
            return Err(Error::OutputTooSmall { len: len as u32, bone_count });
        };
        // Decoded by the poses' own code, without a static pose: the same bits.
        self.statics = &[];
        simd::run(Backend::detect(), Statics { clip: &self, out: &mut *storage });
        self.statics = storage;
        Ok(self)
    }

    /// Whether a static pose is attached ([`Clip::with_static_pose`]).
    pub fn has_static_pose(&self) -> bool {
        !self.statics.is_empty()
    }
}

/// The static parts of `clip` decoded into `out`.
struct Statics<'r, 'a, 'o> {
    clip: &'r Clip<'a>,
    out: &'o mut [Transform],
}

impl Job for Statics<'_, '_, '_> {
    type Output = ();
    #[inline(always)]
    fn run<V: Lanes>(self) {
        whole::decode_statics::<V>(self.clip, self.out);
    }
}
