//! Writing clips in ACL's text format (file version 5).
//!
//! [`TextWriter`] streams: the caller hands over one sub-track at a time and a
//! function that gives each sample, so a decoded clip of any length is written with
//! memory independent of its sample count. Numbers are written in the shortest decimal
//! form that reads back to the same double ([`TextWriter::new`]), or for values decoded
//! from an `.ossa` file, which are `f32`, to the same `f32` ([`TextWriter::for_decoded`]):
//! either way they survive the round trip exactly.

use std::io::{self, Write};

use ossa_decoder::Additive;

use crate::raw_clip::{AdditiveBase, Bone, RawClip};

/// Writes a clip section by section: [`TextWriter::header`], [`TextWriter::bones`],
/// then for every bone [`TextWriter::begin_track`], three
/// [`TextWriter::sub_track`] calls and [`TextWriter::end_track`], then
/// [`TextWriter::finish`].
pub struct TextWriter<W: Write> {
    out: W,
    /// Numbers are single-precision values (decoded from an `.ossa` file): each is
    /// written in the shortest form that reads back to the same `f32`.
    single: bool,
}

impl<W: Write> TextWriter<W> {
    /// A writer into `out` (buffer it: many small writes follow).
    pub fn new(out: W) -> TextWriter<W> {
        TextWriter { out, single: false }
    }

    /// A writer of values decoded from an `.ossa` file, which are all `f32`: written
    /// as the shortest decimal that reads back to the same `f32` (`0.1` rather than
    /// `0.10000000149011612`).
    pub fn for_decoded(out: W) -> TextWriter<W> {
        TextWriter { out, single: true }
    }

    fn numbers(&mut self, values: &[f64]) -> io::Result<()> {
        if self.single {
            list_f32(&mut self.out, values)
        } else {
            list(&mut self.out, values)
        }
    }

    /// The version and the `clip` section; for an additive clip, its format, and
    /// when known its base's name, sample count and rate.
    pub fn header(
        &mut self,
        name: &str,
        sample_count: usize,
        sample_rate: f64,
        additive: Additive,
        base: Option<&AdditiveBase>,
    ) -> io::Result<()> {
        writeln!(self.out, "version = 5\n\nclip =\n{{")?;
        writeln!(self.out, "\tname = {}", Quoted(name))?;
        writeln!(self.out, "\tnum_samples = {sample_count}")?;
        if self.single {
            writeln!(self.out, "\tsample_rate = {}", sample_rate as f32)?;
        } else {
            writeln!(self.out, "\tsample_rate = {sample_rate}")?;
        }
        if additive != Additive::None {
            writeln!(self.out, "\tadditive_format = {}", Quoted(additive.name()))?;
        }
        if let Some(base) = base {
            writeln!(self.out, "\tadditive_base_name = {}", Quoted(&base.name))?;
            writeln!(self.out, "\tadditive_base_num_samples = {}", base.sample_count)?;
            writeln!(self.out, "\tadditive_base_sample_rate = {:?}", base.sample_rate)?;
        }
        writeln!(self.out, "\tis_binary_exact = false\n}}\n")
    }

    /// A `settings` section holding the precision the clip was compressed to, as ACL's
    /// error threshold (in the clip's units).
    pub fn settings(&mut self, precision: f64) -> io::Result<()> {
        let threshold = if self.single { format!("{}", precision as f32) } else { format!("{precision}") };
        writeln!(self.out, "settings =\n{{\n\terror_threshold = {threshold}\n}}\n")
    }

    /// Opens a track array: `tracks`, or an additive clip's `base_tracks`.
    pub fn begin_tracks(&mut self, key: &str) -> io::Result<()> {
        writeln!(self.out, "{key} =\n[")
    }

    /// Closes the track array.
    pub fn end_tracks(&mut self) -> io::Result<()> {
        writeln!(self.out, "]\n")
    }

    /// The `bones` section.
    pub fn bones(&mut self, bones: &[Bone]) -> io::Result<()> {
        writeln!(self.out, "bones =\n[")?;
        for bone in bones {
            let parent = bone.parent.and_then(|p| bones.get(p)).map(|p| p.name.as_str()).unwrap_or("");
            writeln!(self.out, "\t{{\n\t\tname = {}\n\t\tparent = {}", Quoted(&bone.name), Quoted(parent))?;
            if self.single {
                writeln!(self.out, "\t\tvertex_distance = {:?}", bone.shell_distance as f32)?;
            } else {
                writeln!(self.out, "\t\tvertex_distance = {:?}", bone.shell_distance)?;
            }
            let b = &bone.bind_pose;
            write!(self.out, "\t\tbind_rotation = ")?;
            self.numbers(&b.rotation)?;
            write!(self.out, "\n\t\tbind_translation = ")?;
            self.numbers(&b.translation)?;
            write!(self.out, "\n\t\tbind_scale = ")?;
            self.numbers(&b.scale)?;
            writeln!(self.out, "\n\t}}")?;
        }
        writeln!(self.out, "]\n")
    }

    /// Opens the track of bone `name`.
    pub fn begin_track(&mut self, name: &str) -> io::Result<()> {
        writeln!(self.out, "\t{{\n\t\tname = {}", Quoted(name))
    }

    /// One sub-track (`rotations`, `translations` or `scales`): `count` samples, the
    /// `i`-th given by `value(i)`.
    pub fn sub_track<const N: usize>(
        &mut self,
        key: &str,
        count: usize,
        mut value: impl FnMut(usize) -> io::Result<[f64; N]>,
    ) -> io::Result<()> {
        writeln!(self.out, "\t\t{key} =\n\t\t[")?;
        for i in 0..count {
            self.out.write_all(b"\t\t\t")?;
            let v = value(i)?;
            self.numbers(&v)?;
            self.out.write_all(b"\n")?;
        }
        writeln!(self.out, "\t\t]")
    }

    /// Closes the current track.
    pub fn end_track(&mut self) -> io::Result<()> {
        writeln!(self.out, "\t}}")
    }

    /// Hands back the output.
    pub fn finish(self) -> io::Result<W> {
        Ok(self.out)
    }
}

/// Writes `clip` in ACL's text format, in memory.
pub fn write_clip(clip: &RawClip) -> String {
    let mut w = TextWriter::new(Vec::with_capacity(clip.bones.len() * clip.sample_count * 160 + 1024));
    let write = |w: &mut TextWriter<Vec<u8>>| -> io::Result<()> {
        let format = clip.additive.as_ref().map_or(Additive::None, |b| b.format);
        w.header(&clip.name, clip.sample_count, clip.sample_rate, format, clip.additive.as_ref())?;
        w.bones(&clip.bones)?;
        let base = clip.additive.as_ref().map(|b| ("base_tracks", &b.tracks));
        for (key, tracks) in base.into_iter().chain([("tracks", &clip.tracks)]) {
            w.begin_tracks(key)?;
            for (bone, track) in clip.bones.iter().zip(tracks) {
                w.begin_track(&bone.name)?;
                w.sub_track("rotations", track.rotations.len(), |i| Ok(track.rotations[i]))?;
                w.sub_track("translations", track.translations.len(), |i| Ok(track.translations[i]))?;
                w.sub_track("scales", track.scales.len(), |i| Ok(track.scales[i]))?;
                w.end_track()?;
            }
            w.end_tracks()?;
        }
        Ok(())
    };
    // Writing into a `Vec` cannot fail, and everything written is UTF-8.
    let bytes = write(&mut w).and_then(|()| w.finish()).unwrap_or_default();
    String::from_utf8(bytes).unwrap_or_default()
}

pub(crate) fn list(out: &mut impl Write, values: &[f64]) -> io::Result<()> {
    out.write_all(b"[ ")?;
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            out.write_all(b", ")?;
        }
        write!(out, "{v:?}")?;
    }
    out.write_all(b" ]")
}

/// [`list`] of values that are all `f32`: each in the shortest form that reads back
/// to the same `f32`.
pub(crate) fn list_f32(out: &mut impl Write, values: &[f64]) -> io::Result<()> {
    out.write_all(b"[ ")?;
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            out.write_all(b", ")?;
        }
        write!(out, "{:?}", *v as f32)?;
    }
    out.write_all(b" ]")
}

/// A string in SJSON quotes, with the escapes the reader understands.
pub(crate) struct Quoted<'a>(pub &'a str);

impl std::fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use std::fmt::Write as _;
        f.write_char('"')?;
        for c in self.0.chars() {
            match c {
                '"' => f.write_str("\\\"")?,
                '\\' => f.write_str("\\\\")?,
                '\n' => f.write_str("\\n")?,
                '\t' => f.write_str("\\t")?,
                '\r' => f.write_str("\\r")?,
                c => f.write_char(c)?,
            }
        }
        f.write_char('"')
    }
}
