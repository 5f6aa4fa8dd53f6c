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
//!   a share of the precision ([`CONSTANT_SHARES`], chosen per clip) on top of its class error. Each
//!   list's integers are as wide as that needs (4.1: 2 to 24 bits, even, measured per
//!   constant, the list taking the width that costs the fewest bytes). A rotation
//!   that needs more than its list's width goes to list 1 (raw `f32`, all four
//!   components); a translation or scale list takes the width its most demanding
//!   constant needs, or is raw when 24 bits are not enough. The segment searches then
//!   see the quantised values, so animated sub-tracks below make up for them, and a
//!   bone that cannot be brought within the bound has the quantised constants on its
//!   chain restored first ([`unquantize_chain`]).

use ossa_decoder::format::{
    constant_width_step, SubTrackClass, SubTrackKind, TrackList, MAX_CONSTANT_WIDTH, QUANTIZED_MAX, ROTATION_BASE,
    ROTATION_STEP,
};
use ossa_decoder::quantization::{dequantize16, dequantize_packed};
use rayon::prelude::*;

use super::reference::{ConstantLevers, Reference};
use super::sub_track::SubTrack;
use crate::error_metric::Affine;

/// Shares of the precision a constant's quantisation may add to its class error,
/// each measured on every clip (the encoder keeps the one whose clip takes the fewest
/// bytes: `choose_constant_share` in the compressor).
///
/// A constant's error comes out of the bound of the bones below it, whose animated
/// sub-tracks then need finer samples in every key frame they keep; a smaller share
/// makes the constants wider instead. Which pays depends on how many key frames the
/// clip has below its constants, so no one share suits every clip: on the shared
/// clips at 0.1, 0.01 and 0.001 (cm) a fixed 0.1 is best on long clips and 0.5 on
/// short ones, 1-8 % apart per clip. The three shares are a factor of about 2.2
/// apart over the range where any clip was best.
pub const CONSTANT_SHARES: [f64; 3] = [0.1, 0.25, 0.5];

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
        ListGrid::spanning_on(kind, lo, hi, QUANTIZED_MAX)
    }

    /// [`ListGrid::spanning`] for integers `0 ..= top` (`2^w − 1` for `w` bits): the
    /// rotation grid over `[-1, 1]` with its step for `w` bits, or the smallest steps
    /// whose last integer reaches `hi`.
    pub fn spanning_on(kind: SubTrackKind, lo: [f32; 3], hi: [f32; 3], top_q: u32) -> Option<ListGrid> {
        if kind == SubTrackKind::Rotation {
            if top_q == QUANTIZED_MAX {
                return Some(ListGrid::rotation());
            }
            let width = (top_q + 1).trailing_zeros() as u8;
            return Some(ListGrid { base: [ROTATION_BASE; 4], step: [constant_width_step(width); 4] });
        }
        let mut grid = ListGrid { base: [0.0; 4], step: [0.0; 4] };
        for m in 0..3 {
            let (base, top) = (lo[m], hi[m]);
            if !(base.is_finite() && top.is_finite()) || top < base {
                return None;
            }
            // The smallest step whose last integer reaches `top`, in the decoder's
            // arithmetic: start from the quotient, then step up an ulp at a time.
            let mut step = ((f64::from(top) - f64::from(base)) / f64::from(top_q)) as f32;
            let mut tries = 0;
            while dequantize_packed(top_q, step, base) < top {
                step = next_up(step);
                tries += 1;
                if tries > 64 || !step.is_finite() {
                    return None;
                }
            }
            // The decoder checks the value of integer 65535 too, whatever the width.
            if !(f64::from(top_q.max(QUANTIZED_MAX) as f32 * step + base)).is_finite() {
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

    /// The value of a packed constant integer `q` of component `m` (4.1).
    pub fn packed_value(&self, q: u32, m: usize) -> f32 {
        dequantize_packed(q, self.step[m], self.base[m])
    }

    /// The packed integer in `0 ..= top` whose value is nearest `v` (decoder
    /// arithmetic).
    pub fn nearest_packed(&self, v: f32, m: usize, top: u32) -> u32 {
        let step = f64::from(self.step[m]);
        let guess = if step > 0.0 {
            ((f64::from(v) - f64::from(self.base[m])) / step).round().clamp(0.0, f64::from(top)) as u32
        } else {
            0
        };
        [guess.saturating_sub(1), guess, (guess + 1).min(top)]
            .into_iter()
            .min_by(|&a, &b| {
                (f64::from(self.packed_value(a, m)) - f64::from(v))
                    .abs()
                    .total_cmp(&(f64::from(self.packed_value(b, m)) - f64::from(v)).abs())
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
    /// The grid of each quantised constant list (the rotation grid for its width
    /// in lists 0 and 1; stored in the file for translations and scales).
    pub constants: [Option<ListGrid>; 4],
    /// The width in bits of each quantised constant list's integers (4.1), 0 for a
    /// raw or empty list.
    pub constant_widths: [u8; 4],
    /// The stored grid of each translation or scale list with animated sub-tracks.
    pub ranges: [Option<ListGrid>; 4],
}

/// Quantises the constants of `tracks` where their object-space error allows (see
/// the module documentation), once for each share of the precision in `shares`:
/// for each, the tracks with their constants quantised and the constant half of the
/// [`Grids`].
///
/// The shares are measured together: a constant's error at a width does not depend
/// on the share it is compared with, so each (constant, width) is walked once
/// ([`Reference::standalone_error_between`], answering for every share's limit) and
/// each share's search reads the errors the others found. The answers are those of
/// one walk per share and width; a width the bone's levers
/// ([`Reference::constant_levers`]) already show within every limit is not walked.
pub fn quantize_constants(
    reference: &Reference,
    tracks: &[SubTrack],
    precision: f64,
    shares: &[f64],
) -> Vec<(Vec<SubTrack>, Grids)> {
    let mut out: Vec<(Vec<SubTrack>, Grids)> = shares.iter().map(|_| (tracks.to_vec(), Grids::default())).collect();
    let budget = |share: f64| precision * share;
    let (lowest, highest) = shares.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &s| (lo.min(s), hi.max(s)));
    // The levers of every bone with a constant (a bone's three parts share them).
    let mut with_constant = vec![false; reference.bone_count];
    for track in tracks.iter().filter(|t| t.class == SubTrackClass::Constant) {
        if let Some(b) = with_constant.get_mut(track.bone) {
            *b = true;
        }
    }
    let levers: Vec<Option<ConstantLevers>> = with_constant
        .par_iter()
        .enumerate()
        .map(|(b, &with)| if with { reference.constant_levers(b) } else { None })
        .collect();
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
        // The grid of each even width (index `width / 2 - 1`).
        let grids: Vec<Option<ListGrid>> =
            (1..=MAX_CONSTANT_WIDTH / 2).map(|h| ListGrid::spanning_on(kind, lo, hi, top_of(2 * h))).collect();
        // Each member's error at each width, `NaN` until walked (above the largest
        // limit, some value above it).
        let mut errors: Vec<[f64; WIDTHS]> = vec![[f64::NAN; WIDTHS]; members.len()];
        // Whether constant `i` on `width` bits holds the budget of `share` over the
        // whole clip, walking it (for every share at once) the first time.
        let fits = |i: usize, width: u8, share: f64, known: &mut [f64; WIDTHS], scratch: &mut Vec<Affine>| {
            let w = usize::from(width / 2 - 1);
            let track = &tracks[i];
            if known[w].is_nan() {
                known[w] = match grids[w] {
                    None => f64::INFINITY,
                    Some(grid) => {
                        let (_, value) = on_grid(track, &grid, width);
                        // The value as the decoder gives it, once set as the constant.
                        let local = track.to_local(value);
                        let samples = 0..reference.sample_count;
                        let (low, high) = (track.class_error + budget(lowest), track.class_error + budget(highest));
                        // No vertex moves further from the reference than the exact
                        // constant's error (its class error, an upper bound) plus how
                        // far the change from the exact constant can move it. Within
                        // the smallest limit, every share fits, as the walk would find
                        // (it finds an error within `low` whenever the true one is), so
                        // the answers and the bytes are the same without walking the
                        // clip: most widths above the narrowest are taken this way.
                        // The precision never rests on it: the clip is measured.
                        let exact = track.to_local(track.constant_exact);
                        let bound = levers.get(track.bone).copied().flatten().map_or(f64::INFINITY, |l| {
                            (track.class_error + l.change(track.part(), exact, local)) * (1.0 + 1e-6)
                        });
                        if bound <= low {
                            known[w] = bound;
                            return known[w] <= track.class_error + budget(share);
                        }
                        reference.standalone_error_between(
                            track.bone,
                            track.part(),
                            samples,
                            low,
                            high,
                            scratch,
                            |_| local,
                        )
                    }
                };
            }
            known[w] <= track.class_error + budget(share)
        };
        // Each constant's narrowest width for each share (`None`: not even the
        // widest), found by halving: the error falls as the grid gets finer. The
        // list's width is then measured again on every member.
        let narrowest: Vec<Vec<Option<u8>>> = members
            .par_iter()
            .zip(errors.par_iter_mut())
            .map_init(Vec::new, |scratch, (&i, known)| {
                shares
                    .iter()
                    .map(|&share| {
                        if !fits(i, MAX_CONSTANT_WIDTH, share, known, scratch) {
                            return None;
                        }
                        // Widths are even (format 4.1): halving over `width / 2`.
                        let (mut low, mut high) = (1u8, MAX_CONSTANT_WIDTH / 2);
                        while low < high {
                            let mid = (low + high) / 2;
                            if fits(i, 2 * mid, share, known, scratch) {
                                high = mid;
                            } else {
                                low = mid + 1;
                            }
                        }
                        Some(2 * high)
                    })
                    .collect()
            })
            .collect();
        for (k, &share) in shares.iter().enumerate() {
            let (trial, trial_grids) = &mut out[k];
            let narrowest_here: Vec<Option<u8>> = narrowest.iter().map(|n| n[k]).collect();
            let mut width = list_width(kind, &narrowest_here);
            // A rotation that misses its budget on the list's width goes raw to list
            // 1; a translation or scale list widens until every member holds it, or
            // is raw.
            while let Some(w) = width {
                let Some(grid) = grids[usize::from(w / 2 - 1)] else {
                    width = None;
                    break;
                };
                let holds: Vec<bool> = members
                    .par_iter()
                    .zip(errors.par_iter_mut())
                    .map_init(Vec::new, |scratch, (&i, known)| fits(i, w, share, known, scratch))
                    .collect();
                if kind != SubTrackKind::Rotation && holds.contains(&false) {
                    width = (w < MAX_CONSTANT_WIDTH).then_some(w + 2);
                    continue;
                }
                for (&i, holds) in members.iter().zip(holds) {
                    if holds {
                        let (q, value) = on_grid(&trial[i], &grid, w);
                        trial[i].set_constant(value, Some(q));
                    } else {
                        trial[i].components = 4;
                        let exact = trial[i].constant_exact;
                        trial[i].set_constant(exact, None);
                    }
                }
                let list = list_index(kind, 3);
                trial_grids.constants[list] = Some(grid);
                trial_grids.constant_widths[list] = w;
                break;
            }
            if width.is_none() {
                for &i in &members {
                    let exact = trial[i].constant_exact;
                    trial[i].set_constant(exact, None);
                }
            }
        }
    }
    out
}

/// How many constant widths there are: the even ones, 2 to [`MAX_CONSTANT_WIDTH`].
const WIDTHS: usize = MAX_CONSTANT_WIDTH as usize / 2;

/// Bits the constants of `tracks` take on `grids`' widths (raw constants as `f32`),
/// without the grids and the per-quad byte rounding: what a choice of widths changes.
pub fn constant_bits(tracks: &[SubTrack], grids: &Grids) -> u64 {
    tracks
        .iter()
        .filter(|t| t.class == SubTrackClass::Constant)
        .map(|t| {
            let width = match t.constant_q {
                Some(_) => u64::from(grids.constant_widths[t.list() as usize]),
                None => 32,
            };
            u64::from(t.components) * width
        })
        .sum()
}

/// The largest integer of `width` bits.
fn top_of(width: u8) -> u32 {
    (1u32 << width) - 1
}

/// `track`'s exact constant on `grid` at `width` bits: its integers and their values.
fn on_grid(track: &SubTrack, grid: &ListGrid, width: u8) -> ([u32; 4], [f32; 4]) {
    let mut q = [0u32; 4];
    let mut value = [0.0f32; 4];
    for m in 0..3 {
        q[m] = grid.nearest_packed(track.constant_exact[m], m, top_of(width));
        value[m] = grid.packed_value(q[m], m);
    }
    (q, value)
}

/// The width of a constant list whose members need `narrowest` bits each (`None`:
/// more than the widest). Rotations take the width with the fewest bits in all,
/// counting those that need more as raw (sixteen bytes each, in list 1);
/// translations and scales the widest need, or `None` (raw) when one needs more
/// than [`MAX_CONSTANT_WIDTH`].
fn list_width(kind: SubTrackKind, narrowest: &[Option<u8>]) -> Option<u8> {
    if kind != SubTrackKind::Rotation {
        return narrowest.iter().try_fold(1u8, |w, &n| n.map(|n| w.max(n)));
    }
    const RAW_ROTATION_BITS: u64 = 4 * 32;
    (1..=MAX_CONSTANT_WIDTH / 2).map(|h| 2 * h).min_by_key(|&width| {
        let bits = |n: &Option<u8>| match *n {
            Some(n) if n <= width => 3 * u64::from(width),
            _ => RAW_ROTATION_BITS,
        };
        narrowest.iter().map(bits).sum::<u64>()
    })
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
                grids.constant_widths[list_index(kind, 3)] = 0;
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
