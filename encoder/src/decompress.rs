//! Decoding a whole `.ossa` clip back into a [`RawClip`], one pose per original
//! sample, for tools (`ossa decompress`) and comparisons.

use ossa_decoder::{Clip, Rounding, Sampler, Transform};

use crate::measure::sample_time;
use crate::raw_clip::{Bone, BoneTrack, RawClip, RawTransform};

/// Decodes every sample of `clip`. Bone names, parents, shell distances and the bind
/// pose come from the metadata section; without it bones are named by index
/// (`bone_0`, …), have no parents, and a shell distance of 3.
pub fn decompress(clip: &Clip<'_>, default_name: &str) -> Result<RawClip, ossa_decoder::Error> {
    let count = clip.bone_count() as usize;
    let samples = clip.sample_count() as usize;
    let (name, bones) = match clip.metadata() {
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
            (0..count)
                .map(|i| Bone {
                    name: format!("bone_{i}"),
                    parent: None,
                    shell_distance: 3.0,
                    bind_pose: RawTransform::IDENTITY,
                })
                .collect(),
        ),
    };
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
    for s in 0..samples {
        sampler.seek(sample_time(s, clip.sample_rate()), Rounding::None);
        sampler.decompress_pose(&mut pose)?;
        for (track, t) in tracks.iter_mut().zip(&pose) {
            let r = raw_transform(t);
            track.rotations.push(r.rotation);
            track.translations.push(r.translation);
            track.scales.push(r.scale);
        }
    }
    Ok(RawClip { name, sample_rate: f64::from(clip.sample_rate()), sample_count: samples, bones, tracks })
}

fn raw_transform(t: &Transform) -> RawTransform {
    RawTransform {
        rotation: t.rotation.to_array().map(f64::from),
        translation: t.translation.to_array().map(f64::from),
        scale: t.scale.to_array().map(f64::from),
    }
}
