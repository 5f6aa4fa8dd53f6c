//! Truncated, misaligned and corrupted buffers give typed errors; whatever validates
//! can be sampled without a panic.

mod common;

use ossa_decoder::{Clip, Error, Rounding, Sampler, Section, Transform};
use ossa_encoder::{compress, AlignedBytes, Settings};

fn example_bytes(include_metadata: bool) -> AlignedBytes {
    let raw = common::load(&common::repo_root().join("examples/wave.acl.sjson"));
    compress(&raw, &Settings { include_metadata, ..Settings::default() }).unwrap().bytes
}

/// `examples/stride` with its root motion extracted from `hips`: a wrapping clip with a
/// root-motion block holding a chain, a kept end and an in-place transform.
fn stride_bytes() -> AlignedBytes {
    let raw = common::load(&common::repo_root().join("examples/stride.acl.sjson"));
    let settings = Settings { root_motion_bone: Some("hips".into()), extract_root_motion: true, ..Settings::default() };
    compress(&raw, &settings).unwrap().bytes
}

/// Samples everything a player could ask for; must never panic.
fn exercise(clip: Clip<'_>) {
    let mut sampler = Sampler::new(clip);
    let mut pose = [Transform::IDENTITY; 16];
    let times = [0.0, 0.013, 0.5, 1.0, clip.duration(), -1.0, 1e9, f32::NAN, f32::INFINITY, f32::NEG_INFINITY];
    for t in times {
        for r in [Rounding::None, Rounding::Floor, Rounding::Ceil, Rounding::Nearest] {
            sampler.seek(t, r);
            let _ = sampler.decompress_pose(&mut pose);
            for b in 0..clip.bone_count().min(20) + 2 {
                let _ = sampler.decompress_bone(b);
            }
        }
    }
    if let Some(m) = clip.metadata() {
        for b in m.bones() {
            let _ = b.name.len();
        }
    }
    let _ = clip.layout();
    for (p, c) in [(0.0, clip.duration()), (f32::NAN, 0.5), (1e9, -1e9), (clip.duration(), 0.0)] {
        for wraps in [0, 1, -1, 7, i32::MAX, i32::MIN] {
            let d = clip.root_motion(p, c, wraps);
            let _ = d.transform_point(ossa_decoder::glam::Vec3::ONE);
        }
        let _ = clip.root_transform(p);
    }
}

#[test]
fn every_truncation_is_refused() {
    let bytes = example_bytes(true);
    for n in 0..bytes.len() {
        let cut = AlignedBytes::new(&bytes[..n]);
        match Clip::from_bytes(&cut) {
            Err(Error::Truncated { .. }) => {}
            other => panic!("prefix of {n} bytes: expected Truncated, got {other:?}"),
        }
    }
    assert!(Clip::from_bytes(&bytes).is_ok());
}

#[test]
fn misaligned_buffers_are_refused() {
    let bytes = example_bytes(false);
    let mut shifted = vec![0u8];
    shifted.extend_from_slice(&bytes);
    let shifted = AlignedBytes::new(&shifted);
    assert_eq!(Clip::from_bytes(&shifted[1..]).unwrap_err(), Error::Misaligned);
}

#[test]
fn other_versions_are_refused_with_the_version_found() {
    let bytes = example_bytes(false);
    let newer = ossa_decoder::format::VERSION_MINOR + 1;
    for (major, minor) in [(1u16, 0u16), (2, 0), (2, 1), (3, 0), (3, 2), (5, 0), (0, 0), (4, newer)] {
        let mut b = bytes.to_vec();
        b[4..6].copy_from_slice(&major.to_le_bytes());
        b[6..8].copy_from_slice(&minor.to_le_bytes());
        let e = Clip::from_bytes(&AlignedBytes::new(&b)).unwrap_err();
        assert_eq!(e, Error::UnsupportedVersion { major, minor });
        assert!(e.to_string().contains(&format!("{major}.{minor}")), "{e}");
    }
    let mut b = bytes.to_vec();
    b[0] = b'X';
    assert_eq!(Clip::from_bytes(&AlignedBytes::new(&b)).unwrap_err(), Error::BadMagic);
}

/// Reserved bits are refused: flags no 3.0 decoder knows, additive modes past 3, and
/// raw-constant bits past the four lists (header byte 23).
#[test]
fn unknown_flags_modes_and_list_bits_are_refused() {
    use ossa_decoder::format::{Looping, FLAG_LOOP_WRAP};
    let bytes = example_bytes(false);
    let mut b = bytes.to_vec();
    let flags = u32::from_le_bytes(b[16..20].try_into().unwrap());
    b[16..20].copy_from_slice(&(flags | FLAG_LOOP_WRAP).to_le_bytes());
    let wrapped = AlignedBytes::new(&b);
    let clip = Clip::from_bytes(&wrapped).unwrap();
    assert_eq!(clip.looping(), Looping::Wrap);
    assert_eq!(clip.duration(), clip.sample_count() as f32 / clip.sample_rate());
    b[16..20].copy_from_slice(&(flags | 1u32 << 31).to_le_bytes());
    assert_eq!(Clip::from_bytes(&AlignedBytes::new(&b)).unwrap_err(), Error::UnknownFlags(1 << 31));

    let mut b = bytes.to_vec();
    b[21] = 3;
    assert_eq!(Clip::from_bytes(&AlignedBytes::new(&b)).unwrap().additive(), ossa_decoder::Additive::Additive1);
    b[21] = 4;
    assert_eq!(Clip::from_bytes(&AlignedBytes::new(&b)).unwrap_err(), Error::UnsupportedAdditive(4));

    let mut b = bytes.to_vec();
    b[23] |= 0x20;
    assert_eq!(
        Clip::from_bytes(&AlignedBytes::new(&b)).unwrap_err(),
        Error::NonZeroReserved(ossa_decoder::Section::Header)
    );
}

/// The 4.1 width table (format-spec/tracks.md): a quantised list's width is 2 to 24
/// (code 1 to 12), any other list's 0, and the flag that announces the table does not
/// exist in 4.0.
#[test]
fn constant_widths_out_of_range_or_before_4_1_are_refused() {
    let bytes = example_bytes(false);
    assert_eq!(bytes[23] & 0x10, 0x10, "the example's constants are packed on their widths");
    assert_eq!(Clip::from_bytes(&bytes).unwrap().version(), (4, 2));
    let table = u32::from_le_bytes(bytes[44..48].try_into().unwrap()) as usize;
    let codes = |b: &[u8]| [b[table] & 15, b[table] >> 4, b[table + 1] & 15, b[table + 1] >> 4];
    let original = codes(&bytes);
    let used: Vec<usize> = (0..4).filter(|&l| original[l] != 0).collect();
    assert!(!used.is_empty(), "some list is quantised with constants: {original:?}");
    let refused = Error::BadValue(ossa_decoder::Section::Constants);
    for (list, &was) in original.iter().enumerate() {
        for code in [0u8, 1, 12, 13, 15] {
            if code == was {
                continue;
            }
            let mut b = bytes.to_vec();
            let (byte, shift) = (table + list / 2, 4 * (list % 2));
            b[byte] = b[byte] & !(15 << shift) | code << shift;
            let aligned = AlignedBytes::new(&b);
            let result = Clip::from_bytes(&aligned);
            // A used list may take any other width from 2 to 24: the section's size
            // changes, which the next section's offset then contradicts or not.
            if was != 0 && (1..=12).contains(&code) {
                if let Ok(clip) = result {
                    exercise(clip);
                }
                continue;
            }
            assert_eq!(result.unwrap_err(), refused, "list {list}, code {code} (was {was})");
        }
    }
    // Minor version 0 does not know the flag (nor 4.2's stored sets, cleared here so
    // that the flag is what is refused).
    let mut b = bytes.to_vec();
    b[6..8].copy_from_slice(&0u16.to_le_bytes());
    b[17] = 0;
    assert_eq!(
        Clip::from_bytes(&AlignedBytes::new(&b)).unwrap_err(),
        Error::NonZeroReserved(ossa_decoder::Section::Header)
    );
}

/// The stored bit sets (4.2, header flags bits 8-15): before 4.2 the bits are unknown
/// flags; a different set of stored sets moves every set after the change and the
/// section's size, which validation refuses or which decodes without a panic.
#[test]
fn stored_sets_flags_are_refused_before_4_2_and_never_misread_into_a_panic() {
    let bytes = example_bytes(false);
    let flags = u32::from_le_bytes(bytes[16..20].try_into().unwrap());
    let stored = (flags >> 8) & 0xff;
    assert!(stored != 0 && stored != 0xff, "the example leaves some sets out: {stored:#x}");
    let mut b = bytes.to_vec();
    b[6..8].copy_from_slice(&1u16.to_le_bytes());
    assert_eq!(Clip::from_bytes(&AlignedBytes::new(&b)).unwrap_err(), Error::UnknownFlags(stored << 8));
    for bit in 0..8 {
        let mut b = bytes.to_vec();
        b[16..20].copy_from_slice(&(flags ^ 1 << (8 + bit)).to_le_bytes());
        if let Ok(clip) = Clip::from_bytes(&AlignedBytes::new(&b)) {
            exercise(clip);
        }
    }
}

/// Sections start on 4-byte boundaries (4.1): an offset between them is refused as
/// misaligned before anything is read there.
#[test]
fn sections_off_a_4_byte_boundary_are_refused() {
    let bytes = example_bytes(false);
    for (field, section) in [(40, Section::Tracks), (44, Section::Constants), (48, Section::Ranges)] {
        let at = u32::from_le_bytes(bytes[field..field + 4].try_into().unwrap());
        assert_eq!(at % 4, 0);
        for shift in [1u32, 2, 3] {
            let mut b = bytes.to_vec();
            b[field..field + 4].copy_from_slice(&(at + shift).to_le_bytes());
            let aligned = AlignedBytes::new(&b);
            assert_eq!(Clip::from_bytes(&aligned).unwrap_err(), Error::SectionMisaligned(section), "field {field}");
        }
    }
}

#[test]
fn every_single_byte_corruption_is_detected_and_never_panics() {
    for bytes in [example_bytes(false), example_bytes(true), stride_bytes()] {
        let mut accepted_by_structure = 0;
        for i in 0..bytes.len() {
            for mask in [0x01u8, 0x80, 0xff, 0x10] {
                let mut b = bytes.to_vec();
                b[i] ^= mask;
                let b = AlignedBytes::new(&b);
                // The checksum catches every single-byte change (FNV-1a steps are
                // bijective in the running hash).
                assert!(Clip::from_bytes_verified(&b).is_err(), "byte {i} ^ {mask:#x} not detected");
                if let Ok(clip) = Clip::from_bytes(&b) {
                    accepted_by_structure += 1;
                    exercise(clip);
                }
            }
        }
        // Sample bits carry no structure, so many corruptions still validate.
        assert!(accepted_by_structure > 0);
    }
}

/// Each rule of the root-motion block (format-spec/root-motion.md) refuses a file that
/// breaks it, with the block named.
#[test]
fn root_motion_blocks_that_break_a_rule_are_refused() {
    use ossa_decoder::Section;
    let bytes = stride_bytes();
    let clip = Clip::from_bytes(&bytes).unwrap();
    assert!(clip.root_motion_in_place() && clip.root_end_stored());
    assert_eq!(u32::from_le_bytes(bytes[72..76].try_into().unwrap()), 1, "a chain of one ancestor");
    let patched = |at: usize, value: u32| {
        let mut b = bytes.to_vec();
        b[at..at + 4].copy_from_slice(&value.to_le_bytes());
        Clip::from_bytes(&AlignedBytes::new(&b)).map(|_| ()).unwrap_err()
    };
    let bad = Error::BadValue(Section::RootMotion);
    let reserved = Error::NonZeroReserved(Section::RootMotion);
    assert_eq!(patched(64, 7), bad, "motion bone past the bone count");
    assert_eq!(patched(68, 4), reserved, "unknown option");
    assert_eq!(patched(72, 65), bad, "chain longer than 64");
    assert_eq!(patched(76, 1), reserved, "reserved word");
    assert_eq!(patched(80, 1), bad, "chain entry is the motion bone");
    assert_eq!(patched(80, 9), bad, "chain entry past the bone count");
    assert_eq!(patched(84, 3), reserved, "chain padding");
    assert_eq!(patched(96, f32::NAN.to_bits()), bad, "end rotation not finite");
    assert_eq!(patched(96 + 28, 1), reserved, "end reserved word");
    let mut b = bytes.to_vec();
    b[128..144].fill(0);
    assert_eq!(Clip::from_bytes(&AlignedBytes::new(&b)).map(|_| ()).unwrap_err(), bad, "a zero in-place rotation");
    assert_eq!(patched(128 + 40, 2), reserved, "in-place reserved word");
    // A kept end only makes sense in a wrapping loop.
    let mut b = bytes.to_vec();
    let flags = u32::from_le_bytes(b[16..20].try_into().unwrap()) & !2;
    b[16..20].copy_from_slice(&flags.to_le_bytes());
    assert_eq!(Clip::from_bytes(&AlignedBytes::new(&b)).map(|_| ()).unwrap_err(), bad);
}

#[test]
fn garbage_never_panics() {
    // A small deterministic generator: no dependency, same bytes every run.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let valid = example_bytes(true);
    for round in 0..3000 {
        let mut b = valid.to_vec();
        // Overwrite a few random header or table bytes, sometimes a whole header.
        let edits = 1 + (next() % 6) as usize;
        for _ in 0..edits {
            let limit = if round % 2 == 0 { 160.min(b.len()) } else { b.len() };
            let at = (next() as usize) % limit;
            b[at] = next() as u8;
        }
        if round % 7 == 0 {
            let len = (next() as usize) % (b.len() + 1);
            b.truncate(len);
        }
        if let Ok(clip) = Clip::from_bytes(&AlignedBytes::new(&b)) {
            exercise(clip);
        }
    }
}

#[test]
fn output_slices_and_bone_indices_are_checked() {
    let bytes = example_bytes(false);
    let clip = Clip::from_bytes(&bytes).unwrap();
    let sampler = Sampler::new(clip);
    let mut small = [Transform::IDENTITY; 2];
    assert_eq!(sampler.decompress_pose(&mut small).unwrap_err(), Error::OutputTooSmall { len: 2, bone_count: 8 });
    assert_eq!(sampler.decompress_bone(8).unwrap_err(), Error::BoneOutOfRange { index: 8, bone_count: 8 });
}

#[test]
fn sample_rates_whose_duration_overflows_are_refused() {
    // wave has 48 samples: its duration is 47 / rate.
    let bytes = example_bytes(false);
    let with_rate = |rate: f32| {
        let mut b = bytes.to_vec();
        b[32..36].copy_from_slice(&rate.to_le_bytes());
        AlignedBytes::new(&b)
    };
    for rate in [1e-40f32, f32::from_bits(1), 1e-37, 0.0, -24.0, f32::NAN, f32::INFINITY] {
        let b = with_rate(rate);
        assert_eq!(Clip::from_bytes(&b).unwrap_err(), Error::BadSampleRate, "rate {rate:e}");
    }
    // 47 / 2e-37 = 2.35e38 is still finite: accepted, and every pose is finite.
    let b = with_rate(2e-37);
    let clip = Clip::from_bytes(&b).unwrap();
    assert!(clip.duration().is_finite());
    let mut sampler = Sampler::new(clip);
    let mut pose = [Transform::IDENTITY; 8];
    for i in 0..48 {
        sampler.seek(i as f32 / clip.sample_rate(), Rounding::None);
        sampler.decompress_pose(&mut pose).unwrap();
        assert!(pose.iter().all(|t| t.translation.is_finite() && t.rotation.is_finite()));
    }
}
