//! Streaming databases through the C ABI, called from Rust as C would call them: the
//! golden database's clips sample through a residency exactly as through the decoder
//! with the same chunks resident (bound and unbound in any order), and every misuse
//! the header names is refused by its status code.

mod common;

use std::mem::MaybeUninit;

use common::{golden_aligned, view};
use ossa_c::database::{
    ossa_database_chunk, ossa_database_chunk_count, ossa_database_chunk_slots, ossa_database_index_size,
    ossa_database_init, ossa_database_verify_chunk, ossa_residency_bind, ossa_residency_init,
    ossa_residency_resident_chunks, ossa_residency_unbind, ossa_sampler_init_in_database, ossa_sampler_seek_streamed,
    OssaChunk, OssaChunkSlot, OssaDatabase, OssaResidency, OssaTier,
};
use ossa_c::{
    ossa_sampler_bone_count, ossa_sampler_init, ossa_sampler_pose, ossa_sampler_seek, OssaRounding, OssaSampler,
    OssaStatus, OssaTransform,
};
use ossa_decoder::{Database, Residency, Rounding, Sampler, Slot, Tier, Transform};

/// Zeroed storage for one of the ABI's opaque structs (every field is an integer or
/// a pointer, for which zero is a valid value).
fn storage<T>() -> Box<T> {
    let boxed: Box<MaybeUninit<T>> = Box::new(MaybeUninit::zeroed());
    // SAFETY: zero is a valid value of each opaque struct's fields.
    unsafe { Box::from_raw(Box::into_raw(boxed).cast::<T>()) }
}

fn slots(n: usize) -> Vec<OssaChunkSlot> {
    // SAFETY: zero is a valid pointer (null) and length.
    (0..n).map(|_| unsafe { MaybeUninit::<OssaChunkSlot>::zeroed().assume_init() }).collect()
}

const TIERS: [(OssaTier, Tier); 2] = [(OssaTier::Medium, Tier::Medium), (OssaTier::Low, Tier::Low)];

/// Intervals the clips are sampled at (fewer under Miri, which runs the same code
/// paths a thousand times slower).
const STEPS: u32 = if cfg!(miri) { 3 } else { 24 };

/// Where chunk `i` of `tier` is in the database file `file`.
fn chunk_bytes<'f>(database: &OssaDatabase, file: &'f [u8], tier: OssaTier, i: u32) -> &'f [u8] {
    let mut chunk = OssaChunk::default();
    // SAFETY: an initialised database and a writable chunk.
    assert_eq!(unsafe { ossa_database_chunk(database, tier as u32, i, &mut chunk) }, OssaStatus::Ok);
    &file[chunk.file_offset as usize..][..chunk.size as usize]
}

/// The poses of `sampler` at `STEPS + 1` times over the clip, seeking with `residency`.
fn abi_poses(sampler: &mut OssaSampler, residency: &OssaResidency) -> Vec<Vec<u32>> {
    // SAFETY: an initialised sampler and residency; outputs of the bone count.
    unsafe {
        let bones = ossa_sampler_bone_count(sampler) as usize;
        let duration = ossa_c::ossa_sampler_duration(sampler);
        (0..=STEPS)
            .map(|k| {
                let time = duration * k as f32 / STEPS as f32;
                assert_eq!(
                    ossa_sampler_seek_streamed(sampler, time, OssaRounding::None as u32, residency),
                    OssaStatus::Ok
                );
                let mut out = vec![OssaTransform::default(); bones];
                assert_eq!(ossa_sampler_pose(sampler, out.as_mut_ptr(), bones), OssaStatus::Ok);
                out.iter()
                    .flat_map(|t| t.rotation.iter().chain(&t.translation).chain(&t.scale).map(|v| v.to_bits()))
                    .collect()
            })
            .collect()
    }
}

/// The same through the decoder, with the chunks of `resident` (tier, chunk) bound.
fn decoder_poses(index: &[u8], file: &[u8], clip: &[u8], resident: &[(Tier, u32)]) -> Vec<Vec<u32>> {
    let database = Database::from_bytes(index).unwrap();
    let clip = database.open_clip(clip).unwrap();
    let binding = database.bind(&clip).unwrap();
    let mut residency = Residency::new(&database, vec![Slot::None; database.chunk_slots() as usize]).unwrap();
    for &(tier, i) in resident {
        let c = database.chunk(tier, i).unwrap();
        residency.bind(&database, tier, i, &file[c.file_offset as usize..][..c.size as usize]).unwrap();
    }
    let mut sampler = Sampler::new(clip);
    let mut pose = vec![Transform::IDENTITY; clip.bone_count() as usize];
    (0..=STEPS)
        .map(|k| {
            let time = clip.duration() * k as f32 / STEPS as f32;
            sampler.seek_streamed(time, Rounding::None, &binding, &residency).unwrap();
            sampler.decompress_pose(&mut pose).unwrap();
            pose.iter()
                .flat_map(|t| {
                    t.rotation.to_array().into_iter().chain(t.translation.to_array()).chain(t.scale.to_array())
                })
                .map(f32::to_bits)
                .collect()
        })
        .collect()
}

#[test]
fn database_clips_sample_through_a_residency_as_through_the_decoder() {
    let (db_words, db_len) = golden_aligned("stream.ossadb");
    let file = view(&db_words, db_len);
    let mut database = storage::<OssaDatabase>();
    // SAFETY: writable storage; the file outlives the database (the test).
    assert_eq!(unsafe { ossa_database_init(&mut *database, file.as_ptr(), file.len(), true) }, OssaStatus::Ok);
    // SAFETY: an initialised database.
    let (index_size, slot_count) =
        unsafe { (ossa_database_index_size(&*database), ossa_database_chunk_slots(&*database)) };
    let index = &file[..index_size as usize];
    // The index alone validates too (a game keeps it, and streams the chunks).
    let mut index_only = storage::<OssaDatabase>();
    // SAFETY: as above.
    assert_eq!(unsafe { ossa_database_init(&mut *index_only, index.as_ptr(), index.len(), true) }, OssaStatus::Ok);

    let mut slot_storage = slots(slot_count as usize);
    let mut residency = storage::<OssaResidency>();
    // SAFETY: writable residency and slots, outliving every use (the test).
    let status =
        unsafe { ossa_residency_init(&mut *residency, &*index_only, slot_storage.as_mut_ptr(), slot_storage.len()) };
    assert_eq!(status, OssaStatus::Ok);

    // Every chunk, in an order of its own: bound one by one, each clip checked against
    // the decoder with the same chunks after each step; then unbound in another order.
    let mut order = Vec::new();
    for (ossa_tier, tier) in TIERS {
        // SAFETY: an initialised database.
        for i in 0..unsafe { ossa_database_chunk_count(&*index_only, ossa_tier as u32) } {
            order.push((ossa_tier, tier, i));
        }
    }
    assert!(order.len() >= 4, "the golden database has chunks in both tiers");
    order.rotate_left(1);
    let mut resident = Vec::new();
    let clips: Vec<(Vec<u128>, usize)> =
        ["stream_wave.ossa", "stream_cycle.ossa", "stream_stride.ossa", "stream_glide.ossa"].map(golden_aligned).into();
    let mut samplers: Vec<Box<OssaSampler>> = clips
        .iter()
        .map(|(words, len)| {
            let bytes = view(words, *len);
            let mut sampler = storage::<OssaSampler>();
            // SAFETY: writable storage; the clip and the index outlive the sampler.
            let status = unsafe {
                ossa_sampler_init_in_database(&mut *sampler, &*index_only, bytes.as_ptr(), bytes.len(), true)
            };
            assert_eq!(status, OssaStatus::Ok);
            sampler
        })
        .collect();
    let mut check = |resident: &[(Tier, u32)], residency: &OssaResidency| {
        for ((words, len), sampler) in clips.iter().zip(samplers.iter_mut()) {
            let expected = decoder_poses(index, file, view(words, *len), resident);
            assert_eq!(abi_poses(sampler, residency), expected, "{resident:?}");
        }
    };
    check(&resident, &residency);
    for &(ossa_tier, tier, i) in &order {
        let bytes = chunk_bytes(&database, file, ossa_tier, i);
        // SAFETY: initialised residency and database; the chunk outlives its use.
        unsafe {
            assert_eq!(
                ossa_database_verify_chunk(&*index_only, ossa_tier as u32, i, bytes.as_ptr(), bytes.len()),
                OssaStatus::Ok
            );
            let status =
                ossa_residency_bind(&mut *residency, &*index_only, ossa_tier as u32, i, bytes.as_ptr(), bytes.len());
            assert_eq!(status, OssaStatus::Ok);
        }
        resident.push((tier, i));
        check(&resident, &residency);
    }
    for (ossa_tier, _) in TIERS {
        // SAFETY: an initialised database and residency.
        unsafe {
            assert_eq!(
                ossa_residency_resident_chunks(&*residency, ossa_tier as u32),
                ossa_database_chunk_count(&*index_only, ossa_tier as u32)
            );
        }
    }
    order.reverse();
    order.swap(0, 2);
    for &(ossa_tier, tier, i) in &order {
        // SAFETY: an initialised residency.
        assert_eq!(unsafe { ossa_residency_unbind(&mut *residency, ossa_tier as u32, i) }, OssaStatus::Ok);
        resident.retain(|&r| r != (tier, i));
        check(&resident, &residency);
    }
}

#[test]
fn database_misuse_is_refused_by_status() {
    let (db_words, db_len) = golden_aligned("stream.ossadb");
    let file = view(&db_words, db_len);
    let (clip_words, clip_len) = golden_aligned("stream_cycle.ossa");
    let clip = view(&clip_words, clip_len);
    let (plain_words, plain_len) = golden_aligned("wave.ossa");
    let plain = view(&plain_words, plain_len);
    let null = std::ptr::null_mut();

    // SAFETY (the whole test): every pointer is null or to live storage of its type,
    // and every byte pointer covers its length, outliving its uses.
    unsafe {
        let mut database = storage::<OssaDatabase>();
        assert_eq!(ossa_database_init(null, file.as_ptr(), file.len(), true), OssaStatus::NullPointer);
        assert_eq!(ossa_database_init(&mut *database, std::ptr::null(), 0, true), OssaStatus::NullPointer);
        assert_eq!(ossa_database_init(&mut *database, plain.as_ptr(), plain.len(), false), OssaStatus::NotADatabase);
        assert_eq!(ossa_database_chunk_slots(&*database), 0, "a failed init leaves it uninitialised");
        assert_eq!(ossa_database_init(&mut *database, file.as_ptr(), 60, false), OssaStatus::Truncated);
        // An index one byte off the 16-byte boundary the header asks for.
        let shifted = common::aligned(&[&[0u8][..], file].concat());
        let shifted = view(&shifted, db_len + 1);
        assert_eq!(ossa_database_init(&mut *database, shifted[1..].as_ptr(), db_len, false), OssaStatus::Misaligned);
        // A length no buffer can have is refused, not read.
        assert_eq!(ossa_database_init(&mut *database, file.as_ptr(), usize::MAX, false), OssaStatus::InvalidArgument);
        // Zero bytes are not a database rather than a short one.
        let zeros = vec![0u128; 1];
        let zeros = view(&zeros, 16);
        assert_eq!(ossa_database_init(&mut *database, zeros.as_ptr(), 16, false), OssaStatus::NotADatabase);
        // An uninitialised database is named as such.
        let mut one = slots(1);
        assert_eq!(
            ossa_residency_init(&mut *storage::<OssaResidency>(), &*database, one.as_mut_ptr(), 1),
            OssaStatus::DatabaseNotInitialised
        );
        let mut corrupted = db_words.clone();
        corrupted[0] ^= 1 << 96; // byte 12: the index checksum
        let corrupted_view = view(&corrupted, db_len);
        assert_eq!(
            ossa_database_init(&mut *database, corrupted_view.as_ptr(), db_len, true),
            OssaStatus::ChecksumMismatch
        );
        assert_eq!(ossa_database_init(&mut *database, file.as_ptr(), file.len(), true), OssaStatus::Ok);

        // Chunks: tiers and indices out of range, short and corrupted bytes.
        let mut chunk = OssaChunk::default();
        assert_eq!(ossa_database_chunk(&*database, 2, 0, &mut chunk), OssaStatus::NoSuchChunk);
        assert_eq!(ossa_database_chunk(&*database, 0, 1000, &mut chunk), OssaStatus::NoSuchChunk);
        assert_eq!(ossa_database_chunk(&*database, 0, 0, null.cast()), OssaStatus::NullPointer);
        assert_eq!(ossa_database_chunk_count(&*database, 7), 0);
        let bytes = chunk_bytes(&database, file, OssaTier::Medium, 0);
        let mut damaged = bytes.to_vec();
        damaged[3] ^= 0x10;
        assert_eq!(
            ossa_database_verify_chunk(&*database, 0, 0, damaged.as_ptr(), damaged.len()),
            OssaStatus::ChecksumMismatch
        );

        // Residencies: too few slots, binding what does not exist or is short.
        let slot_count = ossa_database_chunk_slots(&*database) as usize;
        let mut few = slots(slot_count - 1);
        let mut residency = storage::<OssaResidency>();
        assert_eq!(
            ossa_residency_init(&mut *residency, &*database, few.as_mut_ptr(), few.len()),
            OssaStatus::TooFewSlots
        );
        assert_eq!(
            ossa_residency_bind(&mut *residency, &*database, 0, 0, bytes.as_ptr(), bytes.len()),
            OssaStatus::ResidencyNotInitialised
        );
        let mut enough = slots(slot_count);
        assert_eq!(ossa_residency_init(&mut *residency, &*database, enough.as_mut_ptr(), enough.len()), OssaStatus::Ok);
        assert_eq!(
            ossa_residency_bind(&mut *residency, &*database, 0, 1000, bytes.as_ptr(), bytes.len()),
            OssaStatus::NoSuchChunk
        );
        assert_eq!(
            ossa_residency_bind(&mut *residency, &*database, 5, 0, bytes.as_ptr(), bytes.len()),
            OssaStatus::NoSuchChunk
        );
        assert_eq!(
            ossa_residency_bind(&mut *residency, &*database, 0, 0, bytes.as_ptr(), bytes.len() - 1),
            OssaStatus::ChunkTooShort
        );
        assert_eq!(ossa_residency_unbind(&mut *residency, 9, 0), OssaStatus::NoSuchChunk);

        // Samplers: a database clip alone, a plain clip in the database, seeking a plain
        // sampler with a residency, an invalid rounding.
        let mut sampler = storage::<OssaSampler>();
        assert_eq!(ossa_sampler_init(&mut *sampler, clip.as_ptr(), clip.len(), true), OssaStatus::NeedsDatabase);
        assert_eq!(
            ossa_sampler_init_in_database(&mut *sampler, &*database, plain.as_ptr(), plain.len(), true),
            OssaStatus::NotInDatabase
        );
        assert_eq!(ossa_sampler_init(&mut *sampler, plain.as_ptr(), plain.len(), true), OssaStatus::Ok);
        assert_eq!(
            ossa_sampler_seek_streamed(&mut *sampler, 0.0, OssaRounding::None as u32, &*residency),
            OssaStatus::NotInDatabase
        );
        assert_eq!(
            ossa_sampler_init_in_database(&mut *sampler, null.cast(), clip.as_ptr(), clip.len(), true),
            OssaStatus::NullPointer
        );
        assert_eq!(
            ossa_sampler_init_in_database(&mut *sampler, &*database, clip.as_ptr(), clip.len(), true),
            OssaStatus::Ok
        );
        assert_eq!(ossa_sampler_seek_streamed(&mut *sampler, 0.0, 4, &*residency), OssaStatus::InvalidArgument);
        assert_eq!(
            ossa_sampler_seek_streamed(&mut *sampler, 0.0, OssaRounding::None as u32, null.cast()),
            OssaStatus::NullPointer
        );
        // Sampled from its own key frames with `ossa_sampler_seek`: allowed.
        assert_eq!(ossa_sampler_seek(&mut *sampler, 0.5, OssaRounding::None as u32), OssaStatus::Ok);

        // Another database (the same index under another id): its residency is refused
        // by the sampler, and the clip by it.
        let mut other_words = db_words.clone();
        other_words[1] ^= 1; // byte 16: the database id
        let other_file = view(&other_words, db_len);
        let mut other = storage::<OssaDatabase>();
        assert_eq!(ossa_database_init(&mut *other, other_file.as_ptr(), db_len, false), OssaStatus::Ok);
        let mut other_slots = slots(slot_count);
        let mut other_residency = storage::<OssaResidency>();
        assert_eq!(
            ossa_residency_init(&mut *other_residency, &*other, other_slots.as_mut_ptr(), other_slots.len()),
            OssaStatus::Ok
        );
        assert_eq!(
            ossa_sampler_seek_streamed(&mut *sampler, 0.0, OssaRounding::None as u32, &*other_residency),
            OssaStatus::OtherDatabase
        );
        assert_eq!(
            ossa_residency_bind(&mut *residency, &*other, 0, 0, bytes.as_ptr(), bytes.len()),
            OssaStatus::OtherDatabase
        );
        let mut other_sampler = storage::<OssaSampler>();
        assert_eq!(
            ossa_sampler_init_in_database(&mut *other_sampler, &*other, clip.as_ptr(), clip.len(), true),
            OssaStatus::NotInDatabase
        );
        assert_eq!(ossa_sampler_bone_count(&*other_sampler), 0, "a failed init leaves it uninitialised");
    }
}
