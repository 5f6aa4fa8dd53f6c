//! [`KeptPose`]: a pose the caller keeps between calls, so that decoding it again
//! writes only what changes with time.
//!
//! Most of a pose does not move: the default parts of each bone (the identity, or a
//! database's shared pose) and the constant sub-tracks are the same at every time. A
//! fresh pose ([`crate::Sampler::decompress_pose`]) writes them on every call, because
//! it cannot know what the caller's buffer holds. A kept pose remembers which clip
//! filled it: the first call for a clip writes the whole pose, later calls write the
//! animated sub-tracks alone, and the cost of a pose follows its animated part.

use crate::format::clip::Clip;
use crate::transform::Transform;

/// What a kept pose's static parts were written from: the clip's bytes (where they
/// are, how many, their checksum) and the shared pose its defaults come from. Two
/// views of the same bytes opened the same way are the same clip; a buffer reused for
/// another clip differs in its checksum or length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FilledFrom {
    bytes: usize,
    len: usize,
    checksum: u32,
    defaults: usize,
    defaults_len: usize,
}

impl FilledFrom {
    /// The identity of `clip`'s static parts.
    pub(crate) fn of(clip: &Clip<'_>) -> Self {
        FilledFrom {
            bytes: clip.bytes.as_ptr().addr(),
            len: clip.bytes.len(),
            checksum: clip.header.checksum.get(),
            defaults: clip.defaults.as_ptr().addr(),
            defaults_len: clip.defaults.len(),
        }
    }
}

/// A pose the caller owns and keeps from one frame to the next: a borrowed slice of
/// transforms and a note of which clip last filled it.
///
/// [`crate::Sampler::decompress_kept_pose`] writes every bone the first time it
/// decodes a clip into it, then only the animated sub-tracks: the constant and
/// default parts are still there from the first call. Switching the clip (or the
/// database its shared pose comes from) rewrites everything once. Every value is the
/// one [`crate::Sampler::decompress_pose`] gives, bit for bit.
///
/// The transforms are read with [`KeptPose::transforms`]. Changing them from outside
/// goes through [`KeptPose::transforms_mut`], which forgets the clip, so the next
/// call writes the whole pose again: what a kept pose holds is never stale.
///
/// ```
/// # use ossa_decoder::{Clip, KeptPose, Rounding, Sampler, Transform};
/// # fn play(bytes: &[u8]) -> Result<(), ossa_decoder::Error> {
/// let clip = Clip::from_bytes(bytes)?;
/// let mut sampler = Sampler::new(clip);
/// let mut storage = [Transform::IDENTITY; 64];
/// let mut pose = KeptPose::new(&mut storage);
/// for frame in 0..60 {
///     sampler.seek(frame as f32 / 30.0, Rounding::None);
///     sampler.decompress_kept_pose(&mut pose)?; // the first call writes everything
///     let _root = pose.transforms()[0];
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct KeptPose<'p> {
    transforms: &'p mut [Transform],
    filled: KeptState,
}

/// What a [`KeptPose`] remembers between calls: which clip's static parts its
/// transforms hold, if any. Kept apart from the transforms only where a pose cannot
/// live as one value between calls (a C caller's storage, `ossa_kept_pose`): the
/// state is only true of the transforms it was taken with
/// ([`KeptPose::into_parts`]) as the decode left them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KeptState(Option<FilledFrom>);

impl<'p> KeptPose<'p> {
    /// A kept pose over `transforms` (at least as many as the clips decoded into it
    /// have bones), filled by no clip yet.
    pub fn new(transforms: &'p mut [Transform]) -> Self {
        KeptPose { transforms, filled: KeptState(None) }
    }

    /// A kept pose over `transforms` that remembers `state`, the state
    /// [`KeptPose::into_parts`] gave with these same transforms, unchanged since.
    /// (Another state, or changed transforms, leave values of another clip or time in
    /// the pose; memory stays safe either way.)
    pub fn from_parts(transforms: &'p mut [Transform], state: KeptState) -> Self {
        KeptPose { transforms, filled: state }
    }

    /// The transforms and what the pose remembers of them, to keep apart until
    /// [`KeptPose::from_parts`] puts them together again.
    pub fn into_parts(self) -> (&'p mut [Transform], KeptState) {
        (self.transforms, self.filled)
    }

    /// The transforms, as the last decode left them.
    pub fn transforms(&self) -> &[Transform] {
        self.transforms
    }

    /// The transforms, to change: the kept pose forgets which clip filled it, and
    /// the next decode writes every bone.
    pub fn transforms_mut(&mut self) -> &mut [Transform] {
        self.filled = KeptState(None);
        self.transforms
    }

    /// Forgets which clip filled the pose: the next decode writes every bone.
    pub fn forget(&mut self) {
        self.filled = KeptState(None);
    }

    /// The transforms to decode `clip` into, and whether its static parts are
    /// already there. Marks the pose as filled by `clip` (the caller then writes
    /// them when they were not).
    pub(crate) fn for_clip(&mut self, clip: &Clip<'_>) -> (&mut [Transform], bool) {
        let from = FilledFrom::of(clip);
        let filled = self.filled.0 == Some(from);
        self.filled = KeptState(Some(from));
        (self.transforms, filled)
    }

    /// The slice, for the length check before decoding.
    pub(crate) fn len(&self) -> usize {
        self.transforms.len()
    }
}
