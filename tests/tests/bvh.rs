//! BVH motion capture end to end: the project's own `examples/walk.bvh` (joints in
//! three rotation orders, position channels, end sites) read, its rotations checked
//! against Euler matrices built here independently, compressed, and decoded within the
//! precision at every sample of every bone.

mod common;

use ossa_encoder::formats::bvh::read_bvh;
use ossa_encoder::{compress, Settings};

/// The rotation matrix of `angle` degrees about axis `axis` (0 x, 1 y, 2 z).
fn axis_matrix(axis: usize, degrees: f64) -> [[f64; 3]; 3] {
    let (s, c) = degrees.to_radians().sin_cos();
    match axis {
        0 => [[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]],
        1 => [[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]],
        _ => [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]],
    }
}

fn mat_mul(a: [[f64; 3]; 3], b: [[f64; 3]; 3]) -> [[f64; 3]; 3] {
    let mut m = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            m[i][j] = (0..3).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    m
}

/// The matrix of unit quaternion `[x, y, z, w]`.
fn quat_matrix(q: [f64; 4]) -> [[f64; 3]; 3] {
    let [x, y, z, w] = q;
    [
        [1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - z * w), 2.0 * (x * z + y * w)],
        [2.0 * (x * y + z * w), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - x * w)],
        [2.0 * (x * z - y * w), 2.0 * (y * z + x * w), 1.0 - 2.0 * (x * x + y * y)],
    ]
}

#[test]
fn the_walk_reads_as_its_euler_angles_and_compresses_within_the_bound() {
    let path = common::repo_root().join("examples/walk.bvh");
    let text = std::fs::read_to_string(&path).unwrap();
    let clip = read_bvh(&text, "walk").unwrap();
    let names: Vec<&str> = clip.bones.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["hips", "thigh_l", "shin_l", "thigh_r", "shin_r", "tail"]);
    assert_eq!(clip.sample_count, 41);
    assert!((clip.sample_rate - 30.0).abs() < 1e-9);

    // The channels of each joint, in file order, read from the text itself.
    let orders: Vec<Vec<(bool, usize)>> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("CHANNELS "))
        .map(|l| {
            l.split_whitespace().skip(1).map(|c| (c.ends_with("rotation"), (c.as_bytes()[0] - b'X') as usize)).collect()
        })
        .collect();
    let frames: Vec<Vec<f64>> = text
        .lines()
        .skip_while(|l| !l.starts_with("Frame Time"))
        .skip(1)
        .map(|l| l.split_whitespace().map(|v| v.parse().unwrap()).collect())
        .collect();
    for (f, values) in frames.iter().enumerate() {
        let mut next = values.iter();
        for (bone, order) in orders.iter().enumerate() {
            let mut m = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
            let mut translation = clip.bones[bone].bind_pose.translation;
            for &(rotation, axis) in order {
                let v = *next.next().unwrap();
                if rotation {
                    m = mat_mul(m, axis_matrix(axis, v));
                } else {
                    translation[axis] = v;
                }
            }
            let q = quat_matrix(clip.tracks[bone].rotations[f]);
            for i in 0..3 {
                for j in 0..3 {
                    assert!((q[i][j] - m[i][j]).abs() < 1e-9, "frame {f}, bone {bone}: {q:?} against {m:?}");
                }
            }
            assert_eq!(clip.tracks[bone].translations[f], translation);
        }
    }

    let settings = Settings::default();
    let out = compress(&clip, &settings).unwrap();
    let (error, bone, sample) = common::max_error(&clip, &out.bytes);
    assert!(error <= settings.precision, "{error} at bone {bone}, sample {sample}");
}
