//! [`Sampler`]: seek to a time, then decode a whole pose or a single bone.
//!
//! The sampler is a small value on the caller's stack. `seek` finds the two key
//! frames around the time and the interpolation weight; the decode functions walk the
//! sub-track streams (all rotations, then translations, then scales) with a cursor,
//! so each stored value is read once, in storage order.

use glam::Vec3;

use crate::bytes::{f32_at, read_bits};
use crate::clip::Clip;
use crate::error::Error;
use crate::format::{self, SubTrackClass, SubTrackKind};
use crate::interpolation::{interpolate_rotation, interpolate_vector};
use crate::quantization::{decode_component, rotation_from_components};
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

/// One of the two key frames being interpolated.
#[derive(Clone, Copy, Debug, Default)]
struct Key {
    /// Offset of the segment's data (bit rates first).
    data_offset: usize,
    /// Bit offset, from the buffer start, of this key frame's first sample bit.
    frame_bit: u64,
}

/// Samples a [`Clip`] at arbitrary times. Create one per playing clip; it borrows
/// the clip's bytes and holds no other state than the current position.
#[derive(Clone, Copy, Debug)]
pub struct Sampler<'a> {
    clip: Clip<'a>,
    keys: [Key; 2],
    alpha: f32,
    ranged: bool,
}

/// Where the walk over sub-tracks stands.
#[derive(Default)]
struct Cursor {
    constant: usize,
    range: usize,
    animated: usize,
    segment_range: usize,
    bits: [u64; 2],
}

impl<'a> Sampler<'a> {
    /// A sampler positioned at time 0.
    pub fn new(clip: Clip<'a>) -> Self {
        let mut sampler = Sampler { clip, keys: [Key::default(); 2], alpha: 0.0, ranged: clip.segment_count > 1 };
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
        self.alpha = match rounding {
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
        let (k0, alpha) = if self.alpha >= 1.0 { (k1, 0.0) } else { (k0, self.alpha) };
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
        let (data_offset, frame_bits) = clip.segment(segment);
        let samples_start = (data_offset as u64).wrapping_add(clip.segment_header_len());
        let frame_bit =
            samples_start.wrapping_mul(8).wrapping_add(u64::from(local).wrapping_mul(u64::from(frame_bits)));
        Key { data_offset, frame_bit }
    }

    /// Decodes every bone into `out[..bone_count]`.
    pub fn decompress_pose(&self, out: &mut [Transform]) -> Result<(), Error> {
        let bone_count = self.clip.bone_count;
        if out.len() < bone_count as usize {
            return Err(Error::OutputTooSmall { len: out.len() as u32, bone_count });
        }
        self.walk(None, |bone, value| {
            if let Some(t) = out.get_mut(bone) {
                value.apply(t);
            }
        });
        Ok(())
    }

    /// Decodes one bone.
    pub fn decompress_bone(&self, bone: u32) -> Result<Transform, Error> {
        let bone_count = self.clip.bone_count;
        if bone >= bone_count {
            return Err(Error::BoneOutOfRange { index: bone, bone_count });
        }
        let mut t = Transform::IDENTITY;
        self.walk(Some(bone as usize), |_, value| value.apply(&mut t));
        Ok(t)
    }

    /// Walks every sub-track in storage order, decoding those of `only` (or all),
    /// and hands each decoded value to `emit`.
    fn walk(&self, only: Option<usize>, mut emit: impl FnMut(usize, Value)) {
        let clip = &self.clip;
        let bytes = clip.bytes;
        let mut cursor = Cursor::default();
        for kind in SubTrackKind::ALL {
            for bone in 0..clip.bone_count as usize {
                let wanted = only.is_none_or(|b| b == bone);
                let class = clip.class(kind, bone);
                let components = clip.components(kind, bone);
                match class {
                    SubTrackClass::Default => {
                        if wanted {
                            emit(bone, Value::identity(kind));
                        }
                    }
                    SubTrackClass::Constant => {
                        if wanted {
                            let mut c = [0.0f32; 4];
                            let mut at = clip.constants_offset.wrapping_add(cursor.constant);
                            for v in c.iter_mut().take(components as usize) {
                                *v = f32_at(bytes, at).unwrap_or(0.0);
                                at = at.wrapping_add(4);
                            }
                            emit(bone, Value::from_keys(kind, components, c, c, 0.0));
                        }
                        cursor.constant = cursor.constant.wrapping_add((components as usize) << 2);
                    }
                    SubTrackClass::Animated => {
                        // Each key's bit rate and the clip range are read once here,
                        // for both the decode and the cursor advance.
                        let rates = self
                            .keys
                            .map(|key| bytes.get(key.data_offset.wrapping_add(cursor.animated)).copied().unwrap_or(0));
                        if wanted {
                            let range = self.clip_range(&cursor, components);
                            let [key0, key1] = &self.keys;
                            let c0 = self.decode_key(key0, rates[0], cursor.bits[0], &range, &cursor, components);
                            let c1 = if self.alpha == 0.0 {
                                c0
                            } else {
                                self.decode_key(key1, rates[1], cursor.bits[1], &range, &cursor, components)
                            };
                            emit(bone, Value::from_keys(kind, components, c0, c1, self.alpha));
                        }
                        // Offsets stay inside the validated sections: nothing wraps.
                        for (bit, rate) in cursor.bits.iter_mut().zip(rates) {
                            *bit = bit.wrapping_add(u64::from(rate).wrapping_mul(u64::from(components)));
                        }
                        cursor.range = cursor.range.wrapping_add((components as usize) << 3);
                        cursor.segment_range = cursor.segment_range.wrapping_add((components as usize) << 1);
                        cursor.animated = cursor.animated.wrapping_add(1);
                    }
                }
            }
        }
    }

    /// The clip range `(min, extent)` of each component of the current animated
    /// sub-track.
    #[inline(always)]
    fn clip_range(&self, cursor: &Cursor, components: u32) -> [(f32, f32); 4] {
        let bytes = self.clip.bytes;
        let n = components as usize;
        // Inside the validated range section: nothing wraps (see `decode_key`).
        let mins = self.clip.ranges_offset.wrapping_add(cursor.range);
        let extents = mins.wrapping_add(n << 2);
        let mut out = [(0.0f32, 0.0f32); 4];
        for (c, range) in out.iter_mut().enumerate().take(n) {
            let min = f32_at(bytes, mins.wrapping_add(c << 2)).unwrap_or(0.0);
            let extent = f32_at(bytes, extents.wrapping_add(c << 2)).unwrap_or(0.0);
            *range = (min, extent);
        }
        out
    }

    /// The stored components of the current animated sub-track at `key`, whose bit
    /// rate is `bits` and which starts `key_bits` bits into the key frame.
    #[inline(always)]
    fn decode_key(
        &self,
        key: &Key,
        bits: u8,
        key_bits: u64,
        range: &[(f32, f32); 4],
        cursor: &Cursor,
        components: u32,
    ) -> [f32; 4] {
        let bytes = self.clip.bytes;
        let n = components as usize;
        // Every offset below lies inside a section validation checked, so no addition
        // wraps; wrapping arithmetic only rules out a panic (a wrapped offset would
        // fail its bounds-checked read and decode as zero).
        let lows = key.data_offset.wrapping_add(self.clip.animated_count as usize).wrapping_add(cursor.segment_range);
        let highs = lows.wrapping_add(n);
        let width = if bits == format::RAW_BITS { 32 } else { bits };
        let mut bit = key.frame_bit.wrapping_add(key_bits);
        let mut out = [0.0f32; 4];
        for (c, (value, &(min, extent))) in out.iter_mut().zip(range).enumerate().take(n) {
            let segment_bytes = if self.ranged {
                let lo = bytes.get(lows.wrapping_add(c)).copied().unwrap_or(0);
                let hi = bytes.get(highs.wrapping_add(c)).copied().unwrap_or(0);
                Some((lo, hi))
            } else {
                None
            };
            let stored = if bits == 0 { 0 } else { read_bits(bytes, bit, width) };
            bit = bit.wrapping_add(u64::from(width));
            *value = decode_component(bits, stored, segment_bytes, min, extent);
        }
        out
    }
}

/// One decoded sub-track value.
enum Value {
    Rotation(glam::Quat),
    Translation(Vec3),
    Scale(Vec3),
}

impl Value {
    fn identity(kind: SubTrackKind) -> Value {
        match kind {
            SubTrackKind::Rotation => Value::Rotation(glam::Quat::IDENTITY),
            SubTrackKind::Translation => Value::Translation(Vec3::ZERO),
            SubTrackKind::Scale => Value::Scale(Vec3::ONE),
        }
    }

    #[inline(always)]
    fn from_keys(kind: SubTrackKind, components: u32, c0: [f32; 4], c1: [f32; 4], alpha: f32) -> Value {
        match kind {
            SubTrackKind::Rotation => Value::Rotation(interpolate_rotation(
                rotation_from_components(c0, components),
                rotation_from_components(c1, components),
                alpha,
            )),
            SubTrackKind::Translation => {
                Value::Translation(interpolate_vector([c0[0], c0[1], c0[2]], [c1[0], c1[1], c1[2]], alpha))
            }
            SubTrackKind::Scale => {
                Value::Scale(interpolate_vector([c0[0], c0[1], c0[2]], [c1[0], c1[1], c1[2]], alpha))
            }
        }
    }

    #[inline]
    fn apply(self, t: &mut Transform) {
        match self {
            Value::Rotation(q) => t.rotation = q,
            Value::Translation(v) => t.translation = v,
            Value::Scale(v) => t.scale = v,
        }
    }
}
