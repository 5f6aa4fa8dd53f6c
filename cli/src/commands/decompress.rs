//! `ossa decompress`: an `.ossa` file in, an ACL text clip out, streamed.

use std::io::{self, IsTerminal as _, Write};
use std::path::Path;

use ossa_decoder::{Binding, Clip, Database, Residency, Slot};
use ossa_encoder::database::Fidelity;
use ossa_encoder::formats::acl_text::{write_text_playing, WriteTextError, DECODE_BUFFER_BYTES};
use ossa_encoder::message::{number32, path as shown};
use ossa_encoder::playback::Playback;

use crate::failure::{note, say, Failure};
use crate::input::Input;
use crate::memory_limit::MemoryLimit;
use crate::output::Destination;

pub fn run(
    input: &Path,
    output: &Path,
    database: Option<&Path>,
    fidelity: Fidelity,
    limit: &MemoryLimit,
) -> Result<(), Failure> {
    // A folder (one that exists, or a path ending in `/`, created) takes the clip as
    // NAME.acl.sjson, as `compress` writes NAME.ossa into one.
    let in_folder;
    let output = if output.is_dir() || output.as_os_str().to_string_lossy().ends_with(std::path::is_separator) {
        if input.as_os_str() == "-" {
            return Err(Failure::at(output, "a clip read from standard input has no name: give -o a file"));
        }
        let folder = crate::output::OutputFolder::prepare(output)?;
        let stem = input.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        in_folder = (folder, output.join(format!("{stem}.acl.sjson")));
        in_folder.1.as_path()
    } else {
        output
    };
    let destination = Destination::resolve(output)?;
    let source = Input::open(input)?;
    source.check_not(destination.identity().as_ref())?;
    let input = source.shown.clone();
    let bytes = source.read_ossa(limit)?;
    // Header byte 20: the kind (format-spec/header.md); 1 is a scalar track list.
    if bytes.get(20) == Some(&ossa_decoder::format::KIND_SCALAR_TRACKS) {
        return track_list(&input, output, destination, &bytes);
    }
    // With a database: the clip opened with its shared pose, if it has one, and the
    // database's tiers of the fidelity asked for, resident.
    let file = match database {
        Some(path) => Some((path, Input::open(path)?.read_database(limit)?)),
        None => None,
    };
    let index = match &file {
        Some((path, file)) => Some((*path, Database::from_bytes_verified(file).map_err(|e| Failure::at(path, e))?)),
        None => None,
    };
    let clip = open_clip(&input, &bytes, index.as_ref().map(|(_, database)| database))?;
    let name = input.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let streamed = match (&file, &index) {
        (Some((path, file)), Some((_, database))) => Some(streamed(&clip, database, path, file, fidelity)?),
        _ => None,
    };

    let playback = match &streamed {
        Some((binding, residency)) => Playback::Streamed { binding, residency },
        None => Playback::Alone,
    };
    if output.extension().is_some_and(|e| e.eq_ignore_ascii_case("glb")) {
        return Err(Failure::at(
            output,
            "binary glTF (.glb) is not written: name the output .gltf (JSON, its buffer embedded)",
        ));
    }
    if super::is_gltf(output) {
        return gltf(&input, output, destination, &clip, &name, playback, limit);
    }
    let mut out = destination.create(output)?;
    // The decode buffer takes at most half of what the limit leaves after the file.
    let budget = limit.bytes.map_or(DECODE_BUFFER_BYTES as u64, |l| {
        (DECODE_BUFFER_BYTES as u64).min(l.saturating_sub(bytes.len() as u64) / 2).max(64 << 10)
    });
    let mut counted = Counted { inner: &mut out, bytes: 0 };
    let result = write_text_playing(&clip, &name, &mut counted, budget as usize, playback);
    let written = match result {
        Ok(w) => w.bytes,
        Err(WriteTextError::Io(e)) => return Err(out.failure(e)),
        Err(e) => return Err(Failure::at(&input, e)),
    };
    out.commit()?;

    // Source samples, as the text holds them (a wrapping loop's repeated last one
    // included), as the glTF export counts them.
    let line = format!(
        "{} -> {}: {} bones, {} samples at {} Hz ({:.3} s), {written} B of text",
        shown(&input),
        shown(output),
        clip.bone_count(),
        clip.source_sample_count(),
        number32(clip.sample_rate()),
        clip.duration(),
    );
    if destination.is_stdout() {
        note(line);
        Ok(())
    } else {
        say(line)
    }
}

/// Bytes a glTF export needs per decoded transform: the values in `f64` (80), as `f32`
/// (40), in base64 (54), and the JSON around them.
const GLTF_BYTES_PER_TRANSFORM: u64 = 200;

/// `ossa decompress IN.ossa -o OUT.gltf`: the clip decoded at every source sample,
/// written as a glTF model to watch in any viewer ([`ossa_encoder::formats::gltf::export`]).
fn gltf<'a>(
    input: &Path,
    output: &Path,
    destination: Destination,
    clip: &Clip<'a>,
    name: &str,
    playback: Playback<'_, 'a>,
    limit: &MemoryLimit,
) -> Result<(), Failure> {
    if destination.is_stdout() && std::io::stdout().is_terminal() {
        return Err(Failure::general(
            "refusing to write a glTF model to a terminal: redirect standard output, or give -o a file",
        ));
    }
    let needed = u64::from(clip.bone_count())
        .saturating_mul(u64::from(clip.source_sample_count()))
        .saturating_mul(GLTF_BYTES_PER_TRANSFORM);
    if !limit.allows(needed) {
        return Err(Failure::at(input, limit.refusal("exporting this clip to glTF", needed)));
    }
    if clip.metadata().is_none() {
        note(format!(
            "ossa: warning: {}: no metadata section (compressed with --strip-metadata): bones are named by \
             index and have no parents in the glTF model",
            shown(input)
        ));
    }
    let raw = ossa_encoder::decompress::decompress_playing(clip, name, playback).map_err(|e| Failure::at(input, e))?;
    let text = ossa_encoder::formats::gltf::write_gltf(&raw);
    let mut out = destination.create(output)?;
    out.write_all(text.as_bytes()).map_err(|e| out.failure(e))?;
    out.commit()?;
    let line = format!(
        "{} -> {}: {} bones, {} samples at {} Hz ({:.3} s), glTF {} B",
        shown(input),
        shown(output),
        clip.bone_count(),
        clip.source_sample_count(),
        number32(clip.sample_rate()),
        clip.duration(),
        text.len()
    );
    if destination.is_stdout() {
        note(line);
        Ok(())
    } else {
        say(line)
    }
}

/// The clip in `bytes` (read from `input`), its checksum verified: opened through
/// `database` when given (which gives a clip with a shared pose its values), on its
/// own otherwise.
pub fn open_clip<'a>(input: &Path, bytes: &'a [u8], database: Option<&Database<'a>>) -> Result<Clip<'a>, Failure> {
    let clip = match database {
        Some(database) => database.open_clip(bytes).and_then(|clip| clip.verify_checksum().map(|()| clip)),
        None => Clip::from_bytes_verified(bytes),
    };
    clip.map_err(|e| match e {
        ossa_decoder::Error::NeedsSharedPose => Failure::at(
            input,
            "the clip takes its constants from its database's shared pose: give the database with --database \
             DB.ossadb",
        ),
        e => Failure::at(input, e),
    })
}

/// The clip's binding to `database` (in `file`, read from `path`) and the residency
/// of the tiers `fidelity` streams in, every chunk's checksum verified first: a
/// corrupted chunk is refused, never decoded.
fn streamed<'a>(
    clip: &Clip<'_>,
    database: &Database<'a>,
    path: &Path,
    file: &'a [u8],
    fidelity: Fidelity,
) -> Result<(Binding<'a>, Residency<'a, Vec<Slot<'a>>>), Failure> {
    let binding = database.bind(clip).map_err(|e| Failure::at(path, e))?;
    let slots = vec![None; database.chunk_slots() as usize];
    let mut residency = Residency::new(database, slots).map_err(|e| Failure::at(path, e))?;
    for &tier in fidelity.tiers() {
        for i in 0..database.chunk_count(tier) {
            let chunk = super::info::chunk_bytes(database, file, tier, i).map_err(|e| Failure::at(path, e))?;
            database.verify_chunk(tier, i, chunk).map_err(|e| Failure::at(path, e))?;
            residency.bind(database, tier, i, chunk).map_err(|e| Failure::at(path, e))?;
        }
    }
    Ok((binding, residency))
}

/// Counts the bytes written through it.
struct Counted<W> {
    inner: W,
    bytes: u64,
}

impl<W: Write> Write for Counted<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// `ossa decompress` of a scalar track list: a `track_list` text file.
fn track_list(input: &Path, output: &Path, destination: Destination, bytes: &[u8]) -> Result<(), Failure> {
    let clip = ossa_decoder::ScalarClip::from_bytes_verified(bytes).map_err(|e| Failure::at(input, e))?;
    let name = input.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let mut out = destination.create(output)?;
    let mut counted = Counted { inner: &mut out, bytes: 0 };
    let written = match ossa_encoder::formats::acl_text::write_track_list(&clip, &name, &mut counted) {
        Ok(w) => w.bytes,
        Err(WriteTextError::Io(e)) => return Err(out.failure(e)),
        Err(e) => return Err(Failure::at(input, e)),
    };
    out.commit()?;
    let tracks = match clip.metadata() {
        Some(meta) if meta.track_count() != clip.track_count() => {
            format!("{} tracks ({} stored)", meta.track_count(), clip.track_count())
        }
        _ => format!("{} tracks", clip.track_count()),
    };
    let line = format!(
        "{} -> {}: {} {tracks}, {} samples at {} Hz, {written} B of text",
        shown(input),
        shown(output),
        clip.track_type().name(),
        clip.source_sample_count(),
        number32(clip.sample_rate()),
    );
    if destination.is_stdout() {
        note(line);
        Ok(())
    } else {
        say(line)
    }
}
