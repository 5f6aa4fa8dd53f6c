//! Golden files (`format-spec/golden/`): the encoder must reproduce each `.ossa`
//! byte for byte from its source clip, and the decoder must reproduce the expected
//! decoded values bit for bit. Regenerate deliberately, after a format change, with
//! `OSSA_BLESS=1 cargo test -p ossa-tests --test golden`.

mod common;

use common::spec_reader::{self, Misreading};

use std::fmt::Write as _;
use std::path::PathBuf;

use ossa_decoder::{format, Clip, Rounding, Sampler, Transform};
use ossa_encoder::database::poses::PosePolicy;
use ossa_encoder::database::{build_each, ClipInput, DatabaseSettings};
use ossa_encoder::{compress, AlignedBytes, Settings};

/// A golden file: its name, where its bytes come from and with which settings, and
/// for a crafted file the change made to the encoder's output (the checksum is then
/// recomputed).
struct Golden {
    name: &'static str,
    source: Source,
    settings: Settings,
    patch: Option<fn(&mut [u8])>,
}

/// Where a golden file's bytes come from.
enum Source {
    /// `examples/NAME.acl.sjson`, compressed.
    Example(&'static str),
    /// `examples/NAME.gltf`, its animation compressed (glTF import at 30 Hz).
    Model(&'static str),
    /// A clip built here, compressed; its expected values list some bones only.
    Built(fn() -> ossa_encoder::RawClip),
    /// Bytes written here from the spec alone (tests/tests/common/spec_writer.rs): a
    /// layout the reference encoder never writes.
    Written(fn() -> Vec<u8>),
}

/// `wave` and `pose` are the everyday case; `edges` (segments of 7 samples, a tight
/// precision) holds bit rates 0, 32 and 12 to 24 and a long clip where seeking must
/// snap; `blink` is animated inside a single segment; `unnormalised` is `pose` with a
/// constant rotation whose stored `x, y, z` have a norm above 1, which only a decoder
/// that normalises constants decodes right (the encoder itself stores unit rotations,
/// where normalising changes no bit); `degenerate` is `edges` with rotations whose
/// `d` (the squared norm) is infinite or NaN, which must decode to the identity;
/// `cycle` loops, so the default `--loop auto` wraps it (format 2.1): its last interval
/// runs from the last segment back to the first; `stride` walks forward with its root
/// motion extracted from `hips` (not a root: a chain of one ancestor), so it wraps,
/// keeps the hips' last sample and shows them in place: a root-motion block with every
/// part; `in_place` is `stride` with an in-place rotation of another length and a
/// scale other than 1; `wave_additive` is an additive1 clip whose bones without scale
/// tracks decode a scale of 0; `skinned` is a glTF model whose joints are not listed
/// parents first, under a scaled armature (metadata records, 3.2); `wide` has more
/// than 256 bones and 64 quads (rank and frame directories); `crafted` is written from
/// the spec: raw constant lists 0, 2 and 3 and a quantised list 1, `−0.0` stored, raw
/// rotation keys at right angles and ones whose dot product's sign depends on its
/// summation order, and bit-rate-0 bytes `lo` and `hi` that differ.
fn golden() -> Vec<Golden> {
    let plain = |name, settings| Golden { name, source: Source::Example(name), settings, patch: None };
    let stride = Settings { root_motion_bone: Some("hips".into()), extract_root_motion: true, ..Settings::default() };
    vec![
        plain("wave", Settings::default()),
        plain("pose", Settings::default()),
        plain("edges", Settings { precision: 0.0001, segment_len: 7, ..Settings::default() }),
        plain("blink", Settings::default()),
        plain("cycle", Settings::default()),
        plain("wave_additive", Settings::default()),
        plain("glide", Settings::default()),
        plain("stride", stride.clone()),
        Golden { name: "in_place", source: Source::Example("stride"), settings: stride, patch: Some(in_place) },
        Golden {
            name: "unnormalised",
            source: Source::Example("pose"),
            settings: Settings::default(),
            patch: Some(unnormalise),
        },
        Golden {
            name: "degenerate",
            source: Source::Example("edges"),
            // Fine enough that a constant rotation is stored raw in list 1 (4.1 packs
            // up to 24 bits, which holds 0.0001), which the patch then corrupts.
            settings: Settings { precision: 0.00001, segment_len: 7, ..Settings::default() },
            patch: Some(degenerate),
        },
        Golden {
            name: "skinned",
            source: Source::Model("skinned"),
            settings: Settings { precision: ossa_encoder::formats::gltf::DEFAULT_PRECISION, ..Settings::default() },
            patch: None,
        },
        Golden {
            name: "wide",
            source: Source::Built(wide),
            settings: Settings { include_metadata: false, ..Settings::default() },
            patch: None,
        },
        Golden { name: "crafted", source: Source::Written(crafted), settings: Settings::default(), patch: None },
    ]
}

/// The bytes of `golden`: its source compressed with its settings (or written), then
/// patched.
fn bytes_of(golden: &Golden) -> AlignedBytes {
    let mut encoded = match golden.source {
        Source::Example(name) => compress(&common::load(&example(name)), &golden.settings).unwrap().bytes,
        Source::Model(name) => {
            let path = common::repo_root().join(format!("examples/{name}.gltf"));
            let imported = ossa_encoder::formats::gltf::read_gltf(
                &std::fs::read(&path).unwrap(),
                path.parent(),
                30.0,
                &ossa_encoder::formats::gltf::AnimationChoice::All,
            )
            .unwrap();
            compress(&imported.clips[0], &golden.settings).unwrap().bytes
        }
        Source::Built(build) => compress(&build(), &golden.settings).unwrap().bytes,
        Source::Written(write) => AlignedBytes::new(&write()),
    };
    if let Some(patch) = golden.patch {
        let mut crafted = encoded.to_vec();
        patch(&mut crafted);
        encoded = AlignedBytes::new(&crafted);
    }
    encoded
}

/// 301 bones (a root and 300 children): every rotation and translation animated, so
/// bones past 256 are found through the rank directory and quads past 64 through the
/// frame directory; the 301 rotations leave a quad of one lane, so the translations'
/// quads do not start every fourth sub-track (a reader counting the directory by
/// sub-tracks goes wrong); six samples in one segment.
fn wide() -> ossa_encoder::RawClip {
    use ossa_encoder::{Bone, BoneTrack, RawClip, RawTransform};
    let (bones, samples) = (301usize, 6usize);
    let angle = |b: usize, s: usize| 0.3 * ((b * 7 + s * 3) % 11) as f64 / 11.0 + 0.01 * b as f64;
    RawClip {
        name: "wide".into(),
        sample_rate: 30.0,
        sample_count: samples,
        bones: (0..bones)
            .map(|b| Bone {
                name: format!("bone {b}"),
                parent: (b > 0).then_some(0),
                shell_distance: 3.0,
                bind_pose: RawTransform::IDENTITY,
            })
            .collect(),
        tracks: (0..bones)
            .map(|b| {
                let axis = [(b % 3) as f64, ((b + 1) % 3) as f64, 1.0];
                let n = (axis[0] * axis[0] + axis[1] * axis[1] + 1.0).sqrt();
                BoneTrack {
                    rotations: (0..samples)
                        .map(|s| {
                            let (sin, cos) = (angle(b, s) / 2.0).sin_cos();
                            [axis[0] / n * sin, axis[1] / n * sin, axis[2] / n * sin, cos]
                        })
                        .collect(),
                    translations: (0..samples)
                        .map(|s| [b as f64 * 0.5 + s as f64 * 0.25, (b % 5) as f64, 2.0])
                        .collect(),
                    scales: vec![[1.0; 3]; samples],
                }
            })
            .collect(),
        additive: None,
        source: Default::default(),
    }
}

/// Written from the spec (tests/tests/common/spec_writer.rs): eight samples in two
/// segments of four, clamped, four bones:
/// - bone 0: constants in lists 0, 2 and 3, raw (header byte 23 = 13), each with a
///   `−0.0` component, which only a decoder that does not interpolate constants keeps;
/// - bone 1: a quantised list-1 constant (every list but 1 raw: the opposite of the
///   reference encoder);
/// - bone 2: a raw (bit rate 32) list-1 rotation whose keys 0 and 1 are at right
///   angles (dot product exactly 0: not negated), keys 2 and 3 have a dot product
///   whose sign depends on the order of its sum (`−3e-8` in the spec's order), and
///   key 4 has a `−0.0` followed by a larger key 5; and a translation of bit rate 0
///   in segment 0, whose bytes `lo`, `hi` differ (a reader swapping them is caught),
///   and raw in segment 1, with `−0.0` at key 4;
/// - bone 3: default.
fn crafted() -> Vec<u8> {
    use common::spec_writer::{Crafted, Part, Segment};
    let q = |v: f32| ((v + 1.0) * 65535.0 / 2.0).round() as u16;
    let z = -0.0f32;
    let rotation_keys = vec![
        vec![0.0, 0.0, 0.0, 1.0],
        vec![1.0, 0.0, 0.0, 0.0],
        vec![-0.757_433_06, 0.687_886_54, 0.347_069_53, 0.672_363_9],
        vec![0.904_822_65, 0.158_152_83, 0.597_494_5, 0.549_076_6],
    ];
    let rotation_keys_1 =
        vec![vec![z, 0.6, 0.0, 0.8], vec![0.5, 0.5, 0.5, 0.5], vec![0.1, -0.7, 0.1, 0.7], vec![0.0, 0.0, 0.6, 0.8]];
    let bone0 = [
        Part::Raw { list: 0, values: vec![0.6, z, 0.0] },
        Part::Raw { list: 2, values: vec![1.5, z, 2.25] },
        Part::Raw { list: 3, values: vec![1.0, z, 0.5] },
    ];
    let bone1 =
        [Part::Quantised { list: 1, values: vec![q(0.5), q(-0.5), q(0.5), q(0.5)] }, Part::Default, Part::Default];
    let bone2 = [
        Part::Animated {
            list: 1,
            q_min: vec![0; 4],
            q_extent: vec![65535; 4],
            segments: vec![Segment::Raw(rotation_keys), Segment::Raw(rotation_keys_1)],
        },
        Part::Animated {
            list: 2,
            q_min: vec![0; 3],
            q_extent: vec![65535; 3],
            segments: vec![
                Segment::Zero { lo: vec![1, 2, 4], hi: vec![3, 5, 7] },
                Segment::Raw(vec![vec![z, 5.0, z], vec![3.0, 6.0, 1.0], vec![2.0, 7.0, 1.5], vec![1.0, 8.0, 2.0]]),
            ],
        },
        Part::Default,
    ];
    let bone3 = [Part::Default, Part::Default, Part::Default];
    Crafted {
        sample_rate: 30.0,
        samples: 8,
        segment_len: 4,
        bones: vec![bone0, bone1, bone2, bone3],
        grid: [[-4.0, -4.0, -4.0], [0.000_25, 0.000_5, 0.001]],
    }
    .write()
}

/// Gives `stride`'s in-place transform (root-motion.md, In place) a rotation of
/// another length (each component times 1.7) and the scale `(2, 0.5, 1.25)`: a
/// decoder must normalise the one and give the other as stored.
fn in_place(bytes: &mut [u8]) {
    let u32_at = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap()) as usize;
    assert!(u32_at(bytes, 16) & 4 != 0, "a root-motion block");
    let (options, chain) = (u32_at(bytes, 68), u32_at(bytes, 72));
    assert!(options & 2 != 0, "an in-place transform");
    let at = 64 + 16 + 16 * chain.div_ceil(4) + if options & 1 != 0 { 32 } else { 0 };
    for m in 0..4 {
        let v = f32::from_le_bytes(bytes[at + 4 * m..at + 4 * m + 4].try_into().unwrap()) * 1.7;
        bytes[at + 4 * m..at + 4 * m + 4].copy_from_slice(&v.to_le_bytes());
    }
    for (m, v) in [2.0f32, 0.5, 1.25].into_iter().enumerate() {
        bytes[at + 28 + 4 * m..at + 32 + 4 * m].copy_from_slice(&v.to_le_bytes());
    }
    let sum = format::checksum(bytes);
    bytes[12..16].copy_from_slice(&sum.to_le_bytes());
}

/// The byte offset of the first constant of `list` (format-spec/tracks.md: the width
/// table under CONSTANT_WIDTHS, the grids of quantised translation and scale lists,
/// then the lists' values in order).
fn first_constant(bytes: &[u8], list: usize) -> usize {
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
    let (bones, tracks, constants) = (u32_at(24), u32_at(40), u32_at(44));
    let set_len = bones.div_ceil(8);
    // 4.2: only the sets flagged in bits 8-15 of the flags are stored, in order.
    let stored = u32_at(16) >> 8 & 0xff;
    let count = |set: usize| {
        if stored >> set & 1 == 0 {
            return 0;
        }
        let slot = (0..set).filter(|&t| stored >> t & 1 == 1).count();
        bytes[tracks + slot * set_len..][..set_len].iter().map(|x| x.count_ones() as usize).sum::<usize>()
    };
    let raw = |l: usize| bytes[23] & (1 << l) != 0;
    // 4.1: a 2-byte width table (a 4-bit code per list, the width twice it) first, and
    // quantised lists packed on their width by quads, each component from a byte.
    let packed = bytes[23] & 0x10 != 0;
    let table = if packed { 2 } else { 0 };
    let width = |l: usize| 2 * ((bytes[constants + l / 2] >> (4 * (l % 2))) & 15) as usize;
    let grids = (2..4).filter(|&l| count(l) > 0 && !raw(l)).count();
    let components: [usize; 4] = [3, 4, 3, 3];
    let size = |l: usize| match (raw(l), packed) {
        (true, _) => count(l) * components[l] * 4,
        (false, true) => {
            let (n, c, w) = (count(l), components[l], width(l));
            n / 4 * c * (w / 2) + c * ((n % 4) * w).div_ceil(8)
        }
        (false, false) => count(l) * components[l] * 2,
    };
    constants + table + 24 * grids + (0..list).map(size).sum::<usize>()
}

/// Replaces the first constant rotation (list 0: `x, y, z` quantised, `w` rebuilt)
/// of a clip by the integers nearest `(0.8, 0.7, 0.1)`, whose norm is above 1: `w`
/// rebuilds to 0 and the normalised result differs from the stored values in every
/// component.
fn unnormalise(bytes: &mut [u8]) {
    let tracks = u32::from_le_bytes(bytes[40..44].try_into().unwrap()) as usize;
    let constants = u32::from_le_bytes(bytes[44..48].try_into().unwrap()) as usize;
    // Bone 0's bit in bit set 0 (constant, list 0): the first constant of list 0.
    assert_eq!(bytes[tracks] & 1, 1, "bone 0 has a three-component constant rotation");
    assert_eq!(bytes[23] & 1, 0, "list 0 is quantised");
    let at = first_constant(bytes, 0);
    // 4.1: integers of list 0's width (twice the low 4 bits of the width table's first
    // byte), packed least significant bit first, by quads of constants and by
    // component, each component from a byte: constant 0's component `i` starts
    // `i · ceil(lanes · width / 8)` bytes in, `lanes` the constants of the first quad.
    // (Set 0 is stored first, whatever sets 4.2 leaves out.)
    let packed = bytes[23] & 0x10 != 0;
    let width = if packed { 2 * u32::from(bytes[constants] & 15) } else { 16 };
    let bones = u32::from_le_bytes(bytes[24..28].try_into().unwrap()) as usize;
    let list0: usize = bytes[tracks..][..bones.div_ceil(8)].iter().map(|x| x.count_ones() as usize).sum();
    let lanes = if packed { list0.min(4) } else { 1 };
    let component_bytes = if packed { (lanes * width as usize).div_ceil(8) } else { 2 };
    let top = f64::from((1u32 << width) - 1);
    for (i, v) in [0.8f64, 0.7, 0.1].into_iter().enumerate() {
        let q = ((v + 1.0) * top / 2.0).round() as u32;
        for k in 0..width as usize {
            let bit = 8 * (at + i * component_bytes) + k;
            let mask = 1u8 << (bit % 8);
            if q >> k & 1 == 1 {
                bytes[bit / 8] |= mask;
            } else {
                bytes[bit / 8] &= !mask;
            }
        }
    }
    let sum = format::checksum(bytes);
    bytes[12..16].copy_from_slice(&sum.to_le_bytes());
}

/// Makes a rotation whose `d` (the squared norm) is not a positive finite number,
/// which the spec decodes to the identity: the first raw constant rotation of list 1
/// becomes `(1e20, 1e20, 1e20, 1e20)`, finite as validation requires, whose `d`
/// overflows to +∞. (Quantised rotations cannot get there: their components are
/// within `[-1, 3]`.) Checksum recomputed.
fn degenerate(bytes: &mut [u8]) {
    let u32_at = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap()) as usize;
    let (bones, tracks) = (u32_at(bytes, 24), u32_at(bytes, 40));
    let set_len = bones.div_ceil(8);
    // 4.2: set 1 (list-1 constants) is stored, after set 0 when that is.
    let stored = u32_at(bytes, 16) >> 8 & 0xff;
    assert!(stored & 2 != 0, "the source has a list-1 constant");
    let slot = stored & 1;
    assert!(bytes[tracks + slot * set_len..][..set_len].iter().any(|&x| x != 0));
    assert!(bytes[23] & 2 != 0, "list 1 is raw");
    let at = first_constant(bytes, 1);
    for i in 0..4 {
        bytes[at + 4 * i..at + 4 * i + 4].copy_from_slice(&1e20f32.to_le_bytes());
    }
    let sum = format::checksum(bytes);
    bytes[12..16].copy_from_slice(&sum.to_le_bytes());
}

fn golden_dir() -> PathBuf {
    common::repo_root().join("format-spec/golden")
}

fn bless() -> bool {
    std::env::var("OSSA_BLESS").is_ok_and(|v| v == "1")
}

const MODES: [(&str, Rounding); 4] =
    [("none", Rounding::None), ("floor", Rounding::Floor), ("ceil", Rounding::Ceil), ("nearest", Rounding::Nearest)];

/// The times and rounding modes of an `.expected.txt` file: `duration · k / (2N)` for
/// `k = 0 … 2N` (every fifth with every mode, and the first and last, 0 and the
/// duration, with every mode; `N` the stored samples), then every source sample time
/// `i / rate` as a game computes it (which `seek` must snap to sample `i`; for a
/// wrapping loop the last is the duration, sample 0 again), then the snap probes.
/// A clip of many bones (more than 64) has the first group only, with rounding none.
fn queries(clip: &Clip) -> Vec<(f32, &'static str, Rounding)> {
    let mut out = Vec::new();
    let steps = 2 * clip.sample_count();
    let many = clip.bone_count() > 64;
    for k in 0..=steps {
        let time = clip.duration() * k as f32 / steps as f32;
        let count = if many {
            1
        } else if k % 5 == 1 || k == 0 || k == steps {
            4
        } else {
            1
        };
        out.extend(MODES[..count].iter().map(|&(name, r)| (time, name, r)));
    }
    if !many {
        out.extend((0..clip.source_sample_count()).map(|i| (i as f32 / clip.sample_rate(), "none", Rounding::None)));
        out.extend(snap_probes(clip).into_iter().map(|t| (t, "none", Rounding::None)));
    }
    out
}

/// Times whose position `p = t · rate` (in `f32`, as a decoder computes it) lies 1 to
/// 10 `f32` steps either side of sample `r`, for `r` the last interval's end, the
/// largest power of two at most that and 1 (decoding.md, Seeking, step 1): the snap
/// tolerance `r × 4ε` lies among them, and for a power of two exactly on one of them.
/// A time is kept only when it gives that position exactly.
fn snap_probes(clip: &Clip) -> Vec<f32> {
    let intervals = clip.source_sample_count() - 1;
    if intervals == 0 {
        return Vec::new();
    }
    let rate = clip.sample_rate();
    let power = 1u32 << (31 - intervals.leading_zeros());
    let mut samples = vec![1, power, intervals];
    samples.dedup();
    let mut out = Vec::new();
    for r in samples {
        let r = r as f32;
        for step in (-10i32..=10).filter(|&j| j != 0) {
            let p = f32::from_bits(r.to_bits().wrapping_add_signed(step));
            if !(0.0..=intervals as f32).contains(&p) {
                continue;
            }
            // A time that gives exactly `p`: near `p / rate`, a few `f32` steps away.
            let guess = p / rate;
            let hit =
                (-16i32..=16).map(|d| f32::from_bits(guess.to_bits().wrapping_add_signed(d))).find(|t| t * rate == p);
            out.extend(hit);
        }
    }
    out
}

/// The bones an `.expected.txt` file lists: every one, or for a clip of many (more
/// than 64) its first eight and its last fifty, past the directories' first block.
fn listed_bones(clip: &Clip) -> Vec<usize> {
    let bones = clip.bone_count() as usize;
    if bones <= 64 {
        (0..bones).collect()
    } else {
        (0..8).chain(bones - 50..bones).collect()
    }
}

/// Decoded values at [`queries`], as hexadecimal `f32` bits.
fn expected_values(bytes: &[u8]) -> String {
    let clip = Clip::from_bytes_verified(bytes).expect("golden file validates");
    let mut sampler = Sampler::new(clip);
    let mut pose = vec![Transform::IDENTITY; clip.bone_count() as usize];
    let mut out = String::from("# time rounding bone: rotation xyzw, translation xyz, scale xyz (f32 bits)\n");
    let listed = listed_bones(&clip);
    for (time, name, r) in queries(&clip) {
        sampler.seek(time, r);
        sampler.decompress_pose(&mut pose).unwrap();
        for &b in &listed {
            let t = &pose[b];
            let _ = write!(out, "{:08x} {name} {b}:", time.to_bits());
            for v in t.rotation.to_array().into_iter().chain(t.translation.to_array()).chain(t.scale.to_array()) {
                let _ = write!(out, " {:08x}", v.to_bits());
            }
            out.push('\n');
        }
    }
    out
}

#[test]
fn golden_files_encode_and_decode_bit_for_bit() {
    for golden in golden() {
        let name = golden.name;
        let encoded = bytes_of(&golden);
        let ossa_path = golden_dir().join(format!("{name}.ossa"));
        let values_path = golden_dir().join(format!("{name}.expected.txt"));
        if bless() {
            std::fs::create_dir_all(golden_dir()).unwrap();
            std::fs::write(&ossa_path, &*encoded).unwrap();
            std::fs::write(&values_path, expected_values(&encoded)).unwrap();
        }
        let golden = AlignedBytes::new(&std::fs::read(&ossa_path).expect("golden .ossa present"));
        assert!(golden[..] == encoded[..], "{name}: the encoder no longer reproduces {}", ossa_path.display());
        let expected = std::fs::read_to_string(&values_path).expect("golden values present");
        assert!(expected == expected_values(&golden), "{name}: decoded values differ from {}", values_path.display());
    }
}

/// An `.expected.txt` file: per line, time bits, rounding name, bone, ten value bits.
fn parse_expected(text: &str) -> Vec<(u32, String, usize, [u32; 10])> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|line| {
            let (head, values) = line.split_once(':').expect("line has ':'");
            let mut head = head.split_whitespace();
            let time = u32::from_str_radix(head.next().unwrap(), 16).unwrap();
            let mode = head.next().unwrap().to_owned();
            let bone = head.next().unwrap().parse().unwrap();
            let values: Vec<u32> = values.split_whitespace().map(|v| u32::from_str_radix(v, 16).unwrap()).collect();
            (time, mode, bone, values.try_into().expect("ten values"))
        })
        .collect()
}

/// The rounding mode named `name` in an `.expected.txt` file.
fn rounding(name: &str) -> Rounding {
    MODES.iter().find(|(n, _)| *n == name).unwrap_or_else(|| panic!("unknown rounding '{name}'")).1
}

/// How many golden values `misreading` gets wrong (0 for a faithful reading), over
/// the clip golden files and the database golden files.
fn values_misread(misreading: Misreading) -> usize {
    let mut wrong = stream_values_misread(misreading);
    for Golden { name, .. } in golden() {
        let bytes = std::fs::read(golden_dir().join(format!("{name}.ossa"))).unwrap();
        let text = std::fs::read_to_string(golden_dir().join(format!("{name}.expected.txt"))).unwrap();
        let mut cache: Option<(u32, String, Vec<[f32; 10]>)> = None;
        for (time, mode, bone, expected) in parse_expected(&text) {
            if cache.as_ref().is_none_or(|(t, m, _)| *t != time || *m != mode) {
                let pose = spec_reader::decode(&bytes, f32::from_bits(time), rounding(&mode), misreading);
                cache = Some((time, mode.clone(), pose));
            }
            let pose = &cache.as_ref().unwrap().2;
            if pose[bone].map(f32::to_bits) != expected {
                wrong += 1;
            }
        }
    }
    wrong
}

/// A decoder written from `format-spec/` alone (tests/tests/common/spec_reader.rs)
/// reproduces every golden value bit for bit.
#[test]
fn the_spec_alone_reproduces_every_golden_value() {
    assert_eq!(values_misread(Misreading::Faithful), 0);
}

/// Each plausible misreading of the spec fails the golden files.
#[test]
fn the_golden_files_catch_every_misreading() {
    for misreading in Misreading::ALL {
        let wrong = values_misread(misreading);
        println!("{misreading:?}: {wrong} golden values wrong");
        assert!(wrong > 0, "the golden files do not catch {misreading:?}");
    }
}

/// The clips of the database golden files (`stream.ossadb`): each example and its
/// settings. `stride` keeps a root-motion block, so its database reference follows it;
/// `stride` and `cycle` have one skeleton, so they share a pose.
fn stream_sources() -> Vec<(&'static str, Settings)> {
    vec![
        ("wave", Settings::default()),
        ("glide", Settings::default()),
        (
            "stride",
            Settings { root_motion_bone: Some("hips".into()), extract_root_motion: true, ..Settings::default() },
        ),
        ("cycle", Settings::default()),
    ]
}

/// The database of the golden files: 512-byte chunks (several per tier, several
/// clip segments in most), 30 % of the key frames in each tier, a shared pose for
/// `stride` and `cycle` (two small clips: the estimate alone would not give them one).
fn stream_settings() -> DatabaseSettings {
    DatabaseSettings {
        chunk_shift: 9,
        medium: 0.3,
        low: 0.3,
        shared_poses: PosePolicy::Always,
        ..DatabaseSettings::default()
    }
}

/// The times of `stream.expected.txt`: `duration · k / (2N)` for `k = 0 … 2N`, rounding
/// none (every stored sample and every midpoint).
fn stream_queries(clip: &Clip) -> Vec<f32> {
    let steps = 2 * clip.sample_count();
    (0..=steps).map(|k| clip.duration() * k as f32 / steps as f32).collect()
}

/// What is resident in each configuration of `stream.expected.txt`: nothing (the
/// lowest fidelity), the medium tier, everything (the highest), and every other chunk
/// of each tier (`mixed`: medium chunks 0, 2, … and low chunks 1, 3, …).
const STREAM_CONFIGS: [&str; 4] = ["lowest", "medium", "highest", "mixed"];

fn resident(config: &str, tier: usize, chunk: usize) -> bool {
    match config {
        "lowest" => false,
        "medium" => tier == 0,
        "highest" => true,
        _ => (tier + chunk) % 2 == 0,
    }
}

/// Decoded values of every database clip in every configuration, at
/// [`stream_queries`].
fn stream_expected(file: &[u8], clips: &[(&str, AlignedBytes)]) -> String {
    stream_expected_in(file, clips, &STREAM_CONFIGS)
}

/// [`stream_expected`] in the configurations `configs`.
fn stream_expected_in(file: &[u8], clips: &[(&str, AlignedBytes)], configs: &[&str]) -> String {
    use ossa_decoder::{Database, Residency, Tier};
    let database = Database::from_bytes_verified(file).unwrap();
    let mut out =
        String::from("# residency clip time rounding bone: rotation xyzw, translation xyz, scale xyz (f32 bits)\n");
    for &config in configs {
        let mut residency = Residency::new(&database, vec![None; database.chunk_slots() as usize]).unwrap();
        for tier in Tier::ALL {
            for i in 0..database.chunk_count(tier) {
                if resident(config, tier.index(), i as usize) {
                    let c = database.chunk(tier, i).unwrap();
                    residency.bind(&database, tier, i, &file[c.file_offset as usize..][..c.size as usize]).unwrap();
                }
            }
        }
        for (name, bytes) in clips {
            let clip = database.open_clip(bytes).unwrap();
            clip.verify_checksum().unwrap();
            let binding = database.bind(&clip).unwrap();
            let mut sampler = Sampler::new(clip);
            let mut pose = vec![Transform::IDENTITY; clip.bone_count() as usize];
            for time in stream_queries(&clip) {
                sampler.seek_streamed(time, Rounding::None, &binding, &residency).unwrap();
                sampler.decompress_pose(&mut pose).unwrap();
                for (b, t) in pose.iter().enumerate() {
                    let _ = write!(out, "{config} {name} {:08x} none {b}:", time.to_bits());
                    for v in t.rotation.to_array().into_iter().chain(t.translation.to_array()).chain(t.scale.to_array())
                    {
                        let _ = write!(out, " {:08x}", v.to_bits());
                    }
                    out.push('\n');
                }
            }
        }
    }
    out
}

/// The database golden files: `stream.ossadb` and its clips `stream_NAME.ossa`, built
/// from the examples; the encoder reproduces them byte for byte, and the decoder the
/// values of `stream.expected.txt` bit for bit. They hold several chunks per tier, a
/// database reference after a root-motion block, and segments whose medium and low
/// key frames are resident one without the other.
#[test]
fn the_database_golden_files_build_and_decode_bit_for_bit() {
    let sources: Vec<(&str, RawClipOwned)> =
        stream_sources().into_iter().map(|(n, s)| (n, (common::load(&example(n)), s))).collect();
    let inputs: Vec<ClipInput<'_>> =
        sources.iter().map(|(name, (clip, settings))| ClipInput { name, clip, settings }).collect();
    let built = build_each(&inputs, &stream_settings()).unwrap();
    let clips: Vec<(&str, AlignedBytes)> =
        sources.iter().zip(&built.clips).map(|((n, _), c)| (*n, c.bytes.clone())).collect();
    let db_path = golden_dir().join("stream.ossadb");
    let values_path = golden_dir().join("stream.expected.txt");
    if bless() {
        std::fs::write(&db_path, &built.file).unwrap();
        for (name, bytes) in &clips {
            std::fs::write(golden_dir().join(format!("stream_{name}.ossa")), &bytes[..]).unwrap();
        }
        std::fs::write(&values_path, stream_expected(&built.file, &clips)).unwrap();
    }
    let file = std::fs::read(&db_path).expect("golden database present");
    assert!(file == built.file, "the encoder no longer reproduces {}", db_path.display());
    let golden: Vec<(&str, AlignedBytes)> = clips
        .iter()
        .map(|(name, bytes)| {
            let path = golden_dir().join(format!("stream_{name}.ossa"));
            let golden = AlignedBytes::new(&std::fs::read(&path).expect("golden clip present"));
            assert!(golden[..] == bytes[..], "the encoder no longer reproduces {}", path.display());
            (*name, golden)
        })
        .collect();
    let expected = std::fs::read_to_string(&values_path).expect("golden values present");
    assert!(expected == stream_expected(&file, &golden), "decoded values differ from {}", values_path.display());

    // `stream_pose.ossadb`: the same index with shared pose 0's rotations lengthened,
    // which a decoder gives as stored (database.md, Shared poses); its clips that take
    // the pose, at the lowest fidelity.
    let mut lengthened = built.file.clone();
    lengthen_pose_rotations(&mut lengthened);
    let pose_path = golden_dir().join("stream_pose.ossadb");
    let pose_values = golden_dir().join("stream_pose.expected.txt");
    let posed: Vec<(&str, AlignedBytes)> =
        golden.iter().filter(|(n, _)| matches!(*n, "stride" | "cycle")).map(|(n, b)| (*n, b.clone())).collect();
    if bless() {
        std::fs::write(&pose_path, &lengthened).unwrap();
        std::fs::write(&pose_values, stream_expected_in(&lengthened, &posed, &["lowest"])).unwrap();
    }
    assert!(std::fs::read(&pose_path).unwrap() == lengthened, "{} is not reproduced", pose_path.display());
    let expected = std::fs::read_to_string(&pose_values).unwrap();
    assert!(expected == stream_expected_in(&lengthened, &posed, &["lowest"]), "{} differs", pose_values.display());

    let database = ossa_decoder::Database::from_bytes(&file).unwrap();
    for tier in ossa_decoder::Tier::ALL {
        assert!(database.chunk_count(tier) >= 2, "several chunks in the {} tier", tier.name());
    }
    // Some tier location inside a chunk, not at its start.
    let inside = (0..golden.len() as u32).any(|c| {
        let clip = database.open_clip(&golden[c as usize].1).unwrap();
        (0..clip.segment_count()).any(|s| {
            let at = u32::from_le_bytes(file[56..60].try_into().unwrap()) as usize;
            let first = u32::from_le_bytes(file[48..52].try_into().unwrap()) as usize + 16 * c as usize + 8;
            let first = u32::from_le_bytes(file[first..first + 4].try_into().unwrap()) as usize;
            let entry = at + 16 * (first + s as usize);
            (8..16)
                .step_by(4)
                .any(|o| u32::from_le_bytes(file[entry + o..entry + o + 4].try_into().unwrap()) & 511 != 0)
        })
    });
    assert!(inside, "no tier data starts inside a chunk");
    let stride = database.open_clip(&golden[2].1).unwrap();
    assert!(stride.root_motion_bone().is_some() && stride.flags() & format::FLAG_ROOT_MOTION != 0);
    // `stride` and `cycle` share pose 0, which gives some default sub-track a value
    // other than the identity; `wave` keeps its constants.
    let cycle = database.open_clip(&golden[3].1).unwrap();
    assert_eq!((stride.shared_pose_index(), cycle.shared_pose_index()), (Some(0), Some(0)));
    assert!(Clip::from_bytes(&golden[2].1).is_err(), "a clip with a shared pose opens only with its database");
    assert_eq!(database.open_clip(&golden[0].1).unwrap().shared_pose_index(), None);
    let pose = database.shared_pose(0).unwrap();
    assert!((0..pose.bone_count()).any(|b| pose.transform(b) != Transform::IDENTITY));
    // Some segment whose medium key frames are resident in `mixed` and low ones not.
    let split = golden.iter().enumerate().any(|(c, (_, bytes))| {
        let clip = database.open_clip(bytes).unwrap();
        (0..clip.segment_count()).any(|s| {
            let [m, l] = database.segment_tiers(c as u32, s).unwrap();
            m.present != 0
                && l.present != 0
                && resident("mixed", 0, m.chunk as usize) != resident("mixed", 1, l.chunk as usize)
        })
    });
    assert!(split, "no segment with one tier resident and the other not in the mixed configuration");
}

type RawClipOwned = (ossa_encoder::RawClip, Settings);

/// Multiplies every rotation component of shared pose 0 of the database `file` by 1.3
/// (each rotation then of length 1.3, still finite), and recomputes the index's
/// checksum (database.md).
fn lengthen_pose_rotations(file: &mut [u8]) {
    let u32_at = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap()) as usize;
    let (index_size, poses) = (u32_at(file, 8), u32_at(file, 68));
    assert!(u32_at(file, 64) > 0, "a shared pose");
    let (values, bones) = (u32_at(file, poses), u32_at(file, poses + 4));
    for bone in 0..bones {
        for m in 0..4 {
            let at = values + 40 * bone + 4 * m;
            let v = f32::from_le_bytes(file[at..at + 4].try_into().unwrap()) * 1.3;
            file[at..at + 4].copy_from_slice(&v.to_le_bytes());
        }
    }
    let sum = format::checksum(&file[..index_size]);
    file[12..16].copy_from_slice(&sum.to_le_bytes());
}

fn example(name: &str) -> PathBuf {
    common::repo_root().join(format!("examples/{name}.acl.sjson"))
}

/// How many values of `stream.expected.txt` and `stream_pose.expected.txt`
/// `misreading` gets wrong.
fn stream_values_misread(misreading: Misreading) -> usize {
    stream_file_misread("stream", misreading) + stream_file_misread("stream_pose", misreading)
}

/// [`stream_values_misread`] of the database `NAME.ossadb` and its `NAME.expected.txt`.
fn stream_file_misread(name: &str, misreading: Misreading) -> usize {
    let file = std::fs::read(golden_dir().join(format!("{name}.ossadb"))).unwrap();
    let clips: Vec<(String, Vec<u8>)> = stream_sources()
        .into_iter()
        .map(|(n, _)| (n.to_owned(), std::fs::read(golden_dir().join(format!("stream_{n}.ossa"))).unwrap()))
        .collect();
    let text = std::fs::read_to_string(golden_dir().join(format!("{name}.expected.txt"))).unwrap();
    let mut wrong = 0;
    let mut cache: Option<(String, Vec<[f32; 10]>)> = None;
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let (head, values) = line.split_once(':').unwrap();
        let words: Vec<&str> = head.split_whitespace().collect();
        let [config, clip, time, mode, bone] = words[..] else { panic!("bad line {line}") };
        let key = format!("{config} {clip} {time} {mode}");
        if cache.as_ref().is_none_or(|(k, _)| *k != key) {
            let bytes = &clips.iter().find(|(n, _)| n == clip).unwrap().1;
            let resident = |tier: usize, chunk: usize| resident(config, tier, chunk);
            let stream = spec_reader::Stream { file: &file, resident: &resident };
            let time = f32::from_bits(u32::from_str_radix(time, 16).unwrap());
            cache = Some((key, spec_reader::decode_with(bytes, Some(&stream), time, rounding(mode), misreading)));
        }
        let pose = &cache.as_ref().unwrap().1;
        let expected: Vec<u32> = values.split_whitespace().map(|v| u32::from_str_radix(v, 16).unwrap()).collect();
        if pose[bone.parse::<usize>().unwrap()].map(f32::to_bits).to_vec() != expected {
            wrong += 1;
        }
    }
    wrong
}

/// The golden files hold the cases the spec's rules are about: bit rates 0 (in a
/// multi-segment clip), 32 and 12 to 24, animated data in a single segment, and a
/// segment length other than 16, and a wrapping loop of several segments.
#[test]
fn the_golden_files_cover_the_edges() {
    let mut rates = std::collections::BTreeSet::new();
    let (mut single_segment_animated, mut other_length, mut wrap_across_segments) = (false, false, false);
    let (mut full_root_motion_block, mut additive1_default_scale) = (false, false);
    let (mut hole_after_stored, mut run_of_holes) = (false, false);
    let (mut raw_lists_quantised_rotations, mut wide_bones, mut wide_quads) = (false, false, false);
    for Golden { name, .. } in golden() {
        let bytes = AlignedBytes::new(&std::fs::read(golden_dir().join(format!("{name}.ossa"))).unwrap());
        let clip = Clip::from_bytes_verified(&bytes).unwrap();
        // Header byte 23: lists 0, 2 and 3 raw, list 1 quantised, each with constants
        // (bit sets 0 to 3 at the header's tracks offset, tracks.md).
        let tracks = u32::from_le_bytes(bytes[40..44].try_into().unwrap()) as usize;
        let w = (clip.bone_count() as usize).div_ceil(8);
        let constants = |l: usize| bytes[tracks + l * w..tracks + (l + 1) * w].iter().any(|&x| x != 0);
        raw_lists_quantised_rotations |= bytes[23] == 0b1101 && (0..4).all(constants);
        wide_bones |= clip.bone_count() > 256;
        // Quads (segments.md): four animated sub-tracks at a time within each list (bit
        // sets 4 to 7).
        let count =
            |set: usize| bytes[tracks + set * w..tracks + (set + 1) * w].iter().map(|x| x.count_ones()).sum::<u32>();
        let quads = format::quad_count((4..8).map(|set| count(set) as usize));
        wide_quads |= quads > format::FRAME_BLOCK;
        let segments = clip.segment_count() as usize;
        let animated = clip.animated_sub_tracks() as usize;
        single_segment_animated |= segments == 1 && animated > 0;
        other_length |= clip.segment_len() != 16 && segments > 1;
        wrap_across_segments |= clip.looping() == format::Looping::Wrap && segments > 1 && animated > 0;
        // An additive1 clip with a bone whose scale is not stored.
        additive1_default_scale |= clip.additive() == ossa_decoder::Additive::Additive1
            && (0..clip.bone_count())
                .any(|b| clip.sub_track_class(format::SubTrackKind::Scale, b) == Some(format::SubTrackClass::Default));
        // Chain length at byte 72 of the file (root-motion.md).
        full_root_motion_block |= clip.root_motion_in_place()
            && clip.root_end_stored()
            && u32::from_le_bytes(bytes[72..76].try_into().unwrap()) > 0;
        // The segment table's offset, header byte 52 (format-spec/header.md).
        let table = u32::from_le_bytes(bytes[52..56].try_into().unwrap()) as usize;
        for s in 0..segments {
            let entry = table + s * format::SEGMENT_ENTRY_SIZE;
            let data = u32::from_le_bytes(bytes[entry..entry + 4].try_into().unwrap()) as usize;
            let rates_at = data + format::frame_directory_len(quads);
            rates.extend(bytes[rates_at..rates_at + animated].iter().map(|&rate| (rate, segments > 1)));
            // Key frames left out: a single one between two stored, and a run of them.
            let present = u32::from_le_bytes(bytes[entry + 8..entry + 12].try_into().unwrap());
            let n = format::segment_span(s as u32, clip.sample_count(), clip.segment_len()).1;
            let holes = !present & ((1u64 << n) - 1) as u32;
            hole_after_stored |= (1..n - 1).any(|j| holes >> j & 1 == 1 && present >> (j - 1) & 7 == 0b101);
            run_of_holes |= (holes & holes >> 1 & holes >> 2) != 0;
        }
    }
    // Rate 0 counts only where segment ranges exist (it then reads `lo + 256·hi`).
    assert!(rates.contains(&(0, true)), "no bit rate 0 in a multi-segment clip: {rates:?}");
    assert!(rates.iter().any(|&(r, _)| r == 32), "no raw (32-bit) samples: {rates:?}");
    assert!(rates.iter().any(|&(r, _)| (12..=24).contains(&r)), "no bit rate 12 to 24: {rates:?}");
    assert!(single_segment_animated, "no animated sub-track in a single-segment clip");
    assert!(other_length, "no multi-segment clip with a segment length other than 16");
    assert!(wrap_across_segments, "no wrapping loop whose last interval crosses from the last segment to the first");
    assert!(full_root_motion_block, "no root-motion block with a chain, a kept end and an in-place transform");
    assert!(additive1_default_scale, "no additive1 clip with a default scale");
    assert!(hole_after_stored, "no key frame left out between two stored ones");
    assert!(run_of_holes, "no run of three key frames left out");
    assert!(raw_lists_quantised_rotations, "no clip with raw constant lists 0, 2 and 3 and a quantised list 1");
    assert!(wide_bones && wide_quads, "no clip of more than 256 bones and 64 quads (the directories)");
}

/// The scalar track list golden file (`weights`): the encoder reproduces it byte for
/// byte, the decoder and the spec-only reader reproduce its expected values bit for
/// bit (slots of no track stay NaN), and each misreading of scalar-tracks.md changes
/// at least one value.
#[test]
fn the_scalar_track_list_golden_file_encodes_and_decodes_bit_for_bit() {
    use ossa_decoder::{ScalarClip, ScalarSampler};
    use spec_reader::ScalarMisreading;
    let source = common::repo_root().join("examples/weights.acl.sjson");
    let list =
        ossa_encoder::formats::acl_text::read_track_list(&std::fs::read_to_string(source).unwrap(), "weights").unwrap();
    let encoded = ossa_encoder::compress::scalar::compress_tracks(&list, &Default::default()).unwrap().bytes;
    let (ossa_path, values_path) = (golden_dir().join("weights.ossa"), golden_dir().join("weights.expected.txt"));
    let times = |clip: &ScalarClip| -> Vec<f32> {
        let steps = 2 * clip.sample_count();
        let mut t: Vec<f32> = (0..=steps).map(|k| clip.duration() * k as f32 / steps as f32).collect();
        t.extend((0..clip.source_sample_count()).map(|i| i as f32 / clip.sample_rate()));
        t
    };
    let expected = |bytes: &[u8]| -> String {
        let clip = ScalarClip::from_bytes_verified(bytes).unwrap();
        let mut sampler = ScalarSampler::new(clip);
        let mut out = vec![f32::NAN; clip.output_count() as usize * clip.track_type().components()];
        let mut text = String::from("# time: every output slot (f32 bits, NaN where no track)\n");
        for t in times(&clip) {
            out.fill(f32::NAN);
            sampler.seek(t);
            sampler.decompress_tracks(&mut out).unwrap();
            let _ = write!(text, "{:08x}:", t.to_bits());
            for v in &out {
                let _ = write!(text, " {:08x}", v.to_bits());
            }
            text.push('\n');
        }
        text
    };
    if bless() {
        std::fs::write(&ossa_path, &*encoded).unwrap();
        std::fs::write(&values_path, expected(&encoded)).unwrap();
    }
    let golden = AlignedBytes::new(&std::fs::read(&ossa_path).expect("golden .ossa present"));
    assert!(golden[..] == encoded[..], "the encoder no longer reproduces {}", ossa_path.display());
    let text = std::fs::read_to_string(&values_path).unwrap();
    assert!(text == expected(&golden), "decoded values differ from {}", values_path.display());

    let clip = ScalarClip::from_bytes(&golden).unwrap();
    assert!(clip.segment_count() > 1, "the golden list has segment ranges");
    let misread = |m: ScalarMisreading| -> usize {
        let mut wrong = 0;
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let (time, values) = line.split_once(':').unwrap();
            let time = f32::from_bits(u32::from_str_radix(time, 16).unwrap());
            let got = spec_reader::decode_scalar(&golden, time, m);
            let want: Vec<u32> = values.split_whitespace().map(|v| u32::from_str_radix(v, 16).unwrap()).collect();
            wrong += got.iter().zip(&want).filter(|(g, w)| g.to_bits() != **w).count();
        }
        wrong
    };
    assert_eq!(misread(ScalarMisreading::Faithful), 0, "the spec-only reader disagrees");
    for m in ScalarMisreading::ALL {
        let wrong = misread(m);
        println!("{m:?}: {wrong} golden values wrong");
        assert!(wrong > 0, "the golden list does not catch {m:?}");
    }
}

/// The golden files whose metadata sections have a `NAME.metadata.txt`: a transform
/// clip's plain metadata (`wave`), one with the records of 3.2 (`skinned`: a joint
/// order and a root placement), and a scalar list's (`weights`: a track without an
/// output).
const METADATA_GOLDEN: [&str; 3] = ["wave", "skinned", "weights"];

/// The metadata of `bytes` as the decoder reads it, in the text form of
/// [`spec_reader::metadata`].
fn metadata_text(bytes: &[u8]) -> String {
    let mut out = String::new();
    let bits = |v: f32| format!("{:08x}", v.to_bits());
    let join = |v: &[f32]| v.iter().map(|&x| bits(x)).collect::<Vec<_>>().join(" ");
    if let Ok(list) = ossa_decoder::ScalarClip::from_bytes(bytes) {
        let Some(meta) = list.metadata() else { return out };
        let _ = writeln!(out, "list {:?} tracks {}", meta.list_name(), meta.track_count());
        let mut stored = 0;
        for (k, t) in meta.tracks().enumerate() {
            let shown = |v: Option<usize>| v.map_or("none".to_owned(), |v| v.to_string());
            let place = t.output_index.map(|_| {
                stored += 1;
                stored - 1
            });
            let _ = writeln!(
                out,
                "track {k} output {} precision {} name {:?} stored {}",
                shown(t.output_index.map(|o| o as usize)),
                bits(t.precision),
                t.name,
                shown(place)
            );
        }
        return out;
    }
    let clip = Clip::from_bytes(bytes).unwrap();
    let Some(meta) = clip.metadata() else { return out };
    let _ = writeln!(out, "clip {:?} precision {}", meta.clip_name(), bits(meta.precision()));
    for (i, bone) in meta.bones().enumerate() {
        let t = bone.bind_pose;
        let _ = writeln!(
            out,
            "bone {i} parent {} shell {} rotation {} translation {} scale {} name {:?} joint {}",
            bone.parent.map_or("none".to_owned(), |p| p.to_string()),
            bits(bone.shell_distance),
            join(&t.rotation.to_array()),
            join(&t.translation.to_array()),
            join(&t.scale.to_array()),
            bone.name,
            meta.source_index(i as u32).unwrap()
        );
    }
    for p in meta.root_placements() {
        let _ = writeln!(out, "placement bone {}: {}", p.bone, join(&p.matrix));
    }
    out
}

/// The metadata golden files: the decoder reads each as its `NAME.metadata.txt`
/// says, so does the reader written from the spec alone, and each misreading of the
/// metadata pages changes at least one line. `skinned` holds both records of 3.2.
#[test]
fn the_metadata_golden_files_read_the_same_from_the_spec() {
    use spec_reader::MetadataMisreading;
    let mut texts = Vec::new();
    for name in METADATA_GOLDEN {
        let bytes = AlignedBytes::new(&std::fs::read(golden_dir().join(format!("{name}.ossa"))).unwrap());
        let path = golden_dir().join(format!("{name}.metadata.txt"));
        if bless() {
            std::fs::write(&path, metadata_text(&bytes)).unwrap();
        }
        let expected = std::fs::read_to_string(&path).expect("golden metadata present");
        assert_eq!(expected, metadata_text(&bytes), "{name}: the decoder reads other metadata");
        assert_eq!(expected, spec_reader::metadata(&bytes, MetadataMisreading::Faithful), "{name}: the spec reader");
        texts.push((bytes, expected));
    }
    let skinned = Clip::from_bytes(&texts[1].0).unwrap().metadata().unwrap();
    assert!(skinned.has_joint_order() && skinned.root_placements().count() == 1, "skinned has both records");
    for m in MetadataMisreading::ALL {
        let wrong: usize = texts
            .iter()
            .map(|(bytes, expected)| {
                let got = spec_reader::metadata(bytes, m);
                expected.lines().zip(got.lines()).filter(|(a, b)| a != b).count()
                    + expected.lines().count().abs_diff(got.lines().count())
            })
            .sum();
        println!("{m:?}: {wrong} metadata lines wrong");
        assert!(wrong > 0, "the metadata golden files do not catch {m:?}");
    }
}
