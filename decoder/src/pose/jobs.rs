//! The decodes a sampler runs, as [`Job`]s: each names what it decodes, and
//! `simd::run` runs it on the backend the sampler chose.

use crate::format::clip::Clip;
use crate::pose::kept_plan::{animated_planned, build, QuadPlan};
use crate::pose::subset::{self, Subset};
use crate::pose::{animated, bone, whole};
use crate::seek::Key;
use crate::simd::{Job, Lanes};
use crate::transform::Transform;

/// Where a sampler stands: the clip, the two keys and the weight between them.
#[derive(Clone, Copy)]
pub(crate) struct At<'r, 'a> {
    pub clip: &'r Clip<'a>,
    pub keys: &'r [Key<'a>; 2],
    pub alpha: f32,
}

/// Every bone, into `out`.
pub(crate) struct WholePose<'r, 'a, 'o> {
    pub at: At<'r, 'a>,
    pub out: &'o mut [Transform],
}

impl Job for WholePose<'_, '_, '_> {
    type Output = ();
    #[inline(always)]
    fn run<V: Lanes>(self) {
        let At { clip, keys, alpha } = self.at;
        whole::pose::<V>(clip, keys, alpha, self.out);
    }
}

/// A kept pose: the static parts when they are not there yet (`filled` false), then
/// the animated ones.
/// With a plan (made for the segment both keys lie in, or key 0's when key 1 weighs
/// nothing), the animated parts come from it.
pub(crate) struct KeptPart<'r, 'a, 'o> {
    pub at: At<'r, 'a>,
    pub out: &'o mut [Transform],
    pub filled: bool,
    pub plan: Option<&'o [QuadPlan]>,
}

impl Job for KeptPart<'_, '_, '_> {
    type Output = ();
    #[inline(always)]
    fn run<V: Lanes>(self) {
        let At { clip, keys, alpha } = self.at;
        if !self.filled {
            whole::statics::<V>(clip, self.out);
        }
        match self.plan {
            Some(plan) => animated_planned::<V>(clip, keys, alpha, plan, self.out),
            None => animated::animated_part::<V>(clip, keys, alpha, self.out),
        }
    }
}

/// A kept pose's plan, made for `key`'s segment.
pub(crate) struct PlanSegment<'r, 'a, 'o> {
    pub clip: &'r Clip<'a>,
    pub key: &'r Key<'a>,
    /// The plan already holds what the clip gives each quad.
    pub segment_only: bool,
    pub quads: &'o mut [QuadPlan],
}

impl Job for PlanSegment<'_, '_, '_> {
    type Output = ();
    #[inline(always)]
    fn run<V: Lanes>(self) {
        build::<V>(self.clip, self.key, self.segment_only, self.quads);
    }
}

/// One bone.
pub(crate) struct OneBone<'r, 'a> {
    pub at: At<'r, 'a>,
    pub bone: usize,
    /// The lists in which the bone is animated (`TrackLists::animated_lists`).
    pub animated_lists: u8,
}

impl Job for OneBone<'_, '_> {
    type Output = Transform;
    #[inline(always)]
    fn run<V: Lanes>(self) -> Transform {
        let At { clip, keys, alpha } = self.at;
        bone::bone_in::<V>(clip, keys, alpha, self.bone, self.animated_lists)
    }
}

/// The bones of a list, into `out[i]` for `bones[i]`.
pub(crate) struct ListedBones<'r, 'a, 'o> {
    pub at: At<'r, 'a>,
    pub bones: &'o [u32],
    pub out: &'o mut [Transform],
}

impl Job for ListedBones<'_, '_, '_> {
    type Output = ();
    #[inline(always)]
    fn run<V: Lanes>(self) {
        let At { clip, keys, alpha } = self.at;
        subset::decode::<V>(clip, keys, alpha, self.bones, self.out);
    }
}

/// The bones of a planned subset.
pub(crate) struct PlannedBones<'r, 'a, 'o, const N: usize> {
    pub at: At<'r, 'a>,
    pub subset: &'o mut Subset<N>,
    pub out: &'o mut [Transform],
}

impl<const N: usize> Job for PlannedBones<'_, '_, '_, N> {
    type Output = ();
    #[inline(always)]
    fn run<V: Lanes>(self) {
        let At { clip, keys, alpha } = self.at;
        self.subset.decode::<V>(clip, keys, alpha, self.out);
    }
}
