//! A second decoder, written from `format-spec/` alone (plain scalar `f32`, no SIMD,
//! nothing shared with `ossa-decoder` but the bytes and the [`Rounding`] names), for the golden files: it must
//! reproduce their expected values bit for bit, and each [`Misreading`] of the spec
//! (a plausible way to get a rule wrong) must change at least one of them, which
//! proves the golden files catch that mistake.
//!
//! It trusts its input (the golden files are valid) and favours being obviously like
//! the spec over being fast.

// Lists are numbered 0 to 3 in the spec, and looped over by number here.
#![allow(clippy::needless_range_loop)]

use ossa_decoder::Rounding;

/// A way an implementer might misread the spec.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Misreading {
    /// None: the spec as written.
    Faithful,
    /// Seeking without snapping a position within 4 ulps to the sample.
    NoSnapping,
    /// Rebuilding `w` from `1 − (x·x + (y·y + z·z))` (another summation order).
    RebuildOrder,
    /// Constant rotations returned with `w` rebuilt but not normalised.
    ConstantsNotNormalised,
    /// The bit-rate-0 `u16` read from two adjacent bytes (`lo`, then `hi` right after).
    AdjacentZeroRateBytes,
    /// Bit rate 32 read as a quantised integer like the others.
    RawAsQuantised,
    /// The segment length taken as the encoder's default 16, not the header's.
    DefaultSegmentLength,
    /// Segment range bytes applied even in a single-segment clip.
    RangesInSingleSegment,
    /// A rotation whose `d` is not a positive finite number passed through as it is
    /// (the spec before format 2.0 said so), not turned into the identity.
    NonFiniteThrough,
    /// The LOOP_WRAP flag ignored: a wrapping clip played as if it clamped (one
    /// interval short, never interpolating back to the first sample).
    WrapIgnored,
    /// A wrapping clip's duration decoded as its last stored sample rather than as
    /// its first (the sample the source repeated there).
    WrapEndIsLast,
    /// The in-place option of the root-motion block ignored: the root-motion bone
    /// decoded from its track.
    InPlaceIgnored,
    /// The root-motion block's ancestor chain read without its padding to a multiple
    /// of four entries.
    ChainUnpadded,
    /// The in-place transform read right after the chain, as if no end were kept.
    EndNotSkipped,
    /// An additive1 clip's default scale taken as 1, like the other clips'.
    Additive1ScaleOne,
    /// (3.0) Header byte 23 ignored: every constant read as raw `f32`, as in 2.x.
    RawConstantsIgnored,
    /// (3.0) A quantised constant list's values read from the section's start, over
    /// its grids.
    ConstantGridsNotSkipped,
    /// (3.0) A clip range's second integers read as its maximum, not its extent.
    RangeSecondAsMaximum,
    /// (3.0) Key frames left out ignored: every frame read as if stored, local frame
    /// `j` as stored frame `j`.
    HolesIgnored,
    /// (3.0) A left-out sample's weight taken between its neighbouring samples, not
    /// between the stored frames around it (the stored frames found, but `α` kept).
    HoleWeightKept,
    /// (3.0) A quantised rotation component decoded symmetrically about 0, as
    /// `(q − 32767.5) / 32767.5`, rather than as `q · fl(2 / 65535) + (−1)`.
    RotationSymmetric,
    /// (database.md) The resident tiers ignored: a database clip decoded from its own
    /// key frames alone.
    TiersIgnored,
    /// (database.md) A tier's key frame read at its place among every key frame
    /// present (the clip's and the resident tiers'), not among the tier's own.
    TierIndexOverAll,
    /// (database.md) A tier location's byte inside its chunk ignored: the segment's
    /// key frames read from the chunk's start.
    ChunkByteIgnored,
    /// (database.md) The chunk table read as the low tier's chunks first.
    LowChunksFirst,
    /// (database.md) The database reference read at offset 64 whatever the flags, not
    /// after the root-motion block.
    ReferenceBeforeRootMotion,
    /// (database.md) Flag SHARED_POSE ignored: default sub-tracks decoded as the
    /// identity, not as the database's shared pose.
    SharedPoseIgnored,
    /// (database.md) A shared pose's bones read 48 bytes apart (as if each were padded
    /// to 16 bytes), not 40.
    PoseBonesPadded,
    /// (database.md) A shared pose's rotation read `w` first.
    PoseRotationWFirst,
    /// (decoding.md, Interpolation) Constant sub-tracks interpolated like animated
    /// ones, `v + (v − v) · α`, which turns a stored `−0.0` into `+0.0`.
    ConstantsInterpolated,
    /// (decoding.md, Interpolation) At `α = 0` the formulas applied anyway, with the
    /// second key read: `v0 + (v1 − v0) · 0`.
    InterpolateAtZero,
    /// (segments.md) A bit-rate-0 value's bytes taken the other way round: the
    /// 16-bit integer `hi + 256·lo`. (4.0: reading it as `lo·K16 + 256·hi·K16`, which
    /// 3.x's division told apart, gives the same bits for every pair of bytes.)
    ZeroRateBytesSwapped,
    /// (decoding.md, Interpolation) Key 1 negated when the dot product is `≤ 0`, not
    /// `< 0`.
    FlipWhenZero,
    /// (decoding.md, Interpolation) The dot product summed `w` first:
    /// `((w0·w1 + z0·z1) + y0·y1) + x0·x1`.
    DotReversed,
    /// (decoding.md, Interpolation) Key 0 negated instead of key 1.
    FlipKeyZero,
    /// (3.0, tracks.md) Header byte 23 ignored the other way: the constant lists
    /// taken raw or quantised as the reference encoder writes them (list 1 raw, the
    /// others quantised).
    RawConstantsAsEncoder,
    /// (decoding.md, Seeking) Snapping within `2ε` rather than `4ε`.
    SnapTwoEpsilon,
    /// (decoding.md, Seeking) Snapping within `8ε`.
    SnapEightEpsilon,
    /// (decoding.md, Seeking) Snapping within `256ε`.
    SnapWide,
    /// (decoding.md, Seeking) Snapping only strictly within `4ε` (`<`, not `≤`).
    SnapStrict,
    /// (decoding.md, Seeking) A wrapping clip's duration taken as the last interval's
    /// end: keys `N − 1` and 0 with fraction 1 (so *floor* decodes the last stored
    /// sample), not `k0 = k1 = 0` with fraction 0.
    WrapDurationAlphaOne,
    /// (root-motion.md) The in-place rotation used as stored, not normalised.
    InPlaceNotNormalised,
    /// (root-motion.md) The in-place scale ignored: the bone's scale decoded from
    /// its track.
    InPlaceScaleIgnored,
    /// (database.md) A shared pose's rotations normalised before use.
    SharedPoseNormalised,
    /// (segments.md) The frame directory not skipped: the bit rates read at the
    /// segment's data offset.
    FrameDirectoryNotSkipped,
    /// (tracks.md) A rank taken from the directory entry of the bone's own block
    /// (`j = b / 256`) rather than the one before it: counts one block too many.
    RankDirectoryOffByOne,
    /// (segments.md) A quad's bit offset taken from the frame directory entry of its
    /// own block rather than the one before it.
    FrameDirectoryOffByOne,
    /// (segments.md, 4.0) Samples read as 3.x stored them: each sub-track's
    /// components back to back, not a quad's lanes by component.
    SamplesBySubTrack,
    /// (segments.md, 4.0) Segment ranges read as 3.x stored them: each sub-track's
    /// `lo` bytes then its `hi` bytes.
    SegmentRangesBySubTrack,
    /// (tracks.md, 4.0) Clip ranges read as 3.x stored them: each sub-track's
    /// minimums then its extents.
    ClipRangesBySubTrack,
    /// (segments.md, 4.0) Quads formed over all the animated sub-tracks, across the
    /// lists, not within each list.
    QuadsAcrossLists,
    /// (decoding.md, 4.0) Dequantised by dividing by `2^b − 1`, 255 and 65535 (3.x),
    /// not multiplying by the nearest `f32` reciprocals.
    Divided,
    /// (segments.md, 4.0) The frame directory read as 3.x wrote it: an entry for
    /// every 256th sub-track, not every 64th quad.
    FrameDirectoryBySubTrack,
    /// (tracks.md, 4.1) The width table not skipped: the grids and values read from
    /// the section's start.
    WidthTableNotSkipped,
    /// (tracks.md, 4.2) All eight bit sets assumed stored, whatever the header's
    /// STORED_SETS flags.
    StoredSetsIgnored,
    /// (tracks.md, 4.1) The width table read as one byte per list (the width itself).
    WidthTableAsBytes,
    /// (tracks.md, 4.1) A list's packed integers read as one bit stream, components
    /// not starting on a byte (differs in a last quad of fewer than four constants).
    PackedComponentsUnaligned,
    /// (tracks.md, 4.1) A packed integer's bits read most significant first.
    PackedBitsReversed,
    /// (tracks.md, 4.1) Packed constants read constant after constant, each one's
    /// components together, not by quads and components.
    PackedByConstant,
    /// (decoding.md, 4.1) Packed rotation constants put on the 16-bit rotation step
    /// `2 / 65535` whatever their width.
    PackedRotationStepSixteen,
}

impl Misreading {
    /// Every misreading (not [`Misreading::Faithful`]).
    pub const ALL: [Misreading; 59] = [
        Misreading::NoSnapping,
        Misreading::RebuildOrder,
        Misreading::ConstantsNotNormalised,
        Misreading::AdjacentZeroRateBytes,
        Misreading::RawAsQuantised,
        Misreading::DefaultSegmentLength,
        Misreading::RangesInSingleSegment,
        Misreading::NonFiniteThrough,
        Misreading::WrapIgnored,
        Misreading::WrapEndIsLast,
        Misreading::InPlaceIgnored,
        Misreading::ChainUnpadded,
        Misreading::EndNotSkipped,
        Misreading::Additive1ScaleOne,
        Misreading::RawConstantsIgnored,
        Misreading::ConstantGridsNotSkipped,
        Misreading::RangeSecondAsMaximum,
        Misreading::RotationSymmetric,
        Misreading::HolesIgnored,
        Misreading::HoleWeightKept,
        Misreading::TiersIgnored,
        Misreading::TierIndexOverAll,
        Misreading::ChunkByteIgnored,
        Misreading::LowChunksFirst,
        Misreading::ReferenceBeforeRootMotion,
        Misreading::SharedPoseIgnored,
        Misreading::PoseBonesPadded,
        Misreading::PoseRotationWFirst,
        Misreading::ConstantsInterpolated,
        Misreading::InterpolateAtZero,
        Misreading::ZeroRateBytesSwapped,
        Misreading::FlipWhenZero,
        Misreading::DotReversed,
        Misreading::FlipKeyZero,
        Misreading::RawConstantsAsEncoder,
        Misreading::SnapTwoEpsilon,
        Misreading::SnapEightEpsilon,
        Misreading::SnapWide,
        Misreading::SnapStrict,
        Misreading::WrapDurationAlphaOne,
        Misreading::InPlaceNotNormalised,
        Misreading::InPlaceScaleIgnored,
        Misreading::SharedPoseNormalised,
        Misreading::FrameDirectoryNotSkipped,
        Misreading::RankDirectoryOffByOne,
        Misreading::FrameDirectoryOffByOne,
        Misreading::SamplesBySubTrack,
        Misreading::SegmentRangesBySubTrack,
        Misreading::ClipRangesBySubTrack,
        Misreading::QuadsAcrossLists,
        Misreading::Divided,
        Misreading::FrameDirectoryBySubTrack,
        Misreading::WidthTableNotSkipped,
        Misreading::WidthTableAsBytes,
        Misreading::StoredSetsIgnored,
        Misreading::PackedComponentsUnaligned,
        Misreading::PackedBitsReversed,
        Misreading::PackedByConstant,
        Misreading::PackedRotationStepSixteen,
    ];
}

// Bytes past the buffer read as zero: a misreading may look there.
fn u8_at(b: &[u8], at: usize) -> u32 {
    u32::from(b.get(at).copied().unwrap_or(0))
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    (0..4).fold(0, |v, i| v | u8_at(b, at + i) << (8 * i))
}
fn f32_at(b: &[u8], at: usize) -> f32 {
    f32::from_bits(u32_at(b, at))
}

/// `bits` bits from bit `bit` of `b`, least significant first.
fn bits_at(b: &[u8], bit: usize, bits: u32) -> u32 {
    let mut v: u64 = 0;
    // At most 32 (a misreading may read a larger "rate").
    for i in 0..bits.min(32) as usize {
        let at = bit + i;
        v |= u64::from((u8_at(b, at / 8) >> (at % 8)) & 1) << i;
    }
    v as u32
}

/// Seeking (decoding.md): the two keys and the fraction at `time` among `samples`
/// stored samples, clamped or wrapping, as a reader who made `misreading` would.
fn keys(samples: usize, rate: f32, wrap: bool, time: f32, misreading: Misreading) -> (usize, usize, f32) {
    let last = samples - 1;
    let intervals = if wrap { samples } else { samples - 1 };
    let mut p = time * rate;
    p = if p.is_nan() { 0.0 } else { p.clamp(0.0, intervals as f32) };
    let r = p.round();
    let (tolerance, snaps) = match misreading {
        Misreading::NoSnapping => (0.0, false),
        Misreading::SnapTwoEpsilon => (2.0, true),
        Misreading::SnapEightEpsilon => (8.0, true),
        Misreading::SnapWide => (256.0, true),
        _ => (4.0, true),
    };
    let limit = r * (tolerance * f32::EPSILON);
    let near = if misreading == Misreading::SnapStrict { (p - r).abs() < limit } else { (p - r).abs() <= limit };
    if snaps && near {
        p = r;
    }
    let k = p.floor() as usize;
    if k < last {
        (k, k + 1, p - k as f32)
    } else if wrap && k == last {
        (last, 0, p - k as f32)
    } else if wrap && misreading == Misreading::WrapDurationAlphaOne {
        (last, 0, 1.0)
    } else if wrap && misreading != Misreading::WrapEndIsLast {
        (0, 0, 0.0)
    } else {
        (last, last, 0.0)
    }
}

/// A stored sub-track: its list and, for an animated one, its index among the
/// animated sub-tracks; for a constant one, its rank in its list.
#[derive(Clone, Copy)]
enum Stored {
    Default,
    Constant { list: usize, at: usize },
    Animated { list: usize, index: usize },
}

/// Components per list (tracks.md).
const COMPONENTS: [usize; 4] = [3, 4, 3, 3];

/// Decodes every bone of the clip in `b` at `time` with `round`, as a reader who made
/// the `misreading` would: per bone, rotation `x y z w`, translation `x y z`, scale
/// `x y z`.
/// A database a clip is decoded with (database.md): its whole file, and which chunks
/// are resident (`resident(tier, chunk)`, tier 0 medium, 1 low).
pub struct Stream<'a> {
    pub file: &'a [u8],
    pub resident: &'a dyn Fn(usize, usize) -> bool,
}

/// What the tiers hold of one clip segment: per tier, the key frames present (those
/// of tiers whose chunk is not resident cleared) and where they start, as a chunk's
/// bytes and a bit offset in them.
struct TierSegment<'a> {
    held: [u32; 2],
    bytes: [&'a [u8]; 2],
    first_bit: [usize; 2],
}

/// Where the clip `b`'s database reference is: after the header and the root-motion
/// block (database.md, The clip's reference).
fn reference_at(b: &[u8], misreading: Misreading) -> usize {
    let mut at = 64;
    if u32_at(b, 16) & 4 != 0 && misreading != Misreading::ReferenceBeforeRootMotion {
        let (options, chain_len) = (u32_at(b, 68), u32_at(b, 72) as usize);
        at += 16 + 16 * chain_len.div_ceil(4);
        at += if options & 1 != 0 { 32 } else { 0 } + if options & 2 != 0 { 48 } else { 0 };
    }
    at
}

/// The values of the default sub-tracks of the clip `b`'s bones from its database's
/// shared pose (database.md, Shared poses), when it has flag SHARED_POSE.
fn shared_pose(b: &[u8], db: &[u8], misreading: Misreading) -> Option<Vec<[f32; 10]>> {
    if u32_at(b, 16) & 16 == 0 || misreading == Misreading::SharedPoseIgnored {
        return None;
    }
    let pose = u32_at(b, reference_at(b, misreading) + 12) as usize;
    let entry = u32_at(db, 68) as usize + 16 * pose;
    let (values, bones) = (u32_at(db, entry) as usize, u32_at(db, entry + 4) as usize);
    let stride = if misreading == Misreading::PoseBonesPadded { 48 } else { 40 };
    Some(
        (0..bones)
            .map(|bone| {
                let mut v = [0.0f32; 10];
                for (m, x) in v.iter_mut().enumerate() {
                    *x = f32_at(db, values + stride * bone + 4 * m);
                }
                if misreading == Misreading::PoseRotationWFirst {
                    v[..4].rotate_left(1);
                }
                if misreading == Misreading::SharedPoseNormalised {
                    let [x, y, z, w] = [v[0], v[1], v[2], v[3]];
                    let r = 1.0 / (((x * x + y * y) + z * z) + w * w).sqrt();
                    v[..4].copy_from_slice(&[x * r, y * r, z * r, w * r]);
                }
                v
            })
            .collect(),
    )
}

/// The tiers' key frames of segment `s` of the clip `b` in `stream` (database.md,
/// Sampling with resident chunks).
fn tier_segment<'a>(b: &[u8], stream: &Stream<'a>, s: usize, misreading: Misreading) -> TierSegment<'a> {
    let db = stream.file;
    let at = reference_at(b, misreading);
    let clip_index = u32_at(b, at + 8) as usize;
    let shift = u8_at(db, 36);
    let medium_chunks = u32_at(db, 40) as usize;
    let low_chunks = u32_at(db, 44) as usize;
    let (clips, chunks, segments) = (u32_at(db, 48) as usize, u32_at(db, 52) as usize, u32_at(db, 56) as usize);
    let first = u32_at(db, clips + 16 * clip_index + 8) as usize;
    let entry = segments + 16 * (first + s);
    let mut out = TierSegment { held: [0; 2], bytes: [&[]; 2], first_bit: [0; 2] };
    for tier in 0..2 {
        let (held, location) = (u32_at(db, entry + 4 * tier), u32_at(db, entry + 8 + 4 * tier));
        let chunk = (location >> shift) as usize;
        if held == 0 || !(stream.resident)(tier, chunk) {
            continue;
        }
        let slot = match (tier, misreading == Misreading::LowChunksFirst) {
            (0, false) => chunk,
            (_, false) => medium_chunks + chunk,
            (0, true) => low_chunks + chunk,
            (_, true) => chunk,
        };
        let file_offset = u32_at(db, chunks + 16 * slot) as usize;
        let byte =
            if misreading == Misreading::ChunkByteIgnored { 0 } else { (location & ((1 << shift) - 1)) as usize };
        out.held[tier] = held;
        out.bytes[tier] = db.get(file_offset..).unwrap_or(&[]);
        out.first_bit[tier] = 8 * byte;
    }
    out
}

pub fn decode(b: &[u8], time: f32, round: Rounding, misreading: Misreading) -> Vec<[f32; 10]> {
    decode_with(b, None, time, round, misreading)
}

/// [`decode`] of a database clip with `stream`'s resident chunks.
pub fn decode_with(
    b: &[u8],
    stream: Option<&Stream<'_>>,
    time: f32,
    round: Rounding,
    misreading: Misreading,
) -> Vec<[f32; 10]> {
    // A clip with a shared pose takes its default values from it, with or without
    // its tiers resident.
    let pose = stream.and_then(|st| shared_pose(b, st.file, misreading));
    let stream = stream.filter(|_| misreading != Misreading::TiersIgnored);
    let tiers = |s: usize| stream.map(|st| tier_segment(b, st, s, misreading));
    // Header (header.md).
    let segment_len = if misreading == Misreading::DefaultSegmentLength { 16 } else { u8_at(b, 22) as usize };
    let bones = u32_at(b, 24) as usize;
    let samples = u32_at(b, 28) as usize;
    let rate = f32_at(b, 32);
    let segments = u32_at(b, 36) as usize;
    let (tracks, constants, ranges, table) =
        (u32_at(b, 40) as usize, u32_at(b, 44) as usize, u32_at(b, 48) as usize, u32_at(b, 52) as usize);

    // Track descriptions (tracks.md): set s = 4·animated + list. From 4.2 only the sets
    // whose bit `8 + s` of the flags is set are stored, in order; the others are empty.
    let w = bones.div_ceil(8);
    let minor = u8_at(b, 6) | u8_at(b, 7) << 8;
    let stored =
        if minor >= 2 && misreading != Misreading::StoredSetsIgnored { u32_at(b, 16) >> 8 & 0xff } else { 0xff };
    let slot = |s: usize| (0..s).filter(|&t| stored >> t & 1 == 1).count();
    let n_stored = stored.count_ones() as usize;
    let in_set =
        |s: usize, bone: usize| stored >> s & 1 == 1 && (b[tracks + slot(s) * w + bone / 8] >> (bone % 8)) & 1 == 1;
    let count = |s: usize| (0..bones).filter(|&bone| in_set(s, bone)).count();
    let rank = |s: usize, bone: usize| {
        if misreading == Misreading::RankDirectoryOffByOne && bone >= 256 {
            // Entry `j` counts the bits below `256·(j + 1)`: the entry of block
            // `bone / 256` read instead of the one before it.
            let entries = bones.div_ceil(256).saturating_sub(1);
            let j = bone / 256;
            let entry = u8_at(b, tracks + n_stored * w + 2 * (slot(s) * entries + j))
                | u8_at(b, tracks + n_stored * w + 2 * (slot(s) * entries + j) + 1) << 8;
            return entry as usize + (256 * (bone / 256)..bone).filter(|&o| in_set(s, o)).count();
        }
        (0..bone).filter(|&o| in_set(s, o)).count()
    };
    let n: Vec<usize> = (0..8).map(count).collect();
    let animated_count: usize = n[4..].iter().sum();
    let c_of = |i: usize| if i >= n[4] && i < n[4] + n[5] { 4 } else { 3 };
    let p_of = |i: usize| (0..i).map(c_of).sum::<usize>();
    let total_c = p_of(animated_count);
    // Constants (tracks.md): header byte 23 says which lists are raw; the grids of
    // quantised translation and scale lists with constants come first.
    let raw_bits = match misreading {
        Misreading::RawConstantsIgnored => 0x0f,
        Misreading::RawConstantsAsEncoder => 0x02,
        _ => u8_at(b, 23),
    };
    let raw = |list: usize| raw_bits & (1 << list) != 0;
    // 4.1: bit 4 (CONSTANT_WIDTHS) puts a width table first and packs the integers of
    // quantised lists on their width.
    let packed = u8_at(b, 23) & 0x10 != 0;
    // The width table: two bytes, a 4-bit code per list (list `l` in bits
    // `4·(l mod 2)…` of byte `l / 2`), the width twice the code.
    let width: [usize; 4] = std::array::from_fn(|l| {
        if !packed {
            0
        } else if misreading == Misreading::WidthTableAsBytes {
            u8_at(b, constants + l) as usize
        } else {
            2 * ((u8_at(b, constants + l / 2) >> (4 * (l % 2))) & 15) as usize
        }
    });
    let has_grid = |list: usize, set: usize| list >= 2 && n[set] > 0;
    let mut constant_grid = [0usize; 4];
    let mut at = constants + if packed && misreading != Misreading::WidthTableNotSkipped { 2 } else { 0 };
    for list in 0..4 {
        if has_grid(list, list) && !raw(list) {
            constant_grid[list] = at;
            at += 24;
        }
    }
    if misreading == Misreading::ConstantGridsNotSkipped {
        at = constants;
    }
    let mut constant_at = [0usize; 4];
    for list in 0..4 {
        constant_at[list] = at;
        at += if raw(list) {
            n[list] * COMPONENTS[list] * 4
        } else if packed {
            // Full quads: `c` components of `4·w` bits (whole bytes, `w` even); the
            // last quad of `q` lanes: `c` components of `ceil(q·w / 8)` bytes.
            let (c, w) = (COMPONENTS[list], width[list]);
            (n[list] / 4) * c * (4 * w / 8) + c * ((n[list] % 4) * w).div_ceil(8)
        } else {
            n[list] * COMPONENTS[list] * 2
        };
    }
    // Clip ranges: the grids of translation and scale lists with animated sub-tracks,
    // then two `u16` per component.
    let mut range_grid = [0usize; 4];
    let mut range_values = ranges;
    for list in 0..4 {
        if has_grid(list, 4 + list) {
            range_grid[list] = range_values;
            range_values += 24;
        }
    }
    let u16_at = |at: usize| u8_at(b, at) | u8_at(b, at + 1) << 8;
    // A 16-bit integer on a list's grid (rotations: fixed), and an extent.
    let on_grid = |q: u32, list: usize, grid: usize, m: usize| -> f32 {
        if list < 2 {
            if misreading == Misreading::RotationSymmetric {
                (q as f32 - 32767.5) / 32767.5
            } else {
                q as f32 * (2.0f32 / 65535.0) + -1.0
            }
        } else {
            q as f32 * f32_at(b, grid + 12 + 4 * m) + f32_at(b, grid + 4 * m)
        }
    };
    let step =
        |list: usize, grid: usize, m: usize| if list < 2 { 2.0f32 / 65535.0 } else { f32_at(b, grid + 12 + 4 * m) };
    let constant_value = |list: usize, rank: usize, m: usize| -> f32 {
        let c = COMPONENTS[list];
        if raw(list) {
            f32_at(b, constant_at[list] + 4 * (rank * c + m))
        } else if packed {
            // Bit `k` of the list's values is bit `k mod 8` of byte `k / 8`; an
            // integer's least significant bit comes first.
            // By quads of four constants (the last one to four), component by
            // component, lane by lane.
            let w = width[list];
            let quad = rank / 4 * 4;
            let lanes = (n[list] - quad).min(4);
            // Every component of a quad starts on a byte: `ceil(lanes·w / 8)` bytes
            // each (`w / 2` in a full quad), the quads before being full.
            let component_bytes = (lanes * w).div_ceil(8);
            let first = match misreading {
                Misreading::PackedByConstant => 8 * constant_at[list] + (rank * c + m) * w,
                Misreading::PackedComponentsUnaligned => 8 * constant_at[list] + (quad * c + m * lanes + rank % 4) * w,
                _ => 8 * (constant_at[list] + quad / 4 * c * (w / 2) + m * component_bytes) + (rank % 4) * w,
            };
            let bit = |k: usize| (u8_at(b, (first + k) / 8) >> ((first + k) % 8)) & 1;
            let q = (0..w).fold(0u32, |q, k| {
                let place = if misreading == Misreading::PackedBitsReversed { w - 1 - k } else { k };
                q | bit(k) << place
            });
            if list < 2 {
                let step = if misreading == Misreading::PackedRotationStepSixteen {
                    2.0f32 / 65535.0
                } else {
                    2.0f32 / ((1u32 << w) - 1) as f32
                };
                q as f32 * step + -1.0
            } else {
                on_grid(q, list, constant_grid[list], m)
            }
        } else {
            on_grid(u16_at(constant_at[list] + 2 * (rank * c + m)), list, constant_grid[list], m)
        }
    };
    let list_of_animated =
        |i: usize| (0..4).rev().find(|&l| i >= (0..l).map(|x| n[4 + x]).sum::<usize>() && n[4 + l] > 0).unwrap_or(0);
    let stored = |kind_lists: &[usize], bone: usize| -> Stored {
        for &list in kind_lists {
            if in_set(4 + list, bone) {
                let index = (0..list).map(|l| n[4 + l]).sum::<usize>() + rank(4 + list, bone);
                return Stored::Animated { list, index };
            }
            if in_set(list, bone) {
                return Stored::Constant { list, at: rank(list, bone) };
            }
        }
        Stored::Default
    };

    // Seeking (decoding.md), with the looping mode of the header's flags.
    let wrap = u32_at(b, 16) & 2 != 0 && misreading != Misreading::WrapIgnored;
    let (mut k0, k1, f) = keys(samples, rate, wrap, time, misreading);
    let mut alpha = match round {
        Rounding::None => f,
        Rounding::Floor => 0.0,
        Rounding::Ceil => {
            if f > 0.0 {
                1.0
            } else {
                0.0
            }
        }
        Rounding::Nearest => {
            if f >= 0.5 {
                1.0
            } else {
                0.0
            }
        }
    };
    if alpha == 1.0 {
        k0 = k1;
        alpha = 0.0;
    }
    // Key frames left out (decoding.md, Seeking, step 5).
    let mut k1 = k1;
    if misreading != Misreading::HolesIgnored {
        let s = (k0 / segment_len).min(segments - 1);
        let j = k0 - s * segment_len;
        let p = u32_at(b, table + 12 * s + 8) | tiers(s).map_or(0, |t| t.held[0] | t.held[1]);
        let bit = |n: usize| n < 32 && (p >> n) & 1 == 1;
        let after = if j >= 31 { 0 } else { p & !((1u32 << (j + 1)) - 1) };
        let unchanged = (bit(j) && (alpha == 0.0 || bit(j + 1))) || after == 0 || (bit(j) && alpha == 0.0);
        if !unchanged {
            let before = p & (((1u64 << (j + 1)) - 1) as u32);
            let lo = 31 - before.leading_zeros() as usize;
            let hi = after.trailing_zeros() as usize;
            if misreading != Misreading::HoleWeightKept {
                alpha = ((j - lo) as f32 + alpha) / (hi - lo) as f32;
            }
            k0 = s * segment_len + lo;
            k1 = s * segment_len + hi;
        }
    }

    // One component of animated sub-track `i` at sample `k` (segments.md, decoding.md).
    let component = |i: usize, m: usize, k: usize| -> f32 {
        let segment = (k / segment_len).min(segments - 1);
        let local = k - segment * segment_len;
        let entry = table + 12 * segment;
        let (data, frame_bits, present) =
            (u32_at(b, entry) as usize, u32_at(b, entry + 4) as usize, u32_at(b, entry + 8));
        let below = (1u32 << local) - 1;
        let stored_k =
            if misreading == Misreading::HolesIgnored { local } else { (present & below).count_ones() as usize };
        // A key frame the clip does not store: from the resident tier that holds it.
        let tier = tiers(segment).filter(|_| present >> local & 1 == 0);
        let from_tier = tier.as_ref().and_then(|t| (0..2).find(|&x| t.held[x] >> local & 1 == 1).map(|x| (t, x)));
        // The quads (segments.md, 4.0): four sub-tracks at a time within each list.
        let list = list_of_animated(i);
        let list_start = (0..list).map(|l| n[4 + l]).sum::<usize>();
        let (group_start, group_len) =
            if misreading == Misreading::QuadsAcrossLists { (0, animated_count) } else { (list_start, n[4 + list]) };
        let lane = (i - group_start) % 4;
        let first = i - lane;
        let lanes = (group_start + group_len - first).min(4);
        let quads_of = |count: usize| count.div_ceil(4);
        let quad_count: usize = (0..4).map(|l| quads_of(n[4 + l])).sum();
        let quad = (0..list).map(|l| quads_of(n[4 + l])).sum::<usize>() + (i - list_start) / 4;
        let f_entries = if misreading == Misreading::FrameDirectoryBySubTrack {
            animated_count.div_ceil(256).saturating_sub(1)
        } else {
            quad_count.div_ceil(64).saturating_sub(1)
        };
        let rates = if misreading == Misreading::FrameDirectoryNotSkipped { data } else { data + 4 * f_entries };
        // A valid rate is at most 32; a misreading may read any byte.
        let rate = |j: usize| u8_at(b, rates + j).min(32) as usize;
        let bits = rate(i) as u32;
        let ranged = segments > 1 || misreading == Misreading::RangesInSingleSegment;
        let seg_ranges = rates + animated_count;
        let samples_at = data + 4 * f_entries + animated_count + if segments > 1 { 2 * total_c } else { 0 };
        let bits_before = |to: usize| (0..to).map(|j| rate(j) * c_of(j)).sum::<usize>();
        // The bit offset of the quad in a key frame, and of this lane's component `m`.
        let quad_offset = if misreading == Misreading::FrameDirectoryBySubTrack && first >= 256 {
            // 3.x: entry `j` is the offset of sub-track `256·(j + 1)`.
            let block_first = 256 * (first / 256);
            u32_at(b, data + 4 * (first / 256 - 1)) as usize
                + (block_first..first).map(|j| rate(j) * c_of(j)).sum::<usize>()
        } else if misreading == Misreading::FrameDirectoryOffByOne && quad >= 64 {
            // Entry `j` is the offset of quad `64·(j + 1)`: the entry of block
            // `quad / 64` read instead of the one before it.
            let block_quad = 64 * (quad / 64);
            let block_list = (0..4).rev().find(|&l| (0..l).map(|x| quads_of(n[4 + x])).sum::<usize>() <= block_quad);
            let block_list = block_list.unwrap_or(0);
            let block_first = (0..block_list).map(|x| n[4 + x]).sum::<usize>()
                + 4 * (block_quad - (0..block_list).map(|x| quads_of(n[4 + x])).sum::<usize>());
            u32_at(b, data + 4 * (quad / 64)) as usize + (block_first..first).map(|j| rate(j) * c_of(j)).sum::<usize>()
        } else {
            bits_before(first)
        };
        let width: usize = (first..first + lanes).map(rate).sum();
        let place: usize = (first..i).map(rate).sum();
        let offset = if misreading == Misreading::SamplesBySubTrack {
            bits_before(i) + m * bits as usize
        } else {
            quad_offset + m * width + place
        };
        let (b_samples, bit) = match from_tier {
            Some((t, x)) => {
                let all = present | t.held[0] | t.held[1];
                let index = if misreading == Misreading::TierIndexOverAll { all } else { t.held[x] };
                let k = (index & below).count_ones() as usize;
                (t.bytes[x], t.first_bit[x] + k * frame_bits + offset)
            }
            None => (b, 8 * samples_at + stored_k * frame_bits + offset),
        };
        let c = c_of(i);
        let (lo_at, hi_at) = if misreading == Misreading::SegmentRangesBySubTrack {
            (seg_ranges + 2 * p_of(i) + m, seg_ranges + 2 * p_of(i) + c + m)
        } else {
            let quad_at = seg_ranges + 2 * p_of(first);
            (quad_at + m * lanes + lane, quad_at + (c + m) * lanes + lane)
        };
        let (min_at, extent_at) = if misreading == Misreading::ClipRangesBySubTrack {
            (range_values + 4 * p_of(i) + 2 * m, range_values + 4 * p_of(i) + 2 * c + 2 * m)
        } else {
            let quad_at = range_values + 4 * p_of(first);
            (quad_at + 2 * (m * lanes + lane), quad_at + 2 * ((c + m) * lanes + lane))
        };
        let q_min = u16_at(min_at);
        let q_extent = u16_at(extent_at);
        let min = on_grid(q_min, list, range_grid[list], m);
        let extent = if misreading == Misreading::RangeSecondAsMaximum {
            on_grid(q_extent, list, range_grid[list], m) - min
        } else {
            q_extent as f32 * step(list, range_grid[list], m)
        };
        if bits == 32 && misreading != Misreading::RawAsQuantised {
            return f32::from_bits(bits_at(b_samples, bit, 32));
        }
        // decoding.md (4.0): multiplications by the nearest `f32` reciprocals.
        let divided = misreading == Misreading::Divided;
        let k8 = 1.0f32 / 255.0;
        let k16 = 1.0f32 / 65535.0;
        let normalized = if bits == 0 {
            if ranged {
                let (lo, hi) = if misreading == Misreading::AdjacentZeroRateBytes {
                    (u8_at(b, lo_at), u8_at(b, lo_at + 1))
                } else {
                    (u8_at(b, lo_at), u8_at(b, hi_at))
                };
                if misreading == Misreading::ZeroRateBytesSwapped {
                    (hi + 256 * lo) as f32 * k16
                } else if divided {
                    (lo + 256 * hi) as f32 / 65535.0
                } else {
                    (lo + 256 * hi) as f32 * k16
                }
            } else {
                0.0
            }
        } else {
            let q = bits_at(b_samples, bit, bits);
            let top = ((1u64 << bits) - 1) as f32;
            let mut n = if divided { q as f32 / top } else { q as f32 * (1.0 / top) };
            if ranged {
                let (lo, hi) = (u8_at(b, lo_at) as f32, u8_at(b, hi_at) as f32);
                n = if divided { n * (hi / 255.0) + lo / 255.0 } else { n * (hi * k8) + lo * k8 };
            }
            n
        };
        normalized * extent + min
    };
    let key = |i: usize, k: usize| -> [f32; 4] {
        let mut v = [0.0; 4];
        for (m, x) in v.iter_mut().enumerate().take(c_of(i)) {
            *x = component(i, m, k);
        }
        v
    };
    let rebuild = |q: [f32; 4]| -> [f32; 4] {
        let [x, y, z, _] = q;
        let t = if misreading == Misreading::RebuildOrder {
            1.0 - (x * x + (y * y + z * z))
        } else {
            1.0 - ((x * x + y * y) + z * z)
        };
        [x, y, z, if t > 0.0 { t.sqrt() } else { 0.0 }]
    };
    let normalise = |q: [f32; 4]| -> [f32; 4] {
        let [x, y, z, w] = q;
        let d = ((x * x + y * y) + z * z) + w * w;
        if d > 0.0 && d < f32::INFINITY {
            let r = 1.0 / d.sqrt();
            [x * r, y * r, z * r, w * r]
        } else if misreading == Misreading::NonFiniteThrough {
            q
        } else {
            [0.0, 0.0, 0.0, 1.0]
        }
    };

    // The root-motion block (root-motion.md): the in-place bone and its transform.
    let in_place = (u32_at(b, 16) & 4 != 0 && misreading != Misreading::InPlaceIgnored).then(|| {
        let (bone, options, chain_len) = (u32_at(b, 64) as usize, u32_at(b, 68), u32_at(b, 72) as usize);
        let chain = if misreading == Misreading::ChainUnpadded { 4 * chain_len } else { 16 * chain_len.div_ceil(4) };
        let end = if options & 1 != 0 && misreading != Misreading::EndNotSkipped { 32 } else { 0 };
        let at = 64 + 16 + chain + end;
        (options & 2 != 0).then(|| {
            let stored = [0, 1, 2, 3].map(|m| f32_at(b, at + 4 * m));
            let q = if misreading == Misreading::InPlaceNotNormalised { stored } else { normalise(stored) };
            let mut out = [0.0; 10];
            out[..4].copy_from_slice(&q);
            for m in 0..6 {
                out[4 + m] = f32_at(b, at + 16 + 4 * m);
            }
            (bone, out)
        })
    });
    let in_place = in_place.flatten();

    (0..bones)
        .map(|bone| {
            let in_place_scale = misreading == Misreading::InPlaceScaleIgnored;
            if let Some((_, t)) = in_place.filter(|(b, _)| *b == bone && !in_place_scale) {
                return t;
            }
            // Header byte 21: additive mode 3 (additive1) has a default scale of 0.
            let default_scale =
                if u8_at(b, 21) == 3 && misreading != Misreading::Additive1ScaleOne { 0.0 } else { 1.0 };
            let mut out = match &pose {
                Some(pose) => pose[bone],
                None => [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, default_scale, default_scale, default_scale],
            };
            // Rotation.
            let q = match stored(&[0, 1], bone) {
                Stored::Default => [out[0], out[1], out[2], out[3]],
                Stored::Constant { list, at: rank } => {
                    let mut q = [0.0; 4];
                    for (m, x) in q.iter_mut().enumerate().take(COMPONENTS[list]) {
                        *x = constant_value(list, rank, m);
                    }
                    let q = if list == 0 { rebuild(q) } else { q };
                    if misreading == Misreading::ConstantsNotNormalised {
                        q
                    } else if misreading == Misreading::ConstantsInterpolated && alpha != 0.0 {
                        normalise(q.map(|v| lerp_with_itself(v, alpha)))
                    } else {
                        normalise(q)
                    }
                }
                Stored::Animated { list, index } => {
                    let finish = |q: [f32; 4]| if list == 0 { rebuild(q) } else { q };
                    let mut q0 = finish(key(index, k0));
                    if alpha == 0.0 && misreading != Misreading::InterpolateAtZero {
                        normalise(q0)
                    } else {
                        let mut q1 = finish(key(index, k1));
                        let dot = if misreading == Misreading::DotReversed {
                            ((q0[3] * q1[3] + q0[2] * q1[2]) + q0[1] * q1[1]) + q0[0] * q1[0]
                        } else {
                            ((q0[0] * q1[0] + q0[1] * q1[1]) + q0[2] * q1[2]) + q0[3] * q1[3]
                        };
                        let flip = if misreading == Misreading::FlipWhenZero { dot <= 0.0 } else { dot < 0.0 };
                        if flip && misreading == Misreading::FlipKeyZero {
                            q0 = q0.map(|v| -v);
                        } else if flip {
                            q1 = q1.map(|v| -v);
                        }
                        normalise([0, 1, 2, 3].map(|m| q0[m] + (q1[m] - q0[m]) * alpha))
                    }
                }
            };
            out[..4].copy_from_slice(&q);
            // Translation and scale.
            for (list, slot) in [(2usize, 4usize), (3, 7)] {
                let v = match stored(&[list], bone) {
                    Stored::Default => continue,
                    Stored::Constant { at: rank, .. } => [0, 1, 2].map(|m| {
                        let v = constant_value(list, rank, m);
                        if misreading == Misreading::ConstantsInterpolated && alpha != 0.0 {
                            lerp_with_itself(v, alpha)
                        } else {
                            v
                        }
                    }),
                    Stored::Animated { index, .. } => {
                        let always = misreading == Misreading::InterpolateAtZero;
                        let (v0, v1) =
                            (key(index, k0), if alpha == 0.0 && !always { [0.0; 4] } else { key(index, k1) });
                        [0, 1, 2].map(|m| if alpha == 0.0 && !always { v0[m] } else { v0[m] + (v1[m] - v0[m]) * alpha })
                    }
                };
                out[slot..slot + 3].copy_from_slice(&v);
            }
            if let Some((_, t)) = in_place.filter(|(b, _)| *b == bone) {
                // The in-place rotation and translation, the scale from the track.
                out[..7].copy_from_slice(&t[..7]);
            }
            out
        })
        .collect()
}

/// `v` interpolated with itself, `v + (v − v) · α`, as a reader who interpolates
/// constants computes it (`+0.0` for `−0.0`).
fn lerp_with_itself(v: f32, alpha: f32) -> f32 {
    let same = v;
    v + (same - v) * alpha
}

/// A way to misread `format-spec/scalar-tracks.md`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarMisreading {
    /// None: the spec as written.
    Faithful,
    /// Output indices ignored: track `t` written to slot `t`.
    RemapIgnored,
    /// The output indices read right after the two bit sets, without their padding to
    /// a multiple of four bytes.
    SetsUnpadded,
    /// Segment range bytes read as for a four-component sub-track whatever `c`.
    RangesOfFour,
    /// (4.0) Samples read track by track (3.x), not by quad and component.
    SamplesByTrack,
}

impl ScalarMisreading {
    /// Every misreading (not [`ScalarMisreading::Faithful`]).
    pub const ALL: [ScalarMisreading; 4] = [
        ScalarMisreading::RemapIgnored,
        ScalarMisreading::SetsUnpadded,
        ScalarMisreading::RangesOfFour,
        ScalarMisreading::SamplesByTrack,
    ];
}

/// Decodes the scalar track list in `b` at `time` (rounding none) as a reader who made
/// `misreading` would: the output slots, `output_count · c` floats (slots of no track
/// NaN).
pub fn decode_scalar(b: &[u8], time: f32, misreading: ScalarMisreading) -> Vec<f32> {
    let segment_len = u8_at(b, 22) as usize;
    let tracks = u32_at(b, 24) as usize;
    let samples = u32_at(b, 28) as usize;
    let rate = f32_at(b, 32);
    let segments = u32_at(b, 36) as usize;
    let (desc, constants, ranges, table) =
        (u32_at(b, 40) as usize, u32_at(b, 44) as usize, u32_at(b, 48) as usize, u32_at(b, 52) as usize);
    let c = [0, 1, 2, 3, 4, 4][u8_at(b, desc) as usize];
    let remap = u8_at(b, desc + 1) & 1 == 1;
    let outputs = u32_at(b, desc + 4) as usize;
    let w = tracks.div_ceil(8);
    let in_set = |s: usize, t: usize| (u8_at(b, desc + 8 + s * w + t / 8) >> (t % 8)) & 1 == 1;
    let sets = if misreading == ScalarMisreading::SetsUnpadded { 2 * w } else { 4 * (2 * w).div_ceil(4) };
    let output = |t: usize| {
        if remap && misreading != ScalarMisreading::RemapIgnored {
            u32_at(b, desc + 8 + sets + 4 * t) as usize
        } else {
            t
        }
    };
    let animated_count = (0..tracks).filter(|&t| in_set(1, t)).count();

    // Seeking (decoding.md).
    let (k0, k1, f) = keys(samples, rate, u32_at(b, 16) & 2 != 0, time, Misreading::Faithful);

    // One component of animated track number `a` at key `key`.
    let component = |a: usize, m: usize, key: usize| -> f32 {
        let segment = (key / segment_len).min(segments - 1);
        let local = key - segment * segment_len;
        let entry = table + 12 * segment;
        let (data, frame_bits) = (u32_at(b, entry) as usize, u32_at(b, entry + 4) as usize);
        // One list of quads (segments.md, 4.0).
        let f_entries = animated_count.div_ceil(4).div_ceil(64).saturating_sub(1);
        let rates = data + 4 * f_entries;
        let rate = |j: usize| u8_at(b, rates + j) as usize;
        let bits = u8_at(b, rates + a);
        let ranged = segments > 1;
        let seg_ranges = rates + animated_count;
        let samples_at = rates + animated_count + if ranged { 2 * c * animated_count } else { 0 };
        let (lane, first) = (a % 4, a - a % 4);
        let lanes = (animated_count - first).min(4);
        let offset = if misreading == ScalarMisreading::SamplesByTrack {
            (0..a).map(|j| rate(j) * c).sum::<usize>() + m * bits as usize
        } else {
            let width: usize = (first..first + lanes).map(rate).sum();
            (0..first).map(|j| rate(j) * c).sum::<usize>() + m * width + (first..a).map(rate).sum::<usize>()
        };
        let bit = 8 * samples_at + local * frame_bits + offset;
        // By quad: each component's `lo` bytes of the lanes, then their `hi` bytes.
        let group = if misreading == ScalarMisreading::RangesOfFour { 4 } else { c };
        let quad_at = seg_ranges + 2 * group * first;
        let lo_at = quad_at + m * lanes + lane;
        let hi_at = quad_at + (group + m) * lanes + lane;
        let min = f32_at(b, ranges + 8 * c * a + 4 * m);
        let extent = f32_at(b, ranges + 8 * c * a + 4 * c + 4 * m);
        if bits == 32 {
            return f32::from_bits(bits_at(b, bit, 32));
        }
        let n = if bits == 0 {
            if ranged {
                (u8_at(b, lo_at) + 256 * u8_at(b, hi_at)) as f32 * (1.0f32 / 65535.0)
            } else {
                0.0
            }
        } else {
            let q = bits_at(b, bit, bits);
            let mut n = q as f32 * (1.0 / ((1u64 << bits) - 1) as f32);
            if ranged {
                let k8 = 1.0f32 / 255.0;
                n = n * (u8_at(b, hi_at) as f32 * k8) + u8_at(b, lo_at) as f32 * k8;
            }
            n
        };
        n * extent + min
    };

    let mut out = vec![f32::NAN; outputs * c];
    let (mut constant, mut animated) = (0, 0);
    for t in 0..tracks {
        let value: Vec<f32> = if in_set(0, t) {
            let v = (0..c).map(|m| f32_at(b, constants + 4 * (constant * c + m))).collect();
            constant += 1;
            v
        } else if in_set(1, t) {
            let v = (0..c)
                .map(|m| {
                    let v0 = component(animated, m, k0);
                    if f == 0.0 {
                        v0
                    } else {
                        v0 + (component(animated, m, k1) - v0) * f
                    }
                })
                .collect();
            animated += 1;
            v
        } else {
            vec![0.0; c]
        };
        let o = output(t);
        for (m, v) in value.iter().enumerate() {
            if let Some(slot) = out.get_mut(o * c + m) {
                *slot = *v;
            }
        }
    }
    out
}

/// A way to misread the metadata sections (metadata.md, scalar-tracks.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetadataMisreading {
    /// None: the spec as written.
    Faithful,
    /// (3.2) A record's payload size read right after its tag, over the reserved field.
    RecordSizeAfterTag,
    /// (3.2) A root placement's matrix read column by column.
    PlacementByColumns,
    /// (3.2) The joint-order record ignored: bone `i` taken as joint `i`.
    JointOrderIgnored,
    /// (3.2) A scalar list's stored track `k` taken as the source's track `k`, the
    /// tracks without an output counted.
    ScalarStoredBySource,
    /// (3.2) A scalar track record read precision first, then output index.
    ScalarPrecisionFirst,
    /// A bone record's bind rotation read `w` first.
    BindRotationWFirst,
}

impl MetadataMisreading {
    /// Every misreading (not [`MetadataMisreading::Faithful`]).
    pub const ALL: [MetadataMisreading; 6] = [
        MetadataMisreading::RecordSizeAfterTag,
        MetadataMisreading::PlacementByColumns,
        MetadataMisreading::JointOrderIgnored,
        MetadataMisreading::ScalarStoredBySource,
        MetadataMisreading::ScalarPrecisionFirst,
        MetadataMisreading::BindRotationWFirst,
    ];
}

/// The metadata section of the clip or scalar list in `b`, as text (the golden
/// `NAME.metadata.txt` form), read as a reader who made `misreading` would; empty
/// without one. Transform clips: `clip NAME precision BITS`, then per bone `bone I
/// parent P shell BITS rotation … translation … scale … name NAME joint J`, then per
/// placement `placement bone B: M₀₀ … M₂₃` (`f32` bits). Scalar lists: `list NAME
/// tracks N`, then per source track `track K output O precision BITS name NAME stored
/// T` (`none` for no output).
pub fn metadata(b: &[u8], misreading: MetadataMisreading) -> String {
    use std::fmt::Write as _;
    let (offset, size) = (u32_at(b, 56) as usize, u32_at(b, 60) as usize);
    if u32_at(b, 16) & 1 == 0 {
        return String::new();
    }
    let section = b.get(offset..offset + size).unwrap_or(&[]);
    let u16_at = |at: usize| u8_at(section, at) | u8_at(section, at + 1) << 8;
    let text = |at: usize, len: usize| String::from_utf8_lossy(section.get(at..at + len).unwrap_or(&[])).into_owned();
    let bits = |at: usize| format!("{:08x}", u32_at(section, at));
    let mut out = String::new();
    if u8_at(b, 20) == 1 {
        // Scalar list (scalar-tracks.md, Metadata section).
        let tracks = u32_at(section, 0) as usize;
        let name_len = u32_at(section, 4) as usize;
        let _ = writeln!(out, "list {:?} tracks {tracks}", text(8, name_len));
        let mut at = 8 + name_len;
        let mut stored = 0;
        for k in 0..tracks.min(1 << 16) {
            let (output, precision) = if misreading == MetadataMisreading::ScalarPrecisionFirst {
                (u32_at(section, at + 4), bits(at))
            } else {
                (u32_at(section, at), bits(at + 4))
            };
            let len = u16_at(at + 8) as usize;
            let name = text(at + 10, len);
            let place = if misreading == MetadataMisreading::ScalarStoredBySource {
                Some(k)
            } else if output != u32::MAX {
                stored += 1;
                Some(stored - 1)
            } else {
                None
            };
            let shown = |v: Option<usize>| v.map_or("none".to_owned(), |v| v.to_string());
            let output = (output != u32::MAX).then_some(output as usize);
            let _ = writeln!(
                out,
                "track {k} output {} precision {precision} name {name:?} stored {}",
                shown(output),
                shown(place)
            );
            at += 10 + len;
        }
        return out;
    }
    // Transform clip (metadata.md).
    let bones = u32_at(section, 0) as usize;
    let name_len = u32_at(section, 8) as usize;
    let _ = writeln!(out, "clip {:?} precision {}", text(12, name_len), bits(4));
    let mut at = 12 + name_len;
    let mut records = Vec::new();
    for _ in 0..bones.min(1 << 16) {
        let len = u16_at(at + 48) as usize;
        records.push((at, text(at + 50, len)));
        at += 50 + len;
    }
    // Records (3.2, every 4.x): until fewer than 16 zero bytes are left.
    let (mut joints, mut placements) = (None, Vec::new());
    while at < section.len() && !(section.len() - at < 16 && section[at..].iter().all(|&x| x == 0)) {
        let tag = u16_at(at);
        let size = if misreading == MetadataMisreading::RecordSizeAfterTag {
            u32_at(section, at + 2)
        } else {
            u32_at(section, at + 4)
        } as usize;
        let payload = at + 8;
        match tag {
            1 if misreading != MetadataMisreading::JointOrderIgnored => {
                joints = Some(payload);
            }
            2 => {
                let count = u32_at(section, payload) as usize;
                for e in 0..count.min(1 << 16) {
                    let entry = payload + 4 + 52 * e;
                    let matrix: Vec<String> = (0..12)
                        .map(|k| {
                            let k = if misreading == MetadataMisreading::PlacementByColumns {
                                (k % 3) * 4 + k / 3
                            } else {
                                k
                            };
                            bits(entry + 4 + 4 * k)
                        })
                        .collect();
                    placements.push(format!("placement bone {}: {}", u32_at(section, entry), matrix.join(" ")));
                }
            }
            _ => {}
        }
        if size == 0 && tag == 0 {
            break;
        }
        at = payload + size;
    }
    for (i, (record, name)) in records.iter().enumerate() {
        let parent = u32_at(section, *record);
        let parent = if parent == u32::MAX { "none".to_owned() } else { parent.to_string() };
        let mut rotation: Vec<String> = (0..4).map(|m| bits(record + 8 + 4 * m)).collect();
        if misreading == MetadataMisreading::BindRotationWFirst {
            rotation.rotate_left(1);
        }
        let translation: Vec<String> = (0..3).map(|m| bits(record + 24 + 4 * m)).collect();
        let scale: Vec<String> = (0..3).map(|m| bits(record + 36 + 4 * m)).collect();
        let joint = joints.map_or(i as u32, |at| u32_at(section, at + 4 * i));
        let _ = writeln!(
            out,
            "bone {i} parent {parent} shell {} rotation {} translation {} scale {} name {name:?} joint {joint}",
            bits(record + 4),
            rotation.join(" "),
            translation.join(" "),
            scale.join(" ")
        );
    }
    for p in placements {
        let _ = writeln!(out, "{p}");
    }
    out
}
