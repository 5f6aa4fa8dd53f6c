//! Reading ACL's text clips into a [`RawClip`].
//!
//! Two passes over the text and no syntax tree. The first pass checks the syntax of the
//! whole document and notes where each top-level section starts. The second reads
//! `clip` and `bones`, hands the declared counts to the caller (who may refuse them:
//! too large for the memory it allows), and only then reads the samples, straight into
//! the clip's arrays. So the memory is the clip's and nothing more, whatever the text
//! declares, and a huge declared count is refused before anything is allocated for it.

use std::collections::HashMap;
use std::fmt;

use rayon::prelude::*;

use ossa_decoder::format::{MAX_BONES, MAX_SAMPLES};
use ossa_decoder::{Additive, ScalarType};

use super::keys::{self, Section};
use super::sjson::{Key, Position, Reader, ValueKind};
use crate::formats::{Declared, ImportError};
use crate::memory::{self, OutOfMemory};
use crate::message::{name as shown, number};
use crate::raw_clip::{self, AdditiveBase, Bone, BoneTrack, RawClip, RawTransform, MAX_TRANSFORM_SAMPLES};
use crate::raw_track_list::{RawTrackList, ScalarTrack};

/// What an `.acl.sjson` file holds: a transform clip or a scalar track list.
#[derive(Clone, Debug, PartialEq)]
pub enum AclFile {
    /// `clip`, `bones`, `tracks`.
    Clip(RawClip),
    /// `track_list`, `tracks`.
    TrackList(RawTrackList),
}

/// Reads either kind of file ([`read_clip_checked`] for a clip, whose declared counts
/// `check` sees first; [`read_track_list`] for a track list).
pub fn read_file_checked(
    text: &str,
    default_name: &str,
    check: impl FnOnce(Declared) -> Result<(), String>,
) -> Result<AclFile, ImportError> {
    // The kind comes from a clip reader's first pass, which skims the samples: a clip
    // goes on from there (its second pass checks every sample); a track list is read
    // by its own reader.
    let mut r = ClipReader::new(text, true);
    match r.scan(text) {
        Ok(sections) if sections.get("track_list").is_some() => {
            read_track_list(text, default_name).map(AclFile::TrackList)
        }
        scanned => {
            let read = scanned.and_then(|sections| read_scanned(&mut r, sections, default_name, check));
            read.map_err(|e| r.syntax_first(e)).map(AclFile::Clip)
        }
    }
}

/// Reads a scalar track list (`track_list` and `tracks` of `type`, `precision`,
/// `output_index` and `data`; the keys of transform track lists are refused).
pub fn read_track_list(text: &str, default_name: &str) -> Result<RawTrackList, ImportError> {
    let mut r = ClipReader::new(text, false);
    let result = read_list_sections(&mut r, text, default_name);
    result.map_err(|e| r.syntax_first(e))
}

fn read_list_sections(r: &mut ClipReader, text: &str, default_name: &str) -> Result<RawTrackList, ImportError> {
    let sections = r.scan(text)?;
    r.version(&sections)?;
    let list_at = sections.get("track_list").ok_or_else(|| ImportError::whole("missing 'track_list' section"))?;
    r.r.seek(list_at);
    let (mut name, mut samples, mut rate) = (None, None, None);
    r.object(&keys::TRACK_LIST, "'track_list'", |r, key, at| {
        match keys::TRACK_LIST.keys[key] {
            "name" => name = Some(r.string("list name")?),
            "num_samples" => samples = Some((r.number("num_samples")?, at)),
            "sample_rate" => rate = Some((r.number("sample_rate")?, at)),
            _ => r.r.skip_value()?,
        }
        Ok(())
    })?;
    let (samples, samples_at) = samples.ok_or_else(|| r.fail(list_at, "'track_list' has no 'num_samples'"))?;
    let samples = r.sample_count(samples, samples_at, "num_samples")?;
    let (rate, rate_at) = rate.ok_or_else(|| r.fail(list_at, "'track_list' has no 'sample_rate'"))?;
    if let Some(problem) = raw_clip::sample_rate_problem(rate, samples) {
        return Err(r.fail(rate_at, problem));
    }
    if let Some(settings) = sections.get("settings") {
        r.r.seek(settings);
        r.settings()?;
    }
    let tracks_at = sections.get("tracks").ok_or_else(|| ImportError::whole("missing 'tracks' section"))?;
    r.r.seek(tracks_at);
    r.expect(ValueKind::Array, "'tracks'")?;
    r.r.begin_array()?;
    let mut tracks: Vec<ScalarTrack> = Vec::new();
    let mut list_type: Option<ScalarType> = None;
    while r.r.next_item()? {
        let index = tracks.len();
        let mut track = ScalarTrack {
            name: format!("track_{index}"),
            precision: 0.0001,
            output_index: index as u32,
            values: Vec::new(),
        };
        let mut kind: Option<(ScalarType, Position)> = None;
        let mut data: Option<Position> = None;
        let object_at = r.object(&keys::SCALAR_TRACK, "a track", |r, key, at| {
            match keys::SCALAR_TRACK.keys[key] {
                "name" => track.name = r.string("track name")?,
                "type" => {
                    let t = r.string("type")?;
                    let found = match t.as_str() {
                        "float1f" => ScalarType::Float1,
                        "float2f" => ScalarType::Float2,
                        "float3f" => ScalarType::Float3,
                        "float4f" => ScalarType::Float4,
                        "vector4f" => ScalarType::Vector4,
                        "qvvf" => {
                            return Err(r.fail(
                                at,
                                "transform tracks ('qvvf') in a track list are not supported: give them as a clip",
                            ))
                        }
                        other => {
                            return Err(r.fail(
                                at,
                                format!(
                                    "type '{}' is not one of float1f, float2f, float3f, float4f, vector4f",
                                    shown(other)
                                ),
                            ))
                        }
                    };
                    kind = Some((found, at));
                }
                "precision" => track.precision = r.number("precision")?,
                "output_index" => {
                    let o = r.number("output_index")?;
                    if o.fract() != 0.0 || !(0.0..=f64::from(u32::MAX)).contains(&o) {
                        return Err(r.fail(
                            at,
                            format!("output_index {} is not a whole number from 0 to 4294967295", number(o)),
                        ));
                    }
                    track.output_index = o as u32;
                }
                "data" => {
                    data = Some(at);
                    r.r.skip_value()?;
                }
                _ => r.r.skip_value()?,
            }
            Ok(())
        })?;
        let (kind, kind_at) =
            kind.ok_or_else(|| r.fail(object_at, format!("track '{}' has no 'type'", shown(&track.name))))?;
        match list_type {
            None => list_type = Some(kind),
            Some(t) if t != kind => {
                return Err(r.fail(
                    kind_at,
                    format!("track '{}' is {}, the list's tracks are {}", shown(&track.name), kind.name(), t.name()),
                ))
            }
            _ => {}
        }
        if !(track.precision.is_finite() && track.precision > 0.0) {
            return Err(r.fail(
                object_at,
                format!(
                    "track '{}': precision {} is not a positive number",
                    shown(&track.name),
                    number(track.precision)
                ),
            ));
        }
        let data_at = data.ok_or_else(|| r.fail(object_at, format!("track '{}' has no 'data'", shown(&track.name))))?;
        let end = r.r.position();
        r.r.seek(data_at);
        track.values = r.scalar_samples(&track.name, kind.components(), samples)?;
        r.r.seek(end);
        tracks.push(track);
    }
    let list = RawTrackList {
        name: name.unwrap_or_else(|| default_name.to_owned()),
        sample_rate: rate,
        sample_count: samples,
        track_type: list_type.unwrap_or(ScalarType::Float1),
        tracks,
    };
    list.check().map_err(|e| ImportError::whole(e.to_string()))?;
    Ok(list)
}

/// Reads a clip from the text of an `.acl.sjson` file. `default_name` names the clip
/// when the file does not.
pub fn read_clip(text: &str, default_name: &str) -> Result<RawClip, ImportError> {
    read_clip_checked(text, default_name, |_| Ok(()))
}

/// Like [`read_clip`], and calls `check` with the declared counts once they are known
/// and before anything proportional to them is allocated; an error from `check` ends
/// the reading with that message (a memory limit, typically).
pub fn read_clip_checked(
    text: &str,
    default_name: &str,
    check: impl FnOnce(Declared) -> Result<(), String>,
) -> Result<RawClip, ImportError> {
    read_clip_with(text, default_name, check, true)
}

/// [`read_clip`] with the first pass checking every value, the samples too, and the
/// second reading the tracks one after another: the plain reading that the fast one
/// must match exactly (outcome and messages), for differential tests and fuzzing.
#[doc(hidden)]
pub fn read_clip_unskimmed(text: &str, default_name: &str) -> Result<RawClip, ImportError> {
    read_clip_with(text, default_name, |_| Ok(()), false)
}

/// Reads a clip; `skim` lets the first pass skip the samples unchecked and the
/// second read them on every core (the outcome is the same either way: a test
/// compares them).
fn read_clip_with(
    text: &str,
    default_name: &str,
    check: impl FnOnce(Declared) -> Result<(), String>,
    skim: bool,
) -> Result<RawClip, ImportError> {
    let mut r = ClipReader::new(text, skim);
    // The first syntax error in the document is the one reported, before any other
    // problem, although the first pass leaves the samples unchecked (see `scan`).
    read_sections(&mut r, text, default_name, check).map_err(|e| r.syntax_first(e))
}

/// Both passes; every error goes through [`ClipReader::syntax_first`].
fn read_sections(
    r: &mut ClipReader,
    text: &str,
    default_name: &str,
    check: impl FnOnce(Declared) -> Result<(), String>,
) -> Result<RawClip, ImportError> {
    let sections = r.scan(text)?;
    read_scanned(r, sections, default_name, check)
}

/// The second pass, over the `sections` the first found.
fn read_scanned(
    r: &mut ClipReader,
    sections: Sections,
    default_name: &str,
    check: impl FnOnce(Declared) -> Result<(), String>,
) -> Result<RawClip, ImportError> {
    r.version(&sections)?;
    if let Some(list) = sections.get("track_list") {
        return Err(r.fail(
            list,
            "this file holds a scalar track list ('track_list'), not a clip: read it as a track list (ossa compress does)",
        ));
    }
    let clip_at = sections.get("clip").ok_or_else(|| ImportError::whole("missing 'clip' section"))?;
    r.r.seek(clip_at);
    let header = r.clip_header(clip_at, default_name)?;
    if let Some(settings) = sections.get("settings") {
        r.r.seek(settings);
        r.settings()?;
    }
    let bones_at = sections.get("bones").ok_or_else(|| ImportError::whole("missing 'bones' section"))?;
    r.r.seek(bones_at);
    let bones = r.bones()?;

    // Refuse clips too large to hold before allocating their samples.
    let sample_count = header.samples;
    let transform_samples = bones.len() as u64 * sample_count as u64;
    if transform_samples > MAX_TRANSFORM_SAMPLES {
        return Err(r.fail(
            header.samples_at,
            format!(
                "{} bones × {sample_count} samples = {transform_samples} transform samples, more than the encoder's limit of {MAX_TRANSFORM_SAMPLES}",
                bones.len()
            ),
        ));
    }
    let base = header.additive.filter(|a| a.format != Additive::None);
    let base_samples = base.as_ref().map_or(0, |b| b.samples);
    if bones.len() as u64 * base_samples as u64 > MAX_TRANSFORM_SAMPLES {
        let at = base.as_ref().map_or(header.samples_at, |b| b.samples_at);
        return Err(r.fail(
            at,
            format!(
                "the additive base's {} bones × {base_samples} samples exceed the encoder's limit of {MAX_TRANSFORM_SAMPLES} transform samples",
                bones.len()
            ),
        ));
    }
    check(Declared { bones: bones.len(), samples: sample_count, base_samples }).map_err(ImportError::whole)?;

    // An additive clip's base: its tracks (read one after another: the read-ahead
    // notes are the clip's own tracks'), or without them the bones' bind poses.
    let additive = match base {
        None => None,
        Some(base) => {
            let tracks = match sections.get("base_tracks") {
                Some(at) => {
                    r.r.seek(at);
                    let noted = std::mem::take(&mut r.track_objects);
                    r.owner = "the additive base";
                    let tracks = r.tracks_of(&bones, base.samples, "'base_tracks'");
                    r.track_objects = noted;
                    r.owner = "the clip";
                    tracks?
                }
                None => bind_pose_tracks(&bones, base.samples).map_err(|e| ImportError::whole(e.to_string()))?,
            };
            Some(AdditiveBase {
                format: base.format,
                name: base.name,
                sample_rate: base.rate,
                sample_count: base.samples,
                tracks,
            })
        }
    };

    let tracks_at = sections.get("tracks").ok_or_else(|| ImportError::whole("missing 'tracks' section"))?;
    r.r.seek(tracks_at);
    if additive.as_ref().is_some_and(|b| b.format == Additive::Additive1) {
        r.default_scale = 0.0;
    }
    let tracks = r.tracks(&bones, sample_count)?;
    let mut clip = RawClip {
        name: header.name,
        sample_rate: header.rate,
        sample_count,
        bones,
        tracks,
        additive,
        source: Default::default(),
    };
    clip.validate().map_err(|e| ImportError::whole(e.to_string()))?;
    Ok(clip)
}

/// Where each top-level section's value starts.
struct Sections {
    at: [Option<Position>; keys::TOP.keys.len()],
}

impl Sections {
    fn get(&self, key: &str) -> Option<Position> {
        keys::index(&keys::TOP, key).and_then(|i| self.at[i])
    }
}

/// What `clip = { … }` says.
struct Header {
    name: String,
    samples: usize,
    samples_at: Position,
    rate: f64,
    additive: Option<BaseHeader>,
}

/// What `clip = { … }` says of an additive clip's base.
struct BaseHeader {
    format: Additive,
    name: String,
    samples: usize,
    samples_at: Position,
    rate: f64,
}

/// Tracks holding each bone's bind pose for `samples` samples: the base of an
/// additive clip whose file gives no `base_tracks`.
fn bind_pose_tracks(bones: &[Bone], samples: usize) -> Result<Vec<BoneTrack>, OutOfMemory> {
    let mut out = memory::with_capacity(bones.len(), "the additive base")?;
    for bone in bones {
        let b = &bone.bind_pose;
        out.push(BoneTrack {
            rotations: memory::filled(samples, b.rotation, "the additive base")?,
            translations: memory::filled(samples, b.translation, "the additive base")?,
            scales: memory::filled(samples, b.scale, "the additive base")?,
        });
    }
    Ok(out)
}

struct ClipReader<'a> {
    r: Reader<'a>,
    /// Whether the first pass skims the `tracks` section (see `scan`).
    skim: bool,
    /// Where the `tracks` section starts when the first pass skipped it unchecked.
    unchecked: Option<Position>,
    /// Where each track object starts, noted by the first pass (empty when it was
    /// not, or when there are more objects than a clip can have bones).
    track_objects: Vec<Position>,
    /// The scale a track without `scales` gets: 1, or 0 in an additive1 clip (whose
    /// scales are added to 1).
    default_scale: f64,
    /// Whose samples the tracks being read hold, for messages: "the clip", or "the
    /// additive base" while reading `base_tracks`.
    owner: &'static str,
}

/// A bone as read, before its parent's name is resolved.
struct BoneEntry {
    name: String,
    name_at: Position,
    parent: Option<(String, Position)>,
    shell_distance: f64,
    bind_pose: RawTransform,
}

impl<'a> ClipReader<'a> {
    /// A reader at the start of `text`; `skim`: see [`ClipReader::scan`].
    fn new(text: &'a str, skim: bool) -> Self {
        ClipReader {
            r: Reader::new(text),
            skim,
            unchecked: None,
            track_objects: Vec::new(),
            default_scale: 1.0,
            owner: "the clip",
        }
    }

    /// The error to report instead of `error`: the first syntax error of the
    /// `tracks` section if the first pass skipped it unchecked and it has one (it
    /// comes before any error found later, as if the first pass had checked it).
    fn syntax_first(&mut self, error: ImportError) -> ImportError {
        if let Some(at) = self.unchecked.take() {
            self.r.seek(at);
            if let Err(syntax) = self.r.skip_value() {
                return syntax.into();
            }
        }
        error
    }

    fn fail(&self, at: Position, message: impl Into<String>) -> ImportError {
        self.r.error_at(at, message).into()
    }

    /// First pass: the syntax of the whole document, and where its sections are. A
    /// document without `version` is not an ACL clip at all, which says more than an
    /// unknown key would, so that is checked before unknown keys are reported.
    ///
    /// The `tracks` section, most of the text, is skipped by its brackets alone
    /// ([`Reader::skip_unchecked`]), noting where each track starts: the second pass
    /// reads every value in it with checking readers, and any error reported before
    /// that first checks its syntax ([`ClipReader::syntax_first`]).
    fn scan(&mut self, text: &str) -> Result<Sections, ImportError> {
        let mut sections = Sections { at: [None; keys::TOP.keys.len()] };
        let mut unknown: Option<Key> = None;
        let mut members = 0usize;
        let close = self.r.begin_document()?;
        while let Some(key) = self.r.next_member(close)? {
            members += 1;
            match keys::index(&keys::TOP, &key.name) {
                Some(i) => {
                    if sections.at[i].is_some() {
                        return Err(self.fail(key.position, format!("duplicate key '{}'", key.name)));
                    }
                    self.r.skip_trivia()?;
                    let at = self.r.position();
                    sections.at[i] = Some(at);
                    if self.skim
                        && keys::TOP.keys[i] == "tracks"
                        && self.r.skip_unchecked(&mut self.track_objects, MAX_TRACKS)
                    {
                        self.unchecked = Some(at);
                        continue;
                    }
                }
                None => {
                    unknown.get_or_insert(key);
                }
            }
            self.r.skip_value()?;
        }
        if close.is_some() {
            self.r.end_document()?;
        }
        if members == 0 {
            let what = if text.is_empty() {
                "the file is empty"
            } else if text.trim_start_matches('\u{feff}').trim().is_empty() {
                "the file holds only white space"
            } else {
                "the file holds no keys (only comments and white space)"
            };
            return Err(ImportError::whole(what));
        }
        if sections.get("version").is_some() {
            if let Some(key) = unknown {
                return Err(self.fail(key.position, keys::unknown(&keys::TOP, &key.name)));
            }
        }
        Ok(sections)
    }

    /// Walks the object at the reader: every key must be one of `section`'s, at most
    /// once; `each` is called with the key's index in the section and must consume
    /// the value. Returns the object's position.
    fn object(
        &mut self,
        section: &Section,
        what: &str,
        mut each: impl FnMut(&mut Self, usize, Position) -> Result<(), ImportError>,
    ) -> Result<Position, ImportError> {
        let at = self.expect(ValueKind::Object, what)?;
        self.r.begin_object()?;
        let mut seen = 0u64;
        while let Some(key) = self.r.next_member(Some(b'}'))? {
            let Some(index) = keys::index(section, &key.name) else {
                return Err(self.fail(key.position, keys::unknown(section, &key.name)));
            };
            if seen & (1 << index) != 0 {
                return Err(self.fail(key.position, format!("duplicate key '{}'", key.name)));
            }
            seen |= 1 << index;
            self.r.skip_trivia()?;
            let value_at = self.r.position();
            each(self, index, value_at)?;
        }
        Ok(at)
    }

    /// Checks that the next value is of `kind`; returns its position.
    fn expect(&mut self, kind: ValueKind, what: impl fmt::Display) -> Result<Position, ImportError> {
        let found = self.r.peek_value()?;
        let at = self.r.position();
        if found != kind {
            return Err(self.fail(at, format!("{what} must be {}, found {}", kind.describe(), found.describe())));
        }
        Ok(at)
    }

    /// A number, or the 16 hexadecimal digits of a double (binary-exact files).
    fn number(&mut self, what: impl fmt::Display) -> Result<f64, ImportError> {
        let found = self.r.peek_value()?;
        let at = self.r.position();
        match found {
            ValueKind::Number => Ok(self.r.number()?),
            ValueKind::String => {
                let s = self.r.string()?;
                if s.len() == 16 && s.bytes().all(|b| b.is_ascii_hexdigit()) {
                    u64::from_str_radix(&s, 16).map(f64::from_bits).map_err(|_| self.fail(at, "bad hex number"))
                } else {
                    Err(self.fail(at, format!("{what} must be a number, found the string \"{}\"", shown(&s))))
                }
            }
            other => Err(self.fail(at, format!("{what} must be a number, found {}", other.describe()))),
        }
    }

    /// A quoted string or a bare word.
    fn string(&mut self, what: impl fmt::Display) -> Result<String, ImportError> {
        match self.r.peek_value()? {
            ValueKind::String => Ok(self.r.string()?),
            ValueKind::Word => Ok(self.r.word().to_owned()),
            other => {
                let at = self.r.position();
                Err(self.fail(at, format!("{what} must be a string, found {}", other.describe())))
            }
        }
    }

    /// A list of exactly `N` numbers. `what` names it in messages (formatted only
    /// for an error: this runs for every sample of a clip).
    fn vector<const N: usize>(&mut self, what: impl fmt::Display + Copy) -> Result<[f64; N], ImportError> {
        if let Some(values) = self.r.plain_numbers::<N>() {
            return Ok(values);
        }
        let at = self.expect(ValueKind::Array, what)?;
        self.r.begin_array()?;
        let mut out = [0.0; N];
        let mut found = 0usize;
        while self.r.next_item()? {
            match out.get_mut(found) {
                Some(slot) => *slot = self.number(what)?,
                None => self.r.skip_value()?,
            }
            found += 1;
        }
        if found != N {
            return Err(self.fail(at, format!("{what}: expected {N} numbers, found {found}")));
        }
        Ok(out)
    }

    fn clip_header(&mut self, clip_at: Position, default_name: &str) -> Result<Header, ImportError> {
        let (mut name, mut samples, mut rate) = (None, None, None);
        let (mut format, mut base_name, mut base_samples, mut base_rate) = (Additive::None, None, None, None);
        self.object(&keys::CLIP, "'clip'", |r, key, at| {
            match keys::CLIP.keys[key] {
                "name" => name = Some(r.string("clip name")?),
                "num_samples" => samples = Some((r.number("num_samples")?, at)),
                "sample_rate" => rate = Some((r.number("sample_rate")?, at)),
                "additive_format" => {
                    let kind = r.string("additive_format")?;
                    format = additive_format(&kind).ok_or_else(|| {
                        r.fail(
                            at,
                            format!(
                                "additive_format '{}' is not one of none, relative, additive0, additive1",
                                shown(&kind)
                            ),
                        )
                    })?;
                }
                "additive_base_name" => base_name = Some(r.string("additive_base_name")?),
                "additive_base_num_samples" => base_samples = Some((r.number("additive_base_num_samples")?, at)),
                "additive_base_sample_rate" => base_rate = Some((r.number("additive_base_sample_rate")?, at)),
                _ => r.r.skip_value()?,
            }
            Ok(())
        })?;
        let (samples, samples_at) = samples.ok_or_else(|| self.fail(clip_at, "'clip' has no 'num_samples'"))?;
        let samples = self.sample_count(samples, samples_at, "num_samples")?;
        let (rate, rate_at) = rate.ok_or_else(|| self.fail(clip_at, "'clip' has no 'sample_rate'"))?;
        if let Some(problem) = raw_clip::sample_rate_problem(rate, samples) {
            return Err(self.fail(rate_at, problem));
        }
        // ACL's defaults: a base of one sample at 30 samples per second.
        let additive = if format == Additive::None {
            None
        } else {
            let (count, count_at) = base_samples.unwrap_or((1.0, clip_at));
            let base_samples = self.sample_count(count, count_at, "additive_base_num_samples")?;
            let (base_rate, base_rate_at) = base_rate.unwrap_or((30.0, clip_at));
            if let Some(problem) = raw_clip::sample_rate_problem(base_rate, base_samples) {
                return Err(self.fail(base_rate_at, format!("additive_base_sample_rate: {problem}")));
            }
            Some(BaseHeader {
                format,
                name: base_name.unwrap_or_default(),
                samples: base_samples,
                samples_at: count_at,
                rate: base_rate,
            })
        };
        Ok(Header { name: name.unwrap_or_else(|| default_name.to_owned()), samples, samples_at, rate, additive })
    }

    /// The `data` array of a scalar track: exactly `count` samples of `components`
    /// numbers each.
    fn scalar_samples(&mut self, name: &str, components: usize, count: usize) -> Result<Vec<[f64; 4]>, ImportError> {
        let at = self.expect(ValueKind::Array, "'data'")?;
        self.r.begin_array()?;
        let mut values =
            memory::with_capacity(count, "the track's samples").map_err(|e| ImportError::whole(e.to_string()))?;
        while self.r.next_item()? {
            if values.len() == count {
                return Err(self.fail(at, format!("track '{}' has more than {count} samples", shown(name))));
            }
            let what = "a sample";
            let mut v = [0.0f64; 4];
            match components {
                1 => v[..1].copy_from_slice(&self.vector::<1>(what)?),
                2 => v[..2].copy_from_slice(&self.vector::<2>(what)?),
                3 => v[..3].copy_from_slice(&self.vector::<3>(what)?),
                _ => v = self.vector::<4>(what)?,
            }
            values.push(v);
        }
        if values.len() != count {
            return Err(
                self.fail(at, format!("track '{}' has {} samples, the list has {count}", shown(name), values.len()))
            );
        }
        Ok(values)
    }

    /// Checks the file's `version`: 1 to 5, as ACL writes them.
    fn version(&mut self, sections: &Sections) -> Result<(), ImportError> {
        let at =
            sections.get("version").ok_or_else(|| ImportError::whole("missing 'version': not an ACL clip file"))?;
        self.r.seek(at);
        let v = self.number("version")?;
        if !(1.0..=5.0).contains(&v) || v.fract() != 0.0 {
            return Err(self.fail(at, format!("unsupported ACL file version {} (1 to 5 are read)", number(v))));
        }
        Ok(())
    }

    /// A declared sample count (`what`): a whole number from 1 to the format's limit.
    fn sample_count(&self, samples: f64, at: Position, what: &str) -> Result<usize, ImportError> {
        if samples.fract() != 0.0 || samples < 0.0 {
            return Err(self.fail(at, format!("{what} {} is not a whole number", number(samples))));
        }
        if samples < 1.0 {
            return Err(self.fail(at, format!("the clip has no samples ({what} = 0)")));
        }
        if samples > f64::from(MAX_SAMPLES) {
            return Err(self
                .fail(at, format!("{what} {} exceeds the format's limit of {MAX_SAMPLES} samples", number(samples))));
        }
        Ok(samples as usize)
    }

    /// `settings`: ossa has its own, but misspelled keys are still reported.
    fn settings(&mut self) -> Result<(), ImportError> {
        self.object(&keys::SETTINGS, "'settings'", |r, key, _| {
            if keys::SETTINGS.keys[key] == "segmenting" && r.r.peek_value()? == ValueKind::Object {
                r.object(&keys::SEGMENTING, "'segmenting'", |r, _, _| Ok(r.r.skip_value()?))?;
            } else {
                r.r.skip_value()?;
            }
            Ok(())
        })?;
        Ok(())
    }

    fn bones(&mut self) -> Result<Vec<Bone>, ImportError> {
        let bones_at = self.expect(ValueKind::Array, "'bones'")?;
        self.r.begin_array()?;
        let mut bones: Vec<Bone> = Vec::new();
        let mut index_of: HashMap<String, usize> = HashMap::new();
        while self.r.next_item()? {
            if bones.len() == MAX_BONES as usize {
                // Count the rest without keeping them, to say how many there are.
                let mut count = bones.len();
                loop {
                    self.r.skip_value()?;
                    count += 1;
                    if !self.r.next_item()? {
                        break;
                    }
                }
                return Err(self.fail(bones_at, format!("{count} bones exceed the format's limit of {MAX_BONES}")));
            }
            let entry = self.bone()?;
            let parent = match entry.parent {
                None => None,
                Some((parent, _)) if parent.is_empty() => None,
                Some((parent, at)) => match index_of.get(&parent) {
                    Some(&i) => Some(i),
                    None if parent == entry.name => {
                        return Err(self.fail(at, format!("bone '{}' is its own parent", shown(&entry.name))))
                    }
                    None => {
                        // In bone order, so that a tie names the same bone every time.
                        let hint = keys::nearest(&parent, bones.iter().map(|b| b.name.as_str()))
                            .map(|n| format!(" (did you mean '{}'?)", shown(n)))
                            .unwrap_or_default();
                        return Err(self.fail(
                            at,
                            format!(
                                "bone '{}': parent '{}' is not a bone listed before it (unknown, later or cyclic){hint}",
                                shown(&entry.name),
                                shown(&parent)
                            ),
                        ));
                    }
                },
            };
            if index_of.insert(entry.name.clone(), bones.len()).is_some() {
                return Err(self.fail(entry.name_at, format!("two bones are named '{}'", shown(&entry.name))));
            }
            bones.push(Bone {
                name: entry.name,
                parent,
                shell_distance: entry.shell_distance,
                bind_pose: entry.bind_pose,
            });
        }
        Ok(bones)
    }

    fn bone(&mut self) -> Result<BoneEntry, ImportError> {
        let mut name: Option<(String, Position)> = None;
        let mut bone = BoneEntry {
            name: String::new(),
            name_at: self.r.position(),
            parent: None,
            shell_distance: 3.0,
            bind_pose: RawTransform::IDENTITY,
        };
        let at = self.object(&keys::BONE, "a bone", |r, key, at| {
            match keys::BONE.keys[key] {
                "name" => name = Some((r.string("bone name")?, at)),
                "parent" => bone.parent = Some((r.string("parent")?, at)),
                "vertex_distance" => bone.shell_distance = r.number("vertex_distance")?,
                "bind_rotation" => bone.bind_pose.rotation = r.vector("bind_rotation")?,
                "bind_translation" => bone.bind_pose.translation = r.vector("bind_translation")?,
                _ => bone.bind_pose.scale = r.vector("bind_scale")?,
            }
            Ok(())
        })?;
        let (name, name_at) = name.ok_or_else(|| self.fail(at, "bone has no 'name'"))?;
        if name.len() > usize::from(u16::MAX) {
            return Err(self.fail(name_at, "bone name is longer than 65535 bytes"));
        }
        bone.name = name;
        bone.name_at = name_at;
        Ok(bone)
    }

    fn tracks(&mut self, bones: &[Bone], sample_count: usize) -> Result<Vec<BoneTrack>, ImportError> {
        self.tracks_of(bones, sample_count, "'tracks'")
    }

    /// The track array at the reader (`what`: `'tracks'` or `'base_tracks'`), one
    /// track per bone, those it does not list at their default values.
    fn tracks_of(&mut self, bones: &[Bone], sample_count: usize, what: &str) -> Result<Vec<BoneTrack>, ImportError> {
        let index_of: HashMap<&str, usize> = bones.iter().enumerate().map(|(i, b)| (b.name.as_str(), i)).collect();
        let mut noted = self.read_noted_tracks(&index_of, sample_count);
        let mut tracks: Vec<Option<BoneTrack>> = vec![None; bones.len()];
        self.expect(ValueKind::Array, what)?;
        self.r.begin_array()?;
        // The tracks in document order, each checked as if read here: those read
        // ahead are taken as they were read, any other is read now.
        let mut next_noted = 0;
        while self.r.next_item()? {
            let start = self.r.position();
            let ahead = match self.track_objects.get(next_noted) {
                Some(&at) if at == start => {
                    next_noted += 1;
                    noted.get_mut(next_noted - 1).and_then(Option::take)
                }
                _ => None,
            };
            let (name, name_at) = match &ahead {
                Some(read) => read.name.clone()?,
                None => self.track_name()?,
            };
            let Some(&bone) = index_of.get(name.as_str()) else {
                // In bone order, so that a tie names the same bone every time.
                let hint = keys::nearest(&name, bones.iter().map(|b| b.name.as_str()))
                    .map(|n| format!(" (did you mean '{}'?)", shown(n)))
                    .unwrap_or_default();
                return Err(self.fail(name_at, format!("track '{}' names no bone{hint}", shown(&name))));
            };
            if tracks[bone].is_some() {
                return Err(self.fail(name_at, format!("bone '{}' has two tracks", shown(&name))));
            }
            let track = match ahead.and_then(|read| read.track) {
                Some(read) => {
                    let (track, end) = read?;
                    self.r.seek(end);
                    track
                }
                None => {
                    self.r.seek(start);
                    self.track(&name, sample_count)?
                }
            };
            tracks[bone] = Some(track);
        }
        let mut out =
            memory::with_capacity(bones.len(), "the tracks").map_err(|e| ImportError::whole(e.to_string()))?;
        for track in tracks {
            let track = match track {
                Some(t) => t,
                None => {
                    let mut t = BoneTrack::default();
                    fill_missing(&mut t, [false; 3], sample_count, self.default_scale)
                        .map_err(|e| ImportError::whole(e.to_string()))?;
                    t
                }
            };
            out.push(track);
        }
        Ok(out)
    }

    /// Reads ahead, on every core, the tracks whose starts the first pass noted: their
    /// names in order (cheap: ACL writes the name first), then the samples of the
    /// first track of each bone, in parallel. Each result is what reading that track
    /// in order would give; [`ClipReader::tracks`] reports them in document order, so
    /// the outcome and its messages are the same as reading one track after another.
    /// A track of an unknown bone or a bone's second track is not read (its error
    /// comes first), so the memory is at most the clip's.
    fn read_noted_tracks(&self, index_of: &HashMap<&str, usize>, sample_count: usize) -> Vec<Option<NotedTrack>> {
        if self.track_objects.len() < 2 {
            return Vec::new();
        }
        let reader_at = |at: Position| {
            let mut r = ClipReader {
                r: self.r.clone(),
                skim: false,
                unchecked: None,
                track_objects: Vec::new(),
                default_scale: self.default_scale,
                owner: self.owner,
            };
            r.r.seek(at);
            r
        };
        let names: Vec<Result<(String, Position), ImportError>> =
            self.track_objects.iter().map(|&at| reader_at(at).track_name()).collect();
        let mut taken = vec![false; index_of.len()];
        let first_of_bone: Vec<Option<&str>> = names
            .iter()
            .map(|name| {
                let name = name.as_ref().ok()?.0.as_str();
                let bone = *index_of.get(name)?;
                (!std::mem::replace(&mut taken[bone], true)).then_some(name)
            })
            .collect();
        let tracks: Vec<Option<Result<(BoneTrack, Position), ImportError>>> = self
            .track_objects
            .par_iter()
            .zip(&first_of_bone)
            // One track per task (tracks of constant bones are short, animated ones long).
            .with_max_len(1)
            .map(|(&at, name)| {
                name.map(|name| {
                    let mut r = reader_at(at);
                    r.track(name, sample_count).map(|track| (track, r.r.position()))
                })
            })
            .collect();
        names.into_iter().zip(tracks).map(|(name, track)| Some(NotedTrack { name, track })).collect()
    }

    /// The track object at the reader, whose `name` is already known.
    fn track(&mut self, name: &str, sample_count: usize) -> Result<BoneTrack, ImportError> {
        let mut track = BoneTrack::default();
        let mut given = [false; 3];
        self.object(&keys::TRACK, "a track", |r, key, at| {
            match keys::TRACK.keys[key] {
                "rotations" => {
                    track.rotations = r.samples(name, "rotations", sample_count, at)?;
                    given[0] = true;
                }
                "translations" => {
                    track.translations = r.samples(name, "translations", sample_count, at)?;
                    given[1] = true;
                }
                "scales" => {
                    track.scales = r.samples(name, "scales", sample_count, at)?;
                    given[2] = true;
                }
                _ => r.r.skip_value()?,
            }
            Ok(())
        })?;
        fill_missing(&mut track, given, sample_count, self.default_scale)
            .map_err(|e| ImportError::whole(e.to_string()))?;
        Ok(track)
    }

    /// The `name` of the track object at the reader, found without reading its
    /// samples: ACL writes it first, so this usually reads one key; otherwise the keys
    /// before it are skipped. The caller returns to the object's start afterwards.
    fn track_name(&mut self) -> Result<(String, Position), ImportError> {
        let at = self.expect(ValueKind::Object, "a track")?;
        self.r.begin_object()?;
        while let Some(key) = self.r.next_member(Some(b'}'))? {
            if keys::index(&keys::TRACK, &key.name).is_none() {
                return Err(self.fail(key.position, keys::unknown(&keys::TRACK, &key.name)));
            }
            self.r.skip_trivia()?;
            let value_at = self.r.position();
            if key.name == "name" {
                return Ok((self.string("track name")?, value_at));
            }
            self.r.skip_value()?;
        }
        Err(self.fail(at, "track has no 'name'"))
    }

    /// A list of `count` samples of `N` numbers, read straight into the clip's array.
    fn samples<const N: usize>(
        &mut self,
        bone: &str,
        key: &str,
        count: usize,
        at: Position,
    ) -> Result<Vec<[f64; N]>, ImportError> {
        self.expect(ValueKind::Array, format_args!("bone '{}': {key}", shown(bone)))?;
        self.r.begin_array()?;
        let mut out = memory::with_capacity(count, "the samples").map_err(|e| ImportError::whole(e.to_string()))?;
        let mut found = 0usize;
        while self.r.next_item()? {
            if found < count {
                let item_at = self.r.position();
                let what = SampleLabel { bone, key, index: found };
                let v = self.vector::<N>(what)?;
                if !v.iter().all(|c| c.is_finite()) {
                    return Err(self.fail(item_at, format!("{what}: value is NaN or infinite")));
                }
                if N == 4 && v.iter().all(|c| *c == 0.0) {
                    return Err(self.fail(item_at, format!("{what}: rotation quaternion has zero length")));
                }
                out.push(v);
            } else {
                self.r.skip_value()?;
            }
            found += 1;
        }
        if found != count {
            return Err(
                self.fail(at, format!("bone '{}': {key} has {found} samples, {} has {count}", shown(bone), self.owner))
            );
        }
        Ok(out)
    }
}

/// The additive format named `name` in a clip file (ACL's names, and its legacy
/// capitalised ones).
fn additive_format(name: &str) -> Option<Additive> {
    match name {
        "none" | "None" => Some(Additive::None),
        "relative" | "Relative" => Some(Additive::Relative),
        "additive0" | "Additive0" => Some(Additive::Additive0),
        "additive1" | "Additive1" => Some(Additive::Additive1),
        _ => None,
    }
}

/// A track read ahead by [`ClipReader::read_noted_tracks`]: its name, and unless
/// it was not read, its samples and where it ends.
struct NotedTrack {
    name: Result<(String, Position), ImportError>,
    track: Option<Result<(BoneTrack, Position), ImportError>>,
}

/// Most track objects noted by the first pass: a clip has at most one per bone, so
/// a list longer than that is read one track after another, up to the error.
const MAX_TRACKS: usize = MAX_BONES as usize;

/// How messages name one sample: "bone 'arm': rotations sample 12".
#[derive(Clone, Copy)]
struct SampleLabel<'b> {
    bone: &'b str,
    key: &'b str,
    index: usize,
}

impl fmt::Display for SampleLabel<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bone '{}': {} sample {}", shown(self.bone), self.key, self.index)
    }
}

/// Gives the sub-tracks a track does not list their default value at every sample
/// (`scale` for scales: 1, or 0 in an additive1 clip).
fn fill_missing(track: &mut BoneTrack, given: [bool; 3], count: usize, scale: f64) -> Result<(), OutOfMemory> {
    if !given[0] {
        track.rotations = memory::filled(count, [0.0, 0.0, 0.0, 1.0], "default rotations")?;
    }
    if !given[1] {
        track.translations = memory::filled(count, [0.0; 3], "default translations")?;
    }
    if !given[2] {
        track.scales = memory::filled(count, [scale; 3], "default scales")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "version = 5\nclip = { name = \"c\" num_samples = 2 sample_rate = 30 }\n\
                        bones = [ { name = \"a\" parent = \"\" vertex_distance = 3 } ]\n";

    #[test]
    fn skimming_the_samples_changes_no_outcome_and_no_message() {
        // A small clip with comments, strings with escapes, several tracks (read
        // ahead in parallel when skimmed), a section after the tracks; every byte
        // replaced or followed by characters that matter to the syntax. Skimmed or
        // checked first, the result must be the same clip or the same error.
        let text = "version = 5\nclip = { name = \"c\" num_samples = 2 sample_rate = 30 }\n\
            bones = [ { name = \"a\" parent = \"\" vertex_distance = 3 }\n\
            { name = \"b\\\"q\" parent = \"a\" vertex_distance = 3 } { name = \"c\" parent = \"a\" } ]\n\
            tracks = [\n { name = \"a\" rotations = [ [ 0, 0, 0, 1 ] /* x */ [ 0, 0, 1e-3, 1 ] ] }\n\
            { name = \"b\\\"q\" translations = [ [ 1, 2, 3 ] [ 4, 5, 6 ] ] // y\n }\n\
            { scales = [ [ 1, 1, 1 ], [ 2, 2, 2 ] ] name = \"c\" }\n]\nsettings = { }\n";
        let read = |t: &str, skim: bool| if skim { read_clip(t, "x") } else { read_clip_unskimmed(t, "x") };
        assert!(read(text, true).is_ok(), "{:?}", read(text, true));
        let mut compared = 0;
        for at in 0..=text.len() {
            for insert in ["", "[", "]", "{", "}", "\"", "/", "*", "\n", "x", "1", ".", "e", ",", "/*", "//", "\\"] {
                for replace in [false, true] {
                    if !text.is_char_boundary(at) || (replace && at == text.len()) {
                        continue;
                    }
                    let end = if replace { at + 1 } else { at };
                    let mutated = format!("{}{insert}{}", &text[..at], &text[end..]);
                    assert_eq!(read(&mutated, true), read(&mutated, false), "{mutated}");
                    compared += 1;
                }
            }
        }
        assert!(compared > 10_000, "{compared}");
    }

    #[test]
    fn a_long_hexadecimal_sample_reads_the_same_skimmed_or_not() {
        // Found by the fuzzer: a 17-digit hexadecimal number with a leading zero in a
        // rotation was read when skimmed and refused when checked first.
        for number in ["0X07454784761731403", "0x17454784761731403"] {
            let text =
                format!("{HEAD}tracks = [ {{ name = \"a\" rotations = [ [ 0, 0, 0, 1 ] [ {number}, 0, 0, 1 ] ] }} ]");
            assert_eq!(read_clip(&text, "x"), read_clip_unskimmed(&text, "x"), "{number}");
        }
    }

    #[test]
    fn a_suggested_name_is_the_first_of_equally_near_ones() {
        // 'b1' is one edit from both 'b2' and 'b0': the first listed is named, every
        // time (each reading hashes names with new keys).
        let bones = "bones = [ { name = \"b2\" parent = \"\" } { name = \"b0\" parent = \"b2\" } \
                     { name = \"c\" parent = \"b1\" } ]\n";
        let text =
            format!("version = 5\nclip = {{ name = \"c\" num_samples = 1 sample_rate = 30 }}\n{bones}tracks = [ ]");
        let track = HEAD.replace("name = \"a\" parent", "name = \"b2\" parent") + "tracks = [ { name = \"b1\" } ]";
        let track = track.replace("bones = [", "bones = [ { name = \"b0\" parent = \"\" }");
        for _ in 0..20 {
            let e = read_clip(&text, "x").unwrap_err().to_string();
            assert!(e.contains("did you mean 'b2'?"), "{e}");
            let e = read_clip(&track, "x").unwrap_err().to_string();
            assert!(e.contains("did you mean 'b0'?"), "{e}");
        }
    }

    #[test]
    fn a_track_may_name_its_bone_after_its_samples() {
        let text = format!("{HEAD}tracks = [ {{ translations = [ [ 1, 2, 3 ] [ 4, 5, 6 ] ] name = \"a\" }} ]");
        let clip = read_clip(&text, "x").unwrap();
        assert_eq!(clip.tracks[0].translations, vec![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]);
        assert_eq!(clip.tracks[0].rotations, vec![[0.0, 0.0, 0.0, 1.0]; 2]);
    }

    #[test]
    fn counts_and_shapes_are_reported_exactly() {
        let more = format!("{HEAD}tracks = [ {{ name = \"a\" scales = [ [1,1,1] [1,1,1] [1,1,1] [1,1,1] ] }} ]");
        let e = read_clip(&more, "x").unwrap_err().to_string();
        assert!(e.contains("scales has 4 samples, the clip has 2"), "{e}");
        let short = format!("{HEAD}tracks = [ {{ name = \"a\" rotations = [ [0,0,0,1] [0,0,1] ] }} ]");
        let e = read_clip(&short, "x").unwrap_err().to_string();
        assert!(e.contains("rotations sample 1: expected 4 numbers, found 3"), "{e}");
        let twice = format!("{HEAD}tracks = [ {{ name = \"a\" scales = [ [1,1,1] [1,1,1] ] scales = [ ] }} ]");
        let e = read_clip(&twice, "x").unwrap_err().to_string();
        assert!(e.contains("duplicate key 'scales'"), "{e}");
        let bind = HEAD.replace("vertex_distance = 3", "vertex_distance = 3 bind_scale = [ 1, 1 ]");
        let e = read_clip(&format!("{bind}tracks = [ ]"), "x").unwrap_err().to_string();
        assert!(e.contains("bind_scale: expected 3 numbers, found 2"), "{e}");
        let hex = format!(
            "{HEAD}tracks = [ {{ name = \"a\" translations = [ [ \"3ff0000000000000\", 0, 0 ] [ 1, 0, \"x\" ] ] }} ]"
        );
        let e = read_clip(&hex, "x").unwrap_err().to_string();
        assert!(e.contains("must be a number, found the string \"x\""), "{e}");
    }

    #[test]
    fn the_declared_counts_are_checked_before_any_sample_is_read() {
        // The tracks are malformed: had they been read, that would be the error.
        let text = format!("{HEAD}tracks = [ {{ name = \"a\" rotations = [ [ 0, 0, 0, 0 ] ] }} ]");
        let mut seen = None;
        let e = read_clip_checked(&text, "x", |d| {
            seen = Some(d);
            Err("too large for this machine".into())
        })
        .unwrap_err();
        assert_eq!(seen, Some(Declared { bones: 1, samples: 2, base_samples: 0 }));
        assert_eq!(e.to_string(), "too large for this machine");
    }

    #[test]
    fn syntax_comes_before_meaning_and_a_missing_version_before_unknown_keys() {
        let e = read_clip(&format!("{HEAD}tracks = [ {{ name = \"a\" }} ]\nbroken = [ 1, "), "x").unwrap_err();
        assert!(e.message.contains("end of file inside a list"), "{e}");
        let e = read_clip("{ \"asset\": { \"version\": \"2.0\" } }", "x").unwrap_err();
        assert_eq!(e.to_string(), "missing 'version': not an ACL clip file");
    }
}
