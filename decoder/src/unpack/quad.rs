//! Animated sub-tracks four at a time (4.0, `format-spec/segments.md`, Quads): a
//! quad's lanes keep their own bit rates, and each component of the four is read
//! together, as one vector ("structure of arrays": lane `j` is sub-track
//! `first + j`). Every value goes through the lane-wise arithmetic of
//! [`crate::unpack::values`] in the order the spec writes it, so a lane gives the
//! bits a single sub-track decoded alone gives.

use crate::format::bytes::{bits_from, u32_at, u64_at_or_zero};
use crate::format::{field_mask, QUAD_LANES};
use crate::simd::Lanes;
use crate::unpack::values::{dequantize, flat, SegmentRange, RECIPROCALS};

/// The bits one 8-byte load guarantees from any bit position.
pub(crate) const ONE_LOAD_BITS: u32 = 57;

/// The bytes a quad's clip ranges or segment range bytes are read from: the 64 at
/// their start (more than either holds), taken with one bounds check so that the
/// reads inside need none.
pub(crate) type Window = [u8; WINDOW];

/// The length of a [`Window`].
const WINDOW: usize = 64;

/// A window of zeros: the segment range bytes of a clip without segment ranges
/// (never read).
pub(crate) static ZEROS: Window = [0; WINDOW];

/// `read` applied to the [`WINDOW`] bytes of `bytes` from `at`; near the end of the
/// buffer, to those there followed by zeros.
#[inline(always)]
fn in_window<T>(bytes: &[u8], at: usize, read: impl FnOnce(&Window) -> T) -> T {
    let mut spare = None;
    read(window(bytes, at, &mut spare))
}

/// The [`WINDOW`] bytes of `bytes` from `at`; near the end of the buffer, those there
/// followed by zeros, copied into `spare`.
#[inline(always)]
pub(crate) fn window<'a>(bytes: &'a [u8], at: usize, spare: &'a mut Option<Window>) -> &'a Window {
    // One comparison, `at + 64 <= len` (a wrapped end is below the start: `None`).
    match bytes.get(at..at.wrapping_add(WINDOW)).and_then(<[u8]>::first_chunk::<WINDOW>) {
        Some(w) => w,
        None => spare.insert(window_at_end(bytes, at)),
    }
}

/// The bytes of `bytes` from `at` followed by zeros, when fewer than [`WINDOW`]
/// follow `at`.
#[cold]
#[inline(never)]
fn window_at_end(bytes: &[u8], at: usize) -> Window {
    let mut w = [0; WINDOW];
    for (s, b) in w.iter_mut().zip(bytes.get(at..).unwrap_or(&[])) {
        *s = *b;
    }
    w
}

/// A quad's clip ranges (format-spec/tracks.md, Clip ranges) or its segment range
/// bytes in one segment (format-spec/segments.md), in groups of one value per lane:
/// group `m` the four lanes' minimums (or `lo` bytes) of component `m`, group
/// `C + m` their extents (or `hi` bytes). Read from the window at their start, each
/// group with one load at an offset that is a constant in a whole quad.
#[derive(Clone, Copy)]
pub(crate) struct Groups<'w> {
    pub window: &'w Window,
    /// The quad's lanes (1 to 4): a group's length in values.
    pub lanes: usize,
}

impl Groups<'_> {
    /// Group `g` of 16-bit values (clip ranges), lane `j` in bits `16j ..` (lanes
    /// past the quad's last zero).
    #[inline(always)]
    pub(crate) fn halves(&self, g: usize) -> u64 {
        let live = u64::MAX >> (QUAD_LANES.wrapping_sub(self.lanes).wrapping_mul(16) & 63);
        // At most 2·7·4 = 56: inside the window by construction.
        let at = (g.wrapping_mul(self.lanes) << 1).min(WINDOW - 8);
        self.window.get(at..).and_then(<[u8]>::first_chunk::<8>).map_or(0, |b| u64::from_le_bytes(*b) & live)
    }

    /// Group `g` of bytes (segment range bytes), lane `j` in bits `8j ..` (lanes
    /// past the quad's last zero).
    #[inline(always)]
    pub(crate) fn bytes(&self, g: usize) -> u32 {
        let live = u32::MAX >> (QUAD_LANES.wrapping_sub(self.lanes).wrapping_mul(8) & 31);
        let at = g.wrapping_mul(self.lanes).min(WINDOW - 4);
        self.window.get(at..).and_then(<[u8]>::first_chunk::<4>).map_or(0, |b| u32::from_le_bytes(*b) & live)
    }
}

/// The `lanes` (1 to 4) bytes at byte `at` of `bytes` as a little-endian word, the
/// bytes past them zero: a quad's bit rates, or one group of its segment range bytes.
#[inline(always)]
pub(crate) fn rate_word(bytes: &[u8], at: usize, lanes: usize) -> u32 {
    let word = match u32_at(bytes, at) {
        Some(w) => w,
        None => rates_at_end(bytes, at),
    };
    let live = if lanes == 0 { 0 } else { u32::MAX >> (QUAD_LANES.saturating_sub(lanes).wrapping_mul(8) & 31) };
    word & live
}

/// A quad's bit rates in one segment, and what reading its lanes needs of them:
/// made once per quad and segment (and shared by both key frames when they lie in
/// the same segment).
#[derive(Clone, Copy)]
pub(crate) struct QuadRates<V: Lanes> {
    /// Each lane's first bit in a component's run (the rates of the lanes before it),
    /// as [`Lanes::fields`] takes them.
    places: V::Places,
    /// The same places, one byte per lane (for components wider than one load).
    place_bytes: u32,
    /// Each lane's `2^rate − 1` (all ones for raw lanes, 0 for rate 0 and for the
    /// lanes past the quad's last), as bits.
    masks: V,
    /// The bits of one component of the quad: the sum of the rates.
    pub width: u32,
    /// `1 / (2^rate − 1)` in each lane, the nearest `f32` ([`RECIPROCALS`]; a lane
    /// of rate 0 or 32 holds something else, and its value is replaced).
    scale: V,
    /// Whether a lane of the quad has rate 0 (constant in the segment) or 32 (raw
    /// `f32`): its value is then replaced ([`QuadRates::component`]). (The lanes past
    /// the quad's last hold values never stored.)
    pub special: bool,
    /// All ones in the lanes of rate 0.
    flat: V,
    /// All ones in the lanes of rate 32.
    raw: V,
}

impl<V: Lanes> QuadRates<V> {
    /// The rates of a quad of `lanes` lanes (1 to 4) from its rate bytes, one per
    /// lane (0 past the quad's last: [`rate_word`]).
    #[inline(always)]
    pub(crate) fn new(word: u32, lanes: usize) -> Self {
        // Byte `k` of the product is the sum of bytes `0 .. k`: the rates are at most
        // 32, so no sum carries into the next byte.
        let place_bytes = word.wrapping_mul(0x0101_0100);
        let width = word.wrapping_mul(0x0101_0101) >> 24;
        let masks = V::rate_masks(word);
        // 2^r − 1 is exact in f32 up to 24 bits: one rounded division gives R[r].
        let scale = V::splat(1.0).div(masks.integers_to_floats());
        // A zero byte among the live lanes' bytes of `w` (bit 7 of each byte where it
        // is zero: exact for the lowest such byte, and a borrow only runs upwards, so
        // the bytes past the quad's last lane, at the top, never mark a live one).
        // Those lanes read as rate 0 but are never stored: they need no select.
        let live = 0x8080_8080u32 >> (QUAD_LANES.wrapping_sub(lanes).wrapping_mul(8) & 31);
        let zero_byte = |w: u32| w.wrapping_sub(0x0101_0101) & !w & live != 0;
        let special = zero_byte(word) || zero_byte(word ^ 0x2020_2020);
        let (flat, raw) = if special {
            let rates = V::from_bytes(word);
            (rates.lt(V::splat(0.5)), rates.gt(V::splat(31.5)))
        } else {
            (V::splat(0.0), V::splat(0.0))
        };
        QuadRates { places: V::places(place_bytes), place_bytes, masks, width, scale, special, flat, raw }
    }

    /// The rates a kept pose's plan keeps ([`crate::pose::kept_plan`]): each lane's
    /// place in a component's run (one byte per lane), the run's width, each lane's
    /// field mask and scale. Without rate-0 or raw lanes to replace: the plan has
    /// already folded those in.
    #[inline(always)]
    pub(crate) fn planned(place_bytes: u32, width: u32, masks: V, scale: V) -> Self {
        let zero = V::splat(0.0);
        QuadRates {
            places: V::places(place_bytes),
            place_bytes,
            masks,
            width,
            scale,
            special: false,
            flat: zero,
            raw: zero,
        }
    }

    /// What [`QuadRates::planned`] takes back, and the lanes of rate 32 (all ones
    /// there; zero everywhere unless [`QuadRates::special`]).
    #[inline(always)]
    pub(crate) fn plan_parts(&self) -> (u32, V, V, V) {
        (self.place_bytes, self.masks, self.scale, self.raw)
    }

    /// The stored integers of the four lanes of the component whose bits start
    /// `offset` bits past the quad's first in `bits`, as bit patterns (raw lanes: the
    /// `f32` bits; rate-0 lanes and lanes past the quad's last: 0). One 8-byte load
    /// serves the four while their bits fit in the 57 it guarantees.
    #[inline(always)]
    pub(crate) fn integers(&self, bits: &QuadBits<'_>, offset: u64) -> V {
        if self.width <= ONE_LOAD_BITS {
            V::fields(bits.near(offset), self.places, self.masks)
        } else {
            integers_apart(self.place_bytes, self.masks, bits.samples, bits.bit.wrapping_add(offset))
        }
    }

    /// The stored integers of the component whose bits start `offset` bits past the
    /// quad's first in `bits` ([`QuadRates::integers`]) and their values as quantised
    /// lanes: through the segment range (`None` in a single-segment clip) and the
    /// clip range `min`, `extent`, every lane, whatever its rate.
    #[inline(always)]
    pub(crate) fn quantised(
        &self,
        bits: &QuadBits<'_>,
        offset: u64,
        segment: Option<&SegmentRange<V>>,
        min: V,
        extent: V,
    ) -> (V, V) {
        let q = self.integers(bits, offset);
        (q, dequantize(q.integers_to_floats(), self.scale, segment, min, extent))
    }

    /// The values of the four lanes of the component whose bits start `offset` bits
    /// past the quad's first in `bits`: each lane's integer through the segment range
    /// (`None` in a single-segment clip) and the clip range `min`, `extent`
    /// (format-spec/decoding.md), then, in a quad with rate-0 or raw lanes, their
    /// values put in: the segment's constant for rate 0 ([`flat`]), the stored bits
    /// for raw lanes.
    #[inline(always)]
    pub(crate) fn component<const SPECIAL: bool>(
        &self,
        bits: &QuadBits<'_>,
        offset: u64,
        segment: Option<&SegmentRange<V>>,
        min: V,
        extent: V,
    ) -> V {
        let (q, v) = self.quantised(bits, offset, segment, min, extent);
        if SPECIAL && self.special {
            V::select(self.raw, q, V::select(self.flat, flat(segment, min, extent), v))
        } else {
            v
        }
    }
}

/// [`QuadRates::integers`] of a component whose bits do not fit in one load, the
/// lanes' places given one byte per lane: a load per lane (rates above 14 in every
/// lane, or raw lanes). Takes values, not the rates: a reference would keep the
/// caller's rates in memory rather than in registers.
#[inline(never)]
pub(crate) fn integers_apart<V: Lanes>(place_bytes: u32, masks: V, samples: &[u8], start: u64) -> V {
    let masks = masks.to_array().map(f32::to_bits);
    let places = place_bytes.to_le_bytes();
    V::from_bits(core::array::from_fn(|j| {
        let place = places.get(j).copied().map_or(0, u64::from);
        bits_from(samples, start.wrapping_add(place)) as u32 & masks.get(j).copied().unwrap_or(0)
    }))
}

/// Where a quad's bits start in one key frame: the samples and the bit offset in
/// them, and the [`WINDOW`] bytes from that bit's byte. The window holds every
/// component's bits while each component fits in one load (their offsets are then
/// at most 3 · 57 bits, and a load reaches 64 bits past its first bit), so those
/// reads take no bounds check of their own.
#[derive(Clone, Copy)]
pub(crate) struct QuadBits<'a> {
    pub samples: &'a [u8],
    pub bit: u64,
    pub window: &'a Window,
}

impl QuadBits<'_> {
    /// The 64 bits from `offset` bits past the quad's first (at least 57 of them
    /// valid), for an `offset` of at most 3 · [`ONE_LOAD_BITS`].
    #[inline(always)]
    fn near(&self, offset: u64) -> u64 {
        let local = (self.bit & 7).wrapping_add(offset);
        // At most (7 + 171) / 8 = 22: inside the window (the mask, one instruction,
        // only tells the compiler).
        let at = ((local >> 3) as usize) & 31;
        self.window.get(at..).and_then(<[u8]>::first_chunk::<8>).map_or(0, |b| u64::from_le_bytes(*b) >> (local & 7))
    }
}

/// The rate bytes at `at` when fewer than four follow in the buffer (zero past it).
#[cold]
#[inline(never)]
fn rates_at_end(bytes: &[u8], at: usize) -> u32 {
    let byte = |k: usize| u32::from(bytes.get(at.wrapping_add(k)).copied().unwrap_or(0));
    byte(0) | byte(1) << 8 | byte(2) << 16 | byte(3) << 24
}

/// The segment range of component `m` of a quad of `C` components, its four lanes'
/// `lo` and `hi` bytes from the quad's segment range bytes.
#[inline(always)]
pub(crate) fn segment_range<V: Lanes, const C: usize>(groups: &Groups<'_>, m: usize) -> SegmentRange<V> {
    SegmentRange::new(V::from_bytes(groups.bytes(m)), V::from_bytes(groups.bytes(C.wrapping_add(m))))
}

/// What a quad's lanes need of one key frame: its rates, its segment range bytes
/// (unused in a single-segment clip), and where its first component's bits are.
#[derive(Clone, Copy)]
pub(crate) struct QuadKey<'a, V: Lanes> {
    pub rates: QuadRates<V>,
    pub segment: Groups<'a>,
    pub bits: QuadBits<'a>,
}

/// The values of the `C` components of a quad's four lanes at key 0 and key 1 (key
/// 0's again when not `interpolate`), one vector per component (lanes past `C`
/// zero): `grid` gives each component's clip-range step and base, `clip` the quad's
/// clip ranges. `RANGED`: the clip has segment ranges; `SAME`: both keys lie in one
/// segment (`key1`'s rates and segment bytes are `key0`'s); `SPECIAL`: the quad may
/// have lanes of rate 0 or 32, whose values are replaced ([`QuadRates::component`]),
/// and without it no select is compiled in.
#[inline(always)]
pub(crate) fn quad_values<V: Lanes, const C: usize, const RANGED: bool, const SAME: bool, const SPECIAL: bool>(
    grid: &[(V, V); 4],
    clip: &Groups<'_>,
    key0: &QuadKey<'_, V>,
    key1: &QuadKey<'_, V>,
    interpolate: bool,
) -> ([V; 4], [V; 4]) {
    // Written out rather than looped, so that each component's index is a constant
    // and its vectors stay in registers (not arrays on the stack).
    let zero = V::splat(0.0);
    let pair = |m: usize| component::<V, C, RANGED, SAME, SPECIAL>(grid, clip, key0, key1, interpolate, m);
    let (x0, x1) = pair(0);
    let (y0, y1) = if C > 1 { pair(1) } else { (zero, zero) };
    let (z0, z1) = if C > 2 { pair(2) } else { (zero, zero) };
    let (w0, w1) = if C > 3 { pair(3) } else { (zero, zero) };
    ([x0, y0, z0, w0], [x1, y1, z1, w1])
}

/// Component `m` of a quad's four lanes at key 0 and key 1 ([`quad_values`]).
#[inline(always)]
fn component<V: Lanes, const C: usize, const RANGED: bool, const SAME: bool, const SPECIAL: bool>(
    grid: &[(V, V); 4],
    clip: &Groups<'_>,
    key0: &QuadKey<'_, V>,
    key1: &QuadKey<'_, V>,
    interpolate: bool,
    m: usize,
) -> (V, V) {
    let zero = V::splat(0.0);
    let (step, base) = grid.get(m).copied().unwrap_or((zero, zero));
    let min = V::from_halves(clip.halves(m)).mul(step).add(base);
    let extent = V::from_halves(clip.halves(C.wrapping_add(m))).mul(step);
    let segment0 = RANGED.then(|| segment_range::<V, C>(&key0.segment, m));
    let m64 = m as u64;
    let v0 = key0.rates.component::<SPECIAL>(
        &key0.bits,
        m64.wrapping_mul(u64::from(key0.rates.width)),
        segment0.as_ref(),
        min,
        extent,
    );
    let v1 = if !interpolate {
        v0
    } else {
        let rates1 = if SAME { &key0.rates } else { &key1.rates };
        let segment1 = if SAME { segment0 } else { RANGED.then(|| segment_range::<V, C>(&key1.segment, m)) };
        let offset1 = m64.wrapping_mul(u64::from(rates1.width));
        rates1.component::<SPECIAL>(&key1.bits, offset1, segment1.as_ref(), min, extent)
    };
    (v0, v1)
}

/// One lane of a quad, decoded alone (a single bone, or a subset's): the bits of
/// each component read where the quad's layout puts them, and the same lane-wise
/// operations as [`quad_values`] applied to a vector of the lane's components
/// (`x, y, z, w`) rather than of the quad's lanes. The same operations on the same
/// numbers: the same bits as the lane of a whole quad.
pub(crate) struct Lane<'a> {
    /// The clip's bytes.
    pub bytes: &'a [u8],
    /// The quad's lane count (1 to 4) and this sub-track's lane in it.
    pub lanes: usize,
    pub lane: usize,
    /// Where the quad's clip ranges start.
    pub clip_at: usize,
}

/// What one key frame gives a [`Lane`]: the quad's rate bytes there, and where the
/// quad's first component's bits start in `samples`.
pub(crate) struct LaneKey<'a> {
    pub rates: u32,
    pub samples: &'a [u8],
    pub bit: u64,
}

impl Lane<'_> {
    /// The lane's segment range bytes in the segment whose bytes start at
    /// `segment_at`: `lo` of component m at `m·lanes + lane`, `hi` at
    /// `(C + m)·lanes + lane`.
    #[inline(always)]
    pub(crate) fn segment<V: Lanes, const C: usize>(&self, segment_at: usize) -> SegmentRange<V> {
        let (lo, hi) = self.segment_bytes::<C>(segment_at);
        SegmentRange::new(V::from_bytes(lo), V::from_bytes(hi))
    }

    /// The bytes of [`Lane::segment`]: the `lo` of component `m` in bits `8m ..` of
    /// the first word, the `hi` in the second.
    #[inline(always)]
    pub(crate) fn segment_bytes<const C: usize>(&self, segment_at: usize) -> (u32, u32) {
        if self.lanes == 1 {
            // One lane: each group is one byte, the `lo` bytes side by side, then
            // the `hi` bytes.
            let word = |at: usize| rate_word(self.bytes, at, C);
            return (word(segment_at), word(segment_at.wrapping_add(C)));
        }
        in_window(self.bytes, segment_at, |w| {
            // Below 2·4·4 = 32: inside the window (the mask only tells the compiler).
            let byte = |g: usize| {
                let at = g.wrapping_mul(self.lanes).wrapping_add(self.lane) & (WINDOW - 1);
                u32::from(w.get(at).copied().unwrap_or(0))
            };
            let word = |first: usize| (0..C).fold(0u32, |word, m| word | byte(first.wrapping_add(m)) << ((m & 3) << 3));
            (word(0), word(C))
        })
    }

    /// The lane's `C` components at `key`, given its segment range bytes there
    /// (`None` in a single-segment clip: [`Lane::segment`]) and its clip range `min`,
    /// `extent`.
    #[inline(always)]
    pub(crate) fn value<V: Lanes, const C: usize>(
        &self,
        key: &LaneKey<'_>,
        segment: Option<&SegmentRange<V>>,
        min: V,
        extent: V,
    ) -> V {
        let shift = (self.lane.wrapping_mul(8) & 31) as u32;
        let rate = (key.rates >> shift) & 0xff;
        let place = u64::from((key.rates.wrapping_mul(0x0101_0100) >> shift) & 0xff);
        let width = u64::from(key.rates.wrapping_mul(0x0101_0101) >> 24);
        let start = key.bit.wrapping_add(place);
        let q = if self.lanes == 1 && u64::from(rate).wrapping_mul(C as u64) <= u64::from(ONE_LOAD_BITS) {
            // One lane whose components fit in one load: they lie side by side, each
            // `rate` bits, and split as a quad's lanes do (places 0, r, 2r, 3r: below
            // 57 here).
            let places = V::places(rate.wrapping_mul(0x0302_0100));
            let live = u32::MAX >> (32usize.wrapping_sub(C << 3) & 31);
            V::fields(bits_from(key.samples, start), places, V::rate_masks(rate.wrapping_mul(0x0101_0101) & live))
        } else {
            // Written out (a closure or `array::from_fn` may be left out of line,
            // without the AVX2 code generation of the caller).
            let mask = field_mask(rate);
            let field = |at: u64| bits_from(key.samples, at) as u32 & mask;
            let x = field(start);
            let y = if C > 1 { field(start.wrapping_add(width)) } else { 0 };
            let z = if C > 2 { field(start.wrapping_add(width << 1)) } else { 0 };
            let w = if C > 3 { field(start.wrapping_add(width.wrapping_mul(3))) } else { 0 };
            V::from_bits([x, y, z, w])
        };
        match rate {
            0 => flat(segment, min, extent),
            32.. => q,
            r => {
                let scale = RECIPROCALS.get((r & 31) as usize).copied().unwrap_or(1.0);
                dequantize(q.integers_to_floats(), V::splat(scale), segment, min, extent)
            }
        }
    }

    /// The lane's clip range: its `C` minimums and extents as `u16` words (component
    /// `m` in bits `16m ..`), minimums of component m at group `m`, extents at `C + m`.
    #[inline(always)]
    pub(crate) fn clip_range<const C: usize>(&self) -> (u64, u64) {
        if self.lanes == 1 {
            // One lane: each group is one `u16`, the minimums side by side, then the
            // extents.
            let live = u64::MAX >> (64usize.wrapping_sub(C << 4) & 63);
            let word = |at: usize| u64_at_or_zero(self.bytes, at) & live;
            return (word(self.clip_at), word(self.clip_at.wrapping_add(C << 1)));
        }
        in_window(self.bytes, self.clip_at, |w| {
            let half = |g: usize| {
                // Below 2·8·4 = 64 and even: inside the window (the mask only tells the
                // compiler).
                let at = (g.wrapping_mul(self.lanes).wrapping_add(self.lane) << 1) & (WINDOW - 2);
                w.get(at..).and_then(<[u8]>::first_chunk::<2>).map_or(0, |b| u64::from(u16::from_le_bytes(*b)))
            };
            let word = |first: usize| (0..C).fold(0u64, |word, m| word | half(first.wrapping_add(m)) << ((m & 3) << 4));
            (word(0), word(C))
        })
    }
}
