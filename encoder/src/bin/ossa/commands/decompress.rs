//! `ossa decompress`: an `.ossa` file in, an ACL text clip out, streamed.

use std::io::{self, Write};
use std::path::Path;

use ossa_decoder::Clip;
use ossa_encoder::decompress::{write_text_within, WriteTextError, DECODE_BUFFER_BYTES};
use ossa_encoder::message::{number32, path as shown};

use crate::failure::{note, say, Failure};
use crate::input::Input;
use crate::memory_limit::MemoryLimit;
use crate::output::Destination;

pub fn run(input: &Path, output: &Path, limit: &MemoryLimit) -> Result<(), Failure> {
    let destination = Destination::resolve(output)?;
    let source = Input::open(input)?;
    source.check_not(destination.identity().as_ref())?;
    let input = source.shown.clone();
    let bytes = source.read_ossa(limit)?;
    // Header byte 20: the kind (format-spec/header.md); 1 is a scalar track list.
    if bytes.get(20) == Some(&ossa_decoder::format::KIND_SCALAR_TRACKS) {
        return track_list(&input, output, destination, &bytes);
    }
    let clip = Clip::from_bytes_verified(&bytes).map_err(|e| Failure::at(&input, e))?;
    let name = input.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();

    let mut out = destination.create(output)?;
    // The decode buffer takes at most half of what the limit leaves after the file.
    let budget = limit.bytes.map_or(DECODE_BUFFER_BYTES as u64, |l| {
        (DECODE_BUFFER_BYTES as u64).min(l.saturating_sub(bytes.len() as u64) / 2).max(64 << 10)
    });
    let mut counted = Counted { inner: &mut out, bytes: 0 };
    let written = match write_text_within(&clip, &name, &mut counted, budget as usize) {
        Ok(w) => w.bytes,
        Err(WriteTextError::Io(e)) => return Err(out.failure(e)),
        Err(e) => return Err(Failure::at(&input, e)),
    };
    out.commit()?;

    let line = format!(
        "{} -> {}: {} bones, {} samples at {} Hz ({:.3} s), {written} B of text",
        shown(&input),
        shown(output),
        clip.bone_count(),
        clip.sample_count(),
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
    let written = match ossa_encoder::decompress::write_track_list(&clip, &name, &mut counted) {
        Ok(w) => w.bytes,
        Err(WriteTextError::Io(e)) => return Err(out.failure(e)),
        Err(e) => return Err(Failure::at(input, e)),
    };
    out.commit()?;
    let line = format!(
        "{} -> {}: {} {} tracks, {} samples at {} Hz, {written} B of text",
        shown(input),
        shown(output),
        clip.track_count(),
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
