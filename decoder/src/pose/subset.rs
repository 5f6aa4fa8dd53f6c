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
//!   default parts already finished (so they cost a copy), and for each animated
//!   sub-track its index among the animated ones (so no bit set is tested and no rank
//!   counted per frame). A frame then decodes only the animated sub-tracks asked for.
//!   The plan also keeps what the keys' segments gave those sub-tracks on the last
//!   frame (where their bits start in a key frame, their bit rates, their segment
//!   ranges), so that a frame in the same segments finds none of it again: decoding
//!   takes the plan `&mut`.

use crate::error::Error;
use crate::format::clip::Clip;
use crate::format::{bitset_index, TrackList};
use crate::pose::bone;
use crate::pose::finish::{finish_rotation, lerp};
use crate::pose::lists::{write, SCALE, TRANSLATION};
use crate::seek::Key;
use crate::simd::scalar::F32x4 as Portable;
use crate::simd::Lanes;
use crate::transform::Transform;

/// The plan for decoding the same bones of one clip every frame (see the module
/// documentation): at most `N` bones, ascending, which is the order of the output. Lives on the caller's stack or in its structures; allocates nothing.
///
/// Size on 64-bit targets: 48 bytes plus 368 per bone of capacity (a `Subset<16>` is
/// 5,936 bytes; checked by a test), most of it what each animated sub-track keeps
/// between frames.
#[derive(Clone, Debug)]
pub struct Subset<const N: usize> {
    entries: heapless::Vec<Entry, N>,
    /// The clip it was built for (its bytes' address and length), so that a plan is
    /// never applied to another clip.
    clip: (usize, usize),
    /// The segments (by where their bit rates start) that each animated sub-track's
    /// `found` describes, for key 0 and key 1 (`usize::MAX`: none yet).
    segments: [usize; 2],
}

/// One bone of a [`Subset`]: its transform with every part that does not change with
/// time already in place, and its animated sub-tracks.
#[derive(Clone, Copy, Debug)]
struct Entry {
    fixed: Transform,
    /// How many of `animated` are used.
    count: u8,
    animated: [Part; 3],
}

/// An animated sub-track of a [`Subset`]'s bone: where it is among the animated
/// sub-tracks and its clip range, found once.
#[derive(Clone, Copy, Debug)]
struct Part {
    list: TrackList,
    /// Where its data are.
    place: bone::Place,
    /// Its clip range, dequantised (as the bits of each lane's `f32`): the minimum
    /// and the extent of each component.
    min: [u32; 4],
    extent: [u32; 4],
    /// What the segments of [`Subset::segments`] give it: the bit offset of its quad
    /// in a key frame, the quad's rates and its segment range bytes. Kept from frame
    /// to frame while the keys stay in a segment, so that the rates before the quad
    /// are summed once per segment rather than every frame.
    found: [bone::InSegment; 2],
}

impl Part {
    /// The animated sub-track of list rank `rank` in `list`.
    fn new(clip: &Clip<'_>, list: TrackList, rank: u32) -> Part {
        let place = bone::Place::of(clip, list, rank);
        // Any backend gives the same bits: the portable one serves them all.
        let (min, extent) = if list == TrackList::Rotation4 {
            bone::clip_range::<Portable, 4>(clip, list, &place)
        } else {
            bone::clip_range::<Portable, 3>(clip, list, &place)
        };
        let bits = |v: Portable| v.to_array().map(f32::to_bits);
        Part { list, place, min: bits(min), extent: bits(extent), found: [bone::InSegment::default(); 2] }
    }

    /// Its values at key 0 and key 1 (`C` components), its `found` up to date.
    #[inline(always)]
    fn values<V: Lanes, const C: usize>(&self, clip: &Clip<'_>, keys: &[Key<'_>; 2], alpha: f32) -> (V, V) {
        let range = (V::from_bits(self.min), V::from_bits(self.extent));
        bone::animated_at::<V, C>(clip, keys, alpha, &self.place, range, &self.found)
    }
}

impl<const N: usize> Subset<N> {
    /// The plan for decoding `bones` (strictly ascending, each below the bone count)
    /// of `clip`; fails when there are more than `N` bones, one is out of range, or
    /// they are not in ascending order.
    /// Costs about one single-bone decode per bone.
    pub fn new(clip: &Clip<'_>, bones: &[u32]) -> Result<Self, Error> {
        let mut entries = heapless::Vec::new();
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
            let unused = Part {
                list: TrackList::Rotation3,
                place: bone::Place::default(),
                min: [0; 4],
                extent: [0; 4],
                found: [bone::InSegment::default(); 2],
            };
            let (mut animated, mut count) = ([unused; 3], 0u8);
            let fixed = match in_place {
                Some((ib, t)) if ib == bone => t,
                _ => {
                    for list in TrackList::ALL {
                        if clip.lists.contains(bitset_index(true, list), bone) {
                            let rank = clip.lists.rank(bitset_index(true, list), bone);
                            if let Some(slot) = animated.get_mut(usize::from(count)) {
                                *slot = Part::new(clip, list, rank);
                                count = count.wrapping_add(1);
                            }
                        }
                    }
                    // A constant or default part decodes the same at every time: the
                    // single-bone decode at any keys gives it (its animated parts,
                    // decoded from wherever those keys point, are replaced per frame).
                    bone::bone::<Portable>(clip, &[Key::default(); 2], 0.0, bone)
                }
            };
            entries.push(Entry { fixed, count, animated }).map_err(|_| Error::SubsetFull { capacity: N as u32 })?;
        }
        Ok(Subset { entries, clip: identity(clip), segments: [usize::MAX; 2] })
    }

    /// Number of bones.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it has no bones.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Checks that the plan is `clip`'s and that `out` holds one transform per bone.
    pub(crate) fn check(&self, clip: &Clip<'_>, out: &[Transform]) -> Result<(), Error> {
        if self.clip != identity(clip) {
            return Err(Error::SubsetOfAnotherClip);
        }
        if out.len() < self.entries.len() {
            return Err(Error::OutputTooSmall { len: out.len() as u32, bone_count: self.entries.len() as u32 });
        }
        Ok(())
    }

    /// Decodes the bones into `out[i]` for the `i`-th bone (checked by
    /// [`Subset::check`]), first finding what the keys' segments give the animated
    /// sub-tracks when they are not the segments of the last frame.
    #[inline(always)]
    pub(crate) fn decode<V: Lanes>(&mut self, clip: &Clip<'_>, keys: &[Key<'_>; 2], alpha: f32, out: &mut [Transform]) {
        let [key0, key1] = keys;
        if self.segments[0] != key0.rates {
            self.find(clip, 0, key0);
        }
        // Key 1's segment is read only when it is not key 0's.
        if alpha != 0.0 && key1.rates != key0.rates && self.segments[1] != key1.rates {
            self.find(clip, 1, key1);
        }
        for (entry, t) in self.entries.iter().zip(out.iter_mut()) {
            *t = entry.fixed;
            for part in entry.animated.iter().take(usize::from(entry.count)) {
                if part.list == TrackList::Rotation4 {
                    let (v0, v1) = part.values::<V, 4>(clip, keys, alpha);
                    t.rotation = finish_rotation(false, v0, v1, alpha).to_quat();
                    continue;
                }
                // The other lists store three components: one decode serves them all.
                let (v0, v1) = part.values::<V, 3>(clip, keys, alpha);
                match part.list {
                    TrackList::Rotation3 => t.rotation = finish_rotation(true, v0, v1, alpha).to_quat(),
                    TrackList::Translation => {
                        write::<V, TRANSLATION>(if alpha == 0.0 { v0 } else { lerp(v0, v1, alpha) }, t)
                    }
                    TrackList::Scale => write::<V, SCALE>(if alpha == 0.0 { v0 } else { lerp(v0, v1, alpha) }, t),
                    TrackList::Rotation4 => {}
                }
            }
        }
    }

    /// Finds what `key`'s segment gives each animated sub-track, for key `slot`.
    #[inline(never)]
    fn find(&mut self, clip: &Clip<'_>, slot: usize, key: &Key<'_>) {
        for entry in self.entries.iter_mut() {
            for part in entry.animated.iter_mut().take(usize::from(entry.count)) {
                if let Some(found) = part.found.get_mut(slot) {
                    *found = if part.list == TrackList::Rotation4 {
                        bone::InSegment::of::<4>(clip, key, &part.place)
                    } else {
                        bone::InSegment::of::<3>(clip, key, &part.place)
                    };
                }
            }
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
