//! Biovision hierarchy (`.bvh`) motion capture: the skeleton (`HIERARCHY`: joints,
//! offsets, channels) and the frames (`MOTION`), read into a [`RawClip`].
//!
//! Conventions, as the common readers (Blender's, MotionBuilder's) take them:
//! - a joint's rotation channels, in the order they are listed, compose left to right:
//!   `CHANNELS 3 Zrotation Xrotation Yrotation` is `R = Rz · Rx · Ry` (a vertex is
//!   rotated by `Ry` first), angles in degrees;
//! - a joint with position channels takes them as its translation (they replace its
//!   `OFFSET`, component by component); one without takes its `OFFSET`;
//! - `End Site` blocks are not bones: their offset gives their joint its length;
//! - the frame rate is `1 / Frame Time`.
//!
//! A bone's virtual vertices (its shell distance) are placed at its length: the
//! longest offset of its children or end sites (its own offset for a leaf), at least a
//! thousandth of the skeleton's largest offset, so that the bound scales with the
//! skeleton's units. The bind pose is the offsets with no rotation.
//!
//! Every error names the line; memory stays proportional to the text (the frame count
//! is checked against the values present before anything is stored).

use std::f64::consts::PI;

use ossa_decoder::format::MAX_BONES;

use crate::compress::additive::hamilton;
use crate::formats::{Declared, ImportError};
use crate::raw_clip::{Bone, BoneTrack, RawClip, RawTransform, MAX_TRANSFORM_SAMPLES};

/// One joint as the hierarchy declares it.
struct Joint {
    name: String,
    parent: Option<usize>,
    offset: [f64; 3],
    /// Channels in file order.
    channels: Vec<Channel>,
    /// Longest offset among its children and end sites.
    length: f64,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Channel {
    Position(usize),
    Rotation(usize),
}

/// The words of a text with their line numbers.
struct Words<'t> {
    words: Vec<(&'t str, u32)>,
    at: usize,
}

impl<'t> Words<'t> {
    fn new(text: &'t str) -> Self {
        let mut words = Vec::new();
        for (n, line) in text.lines().enumerate() {
            for word in line.split_whitespace() {
                words.push((word, n as u32 + 1));
            }
        }
        Words { words, at: 0 }
    }

    /// The line of the next word (or of the last one at the end).
    fn line(&self) -> u32 {
        self.words.get(self.at).or(self.words.last()).map_or(1, |w| w.1)
    }

    fn error(&self, message: impl Into<String>) -> ImportError {
        ImportError { line: Some(self.line()), column: None, message: message.into() }
    }

    fn next(&mut self, what: &str) -> Result<&'t str, ImportError> {
        let word = self
            .words
            .get(self.at)
            .map(|w| w.0)
            .ok_or_else(|| self.error(format!("the file ends where {what} was expected")))?;
        self.at += 1;
        Ok(word)
    }

    fn peek(&self) -> Option<&'t str> {
        self.words.get(self.at).map(|w| w.0)
    }

    fn expect(&mut self, expected: &str) -> Result<(), ImportError> {
        let line = self.line();
        let word = self.next(&format!("'{expected}'"))?;
        if word.eq_ignore_ascii_case(expected) {
            Ok(())
        } else {
            Err(ImportError {
                line: Some(line),
                column: None,
                message: format!("expected '{expected}', found '{word}'"),
            })
        }
    }

    fn number(&mut self, what: &str) -> Result<f64, ImportError> {
        let line = self.line();
        let word = self.next(what)?;
        match word.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err(ImportError {
                line: Some(line),
                column: None,
                message: format!("{what}: '{word}' is not a finite number"),
            }),
        }
    }
}

/// Joints nested deeper than this are refused (the reader recurses per level).
pub const MAX_DEPTH: usize = 1024;

/// Reads a `.bvh` file's text; `name` names the clip.
pub fn read_bvh(text: &str, name: &str) -> Result<RawClip, ImportError> {
    read_bvh_checked(text, name, |_| Ok(()))
}

/// [`read_bvh`], calling `check` with the joint and frame counts before the samples
/// are stored (a caller refuses there what would not fit its memory).
pub fn read_bvh_checked(
    text: &str,
    name: &str,
    check: impl FnOnce(Declared) -> Result<(), String>,
) -> Result<RawClip, ImportError> {
    let mut words = Words::new(text);
    words.expect("HIERARCHY")?;
    let mut joints: Vec<Joint> = Vec::new();
    // Roots, then every joint under them, depth first (parents before children).
    while words.peek().is_some_and(|w| w.eq_ignore_ascii_case("ROOT")) {
        words.next("ROOT")?;
        joint(&mut words, &mut joints, None, 0)?;
    }
    if joints.is_empty() {
        return Err(words.error("the hierarchy has no ROOT joint"));
    }
    words.expect("MOTION")?;
    words.expect("Frames:")?;
    let frames_line = words.line();
    let frames = words.number("the frame count")?;
    if frames < 1.0 || frames.fract() != 0.0 {
        return Err(ImportError {
            line: Some(frames_line),
            column: None,
            message: format!("Frames: {frames} is not a positive whole number"),
        });
    }
    words.expect("Frame")?;
    words.expect("Time:")?;
    let time_line = words.line();
    let frame_time = words.number("the frame time")?;
    if frame_time <= 0.0 {
        return Err(ImportError {
            line: Some(time_line),
            column: None,
            message: format!("Frame Time: {frame_time} is not a positive number of seconds"),
        });
    }
    let per_frame: usize = joints.iter().map(|j| j.channels.len()).sum();
    let values_present = words.words.len() - words.at;
    // The declared count checked against the values present before any is stored.
    let frames = frames as usize;
    if values_present != frames.saturating_mul(per_frame) {
        return Err(words.error(format!(
            "{frames} frames of {per_frame} channels need {} values, the file has {values_present}",
            frames.saturating_mul(per_frame)
        )));
    }
    if (joints.len() as u64).saturating_mul(frames as u64) > MAX_TRANSFORM_SAMPLES || joints.len() > MAX_BONES as usize
    {
        return Err(ImportError::whole(format!(
            "{} joints × {frames} frames is more than the encoder takes",
            joints.len()
        )));
    }
    check(Declared { bones: joints.len(), samples: frames, base_samples: 0 }).map_err(ImportError::whole)?;
    let mut tracks: Vec<BoneTrack> = joints
        .iter()
        .map(|_| BoneTrack {
            rotations: Vec::with_capacity(frames),
            translations: Vec::with_capacity(frames),
            scales: vec![[1.0; 3]; frames],
        })
        .collect();
    for _ in 0..frames {
        for (j, joint) in joints.iter().enumerate() {
            let mut translation = joint.offset;
            let mut rotation = [0.0, 0.0, 0.0, 1.0];
            for &channel in &joint.channels {
                let value = words.number(&format!("a value of joint '{}'", joint.name))?;
                match channel {
                    Channel::Position(axis) => translation[axis] = value,
                    Channel::Rotation(axis) => rotation = hamilton(rotation, axis_angle(axis, value * PI / 180.0)),
                }
            }
            tracks[j].rotations.push(rotation);
            tracks[j].translations.push(translation);
        }
    }
    let extent = joints.iter().map(|j| norm(j.offset).max(j.length)).fold(0.0f64, f64::max);
    let floor = if extent > 0.0 { extent * 1e-3 } else { 1.0 };
    let bones = joints
        .iter()
        .map(|j| Bone {
            name: j.name.clone(),
            parent: j.parent,
            shell_distance: if j.length > 0.0 { j.length } else { norm(j.offset) }.max(floor),
            bind_pose: RawTransform { translation: j.offset, ..RawTransform::IDENTITY },
        })
        .collect();
    let clip = RawClip {
        name: name.to_owned(),
        sample_rate: 1.0 / frame_time,
        sample_count: frames,
        bones,
        tracks,
        additive: None,
        source: Default::default(),
    };
    clip.check().map_err(|e| ImportError::whole(e.to_string()))?;
    Ok(clip)
}

/// Reads a joint's block (after `ROOT` or `JOINT`), its children and end sites, and
/// returns its index.
fn joint(
    words: &mut Words<'_>,
    joints: &mut Vec<Joint>,
    parent: Option<usize>,
    depth: usize,
) -> Result<usize, ImportError> {
    let line = words.line();
    if depth >= MAX_DEPTH || joints.len() >= MAX_BONES as usize {
        return Err(ImportError {
            line: Some(line),
            column: None,
            message: format!("more than {MAX_DEPTH} levels of joints, or more than {MAX_BONES} joints"),
        });
    }
    let name = words.next("a joint name")?.to_owned();
    if name == "{" {
        return Err(ImportError { line: Some(line), column: None, message: "a joint needs a name".into() });
    }
    if joints.iter().any(|j| j.name == name) {
        return Err(ImportError { line: Some(line), column: None, message: format!("two joints are named '{name}'") });
    }
    words.expect("{")?;
    words.expect("OFFSET")?;
    let offset = [words.number("OFFSET x")?, words.number("OFFSET y")?, words.number("OFFSET z")?];
    let index = joints.len();
    joints.push(Joint { name, parent, offset, channels: Vec::new(), length: 0.0 });
    if words.peek().is_some_and(|w| w.eq_ignore_ascii_case("CHANNELS")) {
        words.next("CHANNELS")?;
        let count_line = words.line();
        let count = words.number("the channel count")?;
        if !(0.0..=6.0).contains(&count) || count.fract() != 0.0 {
            return Err(ImportError {
                line: Some(count_line),
                column: None,
                message: format!("CHANNELS {count}: a joint has 0 to 6 channels"),
            });
        }
        for _ in 0..count as usize {
            let line = words.line();
            let word = words.next("a channel name")?;
            let channel = match word.to_ascii_lowercase().as_str() {
                "xposition" => Channel::Position(0),
                "yposition" => Channel::Position(1),
                "zposition" => Channel::Position(2),
                "xrotation" => Channel::Rotation(0),
                "yrotation" => Channel::Rotation(1),
                "zrotation" => Channel::Rotation(2),
                _ => {
                    return Err(ImportError {
                        line: Some(line),
                        column: None,
                        message: format!("'{word}' is not a channel (Xposition … Zrotation)"),
                    })
                }
            };
            if joints[index].channels.contains(&channel) {
                return Err(ImportError {
                    line: Some(line),
                    column: None,
                    message: format!("channel {word} listed twice"),
                });
            }
            joints[index].channels.push(channel);
        }
    }
    loop {
        let line = words.line();
        let word = words.next("'}', JOINT or End Site")?;
        if word == "}" {
            return Ok(index);
        }
        let child_offset = if word.eq_ignore_ascii_case("JOINT") {
            let child = joint(words, joints, Some(index), depth + 1)?;
            joints[child].offset
        } else if word.eq_ignore_ascii_case("End") {
            words.expect("Site")?;
            words.expect("{")?;
            words.expect("OFFSET")?;
            let offset = [words.number("OFFSET x")?, words.number("OFFSET y")?, words.number("OFFSET z")?];
            words.expect("}")?;
            offset
        } else {
            return Err(ImportError {
                line: Some(line),
                column: None,
                message: format!("expected '}}', JOINT or End Site, found '{word}'"),
            });
        };
        joints[index].length = joints[index].length.max(norm(child_offset));
    }
}

fn norm(v: [f64; 3]) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

/// The rotation of `angle` radians about axis `axis` (0 x, 1 y, 2 z), `[x, y, z, w]`.
fn axis_angle(axis: usize, angle: f64) -> [f64; 4] {
    let (s, c) = (angle * 0.5).sin_cos();
    let mut q = [0.0, 0.0, 0.0, c];
    q[axis] = s;
    q
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO_JOINTS: &str = "HIERARCHY
ROOT hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT knee
  {
    OFFSET 0 -40 0
    CHANNELS 3 Xrotation Yrotation Zrotation
    End Site
    {
      OFFSET 0 -45 0
    }
  }
}
MOTION
Frames: 2
Frame Time: 0.04
1 90 2  90 0 0   0 0 0
1 90 2  0 90 0   30 0 0
";

    #[test]
    fn channels_compose_in_their_order_and_positions_replace_offsets() {
        let clip = read_bvh(TWO_JOINTS, "walk").unwrap();
        assert_eq!(clip.bones.len(), 2);
        assert_eq!(clip.bones[1].parent, Some(0));
        assert!((clip.sample_rate - 25.0).abs() < 1e-9);
        assert_eq!(clip.tracks[0].translations[0], [1.0, 90.0, 2.0]);
        assert_eq!(clip.tracks[1].translations[0], [0.0, -40.0, 0.0]);
        // Frame 0: Zrotation 90 alone.
        let h = (0.5f64).sqrt();
        let q = clip.tracks[0].rotations[0];
        assert!((q[2] - h).abs() < 1e-12 && (q[3] - h).abs() < 1e-12, "{q:?}");
        // Frame 1: Z 0, X 90, Y 0 → about x.
        let q = clip.tracks[0].rotations[1];
        assert!((q[0] - h).abs() < 1e-12 && (q[3] - h).abs() < 1e-12, "{q:?}");
        // The knee's length is its end site's; the hips' their child's offset.
        assert!((clip.bones[1].shell_distance - 45.0).abs() < 1e-12);
        assert!((clip.bones[0].shell_distance - 40.0).abs() < 1e-12);
    }

    #[test]
    fn rotation_order_matters() {
        // Z then X (listed order) is Rz · Rx: rotating the x axis by Rx leaves it, then
        // Rz turns it to y.
        let zx = hamilton(axis_angle(2, PI / 2.0), axis_angle(0, PI / 2.0));
        let xz = hamilton(axis_angle(0, PI / 2.0), axis_angle(2, PI / 2.0));
        assert!(zx.iter().zip(&xz).any(|(a, b)| (a - b).abs() > 1e-6));
    }

    #[test]
    fn mistakes_name_their_line() {
        let missing = TWO_JOINTS.replace("0 90 0   30 0 0\n", "0 90 0   30 0\n");
        let e = read_bvh(&missing, "x").unwrap_err();
        assert!(e.message.contains("need 18 values, the file has 17"), "{e}");
        let bad = TWO_JOINTS.replace("Xrotation Yrotation Zrotation", "Xrotation Wrotation Zrotation");
        let e = read_bvh(&bad, "x").unwrap_err();
        assert_eq!(e.line, Some(9));
        assert!(e.message.contains("Wrotation"), "{e}");
        let e = read_bvh("HIERARCHY\nROOT a\n{\n OFFSET 0 0\n", "x").unwrap_err();
        assert!(e.message.contains("OFFSET z"), "{e}");
        assert!(read_bvh("", "x").is_err());
        let e = read_bvh(&TWO_JOINTS.replace("Frames: 2", "Frames: 99999999999"), "x").unwrap_err();
        assert!(e.message.contains("need"), "{e}");
        // The line of the frame time itself, not the first frame's after it.
        let zero = TWO_JOINTS.replace("Frame Time: 0.04", "Frame Time: 0");
        let e = read_bvh(&zero, "x").unwrap_err();
        let line = zero.lines().position(|l| l.starts_with("Frame Time")).unwrap() as u32 + 1;
        assert_eq!(e.line, Some(line), "{e}");
    }
}
