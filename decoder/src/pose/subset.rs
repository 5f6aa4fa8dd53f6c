//! Partial decoding: a caller-chosen subset of bones, for level of detail and masked
//! layers, at a cost that follows the bones asked for rather than the clip's.
//!
//! Two ways in:
//! - [`crate::Sampler::decompress_bones`] decodes any list of bones once, each as
//!   [`crate::Sampler::decompress_bone`] does (a bit test per list, a rank, a frame
//!   directory entry per sub-track).
//! - A [`Subset`] is the plan for decoding the same bones every frame: built once
//!   (when the level of detail or the mask changes), in fixed capacity without a heap
//!   (`heapless`), it holds what does not change with time: each bone's constant and
//!   default parts already finished (so they cost a copy), and its animated
//!   sub-tracks gathered four to a vector whatever quads and lists they come from
//!   ([`GatheredQuad`]), so that they decode side by side as a quad of the whole pose
//!   does. It also keeps what the last keys' segments gave those sub-tracks (each
//!   one's place in a key frame, field mask and scale, segment ranges), for two
//!   segments, so that a frame in the same segments finds none of it again, and
//!   playing across a segment's end plans the next segment once: decoding takes the
//!   plan `&mut`.

use crate::error::Error;
use crate::format::clip::Clip;
use crate::format::{bitset_index, TrackList, QUAD_LANES};
use crate::pose::bone;
use crate::pose::gathered_quad::GatheredQuad;
use crate::seek::Key;
use crate::simd::scalar::F32x4 as Portable;
use crate::simd::Lanes;
use crate::transform::Transform;

/// The plan for decoding the same bones of one clip every frame (see the module
/// documentation): at most `N` bones, ascending, which is the order of the output.
/// Lives on the caller's stack or in its structures; allocates nothing.
///
/// Size on 64-bit targets: 932 bytes per bone of capacity (its transform, and room
/// for the gathered quads of its animated sub-tracks with their plans for two
/// segments) and 64 more (a `Subset<16>` is 14,976 bytes; checked by a test).
#[derive(Clone, Debug)]
pub struct Subset<const N: usize> {
    /// Each bone's transform with every part that does not change with time already
    /// in place: the output before its animated sub-tracks are written.
    fixed: heapless::Vec<Transform, N>,
    /// The bones' animated sub-tracks, list by list in the order of the format's
    /// (so that planning them walks each segment's bit rates once), four to a quad
    /// whatever their lists: at most `⌈3N/4⌉` quads.
    quads: heapless::Vec<GatheredQuad, N>,
    /// The clip it was built for (its bytes' address and length), so that a plan is
    /// never applied to another clip.
    clip: (usize, usize),
    /// The segments (by where their bit rates start) the quads' two plans are for
    /// (`usize::MAX`: none yet).
    segments: [usize; 2],
    /// The plan key 0 used last (0 or 1): the other is the one a new segment
    /// replaces.
    last: usize,
}

impl<const N: usize> Subset<N> {
    /// The plan for decoding `bones` (strictly ascending, each below the bone count)
    /// of `clip`; fails when there are more than `N` bones, one is out of range, or
    /// they are not in ascending order.
    /// Costs about one single-bone decode per bone.
    pub fn new(clip: &Clip<'_>, bones: &[u32]) -> Result<Self, Error> {
        let full = || Error::SubsetFull { capacity: N as u32 };
        let mut fixed = heapless::Vec::new();
        let in_place = clip.in_place();
        let mut previous: Option<u32> = None;
        for &b in bones {
            if b >= clip.bone_count {
                return Err(Error::BoneOutOfRange { index: b, bone_count: clip.bone_count });
            }
            if previous.is_some_and(|p| p >= b) {
                return Err(Error::BonesNotAscending { index: b });
            }
            previous = Some(b);
            let bone = b as usize;
            let t = match in_place {
                Some((ib, t)) if ib == bone => t,
                // A constant or default part decodes the same at every time: the
                // single-bone decode at any keys gives it (its animated parts,
                // decoded from wherever those keys point, are replaced per frame).
                _ => bone::bone::<Portable>(clip, &[Key::default(); 2], 0.0, bone),
            };
            fixed.push(t).map_err(|_| full())?;
        }
        // No plan used yet: `last` 1 makes plan 0 the first one made.
        let mut subset =
            Subset { fixed, quads: heapless::Vec::new(), clip: identity(clip), segments: [usize::MAX; 2], last: 1 };
        // The animated sub-tracks, list by list, gathered four at a time.
        let mut parts: heapless::Vec<(TrackList, bone::Place, u32), QUAD_LANES> = heapless::Vec::new();
        for list in TrackList::ALL {
            let animated = bitset_index(true, list);
            for (output, &b) in bones.iter().enumerate() {
                let bone = b as usize;
                if in_place.is_some_and(|(ib, _)| ib == bone) || !clip.lists.contains(animated, bone) {
                    continue;
                }
                let place = bone::Place::of(clip, list, clip.lists.rank(animated, bone));
                // Fewer than `N` outputs: `u32` holds them.
                let part = (list, place, output as u32);
                if let Err(part) = parts.push(part) {
                    subset.gather(clip, &parts)?;
                    parts.clear();
                    parts.push(part).map_err(|_| full())?;
                }
            }
        }
        if !parts.is_empty() {
            subset.gather(clip, &parts)?;
        }
        Ok(subset)
    }

    /// Adds the gathered quad of `parts`.
    fn gather(&mut self, clip: &Clip<'_>, parts: &[(TrackList, bone::Place, u32)]) -> Result<(), Error> {
        // At most `⌈3N/4⌉` quads (three sub-tracks per bone, four per quad): never
        // full.
        self.quads.push(GatheredQuad::new(clip, parts)).map_err(|_| Error::SubsetFull { capacity: N as u32 })
    }

    /// Number of bones.
    pub fn len(&self) -> usize {
        self.fixed.len()
    }

    /// Whether it has no bones.
    pub fn is_empty(&self) -> bool {
        self.fixed.is_empty()
    }

    /// Checks that the plan is `clip`'s and that `out` holds one transform per bone.
    pub(crate) fn check(&self, clip: &Clip<'_>, out: &[Transform]) -> Result<(), Error> {
        if self.clip != identity(clip) {
            return Err(Error::SubsetOfAnotherClip);
        }
        if out.len() < self.fixed.len() {
            return Err(Error::OutputTooSmall { len: out.len() as u32, bone_count: self.fixed.len() as u32 });
        }
        Ok(())
    }

    /// Decodes the bones into `out[i]` for the `i`-th bone (checked by
    /// [`Subset::check`]), first planning the gathered quads for the keys' segments
    /// when they have no plan: key 0's replaces the plan it did not use last (or,
    /// when the keys straddle a segment's end, the one not for key 1's segment); key
    /// 1's, when it lies in another segment and weighs something, the other. Played
    /// forward, each segment is planned once: the plan made for key 1 across a
    /// segment's end is key 0's in the frames after.
    #[inline(always)]
    pub(crate) fn decode<V: Lanes>(&mut self, clip: &Clip<'_>, keys: &[Key<'_>; 2], alpha: f32, out: &mut [Transform]) {
        let [key0, key1] = keys;
        let straddle = alpha != 0.0 && key1.rates != key0.rates;
        // Most frames: both keys in the segment key 0 used last, planned already.
        let last = self.last & 1;
        let [slot0, slot1] = if !straddle && self.segments.get(last) == Some(&key0.rates) {
            [last, last]
        } else {
            self.slots::<V>(clip, keys, straddle)
        };
        for (t, fixed) in out.iter_mut().zip(self.fixed.iter()) {
            *t = *fixed;
        }
        for quad in self.quads.iter() {
            quad.decode::<V>(keys, alpha, [slot0, slot1], out);
        }
    }

    /// The plans for `keys` (see [`Subset::decode`]; `straddle`: key 1 weighs
    /// something and lies in another segment), made where missing.
    #[inline(always)]
    fn slots<V: Lanes>(&mut self, clip: &Clip<'_>, keys: &[Key<'_>; 2], straddle: bool) -> [usize; 2] {
        let [key0, key1] = keys;
        let slot_of = |segments: &[usize; 2], rates: usize| segments.iter().position(|&s| s == rates);
        let slot0 = match slot_of(&self.segments, key0.rates) {
            Some(slot) => slot,
            None => {
                let slot = match slot_of(&self.segments, key1.rates) {
                    Some(taken) if straddle => taken ^ 1,
                    _ => (self.last ^ 1) & 1,
                };
                self.plan::<V>(clip, key0, slot);
                slot
            }
        };
        self.last = slot0;
        let spare = slot0 ^ 1;
        let slot1 = if !straddle {
            slot0
        } else {
            match slot_of(&self.segments, key1.rates) {
                Some(slot) => slot,
                None => {
                    self.plan::<V>(clip, key1, spare);
                    spare
                }
            }
        };
        [slot0, slot1]
    }

    /// Plans every gathered quad for `key`'s segment into plan `slot`. (Inlined into
    /// the backend's code: a function of its own would be compiled without the
    /// backend's target features.)
    #[inline(always)]
    fn plan<V: Lanes>(&mut self, clip: &Clip<'_>, key: &Key<'_>, slot: usize) {
        let mut after = None;
        for quad in self.quads.iter_mut() {
            quad.replan::<V>(slot, clip, key, &mut after);
        }
        if let Some(segment) = self.segments.get_mut(slot) {
            *segment = key.rates;
        }
    }
}

/// A clip's identity for [`Subset`]: where its bytes are and how many.
fn identity(clip: &Clip<'_>) -> (usize, usize) {
    (clip.bytes.as_ptr() as usize, clip.bytes.len())
}

/// Checks a list of bones for [`crate::Sampler::decompress_bones`]: each below
/// `bone_count`, and `out` holds one transform per bone.
pub(crate) fn check(bones: &[u32], bone_count: u32, out: &[Transform]) -> Result<(), Error> {
    if out.len() < bones.len() {
        return Err(Error::OutputTooSmall { len: out.len() as u32, bone_count: bones.len() as u32 });
    }
    match bones.iter().find(|&&b| b >= bone_count) {
        Some(&index) => Err(Error::BoneOutOfRange { index, bone_count }),
        None => Ok(()),
    }
}

/// Decodes `bones` (checked by [`check`]) into `out[i]` for `bones[i]`, each as a
/// single bone.
#[inline(always)]
pub(crate) fn decode<V: Lanes>(clip: &Clip<'_>, keys: &[Key<'_>; 2], alpha: f32, bones: &[u32], out: &mut [Transform]) {
    for (&b, t) in bones.iter().zip(out.iter_mut()) {
        *t = bone::bone::<V>(clip, keys, alpha, b as usize);
    }
}
