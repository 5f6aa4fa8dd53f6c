//! An uncompressed scalar track list (ACL's `track_list` files): tracks of one to
//! four floats (blend-shape weights, IK weights, a camera's field of view…), each
//! with its own precision and output index.

use std::fmt;

use ossa_decoder::format::{MAX_BONES, MAX_SAMPLES};
use ossa_decoder::ScalarType;

use crate::message::name as shown;
use crate::raw_clip::sample_rate_problem;

/// ACL's output index of a track left out of the compressed data.
pub const NO_OUTPUT: u32 = ossa_decoder::format::NO_OUTPUT;

/// One scalar track.
#[derive(Clone, Debug, PartialEq)]
pub struct ScalarTrack {
    /// Name, for messages and the text written back.
    pub name: String,
    /// The largest absolute error allowed on any component.
    pub precision: f64,
    /// Where the decoder writes it; [`NO_OUTPUT`]: not stored at all.
    pub output_index: u32,
    /// One value per sample, the first [`ScalarType::components`] lanes used.
    pub values: Vec<[f64; 4]>,
}

/// An uncompressed scalar track list.
#[derive(Clone, Debug, PartialEq)]
pub struct RawTrackList {
    /// List name.
    pub name: String,
    /// Samples per second.
    pub sample_rate: f64,
    /// Samples per track (at least 1).
    pub sample_count: usize,
    /// The type of every track.
    pub track_type: ScalarType,
    /// The tracks, in file order.
    pub tracks: Vec<ScalarTrack>,
}

/// What is wrong with a track list.
#[derive(Clone, Debug, PartialEq)]
pub struct TrackListError(pub String);

impl fmt::Display for TrackListError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TrackListError {}

impl RawTrackList {
    /// Checks what the compressor relies on: counts within the format's limits, a
    /// usable rate, finite values within `f32`, positive precisions, output indices
    /// distinct.
    pub fn check(&self) -> Result<(), TrackListError> {
        let fail = |m: String| Err(TrackListError(m));
        if self.sample_count == 0 || self.sample_count > MAX_SAMPLES as usize {
            return fail(format!("{} samples: 1 to {MAX_SAMPLES} are supported", self.sample_count));
        }
        if self.tracks.len() > MAX_BONES as usize {
            return fail(format!("{} tracks: at most {MAX_BONES} are supported", self.tracks.len()));
        }
        if let Some(problem) = sample_rate_problem(self.sample_rate, self.sample_count) {
            return fail(problem);
        }
        let c = self.track_type.components();
        let mut outputs = std::collections::HashSet::new();
        for track in &self.tracks {
            let name = shown(&track.name);
            if !(track.precision.is_finite() && track.precision > 0.0 && track.precision <= f64::from(f32::MAX)) {
                return fail(format!("track '{name}': precision {} is not a positive number", track.precision));
            }
            if track.precision < f64::from(f32::MIN_POSITIVE) {
                return fail(format!(
                    "track '{name}': precision {} is below the single-precision range (about 1.2e-38)",
                    track.precision
                ));
            }
            if track.name.len() > usize::from(u16::MAX) {
                return fail(format!("track '{name}': name longer than 65535 bytes"));
            }
            if track.output_index != NO_OUTPUT && track.output_index >= MAX_BONES {
                return fail(format!(
                    "track '{name}': output index {} is beyond the format's {MAX_BONES} outputs",
                    track.output_index
                ));
            }
            if track.values.len() != self.sample_count {
                return fail(format!(
                    "track '{name}' has {} samples, the list has {}",
                    track.values.len(),
                    self.sample_count
                ));
            }
            if let Some(s) =
                track.values.iter().position(|v| v[..c].iter().any(|x| !x.is_finite() || x.abs() > f64::from(f32::MAX)))
            {
                return fail(format!("track '{name}', sample {s}: a value is not a finite single-precision number"));
            }
            if track.output_index != NO_OUTPUT && !outputs.insert(track.output_index) {
                return fail(format!("track '{name}': output index {} is used twice", track.output_index));
            }
        }
        Ok(())
    }
}
