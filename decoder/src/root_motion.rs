//! Root motion (seed 000): how far the character moved between two playback times,
//! across any number of loops, in both looping modes, without losing the motion of the
//! last interval.
//!
//! The root-motion bone's track `U(t)` (a root, so in object space) is the motion.
//! Playing the clip over and over continues it loop after loop: with `R0 = U(0)` and
//! `E = U(duration)` (the last sample; for a wrapping loop, the dropped last sample kept
//! in the root-motion block, or the first sample again when the loop closes), loop `k`
//! is `L^k · U(t)` with `L = E · R0⁻¹`. The character's motion since it started is
//! `M(t) = U(t) · R0⁻¹` (the identity at time 0), and the displacement between two
//! times is `M(previous)⁻¹ · M(current)`: a rigid transform in the character's own
//! frame at `previous`, which a game applies as `character = character · displacement`.
//! For a root that only translates this is seed 000's rule: the trailing part of the
//! previous loop, plus whole loops times the total displacement, plus the leading part
//! of the current one.

use glam::{Quat, Vec3};

use crate::format::clip::Clip;
use crate::pose::bone;
use crate::pose::finish::{finish_rotation, lerp};
use zerocopy::little_endian::F32;
use zerocopy::FromBytes;

use crate::error::Error;
use crate::format::bytes::u32_at;
use crate::format::{
    root_chain_len, RootEnd, RootInPlace, RootMotionBlock, FLAG_ROOT_MOTION, HEADER_SIZE, MAX_ROOT_CHAIN,
    ROOT_END_STORED, ROOT_IN_PLACE,
};
use crate::sampler::Sampler;
use crate::seek::Position;
use crate::simd::scalar::F32x4;
use crate::simd::{Lanes, Native};
use crate::stream::database::Binding;
use crate::stream::residency::{Residency, Slot};
use crate::transform::Transform;

/// A rigid motion: rotate by `rotation`, then translate by `translation`
/// (`p' = rotation · p + translation`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Displacement {
    /// Unit quaternion.
    pub rotation: Quat,
    /// Translation, applied after the rotation.
    pub translation: Vec3,
}

impl Displacement {
    /// No motion.
    pub const IDENTITY: Displacement = Displacement { rotation: Quat::IDENTITY, translation: Vec3::ZERO };

    /// The rigid part (rotation and translation) of a bone transform.
    pub fn of(t: &Transform) -> Displacement {
        Displacement { rotation: t.rotation, translation: t.translation }
    }

    /// `self` then `next`, `next` expressed in `self`'s frame: `self · next`.
    #[must_use]
    pub fn then(self, next: Displacement) -> Displacement {
        Displacement {
            rotation: (self.rotation * next.rotation).normalize(),
            translation: self.rotation * next.translation + self.translation,
        }
    }

    /// The motion that undoes `self`.
    #[must_use]
    pub fn inverse(self) -> Displacement {
        let inverse = self.rotation.conjugate();
        Displacement { rotation: inverse, translation: -(inverse * self.translation) }
    }

    /// `self` repeated `n` times (`n < 0`: the inverse repeated `-n` times), by squaring:
    /// `O(log |n|)` compositions.
    #[must_use]
    pub fn powi(self, n: i32) -> Displacement {
        let mut base = if n < 0 { self.inverse() } else { self };
        let mut n = n.unsigned_abs();
        let mut out = Displacement::IDENTITY;
        while n > 0 {
            if n & 1 == 1 {
                out = out.then(base);
            }
            base = base.then(base);
            n >>= 1;
        }
        out
    }

    /// Applies the motion to a point.
    pub fn transform_point(self, p: Vec3) -> Vec3 {
        self.rotation * p + self.translation
    }
}

/// The root-motion block of a clip, read in place (validated by [`Clip::from_bytes`]).
#[derive(Clone, Copy)]
pub(crate) struct RootBlock<'a> {
    bone: u32,
    /// The ancestor chain, outermost first: `u32` bone indices.
    chain: &'a [u8],
    end: Option<RootEnd>,
    in_place: Option<RootInPlace>,
}

impl<'a> Clip<'a> {
    /// The root-motion block, when the header has one.
    #[inline]
    pub(crate) fn root_block(&self) -> Option<RootBlock<'a>> {
        if self.header.flags.get() & FLAG_ROOT_MOTION == 0 {
            return None;
        }
        let (block, rest) = RootMotionBlock::read_from_prefix(self.bytes.get(HEADER_SIZE..)?).ok()?;
        let options = block.options.get();
        let chain_len = block.chain_len.get().min(MAX_ROOT_CHAIN);
        let (chain, rest) = rest.split_at_checked(root_chain_len(chain_len))?;
        let chain = chain.get(..(chain_len as usize).saturating_mul(4))?;
        let (end, rest) = if options & ROOT_END_STORED != 0 {
            let (end, rest) = RootEnd::read_from_prefix(rest).ok()?;
            (Some(end), rest)
        } else {
            (None, rest)
        };
        let in_place =
            if options & ROOT_IN_PLACE != 0 { Some(RootInPlace::read_from_prefix(rest).ok()?.0) } else { None };
        Some(RootBlock { bone: block.motion_bone.get(), chain, end, in_place })
    }

    /// The bone whose track is the root motion: the block's, or bone 0 (a root, as
    /// parents come before their children). `None` for a clip without bones.
    pub fn root_motion_bone(&self) -> Option<u32> {
        match self.root_block() {
            Some(b) => Some(b.bone),
            None => (self.bone_count > 0).then_some(0),
        }
    }

    /// Whether poses show the root-motion bone in place (its first sample), its motion
    /// read only through [`Clip::root_motion`] and [`Clip::root_transform`].
    pub fn root_motion_in_place(&self) -> bool {
        self.root_block().is_some_and(|b| b.in_place.is_some())
    }

    /// Whether a wrapping clip keeps its root's dropped last sample, so that its motion
    /// over the last interval and over whole loops is the source's.
    pub fn root_end_stored(&self) -> bool {
        self.root_block().is_some_and(|b| b.end.is_some())
    }

    /// The in-place bone and the transform poses give it, when it plays in place.
    #[inline]
    pub(crate) fn in_place(&self) -> Option<(usize, Transform)> {
        let b = self.root_block()?;
        let t = b.in_place?;
        let get = |v: &F32| v.get();
        let [tx, ty, tz] = t.translation.each_ref().map(get);
        let [sx, sy, sz] = t.scale.each_ref().map(get);
        let rotation = normalized(t.rotation.each_ref().map(get));
        Some((
            b.bone as usize,
            Transform { rotation, translation: Vec3::new(tx, ty, tz), scale: Vec3::new(sx, sy, sz) },
        ))
    }

    /// The root motion at `time` (clamped to `[0, duration]`): the root-motion bone's
    /// transform in object space, `U(t)`, whether or not poses show it in place (its
    /// own track composed with those of its ancestors, if it is not a root). In a
    /// wrapping clip whose block keeps the dropped last sample, the last interval runs
    /// towards that sample (where poses run back to the first) and the duration is that
    /// sample, so the motion never jumps back. The identity for a clip without bones.
    pub fn root_transform(&self, time: f32) -> Transform {
        self.root_transform_placed(time, &alone)
    }

    /// [`Clip::root_transform`] of a clip of a streaming database, from its key frames
    /// and those of the tiers `residency` holds (as [`Sampler::seek_streamed`] samples
    /// them), so that the motion matches the poses at any fidelity. Fails when
    /// `binding` or `residency` is another clip's or database's.
    pub fn root_transform_streamed<S: AsRef<[Slot<'a>]>>(
        &self,
        time: f32,
        binding: &Binding<'_>,
        residency: &Residency<'a, S>,
    ) -> Result<Transform, Error> {
        Ok(self.root_transform_placed(time, &streamed(self, binding, residency)?))
    }

    /// [`Clip::root_transform`] with `place` pointing a sampler at two keys.
    fn root_transform_placed(&self, time: f32, place: &dyn Fn(&mut Sampler<'a>, u32, u32, f32)) -> Transform {
        let local = self.root_local_placed(time, place);
        let Some(block) = self.root_block() else { return local };
        let position = Position::of(self, time);
        let mut sampler = Sampler::unplaced(*self);
        place(&mut sampler, position.k0, position.k1, position.fraction);
        // Outermost ancestor first: parent · child, down to the motion bone.
        let mut object: Option<Transform> = None;
        for entry in block.chain.chunks_exact(4) {
            let bone = u32_at(entry, 0).unwrap_or(0) as usize;
            // The weight the keys were placed with (around key frames left out, not
            // the position's fraction).
            let t = bone::bone::<Native>(self, sampler.keys(), sampler.alpha(), bone);
            object = Some(match object {
                Some(parent) => compose(&parent, &t),
                None => t,
            });
        }
        match object {
            Some(parent) => compose(&parent, &local),
            None => local,
        }
    }

    /// The root-motion bone's own (local) track at `time`, with a wrapping clip's
    /// kept last sample: see [`Clip::root_transform`].
    pub fn root_local(&self, time: f32) -> Transform {
        self.root_local_placed(time, &alone)
    }

    /// [`Clip::root_local`] of a clip of a streaming database, with the tiers
    /// `residency` holds ([`Clip::root_transform_streamed`]).
    pub fn root_local_streamed<S: AsRef<[Slot<'a>]>>(
        &self,
        time: f32,
        binding: &Binding<'_>,
        residency: &Residency<'a, S>,
    ) -> Result<Transform, Error> {
        Ok(self.root_local_placed(time, &streamed(self, binding, residency)?))
    }

    /// [`Clip::root_local`] with `place` pointing a sampler at two keys.
    fn root_local_placed(&self, time: f32, place: &dyn Fn(&mut Sampler<'a>, u32, u32, f32)) -> Transform {
        let Some(bone) = self.root_motion_bone() else { return Transform::IDENTITY };
        let bone = bone as usize;
        let position = Position::of(self, time);
        let decode = |k0: u32, k1: u32, alpha: f32| {
            let mut sampler = Sampler::unplaced(*self);
            place(&mut sampler, k0, k1, alpha);
            bone::bone::<Native>(self, sampler.keys(), sampler.alpha(), bone)
        };
        let at = decode(position.k0, position.k1, position.fraction);
        let Some(end) = self.root_block().and_then(|b| b.end) else { return at };
        let end_rotation = end.rotation.map(|v| v.get());
        let [ex, ey, ez] = end.translation.map(|v| v.get());
        if position.loop_end {
            return Transform { rotation: normalized(end_rotation), translation: Vec3::new(ex, ey, ez), ..at };
        }
        let last = self.sample_count.saturating_sub(1);
        if position.k1 != 0 || position.k0 != last || position.fraction == 0.0 {
            return at;
        }
        // The last interval: from the last stored key towards the kept end, with the
        // decoder's interpolation (decoding.md) on the scalar backend.
        let key = decode(last, last, 0.0);
        let alpha = position.fraction;
        let [x, y, z, w] =
            finish_rotation(false, lanes(key.rotation.to_array()), lanes(end_rotation), alpha).to_array();
        let [tx, ty, tz] = key.translation.to_array();
        let [x0, y0, z0, _] = lerp(lanes([tx, ty, tz, 0.0]), lanes([ex, ey, ez, 0.0]), alpha).to_array();
        Transform { rotation: Quat::from_xyzw(x, y, z, w), translation: Vec3::new(x0, y0, z0), ..at }
    }

    /// How far the character moved from playback time `previous` to `current` (both
    /// clamped to `[0, duration]`), with `wraps` the number of times playback passed
    /// the loop point in between: positive forwards, negative backwards (playing in
    /// reverse), 0 within one loop. The result is in the character's frame at
    /// `previous`: `character = character · displacement` moves it. See the module
    /// documentation for the rule. Four single-bone decodes; no allocation.
    pub fn root_motion(&self, previous: f32, current: f32, wraps: i32) -> Displacement {
        self.displacement(previous, current, wraps, &|t| self.root_transform(t))
    }

    /// [`Clip::root_motion`] of a clip of a streaming database, with the tiers
    /// `residency` holds ([`Clip::root_transform_streamed`]).
    pub fn root_motion_streamed<S: AsRef<[Slot<'a>]>>(
        &self,
        previous: f32,
        current: f32,
        wraps: i32,
        binding: &Binding<'_>,
        residency: &Residency<'a, S>,
    ) -> Result<Displacement, Error> {
        let place = streamed(self, binding, residency)?;
        Ok(self.displacement(previous, current, wraps, &|t| self.root_transform_placed(t, &place)))
    }

    /// The displacement rule of [`Clip::root_motion`] over the motion `u`.
    fn displacement(&self, previous: f32, current: f32, wraps: i32, u: &dyn Fn(f32) -> Transform) -> Displacement {
        let u = |t: f32| Displacement::of(&u(t));
        let start = u(0.0);
        let undo_start = start.inverse();
        let one_loop = u(self.duration()).then(undo_start);
        start.then(u(previous).inverse()).then(one_loop.powi(wraps)).then(u(current)).then(undo_start)
    }
}

/// Points a sampler at two keys of the clip alone.
fn alone(sampler: &mut Sampler<'_>, k0: u32, k1: u32, alpha: f32) {
    sampler.place(k0, k1, alpha);
}

/// Points a sampler at two keys with the tiers `residency` holds; refuses a binding
/// or residency of another clip or database.
fn streamed<'a, 'r, S: AsRef<[Slot<'a>]>>(
    clip: &Clip<'_>,
    binding: &'r Binding<'r>,
    residency: &'r Residency<'a, S>,
) -> Result<impl Fn(&mut Sampler<'a>, u32, u32, f32) + 'r, Error> {
    binding.check(clip, residency.database_id())?;
    Ok(move |s: &mut Sampler<'a>, k0, k1, alpha| s.place_streamed(k0, k1, alpha, binding, residency))
}

fn lanes(v: [f32; 4]) -> F32x4 {
    F32x4::from_bits(v.map(f32::to_bits))
}

/// `child` in `parent`'s space: rotations multiplied, the child's translation scaled,
/// rotated and moved by the parent's, scales multiplied component-wise (which is the
/// exact composition when the parent's scale is uniform).
fn compose(parent: &Transform, child: &Transform) -> Transform {
    Transform {
        rotation: (parent.rotation * child.rotation).normalize(),
        translation: parent.rotation * (parent.scale * child.translation) + parent.translation,
        scale: parent.scale * child.scale,
    }
}

/// A stored rotation normalised as the decoder normalises (the identity when its
/// squared length is not a positive finite number).
fn normalized(q: [f32; 4]) -> Quat {
    let [x, y, z, w] = finish_rotation(false, lanes(q), lanes(q), 0.0).to_array();
    Quat::from_xyzw(x, y, z, w)
}
