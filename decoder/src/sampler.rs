//! [`Sampler`]: seek to a time, then decode a whole pose or a single bone.
//!
//! The sampler is a small value on the caller's stack (see [`Sampler`] for its size).
//! `seek` finds the two key frames around the time and the interpolation weight. A
//! whole pose is the identity everywhere, then the constant sub-tracks, then the
//! animated ones, each list visited through its bone bit set: the cost follows the
//! stored sub-tracks, not the bone count. A single bone is located by rank in the bit
//! sets and by the segments' frame directories, in time independent of its index.

use crate::bytes::u32_at;
use crate::clip::Clip;
use crate::decode::{key_value, lerp, load, KeyRef, Rotations};
use crate::error::Error;
use crate::format::{self, SubTrackClass, SubTrackKind, TrackList, FRAME_BLOCK};
use crate::simd::{self, Lanes, Native};
use crate::transform::Transform;

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
struct Key {
    /// Offset of the segment's frame directory.
    directory: usize,
    /// Offset of the segment's bit rates.
    rates: usize,
    /// Offset of the segment's range bytes (unused with a single segment).
    segment_ranges: usize,
    /// Bit offset, from the buffer start, of this key frame's first sample bit.
    frame_bit: u64,
}

/// Samples a [`Clip`] at arbitrary times. Create one per playing clip; it borrows
/// the clip's bytes and holds no other state than the current position.
///
/// Size: 328 bytes on 64-bit targets (checked by a test), of which the [`Clip`] view
/// is 256 (the validated header and section offsets, so nothing is re-read or
/// re-checked per call); it lives on the caller's stack and allocates nothing.
#[derive(Clone, Copy, Debug)]
pub struct Sampler<'a> {
    clip: Clip<'a>,
    keys: [Key; 2],
    alpha: f32,
}

impl<'a> Sampler<'a> {
    /// A sampler positioned at time 0.
    pub fn new(clip: Clip<'a>) -> Self {
        let mut sampler = Sampler { clip, keys: [Key::default(); 2], alpha: 0.0 };
        sampler.seek(0.0, Rounding::None);
        sampler
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
    pub fn seek(&mut self, time: f32, rounding: Rounding) {
        // Validation guarantees at least one sample.
        let last = self.clip.sample_count.saturating_sub(1);
        let position = time * self.clip.sample_rate;
        // `max`/`min` on f32 map NaN to the other operand; a NaN time lands on 0.
        let position = position.max(0.0).min(last as f32);
        // `i / rate * rate` rarely lands exactly on `i` in f32; far into a long clip the
        // residue is a visible fraction of a sample. Times within a few ulps of a sample
        // are that sample.
        let nearest = libm::roundf(position);
        let position = if (position - nearest).abs() <= nearest * SNAP_ULPS { nearest } else { position };
        let k0 = (position as u32).min(last);
        let k1 = if k0 < last { k0.wrapping_add(1) } else { last };
        let fraction = position - k0 as f32;
        let fraction = if k0 == k1 { 0.0 } else { fraction.clamp(0.0, 1.0) };
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
        self.alpha = alpha;
        self.keys = [self.key(k0), self.key(k1)];
    }

    fn key(&self, sample: u32) -> Key {
        let clip = &self.clip;
        // Validation guarantees segment_len ≥ 1 and segment_count ≥ 1; `sample` is at
        // most sample_count − 1, so every value below is in range and nothing wraps.
        let len = u32::from(clip.segment_len);
        let segment = sample.checked_div(len).unwrap_or(0).min(clip.segment_count.saturating_sub(1));
        let local = sample.saturating_sub(segment.wrapping_mul(len));
        let (data_offset, frame_bits, present) = clip.segment(segment);
        // The key frame's place among the segment's stored frames (all of them in
        // version 2.0; later versions may leave holes).
        let stored = (present & (1u32 << (local & 31)).wrapping_sub(1)).count_ones();
        let directory = data_offset;
        let rates = directory.wrapping_add(clip.frame_directory_len as usize);
        let segment_ranges = rates.wrapping_add(clip.animated_count as usize);
        let samples_start = (data_offset as u64).wrapping_add(clip.segment_header_len());
        let frame_bit =
            samples_start.wrapping_mul(8).wrapping_add(u64::from(stored).wrapping_mul(u64::from(frame_bits)));
        Key { directory, rates, segment_ranges, frame_bit }
    }

    /// Decodes every bone into `out[..bone_count]`.
    pub fn decompress_pose(&self, out: &mut [Transform]) -> Result<(), Error> {
        self.check_output(out)?;
        self.pose::<Native>(out);
        Ok(())
    }

    /// [`Sampler::decompress_pose`] on the portable scalar backend, whatever the
    /// target: the reference the SIMD backends are tested against, bit for bit.
    #[doc(hidden)]
    pub fn decompress_pose_scalar(&self, out: &mut [Transform]) -> Result<(), Error> {
        self.check_output(out)?;
        self.pose::<simd::scalar::F32x4>(out);
        Ok(())
    }

    /// Decodes one bone, in time independent of its index.
    pub fn decompress_bone(&self, bone: u32) -> Result<Transform, Error> {
        self.check_bone(bone)?;
        Ok(self.bone::<Native>(bone as usize))
    }

    /// [`Sampler::decompress_bone`] on the portable scalar backend.
    #[doc(hidden)]
    pub fn decompress_bone_scalar(&self, bone: u32) -> Result<Transform, Error> {
        self.check_bone(bone)?;
        Ok(self.bone::<simd::scalar::F32x4>(bone as usize))
    }

    fn check_output(&self, out: &[Transform]) -> Result<(), Error> {
        let bone_count = self.clip.bone_count;
        if out.len() < bone_count as usize {
            return Err(Error::OutputTooSmall { len: out.len() as u32, bone_count });
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

    /// The whole pose: identity, then constants, then animated sub-tracks.
    #[inline(always)]
    fn pose<V: Lanes>(&self, out: &mut [Transform]) {
        let clip = &self.clip;
        let bytes = clip.bytes;
        let out = out.get_mut(..clip.bone_count as usize).unwrap_or_default();
        for t in out.iter_mut() {
            *t = Transform::IDENTITY;
        }
        let mut rotations = Rotations::<V>::new();
        // Offsets below stay inside the sections validation checked: nothing wraps.
        let mut at = clip.constants_offset;
        for list in TrackList::ALL {
            let components = list.components();
            let rotation = list.kind() == SubTrackKind::Rotation;
            for bone in clip.lists.bones(format::bitset_index(false, list)) {
                let value = load::<V>(bytes, at, components);
                if rotation {
                    if rotations.push(bone, value, value) {
                        flush(&mut rotations, list, 0.0, out);
                    }
                } else if let Some(t) = out.get_mut(bone) {
                    write(list, value, t);
                }
                at = at.wrapping_add((components as usize) << 2);
            }
            flush(&mut rotations, list, 0.0, out);
        }
        let ranged = clip.segment_count > 1;
        let [key0, key1] = self.keys;
        let alpha = self.alpha;
        let mut range = clip.ranges_offset;
        let mut segment_range = 0usize;
        let mut bits = [key0.frame_bit, key1.frame_bit];
        let mut index = 0usize;
        for list in TrackList::ALL {
            let components = list.components();
            let rotation = list.kind() == SubTrackKind::Rotation;
            for bone in clip.lists.bones(format::bitset_index(true, list)) {
                let min = load::<V>(bytes, range, components);
                let extent = load::<V>(bytes, range.wrapping_add((components as usize) << 2), components);
                let [bit0, bit1] = bits;
                let rate0 = bytes.get(key0.rates.wrapping_add(index)).copied().unwrap_or(0);
                let k0 = KeyRef {
                    bits: rate0,
                    bit: bit0,
                    segment_range: ranged.then(|| key0.segment_ranges.wrapping_add(segment_range)),
                };
                let v0 = key_value(bytes, &k0, components, min, extent);
                let rate1 = bytes.get(key1.rates.wrapping_add(index)).copied().unwrap_or(0);
                let v1 = if alpha == 0.0 {
                    v0
                } else {
                    let k1 = KeyRef {
                        bits: rate1,
                        bit: bit1,
                        segment_range: ranged.then(|| key1.segment_ranges.wrapping_add(segment_range)),
                    };
                    key_value(bytes, &k1, components, min, extent)
                };
                if rotation {
                    if rotations.push(bone, v0, v1) {
                        flush(&mut rotations, list, alpha, out);
                    }
                } else if let Some(t) = out.get_mut(bone) {
                    write(list, if alpha == 0.0 { v0 } else { lerp(v0, v1, alpha) }, t);
                }
                let step = u64::from(components);
                bits = [
                    bit0.wrapping_add(u64::from(rate0).wrapping_mul(step)),
                    bit1.wrapping_add(u64::from(rate1).wrapping_mul(step)),
                ];
                range = range.wrapping_add((components as usize) << 3);
                segment_range = segment_range.wrapping_add((components as usize) << 1);
                index = index.wrapping_add(1);
            }
            flush(&mut rotations, list, alpha, out);
        }
    }

    /// One bone: its three sub-tracks located by rank.
    #[inline(always)]
    fn bone<V: Lanes>(&self, bone: usize) -> Transform {
        let clip = &self.clip;
        let bytes = clip.bytes;
        let mut t = Transform::IDENTITY;
        let alpha = self.alpha;
        for kind in SubTrackKind::ALL {
            let (class, Some(list)) = clip.locate(kind, bone) else { continue };
            let components = list.components();
            let (v0, v1, alpha) = match class {
                SubTrackClass::Constant => {
                    let rank = clip.lists.rank(format::bitset_index(false, list), bone);
                    let before = clip.constant_components_before(list).wrapping_add(rank.wrapping_mul(components));
                    let value =
                        load::<V>(bytes, clip.constants_offset.wrapping_add((before as usize) << 2), components);
                    (value, value, 0.0)
                }
                _ => {
                    let rank = clip.lists.rank(format::bitset_index(true, list), bone);
                    let index = clip.animated_start(list).wrapping_add(rank);
                    let before = clip.animated_components_before(index) as usize;
                    let range = clip.ranges_offset.wrapping_add(before << 3);
                    let min = load::<V>(bytes, range, components);
                    let extent = load::<V>(bytes, range.wrapping_add((components as usize) << 2), components);
                    let ranged = clip.segment_count > 1;
                    let value = |key: &Key| {
                        let k = KeyRef {
                            bits: bytes.get(key.rates.wrapping_add(index as usize)).copied().unwrap_or(0),
                            bit: key.frame_bit.wrapping_add(self.frame_offset(key, index)),
                            segment_range: ranged.then(|| key.segment_ranges.wrapping_add(before << 1)),
                        };
                        key_value(bytes, &k, components, min, extent)
                    };
                    let [key0, key1] = &self.keys;
                    let v0 = value(key0);
                    (v0, if alpha == 0.0 { v0 } else { value(key1) }, alpha)
                }
            };
            if kind == SubTrackKind::Rotation {
                let mut rotations = Rotations::<V>::new();
                rotations.push(bone, v0, v1);
                let [q, ..] = rotations.finish(list == TrackList::Rotation3, alpha);
                t.rotation = q.to_quat();
            } else {
                write(list, if alpha == 0.0 { v0 } else { lerp(v0, v1, alpha) }, &mut t);
            }
        }
        t
    }

    /// Bit offset of animated sub-track `index` inside a key frame of `key`'s
    /// segment: a frame-directory entry plus the bits of at most [`FRAME_BLOCK`] − 1
    /// sub-tracks before it.
    #[inline(always)]
    fn frame_offset(&self, key: &Key, index: u32) -> u64 {
        let bytes = self.clip.bytes;
        let index = index as usize;
        let block = index / FRAME_BLOCK;
        let start = block.wrapping_mul(FRAME_BLOCK);
        let base = match block.checked_sub(1) {
            Some(entry) => u32_at(bytes, key.directory.wrapping_add(entry << 2)).unwrap_or(0),
            None => 0,
        };
        let rates = |from: usize, to: usize| -> u64 {
            let slice = bytes.get(key.rates.wrapping_add(from)..key.rates.wrapping_add(to)).unwrap_or(&[]);
            slice.iter().map(|&r| u64::from(r)).sum()
        };
        // Every sub-track stores 3 components, except the rotations of `[r4, r4_end)`.
        let (r4, r4_end) = self.clip.rotation4_span();
        let (from4, to4) = (start.max(r4 as usize), index.min(r4_end as usize));
        let extra = if from4 < to4 { rates(from4, to4) } else { 0 };
        u64::from(base).wrapping_add(rates(start, index).wrapping_mul(3)).wrapping_add(extra)
    }
}

/// Finishes the batched rotations of `list` and stores them in their bones.
#[inline(always)]
fn flush<V: Lanes>(rotations: &mut Rotations<V>, list: TrackList, alpha: f32, out: &mut [Transform]) {
    if rotations.len == 0 {
        return;
    }
    let (bones, len) = (rotations.bones, rotations.len);
    let finished = rotations.finish(list == TrackList::Rotation3, alpha);
    for (&bone, q) in bones.iter().zip(finished).take(len) {
        if let Some(t) = out.get_mut(bone) {
            t.rotation = q.to_quat();
        }
    }
}

/// Stores a decoded value in the part of `t` its list names.
#[inline(always)]
fn write<V: Lanes>(list: TrackList, value: V, t: &mut Transform) {
    match list {
        TrackList::Rotation3 | TrackList::Rotation4 => t.rotation = value.to_quat(),
        TrackList::Translation => t.translation = value.to_vec3(),
        TrackList::Scale => t.scale = value.to_vec3(),
    }
}
