//! Clips made from other clips, to check that the encoder's gains hold on motion it was
//! not developed on: resampled at other rates, played slower or faster, mirrored, and
//! with a little noise. Each variant is an ordinary clip (it goes out as ACL text, so
//! that ACL compresses the very same samples).
//!
//! Resampling and time-stretching interpolate with Catmull-Rom curves, not straight
//! lines: linear in-betweens would be exactly what key-frame removal takes out, which
//! would flatter an encoder that removes key frames against one that does not.

use ossa_encoder::{BoneTrack, RawClip};

use crate::{quat_mul, Rng};

/// How a variant is made from its source clip.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Variant {
    /// The same motion sampled `rate` times a second.
    Resampled { rate: f64 },
    /// The motion played `factor` times as long, at the source's sample rate.
    Stretched { factor: f64 },
    /// Every transform reflected through the plane `x = 0` (a left-right mirror of the
    /// whole motion, bones keeping their names).
    Mirrored,
    /// Gaussian noise added to every sub-track that moves in the source (those that do
    /// not stay exactly as they are, as a capture solver keeps bone lengths): rotations
    /// turned by `degrees` (standard deviation, about a random axis), translations
    /// moved by `distance` per axis, in the clip's units.
    Noisy { degrees: f64, distance: f64, seed: u64 },
}

/// The variants the generalisation check uses, each with a short name for file names
/// and tables. The amounts are round figures chosen before any measurement: rates
/// above and below typical capture rates for games, a third slower and faster, and
/// noise well under the default precision's effect (0.05° moves a 3 cm vertex by
/// 0.0026 cm).
pub const STANDARD: &[(&str, Variant)] = &[
    ("30hz", Variant::Resampled { rate: 30.0 }),
    ("60hz", Variant::Resampled { rate: 60.0 }),
    ("slow", Variant::Stretched { factor: 1.5 }),
    ("fast", Variant::Stretched { factor: 0.75 }),
    ("mirror", Variant::Mirrored),
    ("noise", Variant::Noisy { degrees: 0.05, distance: 0.005, seed: 0x5EED_0FF5 }),
];

impl Variant {
    /// The variant of `clip` (an additive clip's base is left as it is).
    pub fn apply(&self, clip: &RawClip) -> RawClip {
        match *self {
            Variant::Resampled { rate } => retimed(clip, clip.sample_rate / rate, rate),
            Variant::Stretched { factor } => retimed(clip, 1.0 / factor, clip.sample_rate),
            Variant::Mirrored => mirrored(clip),
            Variant::Noisy { degrees, distance, seed } => noisy(clip, degrees, distance, seed),
        }
    }
}

/// `clip` sampled every `step` source samples, at `rate` samples a second.
fn retimed(clip: &RawClip, step: f64, rate: f64) -> RawClip {
    let last = (clip.sample_count - 1) as f64;
    // Every whole step within the source, and the source's last sample (so the
    // variant ends where the source does).
    let mut positions: Vec<f64> = (0..).map(|i| i as f64 * step).take_while(|&p| p < last - 1e-9).collect();
    positions.push(last);
    let tracks = clip
        .tracks
        .iter()
        .map(|t| BoneTrack {
            rotations: positions.iter().map(|&p| normalized(curve(&t.rotations, p, aligned))).collect(),
            translations: positions.iter().map(|&p| curve(&t.translations, p, |_, v| v)).collect(),
            scales: positions.iter().map(|&p| curve(&t.scales, p, |_, v| v)).collect(),
        })
        .collect();
    RawClip { sample_rate: rate, sample_count: positions.len(), tracks, ..clip.clone() }
}

/// The Catmull-Rom curve through `values` at position `p` (end values repeated past
/// the ends); `prepare(reference, v)` brings each neighbour into line with the first
/// (quaternion hemispheres).
fn curve<const N: usize>(values: &[[f64; N]], p: f64, prepare: impl Fn(&[f64; N], [f64; N]) -> [f64; N]) -> [f64; N] {
    let n = values.len();
    if n == 1 {
        return values[0];
    }
    let i = p.floor() as usize;
    let t = p - i as f64;
    if i >= n - 1 || t == 0.0 {
        // On a source sample: that sample, exactly.
        return values[i.min(n - 1)];
    }
    let at = |k: isize| values[(i as isize + k).clamp(0, n as isize - 1) as usize];
    let p1 = at(0);
    let [p0, p2, p3] = [at(-1), at(1), at(2)].map(|v| prepare(&p1, v));
    let (t2, t3) = (t * t, t * t * t);
    std::array::from_fn(|c| {
        0.5 * (2.0 * p1[c]
            + (p2[c] - p0[c]) * t
            + (2.0 * p0[c] - 5.0 * p1[c] + 4.0 * p2[c] - p3[c]) * t2
            + (3.0 * p1[c] - p0[c] - 3.0 * p2[c] + p3[c]) * t3)
    })
}

/// `q` on the same side of the hypersphere as `reference`.
fn aligned(reference: &[f64; 4], q: [f64; 4]) -> [f64; 4] {
    let dot: f64 = reference.iter().zip(&q).map(|(a, b)| a * b).sum();
    if dot < 0.0 {
        q.map(|c| -c)
    } else {
        q
    }
}

fn normalized(q: [f64; 4]) -> [f64; 4] {
    let len = q.iter().map(|c| c * c).sum::<f64>().sqrt();
    q.map(|c| c / len)
}

/// Reflection through `x = 0`: a point `(x, y, z)` goes to `(-x, y, z)`; a rotation
/// `(x, y, z, w)` to `(x, -y, -z, w)`; scales stay.
fn mirrored(clip: &RawClip) -> RawClip {
    let rotation = |q: [f64; 4]| [q[0], -q[1], -q[2], q[3]];
    let point = |t: [f64; 3]| [-t[0], t[1], t[2]];
    let mut out = clip.clone();
    for bone in &mut out.bones {
        bone.bind_pose.rotation = rotation(bone.bind_pose.rotation);
        bone.bind_pose.translation = point(bone.bind_pose.translation);
    }
    for track in &mut out.tracks {
        track.rotations.iter_mut().for_each(|q| *q = rotation(*q));
        track.translations.iter_mut().for_each(|t| *t = point(*t));
    }
    out
}

fn noisy(clip: &RawClip, degrees: f64, distance: f64, seed: u64) -> RawClip {
    let mut rng = Rng(seed | 1);
    let mut gaussian = move || {
        // Box-Muller, from two uniform numbers in (0, 1].
        let (u, v) = (1.0 - rng.next(), rng.next());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    };
    let radians = degrees.to_radians();
    let mut out = clip.clone();
    for track in &mut out.tracks {
        if moves(&track.rotations) {
            for q in &mut track.rotations {
                // A turn of `radians · g` about each axis: small enough that the sum
                // of the three is the rotation vector.
                let half = [gaussian(), gaussian(), gaussian()].map(|g| 0.5 * radians * g);
                let turn = normalized([half[0], half[1], half[2], 1.0]);
                *q = normalized(quat_mul(turn, *q));
            }
        }
        if moves(&track.translations) {
            for t in &mut track.translations {
                *t = std::array::from_fn(|c| t[c] + distance * gaussian());
            }
        }
    }
    out
}

/// Whether the values are not all equal.
fn moves<const N: usize>(values: &[[f64; N]]) -> bool {
    values.windows(2).any(|w| w[0] != w[1])
}
