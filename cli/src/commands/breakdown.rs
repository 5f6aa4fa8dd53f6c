//! What a clip holds before and after compression, by class of sub-track: how many
//! default, constant and animated sub-tracks it has, what they take raw (the source's
//! 32-bit floats at every sample) and compressed, and how many bits each animated
//! value costs. `ossa stats` prints it so that a user can see why one clip compresses
//! worse than another: more animated sub-tracks, more bits per value, or fewer key
//! frames left out.

use ossa_decoder::format::{SubTrackClass, SubTrackKind};
use ossa_decoder::{Clip, Layout};
use serde_json::{json, Value};

/// Sub-track classes in the order of the arrays below.
const CLASSES: [&str; 3] = ["default", "constant", "animated"];

/// One clip's (or a sum of clips') sub-tracks by class.
#[derive(Clone, Copy, Debug, Default)]
pub struct Breakdown {
    /// Sub-tracks per class (default, constant, animated).
    pub counts: [u64; 3],
    /// Their raw bytes per class: components × 4 bytes × source samples.
    pub raw: [u64; 3],
    /// Values stored for the animated sub-tracks: components × stored key frames.
    pub animated_values: u64,
    /// Key frames stored, over all segments.
    pub stored_key_frames: u64,
    /// Samples of the source.
    pub source_samples: u64,
}

impl Breakdown {
    /// The breakdown of `clip` (its classes and key frames).
    pub fn of(clip: &Clip<'_>) -> Breakdown {
        let mut out = Breakdown {
            stored_key_frames: u64::from(clip.stored_key_frames()),
            source_samples: u64::from(clip.source_sample_count()),
            ..Breakdown::default()
        };
        let mut animated_components = 0u64;
        for bone in 0..clip.bone_count() {
            for kind in SubTrackKind::ALL {
                let Some(class) = clip.sub_track_class(kind, bone) else { continue };
                let class = match class {
                    SubTrackClass::Default => 0,
                    SubTrackClass::Constant => 1,
                    SubTrackClass::Animated => 2,
                };
                let raw_components = if kind == SubTrackKind::Rotation { 4 } else { 3 };
                out.counts[class] += 1;
                out.raw[class] += raw_components * 4 * out.source_samples;
                if class == 2 {
                    let four = kind == SubTrackKind::Rotation && clip.full_quaternion_rotation(bone) == Some(true);
                    animated_components += if kind == SubTrackKind::Rotation && !four { 3 } else { raw_components };
                }
            }
        }
        out.animated_values = animated_components * out.stored_key_frames;
        out
    }

    /// The sum of two breakdowns.
    pub fn plus(self, other: Breakdown) -> Breakdown {
        Breakdown {
            counts: std::array::from_fn(|i| self.counts[i] + other.counts[i]),
            raw: std::array::from_fn(|i| self.raw[i] + other.raw[i]),
            animated_values: self.animated_values + other.animated_values,
            stored_key_frames: self.stored_key_frames + other.stored_key_frames,
            source_samples: self.source_samples + other.source_samples,
        }
    }

    /// Compressed bytes per class: constants are their values; animated sub-tracks
    /// their clip ranges, segment headers, segment ranges and samples; a default one
    /// takes nothing beyond the bit sets every sub-track has.
    fn compressed(&self, layout: &Layout) -> [u64; 3] {
        let animated = layout.clip_ranges + layout.segment_headers + layout.segment_ranges + layout.samples;
        [0, u64::from(layout.constants), u64::from(animated)]
    }

    /// Bytes of neither class: the header, root motion, bit sets and padding.
    fn shared(layout: &Layout) -> u64 {
        u64::from(layout.header + layout.root_motion + layout.track_descriptions + layout.padding)
    }

    /// Bits per stored animated value (one component at one key frame).
    fn bits_per_value(&self, layout: &Layout) -> f64 {
        f64::from(layout.samples) * 8.0 / self.animated_values.max(1) as f64
    }

    /// As JSON: `sub_tracks` by class, each with its count and raw and compressed
    /// bytes, and the animated values' cost.
    pub fn json(&self, layout: &Layout) -> Value {
        let compressed = self.compressed(layout);
        let classes: serde_json::Map<String, Value> = CLASSES
            .iter()
            .enumerate()
            .map(|(i, name)| {
                (
                    (*name).to_owned(),
                    json!({ "count": self.counts[i], "raw_bytes": self.raw[i], "compressed_bytes": compressed[i] }),
                )
            })
            .collect();
        json!({
            "sub_tracks": classes,
            "shared_bytes": Self::shared(layout),
            "key_frames_stored": self.stored_key_frames,
            "source_samples": self.source_samples,
            "bits_per_animated_value": self.bits_per_value(layout),
        })
    }

    /// One line: each class before → after, and the animated values' cost.
    pub fn line(&self, layout: &Layout) -> String {
        let compressed = self.compressed(layout);
        let [d, c, a] = [0, 1, 2].map(|i| (self.counts[i], self.raw[i], compressed[i]));
        format!(
            "animated {} sub-tracks {} → {} B ({:.1} bits per value, {} of {} key frames), \
             constant {}: {} → {} B, default {}: {} → 0 B, header and bit sets {} B",
            a.0,
            a.1,
            a.2,
            self.bits_per_value(layout),
            self.stored_key_frames,
            self.source_samples,
            c.0,
            c.1,
            c.2,
            d.0,
            d.1,
            Self::shared(layout)
        )
    }
}
