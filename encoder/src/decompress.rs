//! Decoding a whole `.ossa` clip, one pose per original sample, into a [`RawClip`]
//! in memory ([`decompress`]): for comparisons and for exporters that need the whole
//! clip (glTF). ACL text is streamed instead ([`crate::formats::acl_text::write_text`]).

use ossa_decoder::{Clip, Sampler, Transform};

use crate::measure::sample_time;
use crate::playback::Playback;
use crate::raw_clip::{Bone, BoneTrack, RawClip, RawTransform, RootPlacement, SourceSkeleton};

/// Decodes every sample of `clip`'s source: a wrapping loop's repeated last sample
/// included (decoded at the duration as its first), and a root-motion bone shown in
/// place with its motion put back. Bone names, parents, shell distances and the bind
/// pose come from the metadata section; without it bones are named by index
/// (`bone_0`, …), have no parents, and a shell distance of 3.
pub fn decompress(clip: &Clip<'_>, default_name: &str) -> Result<RawClip, ossa_decoder::Error> {
    decompress_playing(clip, default_name, Playback::Alone)
}

/// [`decompress`], the clip sampled as `playback` says (a clip of a streaming
/// database with its resident tiers).
pub fn decompress_playing<'a>(
    clip: &Clip<'a>,
    default_name: &str,
    playback: Playback<'_, 'a>,
) -> Result<RawClip, ossa_decoder::Error> {
    let count = clip.bone_count() as usize;
    let samples = clip.source_sample_count() as usize;
    let (name, bones) = skeleton(clip, default_name);
    let mut tracks = vec![
        BoneTrack {
            rotations: Vec::with_capacity(samples),
            translations: Vec::with_capacity(samples),
            scales: Vec::with_capacity(samples),
        };
        count
    ];
    let mut sampler = Sampler::new(*clip);
    let mut pose = vec![Transform::IDENTITY; count];
    let in_place = in_place_bone(clip);
    for s in 0..samples {
        let time = sample_time(s, clip.sample_rate());
        playback.seek(&mut sampler, time)?;
        sampler.decompress_pose(&mut pose)?;
        if let Some(slot) = in_place.and_then(|b| pose.get_mut(b)) {
            *slot = playback.root_local(clip, time)?;
        }
        for (track, t) in tracks.iter_mut().zip(&pose) {
            let r = raw_transform(t);
            track.rotations.push(r.rotation);
            track.translations.push(r.translation);
            track.scales.push(r.scale);
        }
    }
    Ok(RawClip {
        name,
        sample_rate: f64::from(clip.sample_rate()),
        sample_count: samples,
        bones,
        tracks,
        additive: None,
        source: source_skeleton(clip)?,
    })
}

/// The source's joint order and root placements from the metadata (3.2). A joint
/// order that is not a permutation of the bones (the decoder checks only that each
/// entry is in range) is refused as bad metadata.
pub fn source_skeleton(clip: &Clip<'_>) -> Result<SourceSkeleton, ossa_decoder::Error> {
    let Some(meta) = clip.metadata() else { return Ok(SourceSkeleton::default()) };
    let bones = clip.bone_count() as usize;
    let mut joint_order = Vec::new();
    if meta.has_joint_order() {
        let mut seen = vec![false; bones];
        for b in 0..bones as u32 {
            let j = meta.source_index(b).ok_or(ossa_decoder::Error::BadMetadata)? as usize;
            if std::mem::replace(&mut seen[j], true) {
                return Err(ossa_decoder::Error::BadMetadata);
            }
            joint_order.push(j);
        }
    }
    let root_placements = meta
        .root_placements()
        .map(|p| RootPlacement { bone: p.bone as usize, matrix: p.matrix.map(f64::from) })
        .collect();
    Ok(SourceSkeleton { joint_order, root_placements })
}

/// The root-motion bone when poses show it in place.
pub(crate) fn in_place_bone(clip: &Clip<'_>) -> Option<usize> {
    clip.root_motion_bone().filter(|_| clip.root_motion_in_place()).map(|b| b as usize)
}

pub(crate) fn raw_transform(t: &Transform) -> RawTransform {
    RawTransform {
        rotation: t.rotation.to_array().map(f64::from),
        translation: t.translation.to_array().map(f64::from),
        scale: t.scale.to_array().map(f64::from),
    }
}

/// The clip's name and bones: from the metadata section, or `bone_0`, `bone_1`…
/// without parents for a stripped file.
pub(crate) fn skeleton(clip: &Clip<'_>, default_name: &str) -> (String, Vec<Bone>) {
    match clip.metadata() {
        Some(meta) => (
            meta.clip_name().to_owned(),
            meta.bones()
                .map(|b| Bone {
                    name: b.name.to_owned(),
                    parent: b.parent.map(|p| p as usize),
                    shell_distance: f64::from(b.shell_distance),
                    bind_pose: raw_transform(&b.bind_pose),
                })
                .collect(),
        ),
        None => (
            default_name.to_owned(),
            (0..clip.bone_count())
                .map(|i| Bone {
                    name: format!("bone_{i}"),
                    parent: None,
                    shell_distance: 3.0,
                    bind_pose: RawTransform::IDENTITY,
                })
                .collect(),
        ),
    }
}
