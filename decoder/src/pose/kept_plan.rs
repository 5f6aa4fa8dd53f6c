//! A kept pose's plan: what the segment its keys lie in gives each quad of animated
//! sub-tracks, worked out once per segment rather than on every call.
//!
//! Decoding a quad reads, besides its bits, things that change only from segment to
//! segment or not at all: its bit rates (and from them each lane's place, field mask
//! and scale), its segment range bytes, its clip ranges, the bones its lanes go to.
//! A fresh pose finds them on every call. A kept pose lives from frame to frame, and
//! a game samples a playing clip at times that stay in one segment for many frames:
//! given storage for a plan ([`crate::KeptPose::with_plan`]), it keeps them,
//! dequantised as far as the arithmetic allows without reordering it, and a frame in
//! the same segment reads only the quads' bits and finishes them.
//!
//! Every number kept is one the fresh path computes, by the same operations, and is
//! used in the same operations afterwards: the values are the fresh pose's, bit for
//! bit. The lanes of rate 0 need no select: their field mask and scale are 0 and their
//! scaled segment range is `0` and the segment's constant `n`, so `q · 0 · 0 + n` is
//! exactly `n`, the constant the fresh path puts in (`n` is never −0). Raw lanes keep
//! their select.

use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

use crate::format::bytes::bits_from;
use crate::format::clip::Clip;
use crate::format::{bitset_index, TrackList, QUAD_LANES};
use crate::pose::animated::{quad_bits, range_grid, store};
use crate::pose::finish::finish_single;
use crate::pose::lists::{write, ROTATION3, ROTATION4, SCALE, TRANSLATION};
use crate::seek::Key;
use crate::simd::Lanes;
use crate::transform::Transform;
use crate::unpack::quad::{
    integers_apart, rate_word, segment_range, window, Groups, QuadBits, QuadRates, ONE_LOAD_BITS,
};
use crate::unpack::values::{dequantize, SegmentRange};

/// What a kept pose keeps of one quad (up to four animated sub-tracks of one list)
/// for the segment its keys lie in. Opaque; storage for a plan is a slice of them,
/// [`Clip::quad_count`] long ([`crate::KeptPose::with_plan`]): 352 bytes each, on a
/// 16-byte boundary. Any bytes are a `QuadPlan` (a C caller's storage is one): what
/// a plan holds is only used once it was made for the clip and segment.
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, KnownLayout, Immutable)]
#[repr(C, align(16))]
pub struct QuadPlan {
    /// For each component, each lane's scaled segment range `lo · K8`, `hi · K8` (rate
    /// 0: the segment's constant and 0), clip range minimum and extent, as bits.
    lo: [[u32; 4]; 4],
    hi: [[u32; 4]; 4],
    min: [[u32; 4]; 4],
    extent: [[u32; 4]; 4],
    /// Each lane's scale `1 / (2^rate − 1)` (0 for rate 0) and field mask, as bits.
    scale: [u32; 4],
    masks: [u32; 4],
    /// All ones in the lanes of rate 32 (raw `f32`).
    raw: [u32; 4],
    /// The bone each lane goes to (`u32::MAX` past the quad's last lane).
    bones: [u32; 4],
    /// Bits from a key frame's first to the quad's first.
    offset: u64,
    /// Each lane's place in a component's run, one byte per lane.
    places: u32,
    /// The bits of one component of the quad: the sum of its lanes' rates.
    width: u32,
    /// Whether a lane has rate 32 (not 0).
    has_raw: u32,
    /// Padding, named so that every byte is a field.
    _reserved: [u32; 3],
}

impl QuadPlan {
    /// A quad not yet planned: storage for a plan starts as these.
    pub const EMPTY: QuadPlan = QuadPlan {
        lo: [[0; 4]; 4],
        hi: [[0; 4]; 4],
        min: [[0; 4]; 4],
        extent: [[0; 4]; 4],
        scale: [0; 4],
        masks: [0; 4],
        raw: [0; 4],
        bones: [u32::MAX; 4],
        offset: 0,
        places: 0,
        width: 0,
        has_raw: 0,
        _reserved: [0; 3],
    };

    /// Storage for a plan carved from bytes (an engine's arena, a C caller's buffer):
    /// `None` unless they start on a 16-byte boundary and are a whole number of
    /// `QuadPlan`s long. Any contents.
    pub fn slice_from_bytes(bytes: &mut [u8]) -> Option<&mut [QuadPlan]> {
        <[QuadPlan]>::mut_from_bytes(bytes).ok()
    }
}

impl Default for QuadPlan {
    fn default() -> Self {
        QuadPlan::EMPTY
    }
}

/// The quads of `clip`'s animated sub-tracks, list by list, each list's last one
/// holding what is left (1 to 4 lanes).
pub(crate) fn quad_count(clip: &Clip<'_>) -> usize {
    TrackList::ALL.iter().map(|&l| (clip.count(true, l) as usize).div_ceil(QUAD_LANES)).sum()
}

/// Fills `plan` (at least [`quad_count`] long) with what `key`'s segment gives each
/// quad of `clip`, and with what the clip gives them (clip ranges, bones) unless
/// `segment_only` (the plan then already holds them, from another segment of the
/// same clip). On any backend: they all give the same bits.
#[inline(always)]
pub(crate) fn build<V: Lanes>(clip: &Clip<'_>, key: &Key<'_>, segment_only: bool, plan: &mut [QuadPlan]) {
    let mut bits = 0;
    let mut quads = plan.iter_mut();
    build_list::<V, ROTATION3, 3>(clip, key, segment_only, &mut bits, &mut quads);
    build_list::<V, ROTATION4, 4>(clip, key, segment_only, &mut bits, &mut quads);
    build_list::<V, TRANSLATION, 3>(clip, key, segment_only, &mut bits, &mut quads);
    build_list::<V, SCALE, 3>(clip, key, segment_only, &mut bits, &mut quads);
}

/// [`build`] for list `L` (`C` components): its quads in order, `bits` carried from
/// the previous list's.
#[inline(always)]
fn build_list<V: Lanes, const L: usize, const C: usize>(
    clip: &Clip<'_>,
    key: &Key<'_>,
    segment_only: bool,
    bits: &mut u64,
    quads: &mut core::slice::IterMut<'_, QuadPlan>,
) {
    let list = TrackList::from_index(L);
    let bytes = clip.bytes;
    let start = clip.start(list);
    let zero = V::splat(0.0);
    let ranged = clip.segment_count > 1;
    let mut bones = clip.lists.bones(bitset_index(true, list));
    let before = start.animated_components as usize;
    let mut rates_at = key.rates.wrapping_add(start.animated_index as usize);
    let mut clip_at = clip.ranges_offset.wrapping_add(before << 2);
    let mut segment_at = key.segment_ranges.wrapping_add(before << 1);
    let mut left = clip.count(true, list) as usize;
    while left > 0 {
        let Some(plan) = quads.next() else { return };
        let lanes = left.min(QUAD_LANES);
        left = left.wrapping_sub(lanes);
        let word = rate_word(bytes, rates_at, lanes);
        let rates = QuadRates::<V>::new(word, lanes);
        let (places, masks, scale, raw) = rates.plan_parts();
        // Rate 0 (and the lanes past the quad's last, whose rate byte is 0).
        let flat = V::from_bytes(word).lt(V::splat(0.5));
        let (mut spare_clip, mut spare_segment) = (None, None);
        let as_bits = |v: V| v.to_array().map(f32::to_bits);
        if !segment_only {
            let grid = range_grid::<V>(clip, list);
            let clip_groups = Groups { window: window(bytes, clip_at, &mut spare_clip), lanes };
            for m in 0..C {
                let (step, base) = grid.get(m).copied().unwrap_or((zero, zero));
                let min = V::from_halves(clip_groups.halves(m)).mul(step).add(base);
                let extent = V::from_halves(clip_groups.halves(C.wrapping_add(m))).mul(step);
                for (to, v) in [(&mut plan.min, min), (&mut plan.extent, extent)] {
                    if let Some(slot) = to.get_mut(m) {
                        *slot = as_bits(v);
                    }
                }
            }
            plan.bones = [u32::MAX; 4];
            for slot in plan.bones.iter_mut().take(lanes) {
                *slot = bones.next().map_or(u32::MAX, |b| u32::try_from(b).unwrap_or(u32::MAX));
            }
        }
        let segment_groups = ranged.then(|| Groups { window: window(bytes, segment_at, &mut spare_segment), lanes });
        for m in 0..C {
            let (lo, hi) = match &segment_groups {
                Some(groups) => {
                    let range = segment_range::<V, C>(groups, m);
                    let (lo_scaled, hi_scaled) = range.scaled_parts();
                    (V::select(flat, range.constant(), lo_scaled), V::select(flat, zero, hi_scaled))
                }
                None => (zero, zero),
            };
            for (to, v) in [(&mut plan.lo, lo), (&mut plan.hi, hi)] {
                if let Some(slot) = to.get_mut(m) {
                    *slot = as_bits(v);
                }
            }
        }
        plan.scale = as_bits(V::select(flat, zero, scale));
        plan.masks = as_bits(masks);
        plan.raw = as_bits(raw);
        plan.has_raw = u32::from(plan.raw.iter().any(|&r| r != 0));
        plan.offset = *bits;
        plan.places = places;
        let width = word.wrapping_mul(0x0101_0101) >> 24;
        plan.width = width;
        if lanes == 1 {
            lay_out_alone::<C>(plan, segment_only);
        }
        *bits = bits.wrapping_add(u64::from(width).wrapping_mul(C as u64));
        rates_at = rates_at.wrapping_add(lanes);
        clip_at = clip_at.wrapping_add(lanes.wrapping_mul(C << 2));
        segment_at = segment_at.wrapping_add(lanes.wrapping_mul(C << 1));
    }
}

/// Lays out a quad of one lane (rate `width`) for [`planned_alone`]: one vector per
/// kind of number across the lane's `C` components (`x, y, z, w`: the first row of
/// each array, the rest zero) rather than one per component across four lanes, and
/// the lane's components read as the lanes of one run (places `0, r, 2r, 3r`), as a
/// single bone reads them. The clip ranges are laid out so only when they were just
/// written (not `segment_only`): otherwise they are from the first build.
fn lay_out_alone<const C: usize>(plan: &mut QuadPlan, segment_only: bool) {
    // Lane 0 of each component's vector, components past `C` zero.
    let across = |a: &[[u32; 4]; 4]| -> [[u32; 4]; 4] {
        let lane = |m: usize| if m < C { a.get(m).map_or(0, |v| v[0]) } else { 0 };
        [[lane(0), lane(1), lane(2), lane(3)], [0; 4], [0; 4], [0; 4]]
    };
    plan.lo = across(&plan.lo);
    plan.hi = across(&plan.hi);
    if !segment_only {
        plan.min = across(&plan.min);
        plan.extent = across(&plan.extent);
    }
    let spread = |v: [u32; 4]| core::array::from_fn(|m| if m < C { v[0] } else { 0 });
    plan.scale = spread(plan.scale);
    plan.masks = spread(plan.masks);
    plan.raw = spread(plan.raw);
    // At most 3 · 32 = 96: one byte each.
    plan.places = plan.width.wrapping_mul(0x0302_0100);
}

/// The `C` components of a planned quad of one lane at `key` ([`planned_alone`]).
/// (A function, not a closure: a closure the compiler leaves out of line would lose
/// the code generation of the backend it is called from.)
#[inline(always)]
fn alone_value<V: Lanes, const C: usize, const RAW: bool>(
    p: &QuadPlan,
    key: &Key<'_>,
    segment: Option<&SegmentRange<V>>,
    min: V,
    extent: V,
) -> V {
    let masks = V::from_bits(p.masks);
    let start = key.frame_bit.wrapping_add(p.offset);
    let q = if p.width.wrapping_mul(C as u32) <= ONE_LOAD_BITS {
        V::fields(bits_from(key.samples, start), V::places(p.places), masks)
    } else {
        integers_apart(p.places, masks, key.samples, start)
    };
    let v = dequantize(q.integers_to_floats(), V::from_bits(p.scale), segment, min, extent);
    if RAW {
        V::select(V::from_bits(p.raw), q, v)
    } else {
        v
    }
}

/// Writes the animated sub-tracks of `clip` at `keys` blended by `alpha` into `out`
/// from `plan`, built for `keys[0]`'s segment, which is also `keys[1]`'s unless
/// `alpha` is 0 (key 1 is then not read).
#[inline(always)]
pub(crate) fn animated_planned<V: Lanes>(
    clip: &Clip<'_>,
    keys: &[Key<'_>; 2],
    alpha: f32,
    plan: &[QuadPlan],
    out: &mut [Transform],
) {
    if clip.segment_count > 1 {
        planned_with::<V, true>(clip, keys, alpha, plan, out);
    } else {
        planned_with::<V, false>(clip, keys, alpha, plan, out);
    }
}

/// [`animated_planned`] for a clip with (`RANGED`) or without segment ranges.
#[inline(always)]
fn planned_with<V: Lanes, const RANGED: bool>(
    clip: &Clip<'_>,
    keys: &[Key<'_>; 2],
    alpha: f32,
    plan: &[QuadPlan],
    out: &mut [Transform],
) {
    let quads = |list: TrackList| (clip.count(true, list) as usize).div_ceil(QUAD_LANES);
    let (r3, rest) = plan.split_at_checked(quads(TrackList::Rotation3)).unwrap_or((&[], &[]));
    let (r4, rest) = rest.split_at_checked(quads(TrackList::Rotation4)).unwrap_or((&[], &[]));
    let (t, rest) = rest.split_at_checked(quads(TrackList::Translation)).unwrap_or((&[], &[]));
    let s = rest.get(..quads(TrackList::Scale)).unwrap_or(&[]);
    planned_list::<V, ROTATION3, 3, RANGED>(clip, r3, keys, alpha, out);
    planned_list::<V, ROTATION4, 4, RANGED>(clip, r4, keys, alpha, out);
    planned_list::<V, TRANSLATION, 3, RANGED>(clip, t, keys, alpha, out);
    planned_list::<V, SCALE, 3, RANGED>(clip, s, keys, alpha, out);
}

/// The planned quads `plan` of list `L` (`C` components): a last quad of one lane,
/// laid out alone ([`lay_out_alone`]), through [`planned_alone`].
#[inline(always)]
fn planned_list<V: Lanes, const L: usize, const C: usize, const RANGED: bool>(
    clip: &Clip<'_>,
    plan: &[QuadPlan],
    keys: &[Key<'_>; 2],
    alpha: f32,
    out: &mut [Transform],
) {
    let (quads, alone) = match plan.split_last() {
        Some((last, rest)) if clip.count(true, TrackList::from_index(L)) as usize % QUAD_LANES == 1 => {
            (rest, Some(last))
        }
        _ => (plan, None),
    };
    for p in quads {
        planned_quad::<V, L, C, RANGED>(p, keys, alpha, out);
    }
    if let Some(p) = alone {
        if p.has_raw != 0 {
            planned_alone::<V, L, C, RANGED, true>(p, keys, alpha, out);
        } else {
            planned_alone::<V, L, C, RANGED, false>(p, keys, alpha, out);
        }
    }
}

/// A planned quad of one lane, laid out alone ([`lay_out_alone`]): the lane's
/// components in one vector at each key, as a single bone is decoded (the same
/// operations on the same numbers as a lane of a quad: the same bits).
#[inline(always)]
fn planned_alone<V: Lanes, const L: usize, const C: usize, const RANGED: bool, const RAW: bool>(
    p: &QuadPlan,
    keys: &[Key<'_>; 2],
    alpha: f32,
    out: &mut [Transform],
) {
    let first = |v: &[[u32; 4]; 4]| V::from_bits(v[0]);
    let segment = RANGED.then(|| SegmentRange::scaled(first(&p.lo), first(&p.hi)));
    let (min, extent) = (first(&p.min), first(&p.extent));
    let [key0, key1] = keys;
    let v0 = alone_value::<V, C, RAW>(p, key0, segment.as_ref(), min, extent);
    let v1 = if alpha == 0.0 { v0 } else { alone_value::<V, C, RAW>(p, key1, segment.as_ref(), min, extent) };
    let v = finish_single::<V, L, C>(v0, v1, alpha);
    if let Some(t) = out.get_mut(p.bones[0] as usize) {
        write::<V, L>(v, t);
    }
}

/// One planned quad of list `L` (`C` components): the code for quads with raw lanes
/// (which keep a select) apart from the code for the others.
#[inline(always)]
fn planned_quad<V: Lanes, const L: usize, const C: usize, const RANGED: bool>(
    p: &QuadPlan,
    keys: &[Key<'_>; 2],
    alpha: f32,
    out: &mut [Transform],
) {
    if p.has_raw != 0 {
        quad_with::<V, L, C, RANGED, true>(p, keys, alpha, out);
    } else {
        quad_with::<V, L, C, RANGED, false>(p, keys, alpha, out);
    }
}

/// One planned quad of list `L` (`C` components): its bits read at both keys,
/// dequantised with what the plan keeps, finished and written to its bones.
#[inline(always)]
fn quad_with<V: Lanes, const L: usize, const C: usize, const RANGED: bool, const RAW: bool>(
    p: &QuadPlan,
    keys: &[Key<'_>; 2],
    alpha: f32,
    out: &mut [Transform],
) {
    let interpolate = alpha != 0.0;
    let [key0, key1] = keys;
    let rates = QuadRates::<V>::planned(p.places, p.width, V::from_bits(p.masks), V::from_bits(p.scale));
    let (mut spare0, mut spare1) = (None, None);
    let bits0 = quad_bits(key0.samples, key0.frame_bit.wrapping_add(p.offset), &mut spare0);
    let bits1 =
        if interpolate { quad_bits(key1.samples, key1.frame_bit.wrapping_add(p.offset), &mut spare1) } else { bits0 };
    let zero = V::splat(0.0);
    let (x0, x1) = planned_component::<V, RANGED, RAW>(p, &rates, &bits0, &bits1, interpolate, 0);
    let (y0, y1) = if C > 1 {
        planned_component::<V, RANGED, RAW>(p, &rates, &bits0, &bits1, interpolate, 1)
    } else {
        (zero, zero)
    };
    let (z0, z1) = if C > 2 {
        planned_component::<V, RANGED, RAW>(p, &rates, &bits0, &bits1, interpolate, 2)
    } else {
        (zero, zero)
    };
    let (w0, w1) = if C > 3 {
        planned_component::<V, RANGED, RAW>(p, &rates, &bits0, &bits1, interpolate, 3)
    } else {
        (zero, zero)
    };
    let mut bones = p.bones.iter().map(|&b| b as usize);
    store::<V, L, C>([x0, y0, z0, w0], [x1, y1, z1, w1], alpha, QUAD_LANES, &mut bones, out);
}

/// Component `m` of a planned quad's lanes at key 0 and key 1 (key 0's again when
/// not `interpolate`).
#[inline(always)]
fn planned_component<V: Lanes, const RANGED: bool, const RAW: bool>(
    p: &QuadPlan,
    rates: &QuadRates<V>,
    bits0: &QuadBits<'_>,
    bits1: &QuadBits<'_>,
    interpolate: bool,
    m: usize,
) -> (V, V) {
    let vector = |v: &[[u32; 4]; 4]| V::from_bits(v.get(m).copied().unwrap_or([0; 4]));
    let segment = RANGED.then(|| SegmentRange::scaled(vector(&p.lo), vector(&p.hi)));
    let (min, extent) = (vector(&p.min), vector(&p.extent));
    let offset = (m as u64).wrapping_mul(u64::from(p.width));
    let v0 = planned_value::<V, RAW>(p, rates, bits0, offset, segment.as_ref(), min, extent);
    let v1 =
        if interpolate { planned_value::<V, RAW>(p, rates, bits1, offset, segment.as_ref(), min, extent) } else { v0 };
    (v0, v1)
}

/// The lanes of the component `offset` bits into a planned quad's run in `bits`.
#[inline(always)]
fn planned_value<V: Lanes, const RAW: bool>(
    p: &QuadPlan,
    rates: &QuadRates<V>,
    bits: &QuadBits<'_>,
    offset: u64,
    segment: Option<&SegmentRange<V>>,
    min: V,
    extent: V,
) -> V {
    let (q, v) = rates.quantised(bits, offset, segment, min, extent);
    if RAW {
        V::select(V::from_bits(p.raw), q, v)
    } else {
        v
    }
}
