//! Shared helpers of the end-to-end tests: locating the shared clips, and an error
//! metric written here independently of the encoder (points pushed through each
//! bone's chain of local transforms with quaternion rotation, in `f64`; the encoder
//! composes 3×4 matrices instead).
#![allow(dead_code)]

pub mod spec_reader;
pub mod spec_writer;

use std::path::{Path, PathBuf};

use ossa_decoder::{Clip, Rounding, Sampler, Transform};
use ossa_encoder::RawClip;

#[allow(unused_imports)] // not every test uses them
pub use ossa_tests::Rng;

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ has a parent").to_owned()
}

/// `../shared/clips` next to the repository, or `None` (with a message) when it is
/// absent outside CI. Under `CI=true` its absence fails the test.
pub fn shared_clips() -> Option<PathBuf> {
    let dir = repo_root().join("../shared/clips");
    if dir.is_dir() {
        return Some(dir);
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("CI=true but {} is missing: the shared clips are required under CI", dir.display());
    }
    // Written to the stream directly: libtest captures `eprintln!` of passing tests,
    // and a skip must be visible.
    use std::io::Write as _;
    let _ = writeln!(
        std::io::stderr(),
        "skipping: {} not found (the shared clips are only on project machines)",
        dir.display()
    );
    None
}

/// `../shared/gltf` next to the repository, or `None` (with a message) when it is
/// absent outside CI; under `CI=true` its absence fails the test.
#[allow(dead_code)]
pub fn shared_gltf() -> Option<PathBuf> {
    let dir = repo_root().join("../shared/gltf");
    if dir.is_dir() {
        return Some(dir);
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("CI=true but {} is missing: the shared glTF models are required under CI", dir.display());
    }
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "skipping: {} not found (only on project machines)", dir.display());
    None
}

/// The 18 transform clips of the shared folder ([`ossa_tests::transform_clips`]).
pub fn transform_clips(dir: &Path) -> Vec<PathBuf> {
    ossa_tests::transform_clips(dir).expect("read shared clips")
}

/// A transform's ten values as `f32` bits, for bit-for-bit comparisons.
pub fn transform_bits(t: &Transform) -> [u32; 10] {
    let mut out = [0u32; 10];
    let values = t.rotation.to_array().into_iter().chain(t.translation.to_array()).chain(t.scale.to_array());
    for (o, v) in out.iter_mut().zip(values) {
        *o = v.to_bits();
    }
    out
}

/// Reads a clip file with the encoder's reader.
pub fn load(path: &Path) -> RawClip {
    let text = std::fs::read_to_string(path).expect("read clip");
    let name = path.file_name().unwrap().to_string_lossy().replace(".acl.sjson", "");
    ossa_encoder::formats::acl_text::read_clip(&text, &name).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A local transform in `f64`.
#[derive(Clone, Copy, Debug)]
pub struct Local {
    pub q: [f64; 4],
    pub t: [f64; 3],
    pub s: [f64; 3],
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

#[allow(unused_imports)]
pub use ossa_tests::quat_mul;

/// The conjugate of `q` (its inverse when unit).
pub fn conjugate(q: [f64; 4]) -> [f64; 4] {
    [-q[0], -q[1], -q[2], q[3]]
}

/// `q` scaled to unit length.
pub fn normalize(q: [f64; 4]) -> [f64; 4] {
    let n = q.iter().map(|v| v * v).sum::<f64>().sqrt();
    q.map(|v| v / n)
}

/// Rotates `v` by the (normalised) quaternion `q`: v + 2w(u×v) + 2u×(u×v).
pub fn rotate(q: [f64; 4], v: [f64; 3]) -> [f64; 3] {
    let n = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    let (u, w) = ([q[0] / n, q[1] / n, q[2] / n], q[3] / n);
    let c1 = cross(u, v);
    let c2 = cross(u, c1);
    [v[0] + 2.0 * (w * c1[0] + c2[0]), v[1] + 2.0 * (w * c1[1] + c2[1]), v[2] + 2.0 * (w * c1[2] + c2[2])]
}

impl Local {
    pub fn apply(&self, p: [f64; 3]) -> [f64; 3] {
        let scaled = [p[0] * self.s[0], p[1] * self.s[1], p[2] * self.s[2]];
        let r = rotate(self.q, scaled);
        [r[0] + self.t[0], r[1] + self.t[1], r[2] + self.t[2]]
    }

    pub fn from_decoded(t: &Transform) -> Local {
        Local {
            q: t.rotation.to_array().map(f64::from),
            t: t.translation.to_array().map(f64::from),
            s: t.scale.to_array().map(f64::from),
        }
    }
}

/// The raw clip's pose at `sample`, rounded to `f32` as the engine consumes it.
pub fn raw_pose(clip: &RawClip, sample: usize) -> Vec<Local> {
    clip.tracks
        .iter()
        .map(|t| Local {
            q: t.rotations[sample].map(|v| f64::from(v as f32)),
            t: t.translations[sample].map(|v| f64::from(v as f32)),
            s: t.scales[sample].map(|v| f64::from(v as f32)),
        })
        .collect()
}

/// Object-space position of a point given in `bone`'s space: through the chain of
/// local transforms, then (a glTF skeleton under an armature) the root's placement in
/// the scene, a row-major 3 × 4 matrix, so that errors are in the scene's units.
pub fn to_object(pose: &[Local], clip: &RawClip, bone: usize, p: [f64; 3]) -> [f64; 3] {
    let mut p = pose[bone].apply(p);
    let mut root = bone;
    while let Some(a) = clip.bones[root].parent {
        p = pose[a].apply(p);
        root = a;
    }
    match clip.source.root_placements.iter().find(|placement| placement.bone == root) {
        Some(placement) => {
            let m = placement.matrix;
            std::array::from_fn(|r| m[4 * r] * p[0] + m[4 * r + 1] * p[1] + m[4 * r + 2] * p[2] + m[4 * r + 3])
        }
        None => p,
    }
}

/// Object-space error of every bone: the largest distance between the virtual
/// vertices (shell distance on local x, y, z) moved by the two poses.
pub fn pose_errors(clip: &RawClip, reference: &[Local], decoded: &[Local]) -> Vec<f64> {
    (0..clip.bones.len())
        .map(|b| {
            let d = clip.bones[b].shell_distance;
            let mut worst = 0.0f64;
            for axis in 0..3 {
                let mut v = [0.0; 3];
                v[axis] = d;
                let a = to_object(reference, clip, b, v);
                let c = to_object(decoded, clip, b, v);
                let dist = ((a[0] - c[0]).powi(2) + (a[1] - c[1]).powi(2) + (a[2] - c[2]).powi(2)).sqrt();
                worst = if dist.is_nan() { f64::INFINITY } else { worst.max(dist) };
            }
            worst
        })
        .collect()
}

/// Decodes `clip_bytes` at every original sample time; returns the largest error and
/// where it is `(bone, sample)`.
pub fn max_error(raw: &RawClip, clip_bytes: &[u8]) -> (f64, usize, usize) {
    let clip = Clip::from_bytes(clip_bytes).expect("valid clip");
    let mut sampler = Sampler::new(clip);
    let mut pose = vec![Transform::IDENTITY; raw.bones.len()];
    let mut worst = (0.0, 0, 0);
    for s in 0..raw.sample_count {
        sampler.seek(s as f32 / clip.sample_rate(), Rounding::None);
        sampler.decompress_pose(&mut pose).expect("decode");
        let decoded: Vec<Local> = pose.iter().map(Local::from_decoded).collect();
        for (b, e) in pose_errors(raw, &raw_pose(raw, s), &decoded).into_iter().enumerate() {
            if e > worst.0 || (b, s) == (0, 0) {
                worst = (worst.0.max(e), b, s);
            }
        }
    }
    worst
}

/// A chain of `bones` bones (each the child of the one before, 10 cm shells) of
/// `samples` samples at 30 Hz, named `name`: bone `b`'s rotation and translation at
/// sample `s` are `motion(b, s)`, its scale 1.
pub fn chain(
    name: &str,
    bones: usize,
    samples: usize,
    motion: impl Fn(usize, usize) -> ([f64; 4], [f64; 3]),
) -> RawClip {
    use ossa_encoder::{Bone, BoneTrack, RawTransform};
    let mut raw = RawClip {
        name: name.into(),
        sample_rate: 30.0,
        sample_count: samples,
        bones: vec![],
        tracks: vec![],
        additive: None,
        source: Default::default(),
    };
    for b in 0..bones {
        raw.bones.push(Bone {
            name: format!("b{b}"),
            parent: b.checked_sub(1),
            shell_distance: 10.0,
            bind_pose: RawTransform::IDENTITY,
        });
        let mut track = BoneTrack::default();
        for s in 0..samples {
            let (rotation, translation) = motion(b, s);
            track.rotations.push(rotation);
            track.translations.push(translation);
            track.scales.push([1.0; 3]);
        }
        raw.tracks.push(track);
    }
    raw
}

/// Times just before and after each segment's last key frame, forward then backward,
/// then 40 jumps across the clip: what a plan kept from frame to frame must survive.
pub fn segment_crossing_times(clip: &Clip<'_>) -> Vec<f32> {
    let period = clip.duration() / (clip.sample_count() - 1) as f32;
    let mut forward = Vec::new();
    for s in 1..clip.segment_count() {
        let end = (s * u32::from(clip.segment_len())) as f32 * period;
        forward.extend([end - 0.75 * period, end - 0.25 * period, end, end + 0.5 * period]);
    }
    let backward: Vec<f32> = forward.iter().rev().copied().collect();
    let jumps = (0..40).map(|k| clip.duration() * ((k * 17) % 40) as f32 / 39.0);
    forward.iter().chain(&backward).copied().chain(jumps).collect()
}
