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
use crate::pose::kept_plan::QuadPlan;
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
/// Given storage for a plan ([`KeptPose::with_plan`]), it also keeps what the
/// segment its keys lie in gives the animated sub-tracks ([`QuadPlan`]), so that a
/// call in the same segment reads only their bits: the same values, for less.
///
/// ```
/// # use ossa_decoder::{Clip, KeptPose, QuadPlan, Rounding, Sampler, Transform};
/// # fn play(bytes: &[u8]) -> Result<(), ossa_decoder::Error> {
/// let clip = Clip::from_bytes(bytes)?;
/// let mut sampler = Sampler::new(clip);
/// let mut storage = [Transform::IDENTITY; 64];
/// let mut plan = [QuadPlan::EMPTY; 32]; // at least clip.quad_count(), or no plan
/// let mut pose = KeptPose::with_plan(&mut storage, &mut plan);
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
    state: KeptState,
    /// Storage for the plan of the segment the keys lie in (empty: no plan).
    plan: &'p mut [QuadPlan],
}

/// What a [`KeptPose`] remembers between calls: which clip's static parts its
/// transforms hold, if any, and which segment of that clip its plan holds. Kept apart
/// from the transforms only where a pose cannot live as one value between calls (a C
/// caller's storage, `ossa_kept_pose`): the state is only true of the transforms
/// (and plan) it was taken with ([`KeptPose::into_parts`]) as the decode left them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KeptState {
    filled: Option<FilledFrom>,
    /// The segment (where its bit rates start) the plan holds, for the clip `filled`
    /// names.
    planned: Option<usize>,
}

/// A kept pose's plan, as a decode uses it: the storage and the segment it holds.
pub(crate) struct Plan<'a> {
    pub quads: &'a mut [QuadPlan],
    pub segment: &'a mut Option<usize>,
}

impl KeptState {
    /// Whether `self` and `other` remember the same clip's static parts (whatever
    /// they remember of a plan): a decode that left the state so did not write them.
    pub fn same_static_parts(&self, other: &KeptState) -> bool {
        self.filled == other.filled
    }
}

impl<'p> KeptPose<'p> {
    /// A kept pose over `transforms` (at least as many as the clips decoded into it
    /// have bones), filled by no clip yet.
    pub fn new(transforms: &'p mut [Transform]) -> Self {
        KeptPose { transforms, state: KeptState::default(), plan: &mut [] }
    }

    /// A kept pose over `transforms` that also keeps, in `plan`, what the segment
    /// its keys lie in gives each quad of animated sub-tracks (bit rates, ranges,
    /// bones), so that a frame in the same segment decodes only their bits. `plan`
    /// needs [`Clip::quad_count`] entries for a clip (any contents: it is filled when
    /// needed); with fewer, the pose decodes as [`KeptPose::new`]'s does. Either way,
    /// the same values.
    pub fn with_plan(transforms: &'p mut [Transform], plan: &'p mut [QuadPlan]) -> Self {
        KeptPose { transforms, state: KeptState::default(), plan }
    }

    /// A kept pose over `transforms` that remembers `state`, the state
    /// [`KeptPose::into_parts`] gave with these same transforms, unchanged since.
    /// (Another state, or changed transforms, leave values of another clip or time in
    /// the pose; memory stays safe either way.) Without a plan: what the state
    /// remembers of one is dropped.
    pub fn from_parts(transforms: &'p mut [Transform], state: KeptState) -> Self {
        KeptPose { transforms, state: KeptState { planned: None, ..state }, plan: &mut [] }
    }

    /// [`KeptPose::from_parts`] with the plan storage the state was taken with
    /// ([`KeptPose::with_plan`]), unchanged since.
    pub fn from_parts_with_plan(transforms: &'p mut [Transform], plan: &'p mut [QuadPlan], state: KeptState) -> Self {
        KeptPose { transforms, state, plan }
    }

    /// The transforms and what the pose remembers of them (and of its plan), to keep
    /// apart until [`KeptPose::from_parts`] (or [`KeptPose::from_parts_with_plan`])
    /// puts them together again.
    pub fn into_parts(self) -> (&'p mut [Transform], KeptState) {
        (self.transforms, self.state)
    }

    /// The transforms, as the last decode left them.
    pub fn transforms(&self) -> &[Transform] {
        self.transforms
    }

    /// The transforms, to change: the kept pose forgets which clip filled it, and
    /// the next decode writes every bone.
    pub fn transforms_mut(&mut self) -> &mut [Transform] {
        self.state = KeptState::default();
        self.transforms
    }

    /// Forgets which clip filled the pose: the next decode writes every bone.
    pub fn forget(&mut self) {
        self.state = KeptState::default();
    }

    /// The transforms to decode `clip` into, and whether its static parts are
    /// already there. Marks the pose as filled by `clip` (the caller then writes
    /// them when they were not).
    pub(crate) fn for_clip(&mut self, clip: &Clip<'_>) -> (&mut [Transform], bool, Plan<'_>) {
        let from = FilledFrom::of(clip);
        let filled = self.state.filled == Some(from);
        if !filled {
            self.state = KeptState { filled: Some(from), planned: None };
        }
        (self.transforms, filled, Plan { quads: self.plan, segment: &mut self.state.planned })
    }

    /// The slice, for the length check before decoding.
    pub(crate) fn len(&self) -> usize {
        self.transforms.len()
    }
}
