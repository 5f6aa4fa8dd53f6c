//! End-to-end tests live in `tests/`. The library holds what they share with the
//! `generalisation` command: clip variants ([`variants`]), the list of the shared
//! transform clips, a deterministic random number generator and the quaternion product
//! of the tests' own error metric.

use std::path::{Path, PathBuf};

pub mod variants;

/// The transform clips of the shared folder `dir`, sorted (not track lists, not
/// degenerate lists, not the annotated format reference).
pub fn transform_clips(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut clips = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if name.ends_with(".acl.sjson")
            && !name.starts_with("track_list")
            && !name.starts_with("no_output")
            && !name.starts_with("format_reference")
        {
            clips.push(path);
        }
    }
    clips.sort();
    Ok(clips)
}

/// Deterministic pseudo-random numbers in [0, 1) (xorshift: no dependency, the same
/// numbers on every run and machine).
pub struct Rng(pub u64);

impl Rng {
    /// The next number (an endless stream: not an `Iterator`, whose `next` returns an
    /// `Option`).
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The quaternion product `a · b` (`b` applied first), `[x, y, z, w]`.
pub fn quat_mul(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
    let [ax, ay, az, aw] = a;
    let [bx, by, bz, bw] = b;
    [
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ]
}
