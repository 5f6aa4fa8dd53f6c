//! Where a time falls among a clip's samples (`format-spec/decoding.md`, Seeking): the
//! two samples around it and the weight between them, after clamping, wrapping,
//! snapping times within a few ulps of a sample, and the caller's rounding.

use crate::format::clip::Clip;
use crate::format::Looping;

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
        // The sample below (the conversion saturates: no valid clip reaches it) and
        // the nearest; `k0` from them, without converting the snapped position again
        // (the nearest is an integer, exactly `whole + 1` when it is above).
        let whole = position as u32;
        let (nearest, above) = nearest_whole(position, whole as f32);
        let snap = (position - nearest).abs() <= nearest * SNAP_ULPS;
        let (position, k0) = if snap { (nearest, whole.wrapping_add(u32::from(above))) } else { (position, whole) };
        let k0 = k0.min(end);
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

/// The nearest integer to `position` (finite, not negative, below 2^32), halves away
/// from zero, as `roundf` gives it, without a call, given `whole`, its truncation:
/// below 2^24 the truncation and the subtraction are exact, and above it every `f32`
/// is an integer. Also whether it is `whole + 1`.
#[inline(always)]
fn nearest_whole(position: f32, whole: f32) -> (f32, bool) {
    if position - whole >= 0.5 {
        (whole + 1.0, true)
    } else {
        (whole, false)
    }
}

/// The stored keys and weight `seek` blends for `time` under `rounding`, before
/// key frames left out are accounted for.
#[inline(always)]
pub(crate) fn blend(clip: &Clip<'_>, time: f32, rounding: Rounding) -> (u32, u32, f32) {
    let Position { k0, k1, fraction, .. } = Position::of(clip, time);
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

#[cfg(test)]
mod tests {
    use super::{nearest_whole, Position, SNAP_ULPS};
    use crate::format::Looping;

    /// `Position::at`'s first key and fraction as decoding.md states them: the
    /// position snapped to `roundf` of it when within a few ulps, then truncated.
    fn stated(sample_count: u32, sample_rate: f32, looping: Looping, time: f32) -> (u32, f32) {
        let end = if looping == Looping::Wrap { sample_count } else { sample_count - 1 };
        let position = (time * sample_rate).max(0.0).min(end as f32);
        let nearest = libm::roundf(position);
        let position = if (position - nearest).abs() <= nearest * SNAP_ULPS { nearest } else { position };
        let k0 = (position as u32).min(end);
        (k0, position - k0 as f32)
    }

    #[test]
    fn the_first_key_is_the_snapped_position_truncated() {
        let mut checked = 0;
        for (count, rate) in [(2u32, 30.0f32), (31, 24.0), (230, 24.0), (1_000, 60.0), (300_000, 120.0)] {
            for looping in [Looping::Clamp, Looping::Wrap] {
                let step = (count / 2_000).max(1);
                for i in (0..=count + 1).step_by(step as usize) {
                    let exact = i as f32 / rate;
                    // The sample's time, its neighbours a few ulps away, and halfway.
                    let times = [-1, 0, 1, 2, 3, 9].map(|d| f32::from_bits(exact.to_bits().wrapping_add_signed(d)));
                    for time in times.into_iter().chain([exact + 0.5 / rate, -1.0]) {
                        let p = Position::at(count, rate, looping, time);
                        let (k0, fraction) = stated(count, rate, looping, time);
                        let last = if looping == Looping::Wrap { count } else { count - 1 };
                        if k0 < last {
                            assert_eq!((p.k0, p.fraction.to_bits()), (k0, fraction.to_bits()), "{time} of {count}");
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert!(checked > 20_000, "{checked}");
    }

    #[test]
    fn nearest_whole_is_roundf_for_every_position_a_clip_can_have() {
        let mut checked = 0;
        let mut check = |p: f32| {
            let (nearest, above) = nearest_whole(p, p as u32 as f32);
            assert_eq!(nearest.to_bits(), libm::roundf(p).to_bits(), "{p}");
            assert_eq!(above, nearest > libm::truncf(p), "{p}");
            checked += 1;
        };
        for p in [0.0, 0.49999997, 0.5, 0.50000006, 1.5, 2.5, 8_388_607.5, 8_388_608.0, 16_777_216.0, 4.0e9] {
            check(p);
        }
        // `f32`s from 0 to 4096 a fixed number of bit patterns apart, and each half
        // with its neighbours (fewer under Miri, which runs this slowly).
        let (stride, halves) = if cfg!(miri) { (4_000_099, 1_000) } else { (4_099, 100_000) };
        let mut p = 0.0f32;
        while p < 4096.0 {
            check(p);
            p = f32::from_bits(p.to_bits() + stride);
        }
        for i in 0..halves {
            let half = i as f32 + 0.5;
            for q in [f32::from_bits(half.to_bits() - 1), half, f32::from_bits(half.to_bits() + 1)] {
                check(q);
            }
        }
        assert!(checked > 3 * halves);
    }
}
