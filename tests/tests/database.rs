//! Streaming databases end to end (format-spec/database.md): built from the shared
//! clips, sampled through the decoder with every tier, some chunks or none resident,
//! checked against the raw clips with the independent error metric of `common`, and
//! against the same clips compressed on their own.

mod common;

use common::{pose_errors, raw_pose, Local, Rng};
use ossa_decoder::{Binding, Clip, Database, Error, Mismatch, Residency, Rounding, Sampler, Slot, Tier, Transform};
use ossa_encoder::compress::shared_pose::SharedPoseValues;
use ossa_encoder::database::poses::PosePolicy;
use ossa_encoder::database::{build, BuiltDatabase, DatabaseSettings, Fidelity};
use ossa_encoder::{compress, AlignedBytes, RawClip, Settings};

/// The bytes of chunk `i` of `tier` in the database file.
fn chunk<'f>(database: &Database<'_>, file: &'f [u8], tier: Tier, i: u32) -> &'f [u8] {
    let c = database.chunk(tier, i).expect("chunk exists");
    &file[c.file_offset as usize..][..c.size as usize]
}

/// A residency of `database` with the chunks `resident(tier, i)` says bound.
fn residency<'f>(
    database: &Database<'_>,
    file: &'f [u8],
    resident: impl Fn(Tier, u32) -> bool,
) -> Residency<'f, Vec<Slot<'f>>> {
    let mut r = Residency::new(database, vec![None; database.chunk_slots() as usize]).unwrap();
    for tier in Tier::ALL {
        for i in 0..database.chunk_count(tier) {
            if resident(tier, i) {
                assert!(r.bind(database, tier, i, chunk(database, file, tier, i)).unwrap().is_none());
            }
        }
    }
    r
}

/// Every source sample of a clip decoded with `residency`.
fn poses<'a, S: AsRef<[Slot<'a>]>>(
    clip: Clip<'a>,
    binding: &Binding<'_>,
    residency: &Residency<'a, S>,
) -> Vec<Vec<Transform>> {
    let mut sampler = Sampler::new(clip);
    (0..clip.source_sample_count())
        .map(|s| {
            sampler.seek_streamed(s as f32 / clip.sample_rate(), Rounding::None, binding, residency).unwrap();
            let mut pose = vec![Transform::IDENTITY; clip.bone_count() as usize];
            sampler.decompress_pose(&mut pose).unwrap();
            pose
        })
        .collect()
}

/// Every source sample of a clip decoded on its own.
fn plain_poses(clip: Clip<'_>) -> Vec<Vec<Transform>> {
    let mut sampler = Sampler::new(clip);
    (0..clip.source_sample_count())
        .map(|s| {
            sampler.seek(s as f32 / clip.sample_rate(), Rounding::None);
            let mut pose = vec![Transform::IDENTITY; clip.bone_count() as usize];
            sampler.decompress_pose(&mut pose).unwrap();
            pose
        })
        .collect()
}

fn bits(poses: &[Vec<Transform>]) -> Vec<u32> {
    poses.iter().flatten().flat_map(common::transform_bits).collect()
}

/// The largest object-space error of `poses` against `raw`.
fn max_error(raw: &RawClip, poses: &[Vec<Transform>]) -> f64 {
    poses
        .iter()
        .enumerate()
        .flat_map(|(s, pose)| {
            let decoded: Vec<Local> = pose.iter().map(Local::from_decoded).collect();
            pose_errors(raw, &raw_pose(raw, s), &decoded)
        })
        .fold(0.0, f64::max)
}

fn shared(names: Option<&[&str]>) -> Option<Vec<(String, RawClip)>> {
    let dir = common::shared_clips()?;
    Some(
        common::transform_clips(&dir)
            .into_iter()
            .map(|p| (p.file_name().unwrap().to_string_lossy().replace(".acl.sjson", ""), p))
            .filter(|(n, _)| names.is_none_or(|names| names.contains(&n.as_str())))
            .map(|(n, p)| (n, common::load(&p)))
            .collect(),
    )
}

/// A database of every shared transform clip, default tiers (a quarter each) and
/// chunks, with the default shared poses and without any: with every tier resident
/// each clip decodes bit for bit as it does compressed on its own with every key frame
/// (and its shared pose, if any), so within the precision at every sample of every
/// bone (the independent metric says so); with none, as the clip's own bytes decode
/// without the tiers. The tiers take the shares asked of all stored key frames, and
/// the encoder's reported errors are the decoder's. The shared clips have one
/// skeleton: with the default policy they share one pose, which saves bytes.
#[test]
#[cfg_attr(shared_clips_missing, ignore = "skipped: ../shared/clips not found")]
fn a_database_of_the_shared_clips_holds_the_bound_with_every_tier_resident() {
    let Some(clips) = shared(None) else { return };
    let mut totals = Vec::new();
    for policy in [PosePolicy::Auto, PosePolicy::Never] {
        let settings = DatabaseSettings { shared_poses: policy, ..DatabaseSettings::default() };
        let built = check_database(&clips, &settings);
        let pose_count = Database::from_bytes(&built.file).unwrap().pose_count();
        assert_eq!(pose_count, u32::from(policy == PosePolicy::Auto), "{policy:?}: one skeleton, one pose");
        let clip_bytes: usize = built.clips.iter().map(|c| c.compressed_bytes).sum();
        totals.push(clip_bytes + built.index_size + built.tiers[0].bytes + built.tiers[1].bytes);
    }
    assert!(totals[0] < totals[1], "the shared pose saves bytes: {} B against {} B", totals[0], totals[1]);
}

/// [`a_database_of_the_shared_clips_holds_the_bound_with_every_tier_resident`] for
/// one database.
fn check_database(clips: &[(String, RawClip)], settings: &DatabaseSettings) -> BuiltDatabase {
    let built = build(clips, settings).unwrap();
    let database = Database::from_bytes_verified(&built.file).unwrap();
    let all = residency(&database, &built.file, |_, _| true);
    let medium = residency(&database, &built.file, |t, _| t == Tier::Medium);
    let none = residency(&database, &built.file, |_, _| false);
    let mut worst = [0.0f64; 3];
    for ((name, raw), result) in clips.iter().zip(&built.clips) {
        assert_eq!(&result.name, name);
        let clip = database.open_clip(&result.bytes).unwrap();
        clip.verify_checksum().unwrap();
        assert_eq!(clip.shared_pose_index(), result.shared_pose);
        let binding = database.bind(&clip).unwrap();
        let highest = poses(clip, &binding, &all);
        // The same clip compressed on its own, with its pose's values if it has one.
        let pose = result.shared_pose.map(|i| {
            let view = database.shared_pose(i).unwrap();
            let bones = (0..view.bone_count())
                .map(|b| {
                    let t = view.transform(b);
                    let v = |v: ossa_decoder::glam::Vec3| [v.x, v.y, v.z, 0.0];
                    [t.rotation.to_array(), v(t.translation), v(t.scale)]
                })
                .collect();
            std::sync::Arc::new(SharedPoseValues::new(i, bones))
        });
        let own = Settings { shared_pose: pose.clone(), ..settings.compression.clone() };
        let alone = compress(raw, &own).unwrap();
        let alone = ossa_encoder::compress::open(&alone.bytes, pose.as_deref()).unwrap();
        assert_eq!(
            bits(&highest),
            bits(&plain_poses(alone)),
            "{name}: every tier resident decodes as the clip compressed on its own"
        );
        let lowest = poses(clip, &binding, &none);
        assert_eq!(bits(&lowest), bits(&plain_poses(clip)), "{name}: no tier resident is the clip alone");
        let errors =
            [max_error(raw, &lowest), max_error(raw, &poses(clip, &binding, &medium)), max_error(raw, &highest)];
        assert!(errors[2] <= settings.compression.precision, "{name}: {} above the precision", errors[2]);
        for (f, e) in errors.iter().enumerate() {
            let reported = result.errors[f].max_error;
            assert!(
                (reported - e).abs() <= 1e-6 * e.max(1e-3),
                "{name} {:?}: reported {reported}, measured {e}",
                Fidelity::ALL[f]
            );
            worst[f] = worst[f].max(*e);
        }
        // Its size on its own: every key frame and every constant in it, no pose.
        let standalone = compress(raw, &settings.compression).unwrap().compressed_bytes;
        assert_eq!(result.standalone_bytes, standalone, "{name}: the size on its own has no shared pose");
        assert_eq!(result.clip_frames + result.tier_frames[0] + result.tier_frames[1], result.stored_frames);
        assert_eq!(clip.stored_key_frames() as usize, result.clip_frames);
    }
    let stored: usize = built.clips.iter().map(|c| c.stored_frames).sum();
    let share = |f: f64| (f * stored as f64).round() as usize;
    assert_eq!(built.tiers[0].frames, share(settings.medium));
    assert_eq!(built.tiers[1].frames, share(settings.low));
    assert!(worst[0] > worst[1] && worst[1] > worst[2], "fidelities order their errors: {worst:?}");
    let clip_bytes: usize = built.clips.iter().map(|c| c.compressed_bytes).sum();
    let alone: usize = built.clips.iter().map(|c| c.standalone_bytes).sum();
    println!(
        "shared poses {:?}: {} clips: {clip_bytes} B in the clips (every key frame: {alone} B), medium tier {} B, \
         low tier {} B, index {} B ({} shared pose(s), {} B of values); max error lowest {:.5}, medium {:.5}, \
         highest {:.5}",
        settings.shared_poses,
        built.clips.len(),
        built.tiers[0].bytes,
        built.tiers[1].bytes,
        built.index_size,
        built.poses,
        built.pose_bytes,
        worst[0],
        worst[1],
        worst[2]
    );
    built
}

/// Small chunks (1 KiB: many per tier), some of them resident: every sample the
/// clip or a resident chunk holds decodes exactly as with everything resident, and
/// unbinding gives the bytes back.
#[test]
#[cfg_attr(shared_clips_missing, ignore = "skipped: ../shared/clips not found")]
fn chunks_resident_in_any_combination_give_their_key_frames() {
    let Some(clips) = shared(Some(&["49_15", "81_18", "102_09"])) else { return };
    let settings = DatabaseSettings { chunk_shift: 10, medium: 0.3, low: 0.3, ..DatabaseSettings::default() };
    let built = build(&clips, &settings).unwrap();
    let database = Database::from_bytes(&built.file).unwrap();
    assert!(database.chunk_count(Tier::Medium) > 4 && database.chunk_count(Tier::Low) > 4);
    let all = residency(&database, &built.file, |_, _| true);
    let mut rng = Rng(7);
    for round in 0..6 {
        let chosen: Vec<Vec<bool>> =
            Tier::ALL.iter().map(|&t| (0..database.chunk_count(t)).map(|_| rng.next() < 0.5).collect()).collect();
        let mut some = residency(&database, &built.file, |t, i| chosen[t.index()][i as usize]);
        for result in &built.clips {
            let clip = database.open_clip(&result.bytes).unwrap();
            let binding = database.bind(&clip).unwrap();
            let full = poses(clip, &binding, &all);
            let partial = poses(clip, &binding, &some);
            let mut exact = 0;
            for s in 0..clip.sample_count() {
                if holds(&database, &clip, s, &chosen) {
                    exact += 1;
                    assert_eq!(
                        bits(&partial[s as usize..][..1]),
                        bits(&full[s as usize..][..1]),
                        "round {round}, {}, sample {s}",
                        result.name
                    );
                }
            }
            assert!(exact >= result.clip_frames);
        }
        // Unbinding gives back what was bound, and the residency empties.
        for tier in Tier::ALL {
            for i in 0..database.chunk_count(tier) {
                let back = some.unbind(tier, i);
                assert_eq!(back.is_some(), chosen[tier.index()][i as usize]);
                if let Some(bytes) = back {
                    assert_eq!(bytes.as_ptr(), chunk(&database, &built.file, tier, i).as_ptr());
                }
            }
            assert_eq!(some.resident_chunks(tier), 0);
        }
    }
}

/// Whether key frame `sample` of the database clip `clip` is stored in the clip or in
/// a chunk `chosen` marks resident.
fn holds(database: &Database<'_>, clip: &Clip<'_>, sample: u32, chosen: &[Vec<bool>]) -> bool {
    let (_, index) = clip.database_reference().unwrap();
    let len = u32::from(clip.segment_len());
    let segment = (sample / len).min(clip.segment_count() - 1);
    let local = sample - segment * len;
    if clip.segment_key_frames(segment).unwrap() >> local & 1 == 1 {
        return true;
    }
    let tiers = database.segment_tiers(index, segment).unwrap();
    Tier::ALL.iter().any(|&t| {
        let frames = tiers[t.index()];
        frames.present >> local & 1 == 1 && chosen[t.index()][frames.chunk as usize]
    })
}

/// A small database of the example clips (no shared clips needed), chunks of
/// `2^chunk_shift` bytes; `cycle` and `stride` (one skeleton) share a pose.
fn examples(names: &[&str], chunk_shift: u8) -> BuiltDatabase {
    let clips: Vec<(String, RawClip)> = names
        .iter()
        .map(|n| (n.to_string(), common::load(&common::repo_root().join(format!("examples/{n}.acl.sjson")))))
        .collect();
    let settings = DatabaseSettings {
        chunk_shift,
        medium: 0.3,
        low: 0.3,
        shared_poses: PosePolicy::Always,
        ..DatabaseSettings::default()
    };
    build(&clips, &settings).unwrap()
}

/// A clip is bound only to its own database, as built: another database, a clip
/// compressed on its own, a clip rebuilt since; a binding or residency only serves
/// its own clip and database; chunks are checked when bound.
#[test]
fn clips_chunks_and_residencies_of_other_databases_are_refused() {
    let a = examples(&["wave", "cycle"], 8);
    let b = examples(&["wave", "glide"], 8);
    let (da, db) = (Database::from_bytes(&a.file).unwrap(), Database::from_bytes(&b.file).unwrap());
    assert_ne!(da.id(), db.id());
    let wave_a = Clip::from_bytes(&a.clips[0].bytes).unwrap();
    let cycle_a = Clip::from_bytes(&a.clips[1].bytes).unwrap();
    assert_eq!(db.bind(&wave_a).unwrap_err(), Error::NotInDatabase(Mismatch::OtherDatabase));
    let alone =
        compress(&common::load(&common::repo_root().join("examples/wave.acl.sjson")), &Settings::default()).unwrap();
    assert_eq!(
        da.bind(&Clip::from_bytes(&alone.bytes).unwrap()).unwrap_err(),
        Error::NotInDatabase(Mismatch::NoReference)
    );
    // The clip's index changed (and its checksum made right): another clip's record.
    let mut other = a.clips[0].bytes.to_vec();
    other[64 + 8] = 1;
    let sum = ossa_decoder::format::checksum(&other);
    other[12..16].copy_from_slice(&sum.to_le_bytes());
    let other = AlignedBytes::new(&other);
    assert_eq!(da.bind(&Clip::from_bytes(&other).unwrap()).unwrap_err(), Error::NotInDatabase(Mismatch::Rebuilt));
    let mut past = a.clips[0].bytes.to_vec();
    past[64 + 8] = 9;
    let past = AlignedBytes::new(&past);
    assert_eq!(
        da.bind(&Clip::from_bytes(&past).unwrap()).unwrap_err(),
        Error::NotInDatabase(Mismatch::IndexOutOfRange)
    );

    let binding = da.bind(&wave_a).unwrap();
    let ra = residency(&da, &a.file, |_, _| true);
    let rb = residency(&db, &b.file, |_, _| true);
    let mut sampler = Sampler::new(wave_a);
    assert_eq!(sampler.seek_streamed(0.1, Rounding::None, &binding, &rb).unwrap_err(), Error::OtherClipOrDatabase);
    let mut cycle = Sampler::new(cycle_a);
    assert_eq!(cycle.seek_streamed(0.1, Rounding::None, &binding, &ra).unwrap_err(), Error::OtherClipOrDatabase);
    assert!(sampler.seek_streamed(0.1, Rounding::None, &binding, &ra).is_ok());

    // Room for the chunks, chunks that exist, whole, from this database.
    let too_few = vec![None; da.chunk_slots() as usize - 1];
    assert!(matches!(Residency::new(&da, too_few).unwrap_err(), Error::TooManyChunks { .. }));
    let mut r = Residency::new(&da, vec![None; da.chunk_slots() as usize]).unwrap();
    let first = chunk(&da, &a.file, Tier::Medium, 0);
    assert!(matches!(
        r.bind(&da, Tier::Medium, 0, &first[..first.len() - 1]).unwrap_err(),
        Error::ChunkTooShort { .. }
    ));
    let count = da.chunk_count(Tier::Medium);
    assert_eq!(r.bind(&da, Tier::Medium, count, first).unwrap_err(), Error::NoSuchChunk { tier: 0, chunk: count });
    assert_eq!(r.bind(&db, Tier::Medium, 0, first).unwrap_err(), Error::OtherClipOrDatabase);
    let mut corrupted = first.to_vec();
    corrupted[0] ^= 1;
    assert_eq!(
        da.verify_chunk(Tier::Medium, 0, &corrupted).unwrap_err(),
        Error::ChunkChecksumMismatch { tier: 0, chunk: 0 }
    );
    assert!(da.verify_chunk(Tier::Medium, 0, first).is_ok());
}

/// Every truncation and every single-byte change of a database index is refused or,
/// when it still validates, bound and sampled with every chunk resident (and with
/// chunks of garbage) without a panic or a read out of bounds; validation catches the
/// changes that matter (a tier frame the clip stores, a location past its chunk).
#[test]
fn malformed_indexes_and_chunks_never_panic() {
    let built = examples(&["wave", "glide", "cycle", "stride"], 8);
    assert_eq!(built.poses, 1);
    let file = &built.file;
    let index_size = built.index_size;
    for len in 0..index_size {
        assert!(Database::from_bytes(&file[..len]).is_err(), "truncated to {len}");
    }
    let clips: Vec<AlignedBytes> = built.clips.iter().map(|c| c.bytes.clone()).collect();
    let mut accepted = 0;
    for at in 0..index_size {
        for value in [0u8, 0xff, file[at] ^ 1, file[at].wrapping_add(16)] {
            if value == file[at] {
                continue;
            }
            let mut changed = file.clone();
            changed[at] = value;
            let Ok(database) = Database::from_bytes(&changed) else { continue };
            accepted += 1;
            let mut slots = vec![None; database.chunk_slots() as usize];
            let mut r = Residency::new(&database, &mut slots[..]).unwrap();
            for tier in Tier::ALL {
                for i in 0..database.chunk_count(tier) {
                    if let Some(c) = database.chunk(tier, i) {
                        let start = (c.file_offset as usize).min(changed.len());
                        let bytes = &changed[start..(start + c.size as usize).min(changed.len())];
                        let _ = r.bind(&database, tier, i, bytes);
                    }
                }
            }
            for bytes in &clips {
                // A clip with a shared pose opens only with a pose that fits it.
                let Ok(clip) = database.open_clip(bytes) else { continue };
                let Ok(binding) = database.bind(&clip) else { continue };
                let mut sampler = Sampler::new(clip);
                let mut pose = vec![Transform::IDENTITY; clip.bone_count() as usize];
                for k in 0..=40 {
                    let time = clip.duration() * k as f32 / 40.0;
                    sampler.seek_streamed(time, Rounding::None, &binding, &r).unwrap();
                    sampler.decompress_pose(&mut pose).unwrap();
                    for b in 0..clip.bone_count() {
                        sampler.decompress_bone(b).unwrap();
                    }
                }
            }
        }
    }
    // Names, checksums and file offsets are not read by sampling: some changes pass.
    assert!(accepted > 0);
    // Chunks of garbage (of the right sizes) decode without a panic.
    let database = Database::from_bytes(file).unwrap();
    let mut rng = Rng(3);
    let garbage: Vec<Vec<u8>> = Tier::ALL
        .iter()
        .flat_map(|&t| (0..database.chunk_count(t)).map(move |i| (t, i)))
        .map(|(t, i)| (0..database.chunk(t, i).unwrap().size).map(|_| (rng.next() * 256.0) as u8).collect())
        .collect();
    let mut r = Residency::new(&database, vec![None; database.chunk_slots() as usize]).unwrap();
    let mut next = garbage.iter();
    for tier in Tier::ALL {
        for i in 0..database.chunk_count(tier) {
            r.bind(&database, tier, i, next.next().unwrap()).unwrap();
        }
    }
    for bytes in &clips {
        let clip = database.open_clip(bytes).unwrap();
        let binding = database.bind(&clip).unwrap();
        let _ = poses(clip, &binding, &r);
    }
}

/// A clip with a shared pose opens only with it: not on its own, not with another
/// database's, not with a pose it does not have or of another bone count; its
/// default sub-tracks decode as the pose's values (every bone of the pose that no list
/// of the clip holds), a clip without one is unaffected by the database it opens with.
#[test]
fn shared_poses_open_only_with_their_database() {
    let built = examples(&["cycle", "stride", "wave"], 8);
    let other = examples(&["cycle", "stride"], 9);
    let database = Database::from_bytes_verified(&built.file).unwrap();
    let elsewhere = Database::from_bytes(&other.file).unwrap();
    let cycle = &built.clips[0].bytes;
    assert_eq!(built.clips[0].shared_pose, Some(0));
    assert_eq!(built.clips[2].shared_pose, None);
    assert_eq!(Clip::from_bytes(cycle).unwrap_err(), Error::NeedsSharedPose);
    assert_eq!(elsewhere.open_clip(cycle).unwrap_err(), Error::NotInDatabase(Mismatch::OtherDatabase));
    let pose = database.shared_pose(0).unwrap();
    let clip = database.open_clip(cycle).unwrap();
    assert_eq!(Clip::from_bytes_with_pose(cycle, pose).unwrap().checksum(), clip.checksum());
    // A pose of another bone count.
    let wave_pose = vec![0u8; 40 * 8];
    let wrong = ossa_decoder::SharedPose::from_bytes(&wave_pose, 8).unwrap();
    assert_eq!(
        Clip::from_bytes_with_pose(cycle, wrong).unwrap_err(),
        Error::SharedPoseMismatch { pose_bones: 8, bone_count: 7 }
    );
    // A pose index past the database's poses (the checksum made right).
    let mut past = cycle.to_vec();
    let at = 64 + 12;
    past[at] = 1;
    let sum = ossa_decoder::format::checksum(&past);
    past[12..16].copy_from_slice(&sum.to_le_bytes());
    let past = AlignedBytes::new(&past);
    assert_eq!(database.open_clip(&past).unwrap_err(), Error::NotInDatabase(Mismatch::PoseOutOfRange));
    // Non-finite pose values are refused.
    let mut nan = vec![0u8; 40];
    nan[..4].copy_from_slice(&f32::NAN.to_le_bytes());
    assert!(ossa_decoder::SharedPose::from_bytes(&nan, 1).is_err());
    // A wave clip (no pose) opens the same through either database.
    let wave = Clip::from_bytes(&built.clips[2].bytes).unwrap();
    assert_eq!(elsewhere.open_clip(&built.clips[2].bytes).unwrap().checksum(), wave.checksum());
    // Bone by bone decodes as the whole pose; and some sub-tracks decode, at every
    // time, to exactly the pose's values where they are not the identity's: default
    // sub-tracks taking them (a stored constant would be quantised).
    let mut sampler = Sampler::new(clip);
    let mut out = vec![Transform::IDENTITY; 7];
    let mut from_pose = [[true; 2]; 7];
    for k in 0..=10 {
        sampler.seek(clip.duration() * k as f32 / 10.0, Rounding::None);
        sampler.decompress_pose(&mut out).unwrap();
        for bone in 0..7u32 {
            let single = sampler.decompress_bone(bone).unwrap();
            assert_eq!(common::transform_bits(&single), common::transform_bits(&out[bone as usize]));
            let (t, p) = (out[bone as usize], pose.transform(bone));
            from_pose[bone as usize][0] &=
                t.rotation.to_array().map(f32::to_bits) == p.rotation.to_array().map(f32::to_bits);
            from_pose[bone as usize][1] &=
                t.translation.to_array().map(f32::to_bits) == p.translation.to_array().map(f32::to_bits);
        }
    }
    let taken = (0..7u32)
        .filter(|&b| {
            let p = pose.transform(b);
            (from_pose[b as usize][0] && p.rotation != ossa_decoder::glam::Quat::IDENTITY)
                || (from_pose[b as usize][1] && p.translation != ossa_decoder::glam::Vec3::ZERO)
        })
        .count();
    assert!(taken > 0, "some default sub-track takes a pose value other than the identity");
}

/// Binding checks a clip's segments against the tiers: a tier holding a key frame
/// the clip stores, or its last frame, or more than its chunk holds, is refused.
#[test]
fn binding_refuses_tier_frames_that_contradict_the_clip() {
    let built = examples(&["glide", "wave"], 8);
    let database = Database::from_bytes(&built.file).unwrap();
    let u32_at = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
    let segments = u32_at(&built.file, 56) as usize;
    let clip = Clip::from_bytes(&built.clips[1].bytes).unwrap();
    let first = u32_at(&built.file, u32_at(&built.file, 48) as usize + 16 + 8) as usize;
    // The wave clip's first segment with something in a tier.
    let (s, t) = (0..clip.segment_count() as usize)
        .flat_map(|s| [(s, 0), (s, 1)])
        .find(|&(s, t)| u32_at(&built.file, segments + 16 * (first + s) + 4 * t) != 0)
        .expect("the tiers hold some of wave's key frames");
    let entry = segments + 16 * (first + s);
    let held = u32_at(&built.file, entry + 4 * t);
    let present = clip.segment_key_frames(s as u32).unwrap();
    let last = 31 - present.leading_zeros();
    let chunk_size = database.chunk_size();
    for (what, field, value) in [
        ("a frame the clip stores", 4 * t, held | (present & !1)),
        ("the last frame", 4 * t, held | 1 << last),
        ("a location past the chunk's end", 8 + 4 * t, u32_at(&built.file, entry + 8 + 4 * t) | (chunk_size - 1)),
    ] {
        let mut changed = built.file.clone();
        changed[entry + field..entry + field + 4].copy_from_slice(&value.to_le_bytes());
        let database = Database::from_bytes(&changed).expect("the index alone cannot tell");
        assert_eq!(database.bind(&clip).unwrap_err(), Error::BadTierFrames { segment: s as u32 }, "{what}");
    }
}

/// A clip that does not move, every key frame kept (`remove_key_frames: false`): its
/// segments store no bits per key frame, yet the tiers take some of its key frames;
/// their pieces are empty and still placed in a chunk, so the database validates and
/// binds, and every fidelity decodes the same still pose.
#[test]
fn key_frames_of_no_bits_still_find_a_chunk() {
    let mut still = common::load(&common::repo_root().join("examples/wave.acl.sjson"));
    for track in &mut still.tracks {
        let (r, t, s) = (track.rotations[0], track.translations[0], track.scales[0]);
        track.rotations.iter_mut().for_each(|x| *x = r);
        track.translations.iter_mut().for_each(|x| *x = t);
        track.scales.iter_mut().for_each(|x| *x = s);
    }
    let settings = DatabaseSettings {
        compression: Settings { remove_key_frames: false, ..Settings::default() },
        medium: 0.3,
        low: 0.3,
        ..DatabaseSettings::default()
    };
    let built = build(&[("still".into(), still)], &settings).unwrap();
    assert!(built.clips[0].tier_frames.iter().all(|&f| f > 0), "{:?}", built.clips[0].tier_frames);
    let database = Database::from_bytes_verified(&built.file).unwrap();
    let clip = Clip::from_bytes(&built.clips[0].bytes).unwrap();
    let binding = database.bind(&clip).unwrap();
    let all = residency(&database, &built.file, |_, _| true);
    assert_eq!(bits(&poses(clip, &binding, &all)), bits(&plain_poses(clip)));
    assert!(built.clips[0].errors.iter().all(|e| e.max_error <= 0.01));
}
