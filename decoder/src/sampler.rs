//! [`Sampler`]: seek to a time, then decode a whole pose or a single bone.
//!
//! The sampler is a small value on the caller's stack (see [`Sampler`] for its size).
//! `seek` finds the two key frames around the time and the interpolation weight. A
//! whole pose is the identity everywhere, then the constant sub-tracks, then the
//! animated ones, each list visited through its bone bit set: the cost follows the
//! stored sub-tracks, not the bone count. A single bone is located by rank in the bit
//! sets and by the segments' frame directories, in time independent of its index.

use crate::error::Error;
use crate::format::clip::Clip;
use crate::pose::jobs::{At, KeptPart, ListedBones, OneBone, PlanSegment, PlannedBones, WholePose};
use crate::pose::kept::{KeptPose, Plan};
use crate::pose::kept_plan::QuadPlan;
use crate::pose::subset::{self, Subset};
use crate::seek::keys::{kept_keys, locate, Key};
use crate::seek::position::blend;
use crate::seek::streamed::from_tiers;
use crate::seek::Rounding;
use crate::simd::{self, Backend};
use crate::stream::database::Binding;
use crate::stream::residency::{Residency, Slot};
use crate::transform::Transform;

/// Bytes per cache line, the unit of [`Sampler::prefetch`].
const LINE: usize = 64;

/// Samples a [`Clip`] at arbitrary times. Create one per playing clip; it borrows
/// the clip's bytes and holds no other state than the current position.
///
/// Size: 520 bytes on 64-bit targets (checked by a test), of which the [`Clip`] view
/// is 416 (the validated header, section offsets, where each list starts, the shared
/// pose's values and the static pose, so nothing is re-read, re-checked or re-summed
/// per call); it lives on the caller's stack and allocates nothing.
///
/// A clip with its static pose attached ([`Clip::with_static_pose`]) costs a sampler
/// about a third less per fresh pose and per bone.
#[derive(Clone, Copy, Debug)]
pub struct Sampler<'a> {
    clip: Clip<'a>,
    keys: [Key<'a>; 2],
    alpha: f32,
    /// The backend every decode runs on, chosen when the sampler is made.
    backend: Backend,
}

impl<'a> Sampler<'a> {
    /// A sampler positioned at time 0.
    pub fn new(clip: Clip<'a>) -> Self {
        let mut sampler = Sampler::unplaced(clip);
        sampler.seek(0.0, Rounding::None);
        sampler
    }

    /// A sampler not yet pointed at any key (for [`Sampler::place`]).
    pub(crate) fn unplaced(clip: Clip<'a>) -> Self {
        Sampler { clip, keys: [Key::default(); 2], alpha: 0.0, backend: Backend::detect() }
    }

    /// The two keys being interpolated.
    pub(crate) fn keys(&self) -> &[Key<'a>; 2] {
        &self.keys
    }

    /// The clip being sampled.
    pub fn clip(&self) -> &Clip<'a> {
        &self.clip
    }

    /// The interpolation weight of the second key frame after the last `seek`.
    pub fn alpha(&self) -> f32 {
        self.alpha
    }

    /// The SIMD backend samplers decode with on this machine: `"avx2"` on an x86_64
    /// CPU that has it (chosen at run time), `"sse2"` on other x86_64 CPUs, `"neon"`
    /// on aarch64, `"scalar"` elsewhere. All produce the same bits.
    pub fn backend() -> &'static str {
        Backend::detect().name()
    }

    /// Makes this sampler decode on backend `name` (`"scalar"`, `"sse2"`, `"avx2"`,
    /// `"neon"`), for tests that compare backends on one machine; `false`, changing
    /// nothing, when this CPU does not run it.
    #[doc(hidden)]
    pub fn use_backend(&mut self, name: &str) -> bool {
        match Backend::named(name) {
            Some(backend) => {
                self.backend = backend;
                true
            }
            None => false,
        }
    }

    /// Where the sampler stands, for a decode.
    #[inline(always)]
    fn at(&self) -> At<'_, 'a> {
        At { clip: &self.clip, keys: &self.keys, alpha: self.alpha }
    }

    /// Moves to `time` seconds. Times outside `[0, duration]` are clamped (NaN reads
    /// as 0); `rounding` chooses between interpolating and snapping to a sample.
    ///
    /// A wrapping clip interpolates from its last stored sample back to its first over
    /// the last interval, and decodes the first sample at exactly the duration (and,
    /// clamped, past it): the sample its source repeated there.
    ///
    /// Inlinable across crates: a caller seeking many samplers in a loop (once per
    /// clip and frame) saves the call and its register saves.
    #[inline]
    pub fn seek(&mut self, time: f32, rounding: Rounding) {
        let (k0, k1, alpha) = blend(&self.clip, time, rounding);
        self.place(k0, k1, alpha);
    }

    /// Like [`Sampler::seek`], for a clip of a streaming database: key frames that
    /// `binding` places in a tier chunk that `residency` holds are sampled as if the
    /// clip stored them, the others are interpolated as the clip alone would be. The
    /// nearest key frames are found over the clip and the resident tiers with the same
    /// two bit scans, at a cost that does not grow with the clip.
    ///
    /// Fails (leaving the sampler where it was) when `binding` was made for another
    /// clip or `residency` belongs to another database.
    pub fn seek_streamed<S: AsRef<[Slot<'a>]>>(
        &mut self,
        time: f32,
        rounding: Rounding,
        binding: &Binding<'_>,
        residency: &Residency<'a, S>,
    ) -> Result<(), Error> {
        binding.check(&self.clip, residency.database_id())?;
        let (k0, k1, alpha) = blend(&self.clip, time, rounding);
        if residency.is_empty() {
            // Nothing streamed in (or everything streamed out): the clip alone.
            self.place(k0, k1, alpha);
        } else {
            self.place_streamed(k0, k1, alpha, binding, residency);
        }
        Ok(())
    }

    /// Points the sampler at stored keys `k0` and `k1` (below the sample count),
    /// blended by `alpha`, and prefetches what decoding them reads.
    #[inline(always)]
    pub(crate) fn place(&mut self, k0: u32, k1: u32, alpha: f32) {
        let clip = &self.clip;
        let segment0 = clip.segment_of(k0);
        let entry0 = clip.segment(segment0);
        let (k0, k1, alpha) = kept_keys(clip, segment0, entry0.2, k0, k1, alpha);
        self.alpha = alpha;
        let segment1 = clip.segment_of(k1);
        // Both keys in one segment (most seeks): its table entry is read once.
        let entry1 = if segment1 == segment0 { entry0 } else { clip.segment(segment1) };
        self.keys = [locate(clip, k0, segment0, entry0), locate(clip, k1, segment1, entry1)];
        self.prefetch();
    }

    /// [`Sampler::place`] with the key frames of `binding`'s tiers that `residency`
    /// holds counted as stored. When the clip itself stores both keys (every seek of
    /// a clip whose tiers took nothing near the time), the tiers are not looked at.
    #[inline(always)]
    pub(crate) fn place_streamed<S: AsRef<[Slot<'a>]>>(
        &mut self,
        k0: u32,
        k1: u32,
        alpha: f32,
        binding: &Binding<'_>,
        residency: &Residency<'a, S>,
    ) {
        let clip = &self.clip;
        let segment0 = clip.segment_of(k0);
        let entry0 = clip.segment(segment0);
        let local = k0.wrapping_sub(segment0.wrapping_mul(u32::from(clip.segment_len))) & 31;
        let here = entry0.2 >> local;
        if here & 1 != 0 && (alpha == 0.0 || here & 2 != 0) {
            self.alpha = alpha;
            let key0 = locate(clip, k0, segment0, entry0);
            // With a weight of 0 the second key is not read (and may lie in the next
            // segment); otherwise it is `k0 + 1`, stored in this segment.
            let key1 = if alpha == 0.0 { key0 } else { locate(clip, k1, segment0, entry0) };
            self.keys = [key0, key1];
            self.prefetch();
        } else {
            let (keys, alpha) = from_tiers(clip, k0, k1, alpha, segment0, entry0, binding, residency);
            self.alpha = alpha;
            self.keys = keys;
            self.prefetch();
        }
    }

    /// Starts loading what the next pose reads first, so that a clip out of the
    /// caches pays for its misses in parallel rather than one after another: the
    /// start of the track bit sets, constants and clip ranges, of the first key's
    /// segment header, and of both keys' samples (the hardware prefetcher follows the
    /// rest of each run of lines), and of the static pose, if any. Sixteen hints, none
    /// of them waiting for memory; inlined, so that a seek pays no call for them.
    ///
    /// A subset or a single bone reads few of these lines, yet moving the hints out
    /// of the seek into the whole and kept pose (29 fewer instructions per seek + 4
    /// bones) made a four-bone subset about a quarter slower out of the caches
    /// (`ossa bench --cold`): they stay.
    #[inline(always)]
    fn prefetch(&self) {
        let clip = &self.clip;
        let lines = |at: usize, count: usize| {
            for i in 0..count {
                simd::prefetch(clip.bytes, at.wrapping_add(i.wrapping_mul(LINE)));
            }
        };
        lines(clip.lists.start(), 2);
        lines(clip.constants_offset, 4);
        lines(clip.ranges_offset, 2);
        // A static pose's first two lines (a pose copies it from the start): its
        // transforms 0 and 2, 96 bytes apart.
        simd::prefetch(clip.statics, 0);
        simd::prefetch(clip.statics, 2);
        let [key0, key1] = &self.keys;
        lines(key0.directory, 2);
        for key in [key0, key1] {
            for i in 0..2usize {
                simd::prefetch(key.samples, ((key.frame_bit >> 3) as usize).wrapping_add(i.wrapping_mul(LINE)));
            }
        }
    }

    /// Decodes every bone into `out[..bone_count]`. A root-motion bone that plays in
    /// place ([`Clip::root_motion_in_place`]) gets its in-place transform.
    #[inline]
    pub fn decompress_pose(&self, out: &mut [Transform]) -> Result<(), Error> {
        self.check_output(out)?;
        self.native_pose(out);
        self.put_in_place(out);
        Ok(())
    }

    /// Decodes every bone into a pose the caller keeps between calls, writing only
    /// what changes with time: the first call for this clip (or after the pose was
    /// changed from outside) writes every bone, later ones only the animated
    /// sub-tracks. The transforms are the ones [`Sampler::decompress_pose`] gives, bit
    /// for bit.
    #[inline]
    pub fn decompress_kept_pose(&self, pose: &mut KeptPose<'_>) -> Result<(), Error> {
        self.check_output_len(pose.len())?;
        let (out, filled, plan) = pose.for_clip(&self.clip);
        let plan = self.planned(self.backend, plan);
        self.native_kept(out, filled, plan);
        self.put_in_place(out);
        Ok(())
    }

    /// The kept pose on the sampler's backend: the static parts when `filled` is
    /// false, then the animated ones.
    #[inline(never)]
    fn native_kept(&self, out: &mut [Transform], filled: bool, plan: Option<&[QuadPlan]>) {
        simd::run(self.backend, KeptPart { at: self.at(), out, filled, plan });
    }

    /// A kept pose's plan for the keys, when it has one: made (on `backend`) for key
    /// 0's segment if it holds another, and used while both keys lie in it (or key 1
    /// weighs nothing). `None` without storage for one (or too little), or with keys
    /// in two segments.
    #[inline]
    fn planned<'p>(&self, backend: Backend, plan: Plan<'p>) -> Option<&'p [QuadPlan]> {
        let [key0, key1] = &self.keys;
        if (self.alpha != 0.0 && key0.rates != key1.rates) || plan.quads.len() < self.clip.quad_count() {
            return None;
        }
        if *plan.segment != Some(key0.rates) {
            // A plan made for another segment of this clip holds its clip ranges
            // and bones already.
            let segment_only = plan.segment.is_some();
            simd::run(backend, PlanSegment { clip: &self.clip, key: key0, segment_only, quads: &mut *plan.quads });
            *plan.segment = Some(key0.rates);
        }
        Some(plan.quads)
    }

    /// [`Sampler::decompress_kept_pose`] on the portable scalar backend.
    #[doc(hidden)]
    pub fn decompress_kept_pose_scalar(&self, pose: &mut KeptPose<'_>) -> Result<(), Error> {
        self.check_output_len(pose.len())?;
        let (out, filled, plan) = pose.for_clip(&self.clip);
        let plan = self.planned(Backend::Portable, plan);
        simd::run(Backend::Portable, KeptPart { at: self.at(), out, filled, plan });
        self.put_in_place(out);
        Ok(())
    }

    /// The whole pose on the sampler's backend, a function of its own so that the
    /// in-place step after it does not weigh on its register allocation.
    #[inline(never)]
    fn native_pose(&self, out: &mut [Transform]) {
        simd::run(self.backend, WholePose { at: self.at(), out });
    }

    /// Overwrites the in-place bone's slot, if the clip has one.
    #[inline]
    fn put_in_place(&self, out: &mut [Transform]) {
        if let Some((bone, t)) = self.clip.in_place() {
            if let Some(slot) = out.get_mut(bone) {
                *slot = t;
            }
        }
    }

    /// [`Sampler::decompress_pose`] on the portable scalar backend, whatever the
    /// target: the reference the SIMD backends are tested against, bit for bit.
    #[doc(hidden)]
    pub fn decompress_pose_scalar(&self, out: &mut [Transform]) -> Result<(), Error> {
        self.check_output(out)?;
        simd::run(Backend::Portable, WholePose { at: self.at(), out });
        self.put_in_place(out);
        Ok(())
    }

    /// Decodes one bone, in time independent of its index (the in-place transform for
    /// a root-motion bone that plays in place).
    #[inline]
    pub fn decompress_bone(&self, bone: u32) -> Result<Transform, Error> {
        self.check_bone(bone)?;
        // A bone that does not move is its static pose's, when the clip has one: read
        // without entering a backend. The lists it moves in are read once, here.
        let animated_lists = self.clip.lists.animated_lists(bone as usize);
        if let Some(&t) = self.clip.statics.get(bone as usize) {
            if animated_lists == 0 {
                return Ok(self.in_place_or(bone, || t));
            }
        }
        let job = OneBone { at: self.at(), bone: bone as usize, animated_lists };
        Ok(self.in_place_or(bone, || simd::run(self.backend, job)))
    }

    /// The in-place transform when `bone` plays in place, else `decode()`.
    #[inline]
    fn in_place_or(&self, bone: u32, decode: impl FnOnce() -> Transform) -> Transform {
        if bone == self.clip.in_place_bone {
            if let Some((_, t)) = self.clip.in_place() {
                return t;
            }
        }
        decode()
    }

    /// Decodes the bones of `bones` (any order) into `out[i]` for `bones[i]`, each as
    /// [`Sampler::decompress_bone`] does: partial decoding at a cost that follows the
    /// bones asked for. For the same bones every frame, a [`Subset`] costs less.
    pub fn decompress_bones(&self, bones: &[u32], out: &mut [Transform]) -> Result<(), Error> {
        subset::check(bones, self.clip.bone_count, out)?;
        simd::run(self.backend, ListedBones { at: self.at(), bones, out: &mut *out });
        self.put_in_place_listed(bones, out);
        Ok(())
    }

    /// Decodes the bones of `subset` (a plan built for this clip) into `out[i]` for its
    /// `i`-th bone: only their animated sub-tracks are decoded, the rest was finished
    /// when the plan was built. Gives exactly the values a whole pose gives them.
    #[inline]
    pub fn decompress_subset<const N: usize>(
        &self,
        subset: &mut Subset<N>,
        out: &mut [Transform],
    ) -> Result<(), Error> {
        subset.check(&self.clip, out)?;
        simd::run(self.backend, PlannedBones { at: self.at(), subset, out });
        Ok(())
    }

    /// [`Sampler::decompress_subset`] on the portable scalar backend.
    #[doc(hidden)]
    pub fn decompress_subset_scalar<const N: usize>(
        &self,
        subset: &mut Subset<N>,
        out: &mut [Transform],
    ) -> Result<(), Error> {
        subset.check(&self.clip, out)?;
        simd::run(Backend::Portable, PlannedBones { at: self.at(), subset, out });
        Ok(())
    }

    /// The in-place transform for the in-place bone wherever `bones` lists it.
    #[inline]
    fn put_in_place_listed(&self, bones: &[u32], out: &mut [Transform]) {
        if let Some((bone, t)) = self.clip.in_place() {
            for (&b, slot) in bones.iter().zip(out.iter_mut()) {
                if b as usize == bone {
                    *slot = t;
                }
            }
        }
    }

    /// [`Sampler::decompress_bone`] on the portable scalar backend.
    #[doc(hidden)]
    pub fn decompress_bone_scalar(&self, bone: u32) -> Result<Transform, Error> {
        self.check_bone(bone)?;
        let animated_lists = self.clip.lists.animated_lists(bone as usize);
        let job = OneBone { at: self.at(), bone: bone as usize, animated_lists };
        Ok(self.in_place_or(bone, || simd::run(Backend::Portable, job)))
    }

    fn check_output(&self, out: &[Transform]) -> Result<(), Error> {
        self.check_output_len(out.len())
    }

    fn check_output_len(&self, len: usize) -> Result<(), Error> {
        let bone_count = self.clip.bone_count;
        if len < bone_count as usize {
            return Err(Error::OutputTooSmall { len: len as u32, bone_count });
        }
        Ok(())
    }

    fn check_bone(&self, bone: u32) -> Result<(), Error> {
        let bone_count = self.clip.bone_count;
        if bone >= bone_count {
            return Err(Error::BoneOutOfRange { index: bone, bone_count });
        }
        Ok(())
    }
}
