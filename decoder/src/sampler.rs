//! [`Sampler`]: seek to a time, then decode a whole pose or a single bone.
//!
//! The sampler is a small value on the caller's stack (see [`Sampler`] for its size).
//! `seek` finds the two key frames around the time and the interpolation weight. A
//! whole pose is the identity everywhere, then the constant sub-tracks, then the
//! animated ones, each list visited through its bone bit set: the cost follows the
//! stored sub-tracks, not the bone count. A single bone is located by rank in the bit
//! sets and by the segments' frame directories, in time independent of its index.

use crate::bone;
use crate::clip::Clip;
use crate::database::Binding;
use crate::error::Error;
use crate::format::database::{TIER_LOW, TIER_MEDIUM};
use crate::format::Looping;
use crate::kept_pose::KeptPose;
use crate::pose::{animated_part, pose, statics};
use crate::residency::{Residency, Slot};
use crate::simd::{self, Native};
use crate::subset::{self, Subset};
use crate::transform::Transform;

/// Bytes per cache line, the unit of [`Sampler::prefetch`].
const LINE: usize = 64;

/// Relative distance (4 ulps of 1.0) within which a position snaps to a sample.
const SNAP_ULPS: f32 = 4.0 * f32::EPSILON;

/// How `seek` treats a time that falls between two samples.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Rounding {
    /// Interpolate between the two samples.
    #[default]
    None,
    /// Use the earlier sample.
    Floor,
    /// Use the later sample.
    Ceil,
    /// Use the nearer sample (the later one at exactly half way).
    Nearest,
}

/// One of the two key frames being interpolated: where its segment's parts are.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Key<'a> {
    /// The bytes holding its samples: the clip's, or a resident chunk of a database
    /// tier ([`Sampler::seek_streamed`]).
    pub samples: &'a [u8],
    /// Offset of the segment's frame directory.
    pub directory: usize,
    /// Offset of the segment's bit rates.
    pub rates: usize,
    /// Offset of the segment's range bytes (unused with a single segment).
    pub segment_ranges: usize,
    /// Bit offset, from the start of `samples`, of this key frame's first sample bit.
    pub frame_bit: u64,
}

/// Where a time falls among the stored samples (decoding.md, Seeking): the two keys
/// and the fraction of the way from the first to the second.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Position {
    pub k0: u32,
    pub k1: u32,
    pub fraction: f32,
    /// The time is a wrapping clip's duration (or past it), which decodes the first
    /// sample as the source's repeated last one.
    pub loop_end: bool,
}

impl Position {
    /// The position of `time` seconds in `clip`, clamped to `[0, duration]`.
    #[inline(always)]
    pub fn of(clip: &Clip<'_>, time: f32) -> Position {
        Position::at(clip.sample_count, clip.sample_rate, clip.looping(), time)
    }

    /// The position of `time` seconds among `sample_count` stored samples (at least
    /// one) at `sample_rate`, clamped to `[0, duration]`.
    #[inline(always)]
    pub fn at(sample_count: u32, sample_rate: f32, looping: Looping, time: f32) -> Position {
        let last = sample_count.saturating_sub(1);
        let wrap = looping == Looping::Wrap;
        // The last position: the last sample, or one interval past it when wrapping.
        let end = if wrap { sample_count } else { last };
        let position = time * sample_rate;
        // `max`/`min` on f32 map NaN to the other operand; a NaN time lands on 0.
        let position = position.max(0.0).min(end as f32);
        // `i / rate * rate` rarely lands exactly on `i` in f32; far into a long clip the
        // residue is a visible fraction of a sample. Times within a few ulps of a sample
        // are that sample.
        let nearest = libm::roundf(position);
        let position = if (position - nearest).abs() <= nearest * SNAP_ULPS { nearest } else { position };
        let k0 = (position as u32).min(end);
        let fraction = position - k0 as f32;
        if k0 < last {
            Position { k0, k1: k0.wrapping_add(1), fraction: fraction.clamp(0.0, 1.0), loop_end: false }
        } else if wrap && k0 == last {
            // The last interval of a wrapping loop: back to the first sample.
            Position { k0, k1: 0, fraction: fraction.clamp(0.0, 1.0), loop_end: false }
        } else {
            // The last sample of a clamped clip, or the end of a wrapping one, which
            // is its first sample again.
            let k = if wrap { 0 } else { last };
            Position { k0: k, k1: k, fraction: 0.0, loop_end: wrap }
        }
    }
}

/// The stored key frames to blend for samples `k0` and `k1` at weight `alpha`, given
/// the key frames `present` in `k0`'s segment `segment` (decoding.md, Key frames left
/// out): unchanged when `k0` is stored and so is `k1` (or the weight is 0); otherwise
/// the nearest stored frames of the segment around the position, found with two bit
/// scans, and the weight of the position between them. Every segment keeps its first
/// and last key frame, so both exist inside the segment.
#[inline(always)]
fn kept_keys(clip: &Clip<'_>, segment: u32, present: u32, k0: u32, k1: u32, alpha: f32) -> (u32, u32, f32) {
    let start = segment.wrapping_mul(u32::from(clip.segment_len));
    // Below 32: a segment holds at most 31 samples.
    let local = k0.wrapping_sub(start) & 31;
    let here = present >> local;
    if here & 1 != 0 && (alpha == 0.0 || here & 2 != 0) {
        return (k0, k1, alpha);
    }
    between_kept(start, local, present, k0, k1, alpha)
}

/// [`kept_keys`] when a key frame is missing.
#[inline(never)]
fn between_kept(start: u32, local: u32, present: u32, k0: u32, k1: u32, alpha: f32) -> (u32, u32, f32) {
    between(start, local, present, k0, k1, alpha)
}

/// The nearest stored frames around local frame `local` of the segment starting at
/// sample `start` whose stored frames are `present`, and the weight between them
/// ([`kept_keys`] when a key frame is missing).
#[inline(always)]
fn between(start: u32, local: u32, present: u32, k0: u32, k1: u32, alpha: f32) -> (u32, u32, f32) {
    // Frames `0 ..= local` and the frames after `local`.
    let upto = u32::MAX >> (31u32.wrapping_sub(local) & 31);
    let (before, after) = (present & upto, present & !upto);
    if after == 0 || (present >> local) & 1 != 0 && alpha == 0.0 {
        // `k0` is the segment's last frame (stored; `k1` is in the next segment or
        // the first sample of a loop), or stored and decoded alone.
        return (k0, k1, alpha);
    }
    // Bit 0 is always set, so `before` is not empty.
    let lo = 31u32.wrapping_sub(before.leading_zeros());
    let hi = after.trailing_zeros();
    let alpha = crate::interpolation::weight_between(local.wrapping_sub(lo), hi.wrapping_sub(lo), alpha);
    (start.wrapping_add(lo), start.wrapping_add(hi), alpha)
}

/// Samples a [`Clip`] at arbitrary times. Create one per playing clip; it borrows
/// the clip's bytes and holds no other state than the current position.
///
/// Size: 472 bytes on 64-bit targets (checked by a test), of which the [`Clip`] view
/// is 368 (the validated header, section offsets, where each list starts and the
/// shared pose's values, so nothing is re-read, re-checked or re-summed per call); it
/// lives on the caller's stack and allocates nothing.
#[derive(Clone, Copy, Debug)]
pub struct Sampler<'a> {
    clip: Clip<'a>,
    keys: [Key<'a>; 2],
    alpha: f32,
}

impl<'a> Sampler<'a> {
    /// A sampler positioned at time 0.
    pub fn new(clip: Clip<'a>) -> Self {
        let mut sampler = Sampler { clip, keys: [Key::default(); 2], alpha: 0.0 };
        sampler.seek(0.0, Rounding::None);
        sampler
    }

    /// A sampler not yet pointed at any key (for [`Sampler::place`]).
    pub(crate) fn unplaced(clip: Clip<'a>) -> Self {
        Sampler { clip, keys: [Key::default(); 2], alpha: 0.0 }
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

    /// The SIMD backend decoding on this build: `"sse2"`, `"avx2"`, `"neon"` or
    /// `"scalar"`. All produce the same bits.
    pub fn backend() -> &'static str {
        simd::BACKEND
    }

    /// Moves to `time` seconds. Times outside `[0, duration]` are clamped (NaN reads
    /// as 0); `rounding` chooses between interpolating and snapping to a sample.
    ///
    /// A wrapping clip interpolates from its last stored sample back to its first over
    /// the last interval, and decodes the first sample at exactly the duration (and,
    /// clamped, past it): the sample its source repeated there.
    pub fn seek(&mut self, time: f32, rounding: Rounding) {
        let (k0, k1, alpha) = self.position(time, rounding);
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
        let (k0, k1, alpha) = self.position(time, rounding);
        if residency.is_empty() {
            // Nothing streamed in (or everything streamed out): the clip alone.
            self.place(k0, k1, alpha);
        } else {
            self.place_streamed(k0, k1, alpha, binding, residency);
        }
        Ok(())
    }

    /// The stored keys and weight `seek` blends for `time` under `rounding`, before
    /// key frames left out are accounted for.
    #[inline(always)]
    fn position(&self, time: f32, rounding: Rounding) -> (u32, u32, f32) {
        let Position { k0, k1, fraction, .. } = Position::of(&self.clip, time);
        let alpha = match rounding {
            Rounding::None => fraction,
            Rounding::Floor => 0.0,
            Rounding::Ceil => {
                if fraction > 0.0 {
                    1.0
                } else {
                    0.0
                }
            }
            Rounding::Nearest => {
                if fraction >= 0.5 {
                    1.0
                } else {
                    0.0
                }
            }
        };
        // A weight of exactly 1 is the second key alone: decode it as the first.
        let (k0, alpha) = if alpha >= 1.0 { (k1, 0.0) } else { (k0, alpha) };
        (k0, k1, alpha)
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
        self.keys = [self.key(k0, segment0, entry0), self.key(k1, segment1, entry1)];
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
            let key0 = self.key(k0, segment0, entry0);
            // With a weight of 0 the second key is not read (and may lie in the next
            // segment); otherwise it is `k0 + 1`, stored in this segment.
            let key1 = if alpha == 0.0 { key0 } else { self.key(k1, segment0, entry0) };
            self.keys = [key0, key1];
            self.prefetch();
        } else {
            self.place_from_tiers(k0, k1, alpha, segment0, entry0, binding, residency);
        }
    }

    /// [`Sampler::place_streamed`] when a key is not in the clip (or is the
    /// segment's last frame): the key frames of the tiers resident join the clip's
    /// before the two bit scans, and each key's samples are read from where it is.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn place_from_tiers<S: AsRef<[Slot<'a>]>>(
        &mut self,
        k0: u32,
        k1: u32,
        alpha: f32,
        segment0: u32,
        entry0: (usize, u32, u32),
        binding: &Binding<'_>,
        residency: &Residency<'a, S>,
    ) {
        let clip = &self.clip;
        let start = segment0.wrapping_mul(u32::from(clip.segment_len));
        // The tiers' key frames of the segment, counted where their chunk is resident.
        let ([medium_held, low_held], [medium_at, low_at]) = binding.segment(segment0);
        let (medium_chunk, medium_byte) = binding.locate(medium_at);
        let (low_chunk, low_byte) = binding.locate(low_at);
        let medium = if medium_held != 0 { residency.chunk(TIER_MEDIUM, medium_chunk) } else { None };
        let low = if low_held != 0 { residency.chunk(TIER_LOW, low_chunk) } else { None };
        let medium_held = if medium.is_some() { medium_held } else { 0 };
        let low_held = if low.is_some() { low_held } else { 0 };
        let (data_offset, frame_bits, clip_held) = entry0;
        let present = clip_held | medium_held | low_held;
        // Below 32: a segment holds at most 31 samples.
        let local = k0.wrapping_sub(start) & 31;
        let here = present >> local;
        let (k0, k1, alpha) = if here & 1 != 0 && (alpha == 0.0 || here & 2 != 0) {
            (k0, k1, alpha)
        } else {
            between(start, local, present, k0, k1, alpha)
        };
        self.alpha = alpha;
        let directory = data_offset;
        let rates = directory.wrapping_add(clip.frame_directory_len as usize);
        let segment_ranges = rates.wrapping_add(clip.animated_count as usize);
        let clip_bit = (data_offset as u64).wrapping_add(clip.segment_header_len()).wrapping_mul(8);
        // Key frame `k` of the segment: in the clip, or in the tier that holds it; its
        // place among that source's frames of the segment gives its first bit.
        let key = |k: u32| {
            let bit = 1u32 << (k.wrapping_sub(start) & 31);
            let (samples, first_bit, held) = if clip_held & bit != 0 {
                (clip.bytes, clip_bit, clip_held)
            } else if medium_held & bit != 0 {
                (medium.unwrap_or(&[]), (medium_byte as u64).wrapping_mul(8), medium_held)
            } else {
                (low.unwrap_or(&[]), (low_byte as u64).wrapping_mul(8), low_held)
            };
            let stored = (held & bit.wrapping_sub(1)).count_ones();
            let frame_bit = first_bit.wrapping_add(u64::from(stored).wrapping_mul(u64::from(frame_bits)));
            Key { samples, directory, rates, segment_ranges, frame_bit }
        };
        let key0 = key(k0);
        // The second key is in the first one's segment, or is the first frame of the
        // next segment (or of the clip, for a loop), which the clip always stores.
        let segment1 = clip.segment_of(k1);
        let key1 = if segment1 == segment0 { key(k1) } else { self.key(k1, segment1, clip.segment(segment1)) };
        self.keys = [key0, key1];
        self.prefetch();
    }

    /// Starts loading what the next pose reads first, so that a clip out of the
    /// caches pays for its misses in parallel rather than one after another: the
    /// start of the track bit sets, constants and clip ranges, of the first key's
    /// segment header, and of both keys' samples (the hardware prefetcher follows the
    /// rest of each run of lines). Fourteen hints, none of them waiting for memory.
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
        let [key0, key1] = &self.keys;
        lines(key0.directory, 2);
        for key in [key0, key1] {
            for i in 0..2usize {
                simd::prefetch(key.samples, ((key.frame_bit >> 3) as usize).wrapping_add(i.wrapping_mul(LINE)));
            }
        }
    }

    /// Where key frame `sample` of `segment` (table entry `entry`: data offset, bits
    /// per key frame, key frames present) is.
    #[inline(always)]
    fn key(&self, sample: u32, segment: u32, entry: (usize, u32, u32)) -> Key<'a> {
        let clip = &self.clip;
        let (data_offset, frame_bits, present) = entry;
        // `sample` is at most sample_count − 1 and lies in `segment`: nothing wraps.
        let local = sample.saturating_sub(segment.wrapping_mul(u32::from(clip.segment_len)));
        // The key frame's place among the segment's stored frames.
        let below = (1u32 << (local & 31)).wrapping_sub(1);
        // Every frame before it present (a segment without holes): no population
        // count, which is a long sequence on targets without a `popcnt` instruction.
        let stored = if present & below == below { local & 31 } else { (present & below).count_ones() };
        let directory = data_offset;
        let rates = directory.wrapping_add(clip.frame_directory_len as usize);
        let segment_ranges = rates.wrapping_add(clip.animated_count as usize);
        let samples_start = (data_offset as u64).wrapping_add(clip.segment_header_len());
        let frame_bit =
            samples_start.wrapping_mul(8).wrapping_add(u64::from(stored).wrapping_mul(u64::from(frame_bits)));
        Key { samples: clip.bytes, directory, rates, segment_ranges, frame_bit }
    }

    /// Decodes every bone into `out[..bone_count]`. A root-motion bone that plays in
    /// place ([`Clip::root_motion_in_place`]) gets its in-place transform.
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
    pub fn decompress_kept_pose(&self, pose: &mut KeptPose<'_>) -> Result<(), Error> {
        self.check_output_len(pose.len())?;
        let (out, filled) = pose.for_clip(&self.clip);
        self.native_kept(out, filled);
        self.put_in_place(out);
        Ok(())
    }

    /// The kept pose on this target's backend: the static parts when `filled` is
    /// false, then the animated ones.
    #[inline(never)]
    fn native_kept(&self, out: &mut [Transform], filled: bool) {
        if !filled {
            statics::<Native>(&self.clip, out);
        }
        animated_part::<Native>(&self.clip, &self.keys, self.alpha, out);
    }

    /// [`Sampler::decompress_kept_pose`] on the portable scalar backend.
    #[doc(hidden)]
    pub fn decompress_kept_pose_scalar(&self, pose: &mut KeptPose<'_>) -> Result<(), Error> {
        self.check_output_len(pose.len())?;
        let (out, filled) = pose.for_clip(&self.clip);
        if !filled {
            statics::<simd::scalar::F32x4>(&self.clip, out);
        }
        animated_part::<simd::scalar::F32x4>(&self.clip, &self.keys, self.alpha, out);
        self.put_in_place(out);
        Ok(())
    }

    /// The whole pose on this target's backend, a function of its own so that the
    /// in-place step after it does not weigh on its register allocation.
    #[inline(never)]
    fn native_pose(&self, out: &mut [Transform]) {
        pose::<Native>(&self.clip, &self.keys, self.alpha, out);
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
        pose::<simd::scalar::F32x4>(&self.clip, &self.keys, self.alpha, out);
        self.put_in_place(out);
        Ok(())
    }

    /// Decodes one bone, in time independent of its index (the in-place transform for
    /// a root-motion bone that plays in place).
    pub fn decompress_bone(&self, bone: u32) -> Result<Transform, Error> {
        self.check_bone(bone)?;
        Ok(self.in_place_or(bone, || bone::bone::<Native>(&self.clip, &self.keys, self.alpha, bone as usize)))
    }

    /// The in-place transform when `bone` plays in place, else `decode()`.
    #[inline]
    fn in_place_or(&self, bone: u32, decode: impl FnOnce() -> Transform) -> Transform {
        match self.clip.in_place() {
            Some((b, t)) if b == bone as usize => t,
            _ => decode(),
        }
    }

    /// Decodes the bones of `bones` (any order) into `out[i]` for `bones[i]`, each as
    /// [`Sampler::decompress_bone`] does: partial decoding at a cost that follows the
    /// bones asked for. For the same bones every frame, a [`Subset`] costs less.
    pub fn decompress_bones(&self, bones: &[u32], out: &mut [Transform]) -> Result<(), Error> {
        subset::check(bones, self.clip.bone_count, out)?;
        subset::decode::<Native>(&self.clip, &self.keys, self.alpha, bones, out);
        self.put_in_place_listed(bones, out);
        Ok(())
    }

    /// Decodes the bones of `subset` (a plan built for this clip) into `out[i]` for its
    /// `i`-th bone: only their animated sub-tracks are decoded, the rest was finished
    /// when the plan was built. Gives exactly the values a whole pose gives them.
    pub fn decompress_subset<const N: usize>(&self, subset: &Subset<N>, out: &mut [Transform]) -> Result<(), Error> {
        subset.check(&self.clip, out)?;
        subset.decode::<Native>(&self.clip, &self.keys, self.alpha, out);
        Ok(())
    }

    /// [`Sampler::decompress_subset`] on the portable scalar backend.
    #[doc(hidden)]
    pub fn decompress_subset_scalar<const N: usize>(
        &self,
        subset: &Subset<N>,
        out: &mut [Transform],
    ) -> Result<(), Error> {
        subset.check(&self.clip, out)?;
        subset.decode::<simd::scalar::F32x4>(&self.clip, &self.keys, self.alpha, out);
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
        Ok(self
            .in_place_or(bone, || bone::bone::<simd::scalar::F32x4>(&self.clip, &self.keys, self.alpha, bone as usize)))
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
