//! Decoded clips written as ACL text (`ossa decompress -o OUT.acl.sjson`), streamed
//! so that memory does not grow with the clip: a transform clip ([`write_text`]) with
//! its skeleton and the precision it was compressed to, a scalar track list
//! ([`write_track_list`]) with every track of its source, named, in its order.

use ossa_decoder::{Clip, Sampler, ScalarClip, ScalarSampler, Transform};

use super::{list_f32, Quoted, TextWriter};
use crate::decompress::{in_place_bone, skeleton};
use crate::measure::sample_time;
use crate::playback::Playback;
use crate::raw_track_list::NO_OUTPUT;

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
    let mut w = TextWriter::for_decoded(out);
    w.header(&name, samples, f64::from(clip.sample_rate()), clip.additive(), None)?;
    if let Some(meta) = clip.metadata() {
        w.settings(f64::from(meta.precision()))?;
    }
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

/// Writes every sample of the scalar track list `clip` as an ACL text track list.
/// With its metadata (3.2), the list's name and every track of the source in its
/// order, with its name, type, precision and output index, tracks without an output
/// included (their values were not stored: they are written as zeros). Without it,
/// the list is named `name` and each stored track `track_T` (its place among the
/// stored tracks), with its output index and ACL's default precision.
pub fn write_track_list<W: std::io::Write>(clip: &ScalarClip<'_>, name: &str, out: W) -> Result<W, WriteTextError> {
    use std::io::Write as _;
    let mut w = std::io::BufWriter::new(out);
    let c = clip.track_type().components();
    let samples = clip.source_sample_count() as usize;
    let stored = clip.track_count() as usize;
    let meta = clip.metadata();
    writeln!(w, "version = 5\n\ntrack_list =\n{{")?;
    writeln!(w, "\tname = {}", Quoted(meta.map_or(name, |m| m.list_name())))?;
    writeln!(w, "\tnum_samples = {samples}\n\tsample_rate = {}\n}}\n\ntracks =\n[", clip.sample_rate())?;
    // One description per track written: its stored place, if it has one.
    let tracks: Vec<(String, Option<f32>, u32, Option<usize>)> = match meta {
        Some(meta) => {
            let mut next = 0usize;
            meta.tracks()
                .map(|t| {
                    let place = t.output_index.map(|_| {
                        next += 1;
                        next - 1
                    });
                    (t.name.to_owned(), Some(t.precision), t.output_index.unwrap_or(NO_OUTPUT), place)
                })
                .collect()
        }
        None => (0..stored)
            .map(|t| (format!("track_{t}"), None, clip.output_index(t as u32).unwrap_or(t as u32), Some(t)))
            .collect(),
    };
    // The text lists each track's samples in turn, the decoder gives every track at
    // one time: tracks are decoded in groups that fit DECODE_BUFFER_BYTES, so memory
    // stays bounded whatever the sample count (one pass for any list of up to 4
    // million values).
    let mut pose =
        crate::memory::filled(stored * c, 0.0f32, "decoded track values").map_err(WriteTextError::OutOfMemory)?;
    let per_track = (samples * c * size_of::<f32>()).max(1);
    let group = (DECODE_BUFFER_BYTES / per_track).clamp(1, tracks.len().max(1));
    let mut values = crate::memory::filled(group.min(tracks.len()) * samples * c, 0.0f32, "decoded track values")
        .map_err(WriteTextError::OutOfMemory)?;
    let mut sampler = ScalarSampler::new(*clip);
    for first in (0..tracks.len()).step_by(group) {
        let members = first..(first + group).min(tracks.len());
        values.fill(0.0);
        if tracks[members.clone()].iter().any(|t| t.3.is_some()) {
            for s in 0..samples {
                sampler.seek(sample_time(s, clip.sample_rate()));
                sampler.decompress_stored_tracks(&mut pose).map_err(WriteTextError::Decoder)?;
                for (i, track) in tracks[members.clone()].iter().enumerate() {
                    if let Some(t) = track.3 {
                        let at = (i * samples + s) * c;
                        values[at..at + c].copy_from_slice(&pose[t * c..t * c + c]);
                    }
                }
            }
        }
        for (i, (track_name, precision, output, _)) in tracks[members].iter().enumerate() {
            writeln!(w, "\t{{\n\t\tname = {}\n\t\ttype = \"{}\"", Quoted(track_name), clip.track_type().name())?;
            if let Some(p) = precision {
                writeln!(w, "\t\tprecision = {p}")?;
            }
            if *output == NO_OUTPUT {
                writeln!(w, "\t\toutput_index = 0xFFFFFFFF")?;
            } else {
                writeln!(w, "\t\toutput_index = {output}")?;
            }
            writeln!(w, "\t\tdata =\n\t\t[")?;
            for s in 0..samples {
                let at = (i * samples + s) * c;
                let row: Vec<f64> = values[at..at + c].iter().map(|&x| f64::from(x)).collect();
                w.write_all(b"\t\t\t")?;
                list_f32(&mut w, &row)?;
                w.write_all(b"\n")?;
            }
            writeln!(w, "\t\t]\n\t}}")?;
        }
    }
    writeln!(w, "]")?;
    w.into_inner().map_err(|e| WriteTextError::Io(e.into_error()))
}
