//! A quad gathered from a [`crate::Subset`]'s animated sub-tracks: up to four
//! sub-tracks, each from whatever quad of the clip holds it and of any list, decoded
//! side by side as the lanes of one quad are.
//!
//! A subset asks for a few bones spread over the skeleton, so its sub-tracks are
//! rarely neighbours in the format's quads, nor of one list. Decoding each alone (as a
//! single bone is) pays per sub-track what a whole pose pays per quad. Gathered four
//! to a vector, a subset's sub-tracks cost what a quad costs: each lane reads its own
//! bits ([`Lanes::fields_at`]: one load per lane, a gather on AVX2), and every step
//! after that is the whole pose's, lane by lane, so the values are the whole pose's,
//! bit for bit. Lanes of different lists are finished both ways (as rotations and as
//! translations or scales), each keeping its own: the same operations on the same
//! numbers as in the list's own quads. Both keys' rows are read and dequantised side
//! by side ([`Pair`]: one 256-bit register and one gather per row on AVX2), as are a
//! segment's range bytes `lo` and `hi` when it is planned. A gathered quad of one
//! sub-track is laid out the other way, its components in the lanes of one vector, as
//! a single bone is decoded.
//!
//! What the quad's lanes need of the clip (clip ranges, where the values go) is found
//! once, when the subset is built; what they need of a segment (bit rates, from them
//! each lane's place in a key frame, field mask and scale, and segment ranges) once
//! per segment the keys enter ([`GatheredQuad::replan`]), and kept for two segments.

use crate::format::bytes::u32_at;
use crate::format::clip::Clip;
use crate::format::{field_mask, SubTrackKind, TrackList, QUAD_LANES};
use crate::pose::bone::{self, frame_offset_after, Place, QuadOffset};
use crate::pose::finish::{finish_rotations, finish_single, lerp};
use crate::pose::lists::{write, write_list, ROTATION3, ROTATION4, SCALE, TRANSLATION};
use crate::seek::Key;
use crate::simd::pair::Pair;
use crate::simd::scalar::F32x4 as Portable;
use crate::simd::Lanes;
use crate::transform::Transform;
use crate::unpack::quad::rate_word;
use crate::unpack::values::{dequantize, rebuild_w, SegmentRange, BYTE_SCALE, RECIPROCALS, WORD_SCALE};

/// Up to four animated sub-tracks, decoded side by side (see the module
/// documentation).
#[derive(Clone, Copy, Debug)]
pub(crate) struct GatheredQuad {
    /// How many lanes are used (1 to 4).
    lanes: u8,
    /// Whether a lane stores four components (a four-component rotation): a fourth
    /// row of fields is then read.
    four: bool,
    /// Whether some lane is a rotation, some a translation or scale, some a
    /// three-component rotation (whose `w` is rebuilt).
    rotations: bool,
    vectors: bool,
    rebuilt: bool,
    /// Each lane's list (unused past `lanes`).
    lists: [TrackList; 4],
    /// All ones in the lanes of rotations, in the lanes of three-component rotations.
    rotation_lanes: [u32; 4],
    rebuild_lanes: [u32; 4],
    /// Where each lane's data are (unused past `lanes`).
    places: [Place; 4],
    /// The output each lane goes to (`u32::MAX` past `lanes`: never stored).
    outputs: [u32; 4],
    /// Each component's clip range, minimum and extent, as bits: lane `j` of row `m`
    /// is lane `j`'s component `m`; with one lane, row 0 holds its components.
    min: [[u32; 4]; 4],
    extent: [[u32; 4]; 4],
    /// Where each component's segment range bytes `lo` and `hi` are, as bit offsets
    /// from a segment's first range byte, laid out as the clip ranges (0 in the cells
    /// of no component: a byte that exists whenever a segment has ranges). The same
    /// in every segment, so that planning one reads them as [`Lanes::fields_at`]
    /// reads samples, a row of four at once.
    range_lo: [[u32; 4]; 4],
    range_hi: [[u32; 4]; 4],
    /// What two segments give the lanes: those of the subset's last keys (both keys'
    /// when they straddle a segment's end, so that playing on into the next segment
    /// finds its plan made).
    segments: [SegmentPlan; 2],
}

/// What one segment gives a [`GatheredQuad`]'s lanes, laid out as its clip ranges
/// are: rows by component, lanes by sub-track (with one lane, row 0 by component).
#[derive(Clone, Copy, Debug)]
pub(crate) struct SegmentPlan {
    /// Each field's first bit, counted from a key frame's first.
    starts: [[u32; 4]; 4],
    /// Each lane's field mask (0 for rate 0), `1 / (2^rate − 1)` (0 for rate 0 and
    /// 32), and all ones where the rate is 32 (raw `f32`), as bits.
    masks: [u32; 4],
    scale: [u32; 4],
    raw: [u32; 4],
    /// Each component's scaled segment range, `lo · K8` and `hi · K8`, as bits: for
    /// rate 0 the segment's constant and 0; in a single-segment clip 0 and 1. With
    /// the field mask and scale of rate 0 (both 0), every lane's value is then
    /// `(q · scale) · hi + lo`, through the clip range, exactly as the whole pose
    /// computes it, whatever its rate: no select but the raw lanes'.
    lo: [[u32; 4]; 4],
    hi: [[u32; 4]; 4],
    /// Whether every lane's field mask fits in 25 bits (no raw lane): both keys'
    /// fields are then read by one gather per row ([`Pair::fields_at`]).
    narrow: bool,
}

impl SegmentPlan {
    /// No lanes: every field zero, every `hi` 1 (a single-segment clip's).
    pub(crate) const EMPTY: SegmentPlan = SegmentPlan {
        starts: [[0; 4]; 4],
        masks: [0; 4],
        scale: [0; 4],
        raw: [0; 4],
        lo: [[0; 4]; 4],
        hi: [[0x3f80_0000; 4]; 4],
        narrow: true,
    };
}

impl GatheredQuad {
    /// The quad of the animated sub-tracks `parts` of `clip` (1 to 4, each with its
    /// list, place and the output it goes to).
    pub(crate) fn new(clip: &Clip<'_>, parts: &[(TrackList, Place, u32)]) -> GatheredQuad {
        let lanes = parts.len().clamp(1, QUAD_LANES);
        let mut quad = GatheredQuad {
            lanes: lanes as u8,
            four: false,
            rotations: false,
            vectors: false,
            rebuilt: false,
            lists: [TrackList::Rotation3; 4],
            rotation_lanes: [0; 4],
            rebuild_lanes: [0; 4],
            places: [Place::default(); 4],
            outputs: [u32::MAX; 4],
            min: [[0; 4]; 4],
            extent: [[0; 4]; 4],
            range_lo: [[0; 4]; 4],
            range_hi: [[0; 4]; 4],
            segments: [SegmentPlan::EMPTY; 2],
        };
        for (j, &(list, place, output)) in parts.iter().take(QUAD_LANES).enumerate() {
            // Each lane's clip range as a vector of its components (any backend gives
            // the same bits: the portable one serves them all).
            let (min, extent) = if list == TrackList::Rotation4 {
                bone::clip_range::<Portable, 4>(clip, list, &place)
            } else {
                bone::clip_range::<Portable, 3>(clip, list, &place)
            };
            let (min, extent) = (min.to_array(), extent.to_array());
            let rotation = list.kind() == SubTrackKind::Rotation;
            quad.four |= list == TrackList::Rotation4;
            quad.rotations |= rotation;
            quad.vectors |= !rotation;
            quad.rebuilt |= list == TrackList::Rotation3;
            let all = |b: bool| if b { u32::MAX } else { 0 };
            for (to, v) in [
                (&mut quad.rotation_lanes, all(rotation)),
                (&mut quad.rebuild_lanes, all(list == TrackList::Rotation3)),
                (&mut quad.outputs, output),
            ] {
                if let Some(slot) = to.get_mut(j) {
                    *slot = v;
                }
            }
            if let (Some(l), Some(p)) = (quad.lists.get_mut(j), quad.places.get_mut(j)) {
                (*l, *p) = (list, place);
            }
            // The lane's segment range bytes (format-spec/segments.md, Segment ranges):
            // `lo` of component `m` at `m·lanes + lane` from its quad's, `hi` at
            // `(C + m)·lanes + lane`, the quad's `2 · before` bytes in. Below 2^24
            // bytes (at most 65,535 bones of ten components, two bytes each): the bit
            // offsets fit in 32 bits.
            let components = list.components();
            let quad_lanes = u32::from(place.lanes);
            let lo_at = |m: u32| {
                (place.before << 1).wrapping_add(u32::from(place.lane)).wrapping_add(m.wrapping_mul(quad_lanes))
            };
            let hi_at = |m: u32| lo_at(m).wrapping_add(components.wrapping_mul(quad_lanes));
            let ranges = |m: u32| [lo_at(m) << 3, hi_at(m) << 3];
            // Component `m` goes to row `m`, lane `j`; with one lane, to row 0, lane `m`.
            for m in 0..4 {
                let (row, column) = if lanes == 1 { (0, m) } else { (m, j) };
                let [lo, hi] = if (m as u32) < components { ranges(m as u32) } else { [0, 0] };
                let bits = [min.get(m).map(|v| v.to_bits()), extent.get(m).map(|v| v.to_bits()), Some(lo), Some(hi)];
                let rows = [&mut quad.min, &mut quad.extent, &mut quad.range_lo, &mut quad.range_hi];
                for (rows, value) in rows.into_iter().zip(bits) {
                    if let (Some(slot), Some(v)) = (rows.get_mut(row).and_then(|r| r.get_mut(column)), value) {
                        *slot = v;
                    }
                }
            }
        }
        quad
    }

    /// Writes into plan `slot` (0 or 1) of the two it keeps what `key`'s segment
    /// gives the lanes. `after` is the quad whose offset was found last in `key`'s
    /// frames: quads planned in the order of their sub-tracks sum each bit rate once.
    /// Plain integer and `f32` arithmetic, the same operations as the vectors of the
    /// whole pose do lane by lane: the same bits.
    #[inline(always)]
    pub(crate) fn replan<V: Lanes>(
        &mut self,
        slot: usize,
        clip: &Clip<'_>,
        key: &Key<'_>,
        after: &mut Option<QuadOffset>,
    ) {
        let Some(plan) = self.segments.get_mut(slot) else { return };
        let constant_lanes = plan_lanes(self.lanes, &self.places, &self.lists, clip, key, after, plan);
        // Mask cells past the quad's lanes are never written: they stay 0.
        plan.narrow = (plan.masks[0] | plan.masks[1] | plan.masks[2] | plan.masks[3]) <= 0x01ff_ffff;
        if clip.segment_count > 1 {
            let (bytes, ranges) = (clip.bytes, [&self.range_lo, &self.range_hi]);
            match (self.lanes, self.four) {
                (1, _) => plan_ranges::<V, 1>(bytes, key, ranges, constant_lanes, plan),
                (_, true) => plan_ranges::<V, 4>(bytes, key, ranges, constant_lanes, plan),
                (_, false) => plan_ranges::<V, 3>(bytes, key, ranges, constant_lanes, plan),
            }
        }
    }

    /// Plan `slot` of the two it keeps.
    #[inline(always)]
    fn segment(&self, slot: usize) -> &SegmentPlan {
        self.segments.get(slot & 1).unwrap_or(&SegmentPlan::EMPTY)
    }

    /// Decodes the lanes at `keys` blended by `alpha` into `out[outputs[j]]`, each key
    /// with its plan of `slots` (the same unless the keys straddle a segment's end;
    /// key 1's unused when `alpha` is 0).
    #[inline(always)]
    pub(crate) fn decode<V: Lanes>(&self, keys: &[Key<'_>; 2], alpha: f32, slots: [usize; 2], out: &mut [Transform]) {
        if self.lanes > 1 {
            if self.four {
                self.across::<V, 4>(keys, alpha, slots, out);
            } else {
                self.across::<V, 3>(keys, alpha, slots, out);
            }
            return;
        }
        match self.lists[0] {
            TrackList::Rotation3 => self.alone::<V, ROTATION3, 3>(keys, alpha, slots, out),
            TrackList::Rotation4 => self.alone::<V, ROTATION4, 4>(keys, alpha, slots, out),
            TrackList::Translation => self.alone::<V, TRANSLATION, 3>(keys, alpha, slots, out),
            TrackList::Scale => self.alone::<V, SCALE, 3>(keys, alpha, slots, out),
        }
    }

    /// [`GatheredQuad::decode`] of two to four lanes, `R` rows of fields (4 when a lane
    /// is a four-component rotation): one vector per component, as a whole pose
    /// decodes a quad, finished as rotations and as translations or scales where
    /// lanes are, and each lane stored as its list says.
    #[inline(always)]
    fn across<V: Lanes, const R: usize>(
        &self,
        keys: &[Key<'_>; 2],
        alpha: f32,
        slots: [usize; 2],
        out: &mut [Transform],
    ) {
        let interpolate = alpha != 0.0;
        let (k0, k1) = key_values::<V, R>(self, keys, interpolate, slots, true);
        // Rotations: `w` already rebuilt where it is not stored.
        let rotations = if self.rotations { finish_rotations(false, k0, k1, alpha) } else { k0 };
        let vectors = if self.vectors && interpolate {
            let [x0, y0, z0, _] = k0;
            let [x1, y1, z1, _] = k1;
            [lerp(x0, x1, alpha), lerp(y0, y1, alpha), lerp(z0, z1, alpha), V::splat(0.0)]
        } else {
            k0
        };
        let rows = if self.rotations && self.vectors {
            let rotation_lanes = V::from_bits(self.rotation_lanes);
            let [a, b, c, d] = rotations;
            let [e, f, g, h] = vectors;
            [
                V::select(rotation_lanes, a, e),
                V::select(rotation_lanes, b, f),
                V::select(rotation_lanes, c, g),
                V::select(rotation_lanes, d, h),
            ]
        } else if self.rotations {
            rotations
        } else {
            vectors
        };
        let [a, b, c, d] = V::transpose(rows);
        // Written out, not looped: the values stay in registers.
        self.put::<V>(0, a, out);
        self.put::<V>(1, b, out);
        if self.lanes > 2 {
            self.put::<V>(2, c, out);
        }
        if self.lanes > 3 {
            self.put::<V>(3, d, out);
        }
    }

    /// Stores lane `j`'s finished value in the part its list names of its output.
    #[inline(always)]
    fn put<V: Lanes>(&self, j: usize, value: V, out: &mut [Transform]) {
        let output = self.outputs.get(j).copied().unwrap_or(u32::MAX) as usize;
        if let (Some(t), Some(&list)) = (out.get_mut(output), self.lists.get(j)) {
            write_list(list, value, t);
        }
    }

    /// [`GatheredQuad::decode`] of one lane of list `L` (`C` components): its
    /// components in the lanes of one vector, as a single bone is decoded.
    #[inline(always)]
    fn alone<V: Lanes, const L: usize, const C: usize>(
        &self,
        keys: &[Key<'_>; 2],
        alpha: f32,
        slots: [usize; 2],
        out: &mut [Transform],
    ) {
        let ([v0, ..], [v1, ..]) = key_values::<V, 1>(self, keys, alpha != 0.0, slots, false);
        let v = finish_single::<V, L, C>(v0, v1, alpha);
        if let Some(t) = out.get_mut(self.outputs[0] as usize) {
            write::<V, L>(v, t);
        }
    }
}

/// Writes into `plan` the scaled segment range, in `key`'s segment, of each
/// component of the first `R` rows of `range_lo` and `range_hi`,
/// a row of four at a time: the range bytes read as a quad's fields are
/// ([`Lanes::fields_at`]), then `lo · K8` and `hi · K8`, or in the lanes of
/// `constant_lanes` (all ones where the rate is 0) the segment's constant
/// `(lo + 256 · hi) · K16` and 0, as `SegmentRange::constant` computes it.
#[inline(always)]
fn plan_ranges<V: Lanes, const R: usize>(
    bytes: &[u8],
    key: &Key<'_>,
    [range_lo, range_hi]: [&[[u32; 4]; 4]; 2],
    constant_lanes: [u32; 4],
    plan: &mut SegmentPlan,
) {
    let first = (key.segment_ranges as u64).wrapping_mul(8);
    let byte = V::from_bits([0xff; 4]);
    // `lo` and `hi` side by side: one gather per row on AVX2.
    let both = V::Pair::fields_at::<R>([bytes; 2], [first; 2], [range_lo, range_hi], V::Pair::new(byte, byte), true);
    let any_constant = constant_lanes != [0; 4];
    let constant = V::from_bits(constant_lanes);
    let (k8, k16, zero) = (V::splat(BYTE_SCALE), V::splat(WORD_SCALE), V::splat(0.0));
    let rows = plan.lo.iter_mut().zip(plan.hi.iter_mut()).zip(both.iter()).take(R);
    for ((to_lo, to_hi), both) in rows {
        let both = both.integers_to_floats();
        let (lo, hi) = both.mul(V::Pair::new(k8, k8)).halves();
        let (lo, hi) = if any_constant {
            let (l, h) = both.halves();
            let segment_constant = l.add(h.mul(V::splat(256.0))).mul(k16);
            (V::select(constant, segment_constant, lo), V::select(constant, zero, hi))
        } else {
            (lo, hi)
        };
        *to_lo = lo.to_array().map(f32::to_bits);
        *to_hi = hi.to_array().map(f32::to_bits);
    }
}

/// [`GatheredQuad::replan`] of the quad of `lanes` lanes at `places`, of `lists`,
/// but the segment ranges: each field's first bit, and each lane's field mask, scale
/// and raw mask. Returns all ones in the lanes (of the plan's layout) whose rate is 0.
#[inline(always)]
fn plan_lanes(
    lanes: u8,
    places: &[Place; 4],
    lists: &[TrackList; 4],
    clip: &Clip<'_>,
    key: &Key<'_>,
    after: &mut Option<QuadOffset>,
    plan: &mut SegmentPlan,
) -> [u32; 4] {
    let bytes = clip.bytes;
    let mut constant_lanes = [0; 4];
    let SegmentPlan { starts, masks, scale, raw, .. } = plan;
    for j in 0..usize::from(lanes).min(QUAD_LANES) {
        let (Some(place), Some(list)) = (places.get(j), lists.get(j)) else { break };
        let components = list.components() as usize;
        let quad_lanes = usize::from(place.lanes);
        let rates_at = key.rates.wrapping_add(place.first as usize);
        let word = match u32_at(bytes, rates_at) {
            // Only the quad's own rates (the bytes past its last lane are another's).
            Some(word) => word & (u32::MAX >> ((QUAD_LANES.saturating_sub(quad_lanes) << 3) & 31)),
            None => rate_word(bytes, rates_at, quad_lanes),
        };
        let shift = (u32::from(place.lane) << 3) & 31;
        let rate = (word >> shift) & 0xff;
        // Byte `k` of the first product is the sum of the rates before lane `k`;
        // the top byte of the second is the sum of all four (at most 32 each).
        let in_run = (word.wrapping_mul(0x0101_0100) >> shift) & 0xff;
        let width = word.wrapping_mul(0x0101_0101) >> 24;
        let offset = frame_offset_after(clip, key, place, *after);
        *after = Some(place.offset_at(offset));
        // A key frame's bits fit in 32 (its size is stored as a `u32`).
        let base = (offset as u32).wrapping_add(in_run);
        // `RECIPROCALS` holds 0 for rate 0, and rate 32 (raw) masked to 5 bits is 0.
        let lane_scale = RECIPROCALS.get((rate & 31) as usize).copied().unwrap_or(0.0);
        let lane = [field_mask(rate), lane_scale.to_bits(), if rate >= 32 { u32::MAX } else { 0 }];
        let constant = if rate == 0 { u32::MAX } else { 0 };
        // Each field's first bit, and the lane's field mask, scale and raw mask:
        // component `m` in row `m`, lane `j` (row 3 of a three-component lane its
        // last component's bit again, in bounds and never used); with one lane, in
        // row 0, lane `m`.
        let start = |m: usize| base.wrapping_add(width.wrapping_mul(m.min(components.saturating_sub(1)) as u32));
        if lanes == 1 {
            let live = |m: usize, v: u32| if m < components { v } else { 0 };
            if let Some(row) = starts.first_mut() {
                *row = [start(0), start(1), start(2), start(3)];
            }
            *masks = [lane[0], lane[0], lane[0], live(3, lane[0])];
            *scale = [lane[1], lane[1], lane[1], live(3, lane[1])];
            *raw = [lane[2], lane[2], lane[2], live(3, lane[2])];
            constant_lanes = [constant; 4];
        } else {
            for (m, row) in starts.iter_mut().enumerate() {
                if let Some(cell) = row.get_mut(j) {
                    *cell = start(m);
                }
            }
            let cells =
                [(&mut *masks, lane[0]), (&mut *scale, lane[1]), (&mut *raw, lane[2]), (&mut constant_lanes, constant)];
            for (to, v) in cells {
                if let Some(cell) = to.get_mut(j) {
                    *cell = v;
                }
            }
        }
    }
    constant_lanes
}

/// The first `R` rows of a gathered quad's values at key 0 and key 1 (key 0's again
/// unless `interpolate`), each with its plan of `slots` (rows from `R` on zero): each
/// lane's field read where it lies, dequantised through its segment range and the
/// clip range, raw lanes' bits kept; with `rebuild`, `w` rebuilt in the lanes of
/// three-component rotations. Both keys' rows side by side ([`Pair`]: one register on
/// AVX2), which share the clip range.
#[inline(always)]
fn key_values<V: Lanes, const R: usize>(
    quad: &GatheredQuad,
    [key0, key1]: &[Key<'_>; 2],
    interpolate: bool,
    slots: [usize; 2],
    rebuild: bool,
) -> ([V; 4], [V; 4]) {
    let (p0, p1) = (quad.segment(slots[0]), quad.segment(slots[1]));
    let rebuild = rebuild && quad.rebuilt;
    let zero = V::splat(0.0);
    let at = |rows: &[[u32; 4]; 4], m: usize| V::from_bits(rows.get(m).copied().unwrap_or([0; 4]));
    if !interpolate {
        let q = V::fields_at::<R>(key0.samples, key0.frame_bit, &p0.starts, V::from_bits(p0.masks));
        let (scale, raw) = (V::from_bits(p0.scale), V::from_bits(p0.raw));
        // Written out rather than mapped, so that each row's index is a constant.
        let row = |m: usize| {
            if m >= R {
                return zero;
            }
            let segment = SegmentRange::scaled(at(&p0.lo, m), at(&p0.hi, m));
            let q = q.get(m).copied().unwrap_or(zero);
            let v = dequantize(q.integers_to_floats(), scale, Some(&segment), at(&quad.min, m), at(&quad.extent, m));
            V::select(raw, q, v)
        };
        let (x, y, z, w) = (row(0), row(1), row(2), row(3));
        let w = if rebuild { V::select(V::from_bits(quad.rebuild_lanes), rebuild_w(x, y, z), w) } else { w };
        return ([x, y, z, w], [x, y, z, w]);
    }
    // Both keys in one segment (most frames): one plan, each of whose rows is then
    // loaded once into both halves (a single broadcast load on AVX2).
    if core::ptr::eq(p0, p1) {
        pair_values::<V, R>(quad, [key0, key1], [p0, p0], rebuild)
    } else {
        pair_values::<V, R>(quad, [key0, key1], [p0, p1], rebuild)
    }
}

/// [`key_values`] of both keys, each with its plan of `plans`.
#[inline(always)]
fn pair_values<V: Lanes, const R: usize>(
    quad: &GatheredQuad,
    [key0, key1]: [&Key<'_>; 2],
    plans: [&SegmentPlan; 2],
    rebuild: bool,
) -> ([V; 4], [V; 4]) {
    let [p0, p1] = plans;
    let both = |a: &[u32; 4], b: &[u32; 4]| V::Pair::new(V::from_bits(*a), V::from_bits(*b));
    let q = V::Pair::fields_at::<R>(
        [key0.samples, key1.samples],
        [key0.frame_bit, key1.frame_bit],
        [&p0.starts, &p1.starts],
        both(&p0.masks, &p1.masks),
        p0.narrow && p1.narrow,
    );
    let (scale, raw) = (both(&p0.scale, &p1.scale), both(&p0.raw, &p1.raw));
    let x = pair_row::<V, R>(quad, plans, &q, scale, raw, 0);
    let y = pair_row::<V, R>(quad, plans, &q, scale, raw, 1);
    let z = pair_row::<V, R>(quad, plans, &q, scale, raw, 2);
    let w = pair_row::<V, R>(quad, plans, &q, scale, raw, 3);
    let w = if rebuild { pair_rebuilt_w::<V>(both(&quad.rebuild_lanes, &quad.rebuild_lanes), x, y, z, w) } else { w };
    let ((x0, x1), (y0, y1), (z0, z1), (w0, w1)) = (x.halves(), y.halves(), z.halves(), w.halves());
    ([x0, y0, z0, w0], [x1, y1, z1, w1])
}

/// [`rebuild_w`] of both keys where `lanes` (all ones in the lanes of
/// three-component rotations), `w` elsewhere: the same operations in the same order.
#[inline(always)]
fn pair_rebuilt_w<V: Lanes>(lanes: V::Pair, x: V::Pair, y: V::Pair, z: V::Pair, w: V::Pair) -> V::Pair {
    let one = V::Pair::new(V::splat(1.0), V::splat(1.0));
    let zero = V::Pair::new(V::splat(0.0), V::splat(0.0));
    let t = one.sub(x.mul(x).add(y.mul(y)).add(z.mul(z)));
    V::Pair::select(lanes, t.sqrt().and(t.gt(zero)), w)
}

/// Row `m` of both keys' values in [`key_values`] (zero from `R` on): fields `q` as
/// `dequantize` computes them, `((q · scale) · hi + lo) · extent + min`, `q` itself
/// where `raw`. (A function, not a closure: a closure may be compiled out of line,
/// without the backend's target features.)
#[inline(always)]
fn pair_row<V: Lanes, const R: usize>(
    quad: &GatheredQuad,
    [p0, p1]: [&SegmentPlan; 2],
    q: &[V::Pair; 4],
    scale: V::Pair,
    raw: V::Pair,
    m: usize,
) -> V::Pair {
    let zero = V::splat(0.0);
    let (Some(&q), true) = (q.get(m), m < R) else { return V::Pair::new(zero, zero) };
    let at = |rows: &[[u32; 4]; 4]| V::from_bits(rows.get(m).copied().unwrap_or([0; 4]));
    let (lo, hi) = (V::Pair::new(at(&p0.lo), at(&p1.lo)), V::Pair::new(at(&p0.hi), at(&p1.hi)));
    let (min, extent) = (at(&quad.min), at(&quad.extent));
    let n = q.integers_to_floats().mul(scale);
    let n = n.mul(hi).add(lo);
    let v = n.mul(V::Pair::new(extent, extent)).add(V::Pair::new(min, min));
    V::Pair::select(raw, q, v)
}
