//! The bit-rate search of one segment, driven by object-space error.
//!
//! In a clip without an additive base, animated rotations are compensated
//! ([`super::compensation`]): each is quantised from the value that keeps its bone's
//! source orientation under its ancestors' decoded rotations, so an ancestor's
//! rounding only moves its children's origins. The steps count on it:
//!
//! 1. Each animated sub-track gets the lowest bit rate at which it alone (everything
//!    else exact) keeps its bone and all descendants within the target. For a
//!    compensated rotation, a child whose rotation is animated keeps its orientation,
//!    so only its origin moves, with its whole subtree.
//! 2. With every sub-track at its rate (rotations then quantised again, compensated,
//!    parents first), bones are visited in index order; while a bone's error is above
//!    the target, one sub-track on its chain to the root is raised one step: the one
//!    that buys the most error per added bit. Raising a rotation quantises the
//!    rotations below it again.
//! 3. Rates the repair left higher than needed come down: the repair looks at one bone
//!    at a time, so a raise made for one bone can be made unnecessary by later raises
//!    for others (a parent raised for a deep bone does the work of a child raised
//!    earlier), and step 1 cannot see what compensation leaves to the rotations
//!    below. Sub-tracks are visited from the most bits per key frame down, each
//!    lowered one rung at a time while every bone of its subtree stays within the
//!    target (a rotation's descendants quantised again first); passes repeat until
//!    one lowers nothing.
//!
//! The bound never rests on the model of step 1 or the estimates of step 2: every
//! rate is kept only where the measured error of the decoded values holds.
//!
//! Segments are independent: a sample only reads its own segment's data.

use ossa_decoder::format::{SubTrackClass, SubTrackKind};

use super::compensation::{self, Chains};
use super::reference::Reference;
use super::sub_track::{encode_samples, span, stored_form, SegmentCode, SubTrack, LADDER, MAX_SEGMENT_SAMPLES};
use super::values::{Lane4, LocalValues};
use crate::error_metric::Affine;

/// Bytes the search holds per bone and segment sample, at most: local values, their
/// affine form, the object-space transform, and the repair's candidates (up to three
/// sub-tracks per bone, each a code of four `u32`, its decoded value and its bone's
/// affine form).
pub const BYTES_PER_SEGMENT_SAMPLE: u64 = (size_of::<LocalValues>()
    + 2 * size_of::<Affine>()
    + 3 * (size_of::<[u32; 4]>() + size_of::<Lane4>() + size_of::<Affine>()))
    as u64;

/// What [`Segment::save`] keeps of the bones a trial changes, in the order saved.
#[derive(Default)]
struct Saved {
    bones: Vec<usize>,
    /// Rung and code of each bone's rotation.
    codes: Vec<(usize, Option<SegmentCode>)>,
    /// Decoded local values and their affine forms, `count` per bone.
    local: Vec<LocalValues>,
    affine: Vec<Affine>,
    /// Decoded chains, `count` per bone (empty without compensation).
    chains: Vec<glam::DQuat>,
}

impl Saved {
    /// Empties it, keeping its capacity for the next trial.
    fn clear(&mut self) {
        self.bones.clear();
        self.codes.clear();
        self.local.clear();
        self.affine.clear();
        self.chains.clear();
    }
}

/// The result of one segment's search.
pub struct SegmentResult {
    /// Code of each sub-track (storage order); `Some` for animated ones.
    pub codes: Vec<Option<SegmentCode>>,
    /// A bone still above the target although every sub-track on its chain is raw:
    /// a constant or default sub-track on that chain must be promoted.
    pub stuck_bone: Option<usize>,
    /// The key frames stored (bit `i`: segment sample `i`).
    pub kept: u32,
}

/// A sub-track's code one rung above its own, tried by the repair, with its bone's
/// local affine form at every segment sample under it (the bone's other sub-tracks as
/// they were at `version`): bones share their ancestors' sub-tracks, and a bone that
/// needs several raises tries the same candidates again.
struct Candidate {
    track: usize,
    rung: usize,
    code: SegmentCode,
    /// [`Segment::versions`] of the bone when `values` and `affine` were made; they
    /// are empty until first needed.
    version: u32,
    /// [`Segment::target_versions`] of the bone when `code` was made: a compensated
    /// rotation's code follows its ancestors' decoded rotations.
    target_version: u32,
    /// The sub-track's decoded value at every segment sample.
    values: Vec<Lane4>,
    affine: Vec<Affine>,
}

struct Segment<'a> {
    reference: &'a Reference,
    tracks: &'a [SubTrack],
    start: usize,
    count: usize,
    ranged: bool,
    target: f64,
    /// The key frames stored.
    kept: u32,
    /// The samples held to the target (all but those `--strip-frames` removed).
    bounded: u32,
    rungs: Vec<usize>,
    codes: Vec<Option<SegmentCode>>,
    local: Vec<LocalValues>,
    local_affine: Vec<Affine>,
    object: Vec<Affine>,
    /// Bones whose `object` transforms are out of date (at every sample): a raised
    /// sub-track marks its bone's subtree, and a bone's chain is brought up to date
    /// only when the repair reaches it, so that raising a high bone several times
    /// does not recompute its whole subtree each time. A stale bone's descendants
    /// are all stale.
    stale: Vec<bool>,
    /// Scratch for [`Segment::refresh_chain`].
    chain: Vec<usize>,
    /// Per bone, how many times one of its sub-tracks changed code: a candidate's
    /// affine forms hold while it stays.
    versions: Vec<u32>,
    /// The source and decoded rotation chains compensation reads: `Some` while
    /// animated rotations are quantised from compensated values
    /// ([`super::compensation`]), from the first full pose on where it applies.
    chains: Option<Chains>,
    /// Per bone, how many times its compensated values changed (an ancestor's
    /// rotation changed code): a candidate's code holds while it stays.
    target_versions: Vec<u32>,
    /// Per sub-track, the lowest rung step 3 may lower it to: an uncompensated
    /// rotation ([`Reference::uncompensated`]) keeps the rung at which its error
    /// alone holds everything it carries within the target, whatever the other
    /// sub-tracks' errors leave; every other sub-track 0.
    floor: Vec<usize>,
    /// What step 3's passes remember between them.
    lower_memo: LowerMemo,
    /// Step 3's record of what a trial changed, kept between trials for its capacity.
    saved: Saved,
    /// Per bone, whether its rotation is still to be quantised again under its
    /// ancestors' decoded rotations (compensation): step 2 raises a rotation without
    /// quantising its whole subtree again at once, since the bones below are often
    /// raised again before the repair reaches them. A bone's chain is brought up to
    /// date when the repair reads it ([`Segment::recode_chain`]), the rest when the
    /// repair ends. An outdated bone's descendants are all outdated.
    outdated: Vec<bool>,
    /// Per bone, whether the repair found it within the target on its current
    /// object-space transforms: cleared whenever they go stale or its rotation
    /// outdated, so that the repair's passes after the first check again only the
    /// bones something changed above (a check of the others would find the same).
    verified: Vec<bool>,
}

/// Step 3's memory across passes: which trials failed, and what changed since.
struct LowerMemo {
    /// Counts the sub-tracks lowered.
    epoch: u64,
    /// Per bone, the epoch at which it or an ancestor was last lowered.
    changed_at: Vec<u64>,
    /// Per sub-track, the epoch at which its last trial failed.
    failed_at: Vec<Option<u64>>,
}

/// How far a segment's search goes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Depth {
    /// Every step: the rates the clip is written with.
    Full,
    /// Steps 1 and 2 only (no lowering): rates within the target, a little above the
    /// fewest bits, for comparing choices made before the search at a third less time.
    Estimate,
}

/// Where a segment's search stands after step 1 or step 2, to go on from there
/// ([`optimize_segment`]) instead of starting again: step 1 does not read the
/// constant and default sub-tracks, so choices that change only those share it, and
/// an estimate's steps are the full search's first two.
#[derive(Clone, Debug)]
pub struct Checkpoint {
    /// What the search was asked: it goes on only for the same question.
    target: f64,
    kept: u32,
    bounded: u32,
    /// Step 1's rungs (step 3 keeps a held rotation's).
    initial: Vec<usize>,
    /// Each sub-track's rung and code where the search stands.
    rungs: Vec<usize>,
    codes: Vec<Option<SegmentCode>>,
    /// Whether step 2 is done.
    repaired: bool,
}

/// What a segment's search is asked: the bit rates of samples `start..start +
/// count` of `tracks`, of which those of `kept` are stored (the others
/// interpolated) and those of `bounded` held to `target`.
#[derive(Clone, Copy)]
pub struct Question<'a> {
    pub reference: &'a Reference,
    pub tracks: &'a [SubTrack],
    pub start: usize,
    pub count: usize,
    /// Whether the clip has segment ranges (more than one segment).
    pub ranged: bool,
    pub target: f64,
    pub kept: u32,
    pub bounded: u32,
}

impl Checkpoint {
    /// Whether step 2 is done: the search going on from here has only step 3 left.
    pub fn repaired(&self) -> bool {
        self.repaired
    }
}

/// Step 1 of the bit-rate search, to go on from with one set of animated sub-tracks
/// and several of constants ([`optimize_segment`]).
pub fn first_rates(question: &Question) -> Checkpoint {
    let mut seg = Segment::new(question);
    seg.initial_rates();
    let Question { target, kept, bounded, .. } = *question;
    Checkpoint {
        target,
        kept,
        bounded,
        initial: seg.rungs.clone(),
        rungs: seg.rungs,
        codes: seg.codes,
        repaired: false,
    }
}

/// Searches the bit rates `question` asks for, to `depth`. With `from`, a checkpoint
/// of the same question on the same animated sub-tracks (and, once repaired, the same
/// constants), the search goes on from it; a checkpoint of another target or other
/// key frames is not used.
pub fn optimize_segment(
    question: &Question,
    depth: Depth,
    from: Option<&Checkpoint>,
) -> (SegmentResult, Option<Checkpoint>) {
    let Question { reference, tracks, start, count, target, kept, bounded, .. } = *question;
    let bones = reference.bone_count;
    let mut seg = Segment::new(question);
    let from = from.filter(|c| c.target == target && c.kept == kept && c.bounded == bounded);
    let (initial, repaired) = match from {
        Some(c) => {
            seg.rungs.clone_from(&c.rungs);
            seg.codes.clone_from(&c.codes);
            (c.initial.clone(), c.repaired)
        }
        None => {
            seg.initial_rates();
            (seg.rungs.clone(), false)
        }
    };
    seg.floor = (0..tracks.len()).map(|t| if seg.held(t) { initial[t] } else { 0 }).collect();
    let compensating = compensation::applies(reference);
    if compensating {
        // Every rotation below a root is quantised again from compensated values, as
        // the repair reaches its bone.
        for b in (0..bones).filter(|&b| reference.parent(b).is_some()) {
            seg.outdated[b] = true;
        }
    }
    seg.build_pose();
    if compensating {
        seg.chains = Some(Chains::new(reference, start, count, &seg.local));
    }
    // A repaired checkpoint holds every bone within the target: the repair only
    // checks it. A repair that got stuck leaves none (the search is asked again
    // after a promotion).
    let stuck_bone = seg.repair();
    debug_assert!(!repaired || stuck_bone.is_none());
    let checkpoint = stuck_bone.is_none().then(|| Checkpoint {
        target,
        kept,
        bounded,
        initial: initial.clone(),
        rungs: seg.rungs.clone(),
        codes: seg.codes.clone(),
        repaired: true,
    });
    // Step 3 undoes what the repair did too much. Without compensation and with no
    // raise, there is nothing to undo (every sub-track is at the lowest rung at which
    // it alone is within the target). Passes after the first lower 0.1-0.2 % more
    // bytes on the shared clips and their variants.
    if depth == Depth::Full && stuck_bone.is_none() && (seg.compensating() || seg.rungs != initial) {
        loop {
            let before = seg.rungs.clone();
            seg.lower();
            if seg.rungs == before || !seg.compensating() {
                break;
            }
        }
    }
    (SegmentResult { codes: seg.codes, stuck_bone, kept }, checkpoint)
}

impl<'a> Segment<'a> {
    fn new(question: &Question<'a>) -> Segment<'a> {
        let Question { reference, tracks, start, count, ranged, target, kept, bounded } = *question;
        let bones = reference.bone_count;
        Segment {
            reference,
            tracks,
            start,
            count,
            ranged,
            target,
            kept,
            bounded,
            rungs: vec![0; tracks.len()],
            codes: vec![None; tracks.len()],
            local: Vec::with_capacity(count * bones),
            local_affine: Vec::new(),
            object: Vec::new(),
            stale: vec![false; bones],
            chain: Vec::new(),
            versions: vec![0; bones],
            chains: None,
            target_versions: vec![0; bones],
            floor: Vec::new(),
            lower_memo: LowerMemo { epoch: 0, changed_at: vec![0; bones], failed_at: vec![None; tracks.len()] },
            saved: Saved::default(),
            outdated: vec![false; bones],
            verified: vec![false; bones],
        }
    }
}

impl Segment<'_> {
    fn lossy_value(&self, t: usize, i: usize) -> Lane4 {
        let track = &self.tracks[t];
        match track.class {
            SubTrackClass::Default => self.reference.default_of(track.bone, track.kind),
            SubTrackClass::Constant => track.constant_local(),
            SubTrackClass::Animated => match &self.codes[t] {
                Some(code) => track.decode(code, i, self.ranged),
                None => self.reference.local[self.reference.at(self.start + i, track.bone)].parts[track.part()],
            },
        }
    }

    /// Whether animated rotations are quantised from compensated values.
    fn compensating(&self) -> bool {
        self.chains.is_some()
    }

    fn code_at(&self, t: usize, rung: usize) -> SegmentCode {
        let track = &self.tracks[t];
        let mut buffer = [[0.0f32; 4]; MAX_SEGMENT_SAMPLES];
        let mut code = match self.compensated(t, &mut buffer[..self.count]) {
            Some(samples) => encode_samples(
                samples,
                track.components as usize,
                track.clip_min,
                track.clip_extent,
                LADDER[rung],
                self.ranged,
            ),
            None => track.encode(self.reference, self.start, self.count, LADDER[rung], self.ranged),
        };
        code.kept = self.kept;
        code
    }

    /// The compensated values (stored form) animated rotation `t` is quantised from,
    /// under its ancestors' current decoded rotations, written into `into` (one per
    /// segment sample); `None` when it is quantised from its source values.
    fn compensated<'b>(&self, t: usize, into: &'b mut [[f32; 4]]) -> Option<&'b [[f32; 4]]> {
        let track = &self.tracks[t];
        let chains = self.chains.as_ref()?;
        if track.kind != SubTrackKind::Rotation || track.class != SubTrackClass::Animated {
            return None;
        }
        for (i, v) in into.iter_mut().enumerate() {
            *v = stored_form(track.kind, chains.compensated(self.reference, i, track.bone)?);
        }
        Some(into)
    }

    /// Quantises again, at their rungs, the animated rotations of `a`'s descendants
    /// (parents first), whose compensated values follow `a`'s decoded rotation.
    fn recode_below(&mut self, a: usize) {
        for &d in &self.reference.hierarchy.subtree(a)[1..] {
            self.recode(d);
        }
    }

    /// Quantises again the outdated rotations on `b`'s chain (parents first): those
    /// [`Segment::outdated`] marks.
    fn recode_chain(&mut self, b: usize) {
        let mut chain = std::mem::take(&mut self.chain);
        chain.clear();
        let mut bone = Some(b);
        while let Some(x) = bone.filter(|&x| self.outdated[x]) {
            chain.push(x);
            bone = self.reference.parent(x);
        }
        for &x in chain.iter().rev() {
            self.recode(x);
            self.outdated[x] = false;
        }
        self.chain = chain;
    }

    /// Quantises again every outdated rotation (parents first).
    fn recode_outdated(&mut self) {
        let reference = self.reference;
        for root in (0..reference.bone_count).filter(|&b| reference.parent(b).is_none()) {
            for &d in reference.hierarchy.subtree(root) {
                if self.outdated[d] {
                    self.recode(d);
                    self.outdated[d] = false;
                }
            }
        }
    }

    /// Quantises bone `d`'s animated rotation again at its rung, from compensated
    /// values under its parent's current chain (or, for a rotation that is not
    /// animated, brings its chain up to date).
    fn recode(&mut self, d: usize) {
        // Rotations are the first `bones` sub-tracks: `d` is bone `d`'s.
        let t = d;
        if self.tracks[t].class != SubTrackClass::Animated {
            if let Some(chains) = &mut self.chains {
                chains.update(self.reference, &self.local, d);
            }
            return;
        }
        self.target_versions[d] = self.target_versions[d].wrapping_add(1);
        let mut candidate = self.candidate(t, self.rungs[t]);
        self.prepare(&mut candidate);
        self.install(candidate);
    }

    /// Step 1: the lowest rung at which each sub-track alone is within the target.
    fn initial_rates(&mut self) {
        let mut scratch = Vec::new();
        for t in 0..self.tracks.len() {
            let track = &self.tracks[t];
            if track.class != SubTrackClass::Animated {
                continue;
            }
            let last = LADDER.len() - 1;
            // The code of the lowest rung found within the target so far.
            let mut within = None;
            let held = self.held(t);
            let compensated = compensation::applies(self.reference) && track.kind == SubTrackKind::Rotation && !held;
            // Rotations are the first `bones` sub-tracks: `d` is bone `d`'s.
            let compensates = |d: usize| self.tracks[d].class == SubTrackClass::Animated;
            let error_at = |code: &SegmentCode, scratch: &mut Vec<Affine>| {
                let samples =
                    (self.start..self.start + self.count).filter(|s| self.bounded >> (s - self.start) & 1 != 0);
                let dequantizer = track.dequantizer(code, self.ranged);
                let value = |s: usize| track.decode_with(code, s - self.start, &dequantizer);
                if held {
                    let path = self.path_error(track, code);
                    if path > self.target {
                        return path;
                    }
                }
                if compensated {
                    return self.reference.standalone_rotation_error_compensated(
                        track.bone,
                        samples,
                        self.target,
                        scratch,
                        compensates,
                        value,
                    );
                }
                self.reference.standalone_error(
                    track.bone,
                    track.part(),
                    (self.start..self.start + self.count).filter(|s| self.bounded >> (s - self.start) & 1 != 0),
                    self.target,
                    scratch,
                    value,
                )
            };
            let rung = if track.raw_only {
                last
            } else {
                // Rate 0 first: a sub-track still for the whole segment is one 16-bit
                // value, which rates 1 to 3 (their few levels spread over the segment
                // range) can be worse than, so the search below could step over it.
                let still = self.code_at(t, 0);
                if error_at(&still, &mut scratch) <= self.target {
                    within = Some(still);
                    0
                } else {
                    // Error falls (almost always) as bits rise: the lowest rung within
                    // the target is searched from an estimate of it, first in steps
                    // that double away from it, then halving the bracket; the repair
                    // step catches the rare exception. `last` is raw: never tried.
                    // Two trials in five fewer than halving [1, last] from its middle
                    // on the shared clips, which end on the same rungs.
                    let (mut lo, mut hi) = (1usize, last);
                    let mut probe = self.estimated_rung(t).clamp(lo, hi - 1);
                    let mut step = 1;
                    while lo < hi {
                        let code = self.code_at(t, probe);
                        let fits = error_at(&code, &mut scratch) <= self.target;
                        if fits {
                            hi = probe;
                            within = Some(code);
                        } else {
                            lo = probe + 1;
                        }
                        probe = if fits { hi.saturating_sub(step).max(lo) } else { (lo + step - 1).min(hi - 1) };
                        step *= 2;
                    }
                    lo
                }
            };
            self.rungs[t] = rung;
            // `within` is the code of `hi`, which is where the search ends, unless no
            // rung below the last was within.
            self.codes[t] = Some(within.filter(|c| c.bits == LADDER[rung]).unwrap_or_else(|| self.code_at(t, rung)));
        }
    }

    /// Whether `t` is a rotation whose error is not compensated below it
    /// ([`Reference::uncompensated`]).
    fn held(&self, t: usize) -> bool {
        let track = &self.tracks[t];
        track.kind == SubTrackKind::Rotation && self.reference.is_uncompensated(track.bone)
    }

    /// How far rotation `code` of `track`, alone, turns the far end of the
    /// character's path ([`Reference::travel`]) at the worst bounded sample: its angle
    /// from the source rotation times the travel.
    fn path_error(&self, track: &SubTrack, code: &SegmentCode) -> f64 {
        (0..self.count)
            .filter(|&i| self.bounded >> i & 1 != 0)
            .map(|i| {
                let q = track.decode(code, i, self.ranged).map(f64::from);
                let r = self.reference.local[self.reference.at(self.start + i, track.bone)].parts[0].map(f64::from);
                let dot = (q[0] * r[0] + q[1] * r[1] + q[2] * r[2] + q[3] * r[3]).abs().min(1.0);
                2.0 * (1.0 - dot * dot).max(0.0).sqrt() * self.reference.travel
            })
            .fold(0.0, f64::max)
    }

    /// Where the search for sub-track `t`'s lowest rung starts: the rung at which
    /// rounding alone (half a step of its segment span in each component) would move
    /// its bone's subtree by about the target, by the lever arms the reference
    /// measured. Where error falls with every rung, only the number of rungs tried
    /// depends on it; where it does not (a few samples landing near the levels of one
    /// rate and between those of the next), the search may settle on another rung
    /// that fits, as any other order of trials may.
    fn estimated_rung(&self, t: usize) -> usize {
        let track = &self.tracks[t];
        let reference = self.reference;
        let n = track.components as usize;
        let (mut lo, mut hi) = ([f32::INFINITY; 4], [f32::NEG_INFINITY; 4]);
        let (mut lever, mut scale) = (0.0f64, 0.0f64);
        for s in self.start..self.start + self.count {
            let v = track.stored(reference, s);
            for c in 0..n {
                (lo[c], hi[c]) = span(lo[c], hi[c], v[c]);
            }
            let at = reference.at(s, track.bone);
            let m = &reference.object[at].m;
            let column = m.iter().map(|c| c[0] * c[0] + c[1] * c[1] + c[2] * c[2]).fold(0.0, f64::max).sqrt();
            scale = scale.max(column);
            lever = lever.max(reference.reach[at]);
        }
        let span2: f64 = (0..n).map(|c| f64::from(hi[c] - lo[c]).powi(2)).sum();
        // A rotation's angle is about twice its components' change; a translation
        // moves every vertex by its own change, a scale by its change times the arm.
        let arm = match track.kind {
            SubTrackKind::Rotation => 2.0 * lever,
            SubTrackKind::Translation => 1.0,
            SubTrackKind::Scale => lever,
        };
        // Half a step of `span / (2^b - 1)` times the arm within the target.
        let levels = 0.5 * span2.sqrt() * arm * scale / self.target;
        if levels.is_finite() && levels > 0.0 {
            // The highest quantised rung: the one below raw.
            let top = (LADDER.len() - 2) as f64;
            (levels + 1.0).log2().ceil().clamp(1.0, top) as usize
        } else {
            1
        }
    }

    /// Lossy local values and their affine forms of every bone at every sample; the
    /// object-space transforms are left stale, made as the search reads them.
    ///
    /// An outdated animated rotation ([`Segment::outdated`]) is quantised again before
    /// anything reads it, its local values and affine forms with it: they are left as
    /// the source rotation and the identity meanwhile.
    fn build_pose(&mut self) {
        let bones = self.reference.bone_count;
        // A default or constant sub-track has one value in the whole segment, and a
        // bone with nothing animated one affine form (without an additive base, which
        // moves): each is made once, not at every sample.
        let fixed: Vec<Option<Lane4>> = (0..self.tracks.len())
            .map(|t| (self.tracks[t].class != SubTrackClass::Animated).then(|| self.lossy_value(t, 0)))
            .collect();
        let still = |b: usize| self.reference.base.is_none() && (0..3).all(|k| fixed[k * bones + b].is_some());
        let still: Vec<bool> = (0..bones).map(still).collect();
        // Rotations are the first `bones` sub-tracks: `b` is bone `b`'s.
        let pending: Vec<bool> =
            (0..bones).map(|b| self.outdated[b] && self.tracks[b].class == SubTrackClass::Animated).collect();
        let (start, reference) = (self.start, self.reference);
        self.local.clear();
        for i in 0..self.count {
            for b in 0..bones {
                let parts = [0, 1, 2].map(|k| match fixed[k * bones + b] {
                    Some(v) => v,
                    None if k == 0 && pending[b] => reference.local[reference.at(start + i, b)].parts[0],
                    None => self.lossy_value(k * bones + b, i),
                });
                self.local.push(LocalValues { parts });
            }
        }
        self.local_affine.clear();
        for j in 0..self.local.len() {
            let (i, b) = (j / bones, j % bones);
            let affine = if pending[b] {
                Affine::IDENTITY
            } else if i > 0 && still[b] {
                self.local_affine[j - bones]
            } else {
                reference.affine_of(start + i, b, &self.local[j])
            };
            self.local_affine.push(affine);
        }
        self.object = vec![Affine::IDENTITY; self.local.len()];
        self.stale.fill(true);
        self.verified.fill(false);
    }

    fn update_object(&mut self, i: usize, b: usize) {
        let bones = self.reference.bone_count;
        let l = &self.local_affine[i * bones + b];
        self.object[i * bones + b] = match self.reference.parent(b) {
            Some(p) => self.object[i * bones + p].then(l),
            None => self.reference.root_object(b, *l),
        };
    }

    fn bone_error(&self, b: usize) -> f64 {
        let bones = self.reference.bone_count;
        (0..self.count)
            .filter(|&i| self.bounded >> i & 1 != 0)
            .fold(0.0, |m, i| m.max(self.reference.error(self.start + i, b, &self.object[i * bones + b])))
    }

    /// Sub-track `t` at `rung`, as a candidate of the repair (not yet prepared).
    fn candidate(&self, t: usize, rung: usize) -> Candidate {
        Candidate {
            track: t,
            rung,
            code: self.code_at(t, rung),
            version: 0,
            target_version: self.target_versions[self.tracks[t].bone],
            values: Vec::new(),
            affine: Vec::new(),
        }
    }

    /// Fills `candidate`'s decoded values and its bone's affine forms, unless they
    /// are up to date.
    fn prepare(&self, candidate: &mut Candidate) {
        let track = &self.tracks[candidate.track];
        let a = track.bone;
        if candidate.values.len() == self.count && candidate.version == self.versions[a] {
            return;
        }
        if candidate.values.len() != self.count {
            track.decode_all(&candidate.code, self.count, self.ranged, &mut candidate.values);
        }
        let bones = self.reference.bone_count;
        candidate.affine.clear();
        candidate.affine.extend(candidate.values.iter().enumerate().map(|(i, &v)| {
            let mut local = self.local[i * bones + a];
            local.parts[track.part()] = v;
            self.reference.affine_of(self.start + i, a, &local)
        }));
        candidate.version = self.versions[a];
    }

    /// Error of bone `b` if `candidate` (a sub-track of `b` or of an ancestor `a`)
    /// took its code, everything else as it is; its affine forms are up to date
    /// ([`Segment::prepare`]). `below[i]` is the transform from `a`'s space to `b`'s
    /// at segment sample `i` (the product of the local transforms strictly below `a`
    /// down to `b`), shared by every candidate of `a`.
    ///
    /// The walk stops as soon as `hopeless` says the error so far is enough to rule
    /// the candidate out, and returns that partial maximum: `hopeless` must hold for
    /// every larger error too.
    fn error_with(&self, candidate: &Candidate, b: usize, below: &[Affine], hopeless: impl Fn(f64) -> bool) -> f64 {
        let bones = self.reference.bone_count;
        let a = self.tracks[candidate.track].bone;
        let mut worst = 0.0f64;
        if let Some(c) = self.compensating_child(candidate.track, b) {
            // The rotations from `c` down to `b` follow `a`'s new rotation: `b` keeps its
            // orientation and moves with `c`'s origin.
            for i in (0..self.count).filter(|&i| self.bounded >> i & 1 != 0) {
                let l = candidate.affine[i];
                let o = match self.reference.parent(a) {
                    Some(p) => self.object[i * bones + p].then(&l),
                    None => self.reference.root_object(a, l),
                };
                let t = self.local[i * bones + c].parts[1];
                let t = [t[0], t[1], t[2]].map(f64::from);
                let (new, old) = (o.apply(t), self.object[i * bones + a].apply(t));
                let mut moved = self.object[i * bones + b];
                for k in 0..3 {
                    moved.t[k] += new[k] - old[k];
                }
                worst = worst.max(self.reference.error(self.start + i, b, &moved));
                if hopeless(worst) {
                    break;
                }
            }
            return worst;
        }
        for (i, below) in below.iter().enumerate().filter(|&(i, _)| self.bounded >> i & 1 != 0) {
            let l = candidate.affine[i];
            let o = match self.reference.parent(a) {
                Some(p) => self.object[i * bones + p].then(&l),
                None => self.reference.root_object(a, l),
            };
            worst = worst.max(self.reference.error(self.start + i, b, &o.then(below)));
            if hopeless(worst) {
                break;
            }
        }
        worst
    }

    /// When rotation `t` belongs to a strict ancestor of `b` and the child of that
    /// ancestor on the way to `b` has an animated rotation (so compensates it), that
    /// child.
    fn compensating_child(&self, t: usize, b: usize) -> Option<usize> {
        let track = &self.tracks[t];
        if !self.compensating() || track.kind != SubTrackKind::Rotation || track.bone == b || self.held(t) {
            return None;
        }
        let c = self.reference.hierarchy.chain(b).find(|&x| self.reference.parent(x) == Some(track.bone))?;
        (self.tracks[c].class == SubTrackClass::Animated).then_some(c)
    }

    /// Gives `candidate`'s sub-track its rung and code, and quantises again the
    /// rotations below whose compensated values it changes.
    fn set_rung(&mut self, candidate: Candidate) {
        let t = candidate.track;
        self.install(candidate);
        if self.compensating() && self.tracks[t].kind == SubTrackKind::Rotation {
            self.recode_below(self.tracks[t].bone);
        }
    }

    /// Gives `candidate`'s sub-track its rung and code, nothing else.
    fn install(&mut self, mut candidate: Candidate) {
        self.prepare(&mut candidate);
        let bones = self.reference.bone_count;
        let t = candidate.track;
        let (a, part) = (self.tracks[t].bone, self.tracks[t].part());
        for (i, (&v, &affine)) in candidate.values.iter().zip(&candidate.affine).enumerate() {
            self.local[i * bones + a].parts[part] = v;
            self.local_affine[i * bones + a] = affine;
        }
        self.rungs[t] = candidate.rung;
        self.codes[t] = Some(candidate.code);
        self.versions[a] = self.versions[a].wrapping_add(1);
        if let Some(chains) = self.chains.as_mut().filter(|_| part == 0) {
            chains.update(self.reference, &self.local, a);
        }
        if !self.stale[a] {
            for &d in self.reference.hierarchy.subtree(a) {
                self.stale[d] = true;
                self.verified[d] = false;
            }
        }
    }

    /// Brings the object-space transforms of `b` and its ancestors up to date.
    fn refresh_chain(&mut self, b: usize) {
        // The stale bones of the chain are a run from `b` up (a stale bone's
        // descendants are stale); they are recomputed from the top down.
        let mut chain = std::mem::take(&mut self.chain);
        chain.clear();
        let mut bone = Some(b);
        while let Some(x) = bone.filter(|&x| self.stale[x]) {
            chain.push(x);
            bone = self.reference.parent(x);
        }
        for &x in chain.iter().rev() {
            for i in 0..self.count {
                self.update_object(i, x);
            }
            self.stale[x] = false;
        }
        self.chain = chain;
    }

    /// Step 3: lowers rates while every bone stays within the target (module
    /// documentation).
    fn lower(&mut self) {
        let mut order: Vec<usize> = (0..self.tracks.len())
            .filter(|&t| {
                self.tracks[t].class == SubTrackClass::Animated
                    && !self.tracks[t].raw_only
                    && self.rungs[t] > self.floor[t]
            })
            .collect();
        let cost = |t: usize| u32::from(LADDER[self.rungs[t]]) * self.tracks[t].components;
        order.sort_by_key(|&t| (std::cmp::Reverse(cost(t)), t));
        let mut scratch = Vec::new();
        for t in order {
            let a = self.tracks[t].bone;
            let subtree = self.reference.hierarchy.subtree(a);
            // A trial's outcome depends only on the bones of the subtree and their
            // chains (a lowered ancestor marks its whole subtree): one that failed
            // since nothing there changed would fail again.
            if self.lower_memo.failed_at[t].is_some_and(|f| subtree.iter().all(|&d| self.lower_memo.changed_at[d] <= f))
            {
                continue;
            }
            let before = self.rungs[t];
            if self.compensating() && self.tracks[t].kind == SubTrackKind::Rotation && self.compensates_below(t) {
                while self.rungs[t] > self.floor[t] && self.lower_compensated(t) {}
            } else {
                while self.rungs[t] > self.floor[t] {
                    let mut candidate = self.candidate(t, self.rungs[t] - 1);
                    self.prepare(&mut candidate);
                    if let Some(p) = self.reference.parent(a) {
                        self.refresh_chain(p);
                    }
                    if !self.subtree_within(&candidate, &mut scratch) {
                        break;
                    }
                    self.set_rung(candidate);
                }
            }
            let memo = &mut self.lower_memo;
            if self.rungs[t] != before {
                memo.epoch += 1;
                for &d in subtree {
                    memo.changed_at[d] = memo.epoch;
                }
            }
            // It ends on a failed trial unless it reached its floor.
            memo.failed_at[t] = (self.rungs[t] > self.floor[t]).then_some(memo.epoch);
        }
    }

    /// Whether a code change of rotation `t` changes compensated values below it (its
    /// bone has a descendant with an animated rotation).
    fn compensates_below(&self, t: usize) -> bool {
        let subtree = self.reference.hierarchy.subtree(self.tracks[t].bone);
        subtree[1..].iter().any(|&d| self.tracks[d].class == SubTrackClass::Animated)
    }

    /// Lowers compensated rotation `t` one rung, quantising its descendants' rotations
    /// again, and keeps it if every bone of its subtree stays within the target;
    /// otherwise puts back what it changed. Returns whether it was kept.
    fn lower_compensated(&mut self, t: usize) -> bool {
        let a = self.tracks[t].bone;
        let subtree = self.reference.hierarchy.subtree(a);
        let mut saved = std::mem::take(&mut self.saved);
        self.save(a, &mut saved);
        self.install(self.candidate(t, self.rungs[t] - 1));
        // A bone's error depends only on its chain: each bone below is quantised again
        // and checked in turn, parents first, so that a failing trial stops at its
        // first bone above the target (most trials fail, most at a child of `a`).
        self.refresh_chain(a);
        let mut within = self.bone_error(a) <= self.target;
        for &d in &subtree[1..] {
            if !within {
                break;
            }
            self.save(d, &mut saved);
            self.recode(d);
            self.refresh_chain(d);
            within = self.bone_error(d) <= self.target;
        }
        if !within {
            self.restore(&saved);
            for &d in subtree {
                self.stale[d] = true;
                self.verified[d] = false;
            }
        }
        saved.clear();
        self.saved = saved;
        within
    }

    /// Keeps in `saved` what a trial may change of bone `d`: its rotation's rung and
    /// code, its decoded values and its chain.
    fn save(&self, d: usize, saved: &mut Saved) {
        let bones = self.reference.bone_count;
        saved.bones.push(d);
        saved.codes.push((self.rungs[d], self.codes[d].clone()));
        saved.local.extend((0..self.count).map(|i| self.local[i * bones + d]));
        saved.affine.extend((0..self.count).map(|i| self.local_affine[i * bones + d]));
        if let Some(chains) = &self.chains {
            chains.save(d, &mut saved.chains);
        }
    }

    /// Puts back what [`Segment::save`] kept; the caches keyed by the bones' versions
    /// are let go (the caller marks the object-space transforms stale).
    fn restore(&mut self, saved: &Saved) {
        let bones = self.reference.bone_count;
        let count = self.count;
        for (k, (&d, (rung, code))) in saved.bones.iter().zip(&saved.codes).enumerate() {
            self.rungs[d] = *rung;
            self.codes[d].clone_from(code);
            for i in 0..count {
                self.local[i * bones + d] = saved.local[k * count + i];
                self.local_affine[i * bones + d] = saved.affine[k * count + i];
            }
            if let Some(chains) = &mut self.chains {
                chains.restore(d, &saved.chains[k * count..]);
            }
            self.versions[d] = self.versions[d].wrapping_add(1);
            self.target_versions[d] = self.target_versions[d].wrapping_add(1);
        }
    }

    /// Whether every bone of the subtree of `candidate`'s bone stays within the target
    /// at every bounded sample if the candidate took its code, everything else as it
    /// is (the bone's ancestors up to date; its prepared affine forms current).
    fn subtree_within(&self, candidate: &Candidate, scratch: &mut Vec<Affine>) -> bool {
        let bones = self.reference.bone_count;
        let a = self.tracks[candidate.track].bone;
        let subtree = self.reference.hierarchy.subtree(a);
        scratch.resize(bones, Affine::IDENTITY);
        for i in (0..self.count).filter(|&i| self.bounded >> i & 1 != 0) {
            let l = candidate.affine[i];
            let o = match self.reference.parent(a) {
                Some(p) => self.object[i * bones + p].then(&l),
                None => self.reference.root_object(a, l),
            };
            scratch[a] = o;
            if self.reference.error(self.start + i, a, &o) > self.target {
                return false;
            }
            for &d in &subtree[1..] {
                let p = self.reference.parent(d).unwrap_or(a);
                let o = scratch[p].then(&self.local_affine[i * bones + d]);
                scratch[d] = o;
                if self.reference.error(self.start + i, d, &o) > self.target {
                    return false;
                }
            }
        }
        true
    }

    /// Step 2: raise bit rates until every bone is within the target. Returns a bone
    /// that cannot be brought within it by bit rates alone.
    fn repair(&mut self) -> Option<usize> {
        let bones = self.reference.bone_count;
        let last = LADDER.len() - 1;
        let mut below: Vec<Affine> = Vec::new();
        let mut candidates: Vec<usize> = Vec::new();
        // The code one rung up of each sub-track a repair has considered, kept while
        // its rung stays: bones share their ancestors' sub-tracks, and a bone that
        // needs several raises computes again only the raised sub-track's.
        let mut next_codes: Vec<Candidate> = Vec::new();
        loop {
            let mut changed = false;
            for b in 0..bones {
                loop {
                    // Unchanged since it was found within: its chain is up to date
                    // (a stale or outdated bone's descendants are so too).
                    if self.verified[b] && !self.stale[b] && !self.outdated[b] {
                        break;
                    }
                    self.recode_chain(b);
                    self.refresh_chain(b);
                    let err = self.bone_error(b);
                    if err <= self.target {
                        self.verified[b] = true;
                        break;
                    }
                    // Walk up the chain; `below` carries the transform from the
                    // current ancestor down to `b`, so that each candidate costs one
                    // pass over the segment's samples whatever the depth.
                    below.clear();
                    below.resize(self.count, Affine::IDENTITY);
                    candidates.clear();
                    let mut best: Option<(f64, usize)> = None;
                    let mut ancestor = Some(b);
                    while let Some(a) = ancestor {
                        for t in [a, bones + a, 2 * bones + a] {
                            if self.tracks[t].class != SubTrackClass::Animated || self.rungs[t] >= last {
                                continue;
                            }
                            candidates.push(t);
                            let rung = self.rungs[t] + 1;
                            let fresh = || self.candidate(t, rung);
                            let current = self.target_versions[a];
                            let at = match next_codes.iter().position(|c| c.track == t) {
                                Some(i) if next_codes[i].rung == rung && next_codes[i].target_version == current => i,
                                Some(i) => {
                                    next_codes[i] = fresh();
                                    i
                                }
                                None => {
                                    next_codes.push(fresh());
                                    next_codes.len() - 1
                                }
                            };
                            self.prepare(&mut next_codes[at]);
                            let added =
                                f64::from(LADDER[rung] - LADDER[rung - 1]) * f64::from(self.tracks[t].components);
                            // A candidate is taken only for a score above the best so
                            // far (and above 0); the score only falls as its error
                            // rises (rounded subtraction and division are monotone), so
                            // once the error so far rules it out, the rest of the
                            // samples cannot bring it back.
                            let floor = best.map_or(0.0, |(s, _)| s);
                            let hopeless = |worst: f64| (err - worst) / added <= floor;
                            let new_err = self.error_with(&next_codes[at], b, &below, hopeless);
                            let score = (err - new_err) / added;
                            if score > 0.0 && best.is_none_or(|(s, _)| score > s) {
                                best = Some((score, t));
                            }
                        }
                        for (i, below) in below.iter_mut().enumerate() {
                            *below = self.local_affine[i * bones + a].then(below);
                        }
                        ancestor = self.reference.parent(a);
                    }
                    if candidates.is_empty() {
                        self.recode_outdated();
                        return Some(b);
                    }
                    // Every candidate's next code was just computed.
                    let mut take = |t: usize| match next_codes.iter().position(|c| c.track == t) {
                        Some(i) => next_codes.swap_remove(i),
                        None => self.candidate(t, self.rungs[t] + 1),
                    };
                    let raised: Vec<Candidate> = match best {
                        Some((_, t)) => vec![take(t)],
                        // No single step helps: raise every candidate one step.
                        None => candidates.iter().map(|&t| take(t)).collect(),
                    };
                    // A raised rotation outdates the rotations below it; they are
                    // quantised again when read (`recode_chain`).
                    for candidate in raised {
                        let a = self.tracks[candidate.track].bone;
                        let rotation = self.tracks[candidate.track].kind == SubTrackKind::Rotation;
                        self.install(candidate);
                        if rotation && self.compensating() {
                            for &d in &self.reference.hierarchy.subtree(a)[1..] {
                                self.outdated[d] = true;
                                self.verified[d] = false;
                            }
                        }
                    }
                    changed = true;
                }
            }
            if !changed {
                self.recode_outdated();
                return None;
            }
        }
    }
}
