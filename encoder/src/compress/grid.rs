//! Quantised clip metadata (format 3.0): constants and clip ranges stored as 16-bit
//! integers on a per-list grid instead of `f32`. Seed 002 measured that on short
//! clips these are half of the size or more.
//!
//! - **Clip ranges** are always quantised, rounded outwards (the minimum down, the
//!   maximum up), so a range still holds every sample: quantising one costs no
//!   accuracy, only a slightly wider range for the samples to resolve, which the
//!   bit-rate search pays for where it matters.
//! - **Constants** are rounded to the nearest integer, which moves the value: a
//!   constant is kept quantised only while its object-space error stays within
//!   [`QUANTIZED_CONSTANT_BUDGET`] of the precision on top of its class error. A
//!   rotation that needs more goes to list 1 (raw `f32`, all four components); a
//!   translation or scale that needs more makes its whole list raw. The segment
//!   searches then see the quantised values, so animated sub-tracks below make up for
//!   them, and a bone that cannot be brought within the bound has the quantised
//!   constants on its chain restored first ([`unquantize_chain`]).

use ossa_decoder::format::{SubTrackClass, SubTrackKind, TrackList, QUANTIZED_MAX, ROTATION_BASE, ROTATION_STEP};
use ossa_decoder::quantization::dequantize16;
use rayon::prelude::*;

use super::reference::Reference;
use super::sub_track::SubTrack;

/// Share of the precision a constant's quantisation may add to its class error.
///
/// Swept on the shared clips and their generalisation variants (the `generalisation`
/// command, README) at 0.1, 0.01 and 0.001: 0.35 gives totals within 0.2 % of those
/// at 0.5; 0.25 is 1.0 % smaller at 0.001 and 0.5 % larger at 0.01; 0.75 is 1.3 %
/// larger at 0.01. At 0.1 the share changes nothing (16 bits hold every constant).
/// Deciding the share per clip would need constants of other widths than 16 bits, a
/// format change (measured: a gain at 0.1 and 0.001, not yet at 0.01).
pub const QUANTIZED_CONSTANT_BUDGET: f64 = 0.5;

/// A list's grid: integer `q` of component `m` is `q · step[m] + base[m]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ListGrid {
    /// Value of integer 0, per component.
    pub base: [f32; 4],
    /// Distance between consecutive integers, per component.
    pub step: [f32; 4],
}

impl ListGrid {
    /// The fixed grid of rotation components: `[-1, 1]`.
    pub fn rotation() -> ListGrid {
        ListGrid { base: [ROTATION_BASE; 4], step: [ROTATION_STEP; 4] }
    }

    /// The grid of a list of `kind`, spanning `lo ..= hi` per component for
    /// translations and scales (`None` when the span does not fit `f32`).
    pub fn spanning(kind: SubTrackKind, lo: [f32; 3], hi: [f32; 3]) -> Option<ListGrid> {
        if kind == SubTrackKind::Rotation {
            return Some(ListGrid::rotation());
        }
        let mut grid = ListGrid { base: [0.0; 4], step: [0.0; 4] };
        for m in 0..3 {
            let (base, top) = (lo[m], hi[m]);
            if !(base.is_finite() && top.is_finite()) || top < base {
                return None;
            }
            // The smallest step whose last integer reaches `top`, in the decoder's
            // arithmetic: start from the quotient, then step up an ulp at a time.
            let mut step = ((f64::from(top) - f64::from(base)) / f64::from(QUANTIZED_MAX)) as f32;
            let mut tries = 0;
            while dequantize16(u16::MAX, step, base) < top {
                step = next_up(step);
                tries += 1;
                if tries > 64 || !step.is_finite() {
                    return None;
                }
            }
            if !(f64::from(QUANTIZED_MAX as f32 * step + base)).is_finite() {
                return None;
            }
            grid.base[m] = base;
            grid.step[m] = step;
        }
        Some(grid)
    }

    /// The decoded value of integer `q` of component `m`.
    pub fn value(&self, q: u16, m: usize) -> f32 {
        dequantize16(q, self.step[m], self.base[m])
    }

    /// The integer whose value is nearest `v` (decoder arithmetic).
    pub fn nearest(&self, v: f32, m: usize) -> u16 {
        let guess = self.guess(v, m);
        [guess.saturating_sub(1), guess, guess.saturating_add(1)]
            .into_iter()
            .min_by(|&a, &b| {
                (f64::from(self.value(a, m)) - f64::from(v))
                    .abs()
                    .total_cmp(&(f64::from(self.value(b, m)) - f64::from(v)).abs())
            })
            .unwrap_or(guess)
    }

    /// The largest integer whose value is at most `v` (0 when none is).
    pub fn below(&self, v: f32, m: usize) -> u16 {
        let mut q = self.guess(v, m).saturating_add(1);
        while q > 0 && self.value(q, m) > v {
            q -= 1;
        }
        q
    }

    /// The smallest integer whose value is at least `v` (65535 when none is).
    pub fn above(&self, v: f32, m: usize) -> u16 {
        let mut q = self.guess(v, m).saturating_sub(1);
        while q < u16::MAX && self.value(q, m) < v {
            q += 1;
        }
        q
    }

    fn guess(&self, v: f32, m: usize) -> u16 {
        let step = f64::from(self.step[m]);
        if step <= 0.0 {
            return 0;
        }
        ((f64::from(v) - f64::from(self.base[m])) / step).round().clamp(0.0, f64::from(QUANTIZED_MAX)) as u16
    }
}

/// The next `f32` above a finite non-negative `x`.
fn next_up(x: f32) -> f32 {
    if x <= 0.0 {
        f32::from_bits(1)
    } else {
        f32::from_bits(x.to_bits() + 1)
    }
}

/// The grids of a clip's quantised metadata (which constant lists are raw follows
/// from the tracks: [`raw_lists`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Grids {
    /// The stored grid of each quantised translation or scale constant list.
    pub constants: [Option<ListGrid>; 4],
    /// The stored grid of each translation or scale list with animated sub-tracks.
    pub ranges: [Option<ListGrid>; 4],
}

/// Quantises the constants of `tracks` where their object-space error allows (see
/// the module documentation) and returns the constant half of the [`Grids`].
pub fn quantize_constants(reference: &Reference, tracks: &mut [SubTrack], precision: f64) -> Grids {
    let mut grids = Grids::default();
    let budget = precision * QUANTIZED_CONSTANT_BUDGET;
    for kind in SubTrackKind::ALL {
        let members: Vec<usize> = (0..tracks.len())
            .filter(|&i| tracks[i].kind == kind && tracks[i].class == SubTrackClass::Constant)
            .filter(|&i| !(kind == SubTrackKind::Rotation && tracks[i].components == 4))
            .collect();
        if members.is_empty() {
            continue;
        }
        let (mut lo, mut hi) = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
        for &i in &members {
            for m in 0..3 {
                lo[m] = lo[m].min(tracks[i].constant_exact[m]);
                hi[m] = hi[m].max(tracks[i].constant_exact[m]);
            }
        }
        let Some(grid) = ListGrid::spanning(kind, lo, hi) else { continue };
        // Each constant on the grid, and whether it holds its budget over the whole
        // clip: independent measurements, made in parallel, applied in order.
        let fits: Vec<(usize, [u16; 4], [f32; 4], bool)> = members
            .par_iter()
            .map_init(Vec::new, |scratch, &i| {
                let track = &tracks[i];
                let mut q = [0u16; 4];
                let mut value = [0.0f32; 4];
                for m in 0..3 {
                    q[m] = grid.nearest(track.constant_exact[m], m);
                    value[m] = grid.value(q[m], m);
                }
                // The value as the decoder gives it, once set as the constant.
                let local = track.to_local(value);
                let limit = track.class_error + budget;
                let error = reference.standalone_error(
                    track.bone,
                    track.part(),
                    0..reference.sample_count,
                    limit,
                    scratch,
                    |_| local,
                );
                (i, q, value, error <= limit)
            })
            .collect();
        let mut all_fit = true;
        for (i, q, value, fits) in fits {
            let track = &mut tracks[i];
            track.set_constant(value, Some(q));
            if !fits {
                if kind == SubTrackKind::Rotation {
                    // Too coarse for this rotation: raw, all four components (list 1).
                    track.components = 4;
                    track.set_constant(track.constant_exact, None);
                } else {
                    all_fit = false;
                }
            }
        }
        if kind != SubTrackKind::Rotation {
            if all_fit {
                grids.constants[list_index(kind, 3)] = Some(grid);
            } else {
                for &i in &members {
                    let exact = tracks[i].constant_exact;
                    tracks[i].set_constant(exact, None);
                }
            }
        }
    }
    grids
}

/// Which constant lists of `tracks` are raw: list 1 (the rotations kept at full
/// precision) always, a translation or scale list whose constants have no integers.
pub fn raw_lists(tracks: &[SubTrack]) -> u8 {
    let mut raw = 1u8 << TrackList::Rotation4 as u8;
    for t in tracks.iter().filter(|t| t.class == SubTrackClass::Constant && t.kind != SubTrackKind::Rotation) {
        if t.constant_q.is_none() {
            raw |= 1 << t.list() as u8;
        }
    }
    raw
}

/// Restores full precision to the quantised constants on `bone`'s chain (a rotation
/// moves to list 1; a translation or scale makes its whole list raw). Returns false
/// when there were none.
pub fn unquantize_chain(reference: &Reference, tracks: &mut [SubTrack], grids: &mut Grids, bone: usize) -> bool {
    let bones = reference.bone_count;
    let mut changed = false;
    for a in reference.hierarchy.chain(bone).collect::<Vec<_>>() {
        for kind in SubTrackKind::ALL {
            let t = kind as usize * bones + a;
            if tracks[t].class != SubTrackClass::Constant || tracks[t].constant_q.is_none() {
                continue;
            }
            changed = true;
            if kind == SubTrackKind::Rotation {
                tracks[t].components = 4;
                let exact = tracks[t].constant_exact;
                tracks[t].set_constant(exact, None);
            } else {
                for track in tracks.iter_mut().filter(|x| x.kind == kind && x.class == SubTrackClass::Constant) {
                    let exact = track.constant_exact;
                    track.set_constant(exact, None);
                }
                grids.constants[list_index(kind, 3)] = None;
            }
        }
    }
    changed
}

/// Quantises the clip ranges of every animated sub-track outwards, on its list's grid,
/// and records the grids of the translation and scale lists. A list whose span does
/// not fit `f32` leaves its sub-tracks raw (bit rate 32, ranges unused).
pub fn quantize_ranges(tracks: &mut [SubTrack], grids: &mut Grids) {
    grids.ranges = [None; 4];
    for kind in SubTrackKind::ALL {
        let members: Vec<usize> = (0..tracks.len())
            .filter(|&i| tracks[i].kind == kind && tracks[i].class == SubTrackClass::Animated)
            .collect();
        if members.is_empty() {
            continue;
        }
        let (mut lo, mut hi) = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
        for &i in members.iter().filter(|&&i| !tracks[i].raw_only) {
            for m in 0..3 {
                lo[m] = lo[m].min(tracks[i].range_exact[m].0);
                hi[m] = hi[m].max(tracks[i].range_exact[m].1);
            }
        }
        let any_ranged = lo[0] <= hi[0];
        let grid = if any_ranged { ListGrid::spanning(kind, lo, hi) } else { None };
        if kind != SubTrackKind::Rotation {
            // Unused (all raw) lists still store a valid grid: zeros.
            let stored = grid.unwrap_or(ListGrid { base: [0.0; 4], step: [0.0; 4] });
            grids.ranges[list_index(kind, 3)] = Some(stored);
        }
        for &i in &members {
            let track = &mut tracks[i];
            match grid {
                Some(grid) if !track.raw_only => {
                    let n = track.components as usize;
                    for m in 0..n {
                        let (min, max) = track.range_exact[m];
                        let q_lo = grid.below(min, m);
                        let q_hi = grid.above(max, m).max(q_lo);
                        let mut q_ext = q_hi - q_lo;
                        let decoded_min = grid.value(q_lo, m);
                        // The extent is `q_ext · step`: widen until it reaches the maximum.
                        while q_ext < u16::MAX && decoded_min + q_ext as f32 * grid.step[m] < max {
                            q_ext += 1;
                        }
                        track.range_q[m] = (q_lo, q_ext);
                        track.clip_min[m] = decoded_min;
                        track.clip_extent[m] = q_ext as f32 * grid.step[m];
                    }
                }
                _ => {
                    track.raw_only = true;
                    track.range_q = [(0, 0); 4];
                    track.clip_min = [0.0; 4];
                    track.clip_extent = [0.0; 4];
                }
            }
        }
    }
}

/// The list index of a sub-track of `kind` with `components` components.
fn list_index(kind: SubTrackKind, components: u32) -> usize {
    TrackList::of(kind, components) as usize
}
