//! [`ScalarSampler`]: seek a scalar track list and decode every track.

use crate::error::Error;
use crate::format::bytes::{f32_at, read_bits};
use crate::format::QUAD_LANES;
use crate::scalar::list::ScalarClip;
use crate::seek::{Key, Position};
use crate::unpack::quantization::decode_components;

/// Samples a [`ScalarClip`]: seek, then decode every track into a slice of floats.
#[derive(Clone, Copy, Debug)]
pub struct ScalarSampler<'a> {
    clip: ScalarClip<'a>,
    keys: [Key<'a>; 2],
    alpha: f32,
}

impl<'a> ScalarSampler<'a> {
    /// A sampler at time 0.
    pub fn new(clip: ScalarClip<'a>) -> Self {
        let mut sampler = ScalarSampler { clip, keys: [Key::default(); 2], alpha: 0.0 };
        sampler.seek(0.0);
        sampler
    }

    /// The list being sampled.
    pub fn clip(&self) -> &ScalarClip<'a> {
        &self.clip
    }

    /// Moves to `time` seconds, interpolating between samples (times outside
    /// `[0, duration]` are clamped, NaN reads as 0), as a transform clip seeks.
    pub fn seek(&mut self, time: f32) {
        let clip = &self.clip;
        let p = Position::at(clip.sample_count(), clip.sample_rate(), clip.looping(), time);
        self.keys = [clip.key(p.k0), clip.key(p.k1)];
        self.alpha = p.fraction;
    }

    /// Decodes every stored track: the components of the track with output index
    /// `o` go to `out[o·c .. o·c + c]` (`c` floats per track); slots of no stored
    /// track are left as they are. `out` must hold [`ScalarClip::output_count`] tracks.
    pub fn decompress_tracks(&self, out: &mut [f32]) -> Result<(), Error> {
        let clip = &self.clip;
        self.decode_into(out, clip.output_count, |t| clip.output_index(t).unwrap_or(0))
    }

    /// Decodes every stored track by its place among the stored tracks rather than
    /// its output index: stored track `t` goes to `out[t·c .. t·c + c]`. `out` must
    /// hold [`ScalarClip::track_count`] tracks. (Tools that write every track out,
    /// two of one output index included, use this.)
    pub fn decompress_stored_tracks(&self, out: &mut [f32]) -> Result<(), Error> {
        self.decode_into(out, self.clip.track_count, |t| t)
    }

    /// Decodes every stored track `t` into slot `slot(t)` of `out`, which must hold
    /// `slots` tracks.
    fn decode_into(&self, out: &mut [f32], slots: u32, slot: impl Fn(u32) -> u32) -> Result<(), Error> {
        let clip = &self.clip;
        let c = clip.track_type.components();
        let needed = (slots as usize).saturating_mul(c);
        if out.len() < needed {
            return Err(Error::FloatOutputTooSmall { len: out.len() as u32, needed: needed as u32 });
        }
        let bytes = clip.bytes;
        // Every offset below lies in a section validation checked: nothing wraps.
        let (mut constant_at, mut range_at) =
            (clip.header.constants_offset.get() as usize, clip.header.ranges_offset.get() as usize);
        let mut animated = 0usize;
        let [key0, key1] = &self.keys;
        let mut bits = [key0.frame_bit, key1.frame_bit];
        let ranged = clip.segment_count() > 1;
        for t in 0..clip.track_count as usize {
            let mut value = [0.0f32; 4];
            if clip.in_set(0, t) {
                for (m, v) in value.iter_mut().enumerate().take(c) {
                    *v = f32_at(bytes, constant_at.saturating_add(m << 2)).unwrap_or(0.0);
                }
                constant_at = constant_at.saturating_add(c << 2);
            } else if clip.in_set(1, t) {
                let component = |i: usize| f32_at(bytes, range_at.saturating_add(i << 2)).unwrap_or(0.0);
                let min: [f32; 4] = core::array::from_fn(|m| if m < c { component(m) } else { 0.0 });
                let extent: [f32; 4] =
                    core::array::from_fn(|m| if m < c { component(c.saturating_add(m)) } else { 0.0 });
                range_at = range_at.saturating_add(c << 3);
                // Its quad (format-spec/segments.md, Quads): tracks `first .. first + n`
                // of the animated ones, whose bits lie together by component.
                let lane = animated & (QUAD_LANES - 1);
                let first = animated.wrapping_sub(lane);
                let n = (clip.animated_count as usize).saturating_sub(first).min(QUAD_LANES);
                let mut keys = [[0.0f32; 4]; 2];
                for ((key, bit), v) in [key0, key1].into_iter().zip(bits.iter()).zip(keys.iter_mut()) {
                    let rate_of =
                        |j: usize| bytes.get(key.rates.saturating_add(first).saturating_add(j)).copied().unwrap_or(0);
                    let rate = rate_of(lane);
                    // A component's bits in the quad, and this lane's place among them.
                    let width: u64 = (0..n).map(|j| u64::from(rate_of(j))).sum();
                    let before: u64 = (0..lane).map(|j| u64::from(rate_of(j))).sum();
                    let segment = ranged.then(|| {
                        let at = key.segment_ranges.saturating_add(first.saturating_mul(c << 1));
                        let byte = |i: usize| bytes.get(at.saturating_add(i)).copied().unwrap_or(0);
                        core::array::from_fn(|m| {
                            if m < c {
                                let lo = m.wrapping_mul(n).wrapping_add(lane);
                                (byte(lo), byte(c.wrapping_mul(n).wrapping_add(lo)))
                            } else {
                                (0, 0)
                            }
                        })
                    });
                    let stored: [u32; 4] = core::array::from_fn(|m| {
                        if m < c && rate != 0 {
                            read_bits(
                                bytes,
                                bit.saturating_add((m as u64).saturating_mul(width)).saturating_add(before),
                                rate,
                            )
                        } else {
                            0
                        }
                    });
                    *v = decode_components(rate, stored, segment, min, extent);
                }
                // Past a quad's last lane: its bits, for each key.
                if lane.wrapping_add(1) == n {
                    for (key, bit) in [key0, key1].into_iter().zip(bits.iter_mut()) {
                        let width: u64 = (0..n)
                            .map(|j| {
                                let at = key.rates.saturating_add(first).saturating_add(j);
                                u64::from(bytes.get(at).copied().unwrap_or(0))
                            })
                            .sum();
                        *bit = bit.saturating_add(width.saturating_mul(c as u64));
                    }
                }
                let [v0, v1] = keys;
                for ((v, a), b) in value.iter_mut().zip(v0).zip(v1).take(c) {
                    *v = if self.alpha == 0.0 { a } else { a + (b - a) * self.alpha };
                }
                animated = animated.saturating_add(1);
            }
            let output = (slot(t as u32) as usize).saturating_mul(c);
            if let (Some(slot), Some(v)) = (out.get_mut(output..output.saturating_add(c)), value.get(..c)) {
                slot.copy_from_slice(v);
            }
        }
        Ok(())
    }
}
