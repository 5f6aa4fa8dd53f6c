//! Decoding a whole `.ossa` clip, one pose per original sample: into a [`RawClip`]
//! in memory for comparisons ([`decompress`]), or streamed as ACL text for
//! `ossa decompress` ([`write_text`]).

use ossa_decoder::{Clip, Sampler, ScalarClip, ScalarSampler, Transform};

use crate::formats::acl_text::{list, Quoted};
use crate::measure::sample_time;
use crate::playback::Playback;
use crate::raw_clip::{Bone, BoneTrack, RawClip, RawTransform};

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
    })
}

/// The root-motion bone when poses show it in place.
fn in_place_bone(clip: &Clip<'_>) -> Option<usize> {
    clip.root_motion_bone().filter(|_| clip.root_motion_in_place()).map(|b| b as usize)
}

fn raw_transform(t: &Transform) -> RawTransform {
    RawTransform {
        rotation: t.rotation.to_array().map(f64::from),
        translation: t.translation.to_array().map(f64::from),
        scale: t.scale.to_array().map(f64::from),
    }
}

/// Memory [`write_text`] may use for decoded values, whatever the clip's size.
pub const DECODE_BUFFER_BYTES: usize = 64 << 20;

/// Why [`write_text`] stopped.
#[derive(Debug)]
pub enum WriteTextError {
    /// Writing the output failed (a full disk, a closed pipe…).
    Io(std::io::Error),
    /// The decoder refused a request (cannot happen for a validated clip).
    Decoder(ossa_decoder::Error),
    /// The system refused the decode buffer.
    OutOfMemory(crate::memory::OutOfMemory),
}

impl std::fmt::Display for WriteTextError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WriteTextError::Io(e) => write!(f, "cannot write output: {e}"),
            WriteTextError::Decoder(e) => e.fmt(f),
            WriteTextError::OutOfMemory(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for WriteTextError {}

impl From<std::io::Error> for WriteTextError {
    fn from(e: std::io::Error) -> WriteTextError {
        WriteTextError::Io(e)
    }
}

/// One decoded bone at one sample: rotation, translation, scale.
type Packed = [f32; 10];

fn pack(t: &Transform) -> Packed {
    let (r, p, s) = (t.rotation.to_array(), t.translation.to_array(), t.scale.to_array());
    [r[0], r[1], r[2], r[3], p[0], p[1], p[2], s[0], s[1], s[2]]
}

fn part<const N: usize>(v: &Packed, first: usize) -> [f64; N] {
    std::array::from_fn(|i| f64::from(v[first + i]))
}

/// Writes every sample of `clip` as an ACL text clip into `out`, streaming: the text
/// lists each bone's samples in turn, while the decoder yields whole poses, so bones
/// are decoded in groups that fit [`DECODE_BUFFER_BYTES`] (one group, one pass, for
/// any clip of up to 1.6 million transform samples), and a bone whose samples alone
/// exceed it is decoded sample by sample. Memory does not grow with the sample count.
pub fn write_text<W: std::io::Write>(clip: &Clip<'_>, default_name: &str, out: W) -> Result<W, WriteTextError> {
    write_text_within(clip, default_name, out, DECODE_BUFFER_BYTES)
}

/// [`write_text`] with `budget` bytes for decoded values instead of
/// [`DECODE_BUFFER_BYTES`].
pub fn write_text_within<W: std::io::Write>(
    clip: &Clip<'_>,
    default_name: &str,
    out: W,
    budget: usize,
) -> Result<W, WriteTextError> {
    write_text_playing(clip, default_name, out, budget, Playback::Alone)
}

/// [`write_text_within`], the clip sampled as `playback` says (a clip of a streaming
/// database with its resident tiers).
pub fn write_text_playing<'a, W: std::io::Write>(
    clip: &Clip<'a>,
    default_name: &str,
    out: W,
    budget: usize,
    playback: Playback<'_, 'a>,
) -> Result<W, WriteTextError> {
    let (name, bones) = skeleton(clip, default_name);
    let samples = clip.source_sample_count() as usize;
    let mut w = crate::formats::acl_text::TextWriter::new(out);
    w.header(&name, samples, f64::from(clip.sample_rate()), clip.additive(), None)?;
    w.bones(&bones)?;
    w.begin_tracks("tracks")?;
    let mut sampler = Sampler::new(*clip);
    let in_place = in_place_bone(clip);
    let time = |s: usize| sample_time(s, clip.sample_rate());
    let per_bone = samples * size_of::<Packed>();
    if per_bone <= budget {
        let group = (budget / per_bone).clamp(1, bones.len().max(1));
        let mut pose = crate::memory::filled(bones.len(), Transform::IDENTITY, "a decoded pose")
            .map_err(WriteTextError::OutOfMemory)?;
        let mut buffer = crate::memory::filled(group.min(bones.len()) * samples, [0.0f32; 10], "decoded samples")
            .map_err(WriteTextError::OutOfMemory)?;
        for first in (0..bones.len()).step_by(group) {
            let members = first..(first + group).min(bones.len());
            for s in 0..samples {
                playback.seek(&mut sampler, time(s)).map_err(WriteTextError::Decoder)?;
                sampler.decompress_pose(&mut pose).map_err(WriteTextError::Decoder)?;
                if let Some(slot) = in_place.and_then(|b| pose.get_mut(b)) {
                    *slot = playback.root_local(clip, time(s)).map_err(WriteTextError::Decoder)?;
                }
                for b in members.clone() {
                    buffer[(b - first) * samples + s] = pack(&pose[b]);
                }
            }
            for b in members.clone() {
                let values = &buffer[(b - first) * samples..(b - first + 1) * samples];
                w.begin_track(&bones[b].name)?;
                w.sub_track("rotations", samples, |s| Ok(part::<4>(&values[s], 0)))?;
                w.sub_track("translations", samples, |s| Ok(part::<3>(&values[s], 4)))?;
                w.sub_track("scales", samples, |s| Ok(part::<3>(&values[s], 7)))?;
                w.end_track()?;
            }
        }
    } else {
        for (b, bone) in bones.iter().enumerate() {
            let mut value = |s: usize| -> std::io::Result<Packed> {
                if in_place == Some(b) {
                    return Ok(pack(&playback.root_local(clip, time(s)).map_err(std::io::Error::other)?));
                }
                playback.seek(&mut sampler, time(s)).map_err(std::io::Error::other)?;
                let t = sampler.decompress_bone(b as u32).map_err(std::io::Error::other)?;
                Ok(pack(&t))
            };
            w.begin_track(&bone.name)?;
            w.sub_track("rotations", samples, |s| Ok(part::<4>(&value(s)?, 0)))?;
            w.sub_track("translations", samples, |s| Ok(part::<3>(&value(s)?, 4)))?;
            w.sub_track("scales", samples, |s| Ok(part::<3>(&value(s)?, 7)))?;
            w.end_track()?;
        }
    }
    w.end_tracks()?;
    Ok(w.finish()?)
}

/// The clip's name and bones: from the metadata section, or `bone_0`, `bone_1`…
/// without parents for a stripped file.
fn skeleton(clip: &Clip<'_>, default_name: &str) -> (String, Vec<Bone>) {
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

/// Writes every sample of the scalar track list `clip` as an ACL text track list
/// (`track_list`, then one track per stored track, named by its output index, with
/// its type, output index and decoded values). The precision each track was
/// compressed with is not in the file: the tracks get ACL's default.
pub fn write_track_list<W: std::io::Write>(clip: &ScalarClip<'_>, name: &str, out: W) -> Result<W, WriteTextError> {
    use std::io::Write as _;
    let mut w = std::io::BufWriter::new(out);
    let c = clip.track_type().components();
    let samples = clip.source_sample_count() as usize;
    let tracks = clip.track_count() as usize;
    writeln!(w, "version = 5\n\ntrack_list =\n{{")?;
    writeln!(w, "\tname = {}", Quoted(name))?;
    writeln!(w, "\tnum_samples = {samples}\n\tsample_rate = {:?}\n}}\n\ntracks =\n[", f64::from(clip.sample_rate()))?;
    // The text lists each track's samples in turn, the decoder gives every track at
    // one time: tracks are decoded in groups that fit DECODE_BUFFER_BYTES, so memory
    // stays bounded whatever the sample count (one pass for any list of up to 4
    // million values).
    let slots = clip.output_count() as usize * c;
    let mut pose = crate::memory::filled(slots, 0.0f32, "decoded track values").map_err(WriteTextError::OutOfMemory)?;
    let per_track = (samples * c * size_of::<f32>()).max(1);
    let group = (DECODE_BUFFER_BYTES / per_track).clamp(1, tracks.max(1));
    let mut values = crate::memory::filled(group.min(tracks) * samples * c, 0.0f32, "decoded track values")
        .map_err(WriteTextError::OutOfMemory)?;
    let mut sampler = ScalarSampler::new(*clip);
    for first in (0..tracks).step_by(group) {
        let members = first..(first + group).min(tracks);
        for s in 0..samples {
            sampler.seek(sample_time(s, clip.sample_rate()));
            sampler.decompress_tracks(&mut pose).map_err(WriteTextError::Decoder)?;
            for t in members.clone() {
                let o = clip.output_index(t as u32).unwrap_or(t as u32) as usize;
                let at = ((t - first) * samples + s) * c;
                values[at..at + c].copy_from_slice(&pose[o * c..o * c + c]);
            }
        }
        for t in members.clone() {
            let o = clip.output_index(t as u32).unwrap_or(t as u32);
            writeln!(
                w,
                "\t{{\n\t\tname = \"track_{o}\"\n\t\ttype = \"{}\"\n\t\toutput_index = {o}",
                clip.track_type().name()
            )?;
            writeln!(w, "\t\tdata =\n\t\t[")?;
            for s in 0..samples {
                let at = ((t - first) * samples + s) * c;
                let row: Vec<f64> = values[at..at + c].iter().map(|&x| f64::from(x)).collect();
                w.write_all(b"\t\t\t")?;
                list(&mut w, &row)?;
                w.write_all(b"\n")?;
            }
            writeln!(w, "\t\t]\n\t}}")?;
        }
    }
    writeln!(w, "]")?;
    w.into_inner().map_err(|e| WriteTextError::Io(e.into_error()))
}
