//! Planned subsets through the C ABI (`ossa_subset_init`, `ossa_sampler_subset`): the
//! values `ossa_sampler_bones` gives the same bones, at times that stay in a segment,
//! cross into the next and jump back, decoded in place into an aligned array and
//! through a copy into any other; every misuse refused by its status, the subset's
//! storage included (misaligned, copied, uninitialised). Small enough for Miri.

mod common;

use std::mem::MaybeUninit;

use common::{aligned, golden, sampler as init, view};
use ossa_c::subset::{ossa_sampler_subset, ossa_subset_init, OssaSubset, OSSA_SUBSET_BONES};
use ossa_c::{
    ossa_sampler_bone_count, ossa_sampler_bones, ossa_sampler_duration, ossa_sampler_seek, OssaSampler, OssaStatus,
    OssaTransform,
};

/// Room for two subsets on a 16-byte boundary, and for one a `u64` past it.
#[repr(C, align(16))]
struct Storage {
    first: MaybeUninit<OssaSubset>,
    second: MaybeUninit<OssaSubset>,
    /// So that a subset starting 8 bytes into `second` still lies inside.
    tail: [u64; 2],
}

impl Storage {
    /// Zeroed storage, as a raw pointer from which every subset pointer of the test
    /// derives (so that using one does not invalidate another); [`Storage::free`]
    /// frees it.
    fn new() -> *mut Storage {
        // SAFETY: zeros are a valid (uninitialised-tag) subset and padding.
        Box::into_raw(Box::new(unsafe { std::mem::zeroed() }))
    }

    /// Frees storage from [`Storage::new`].
    ///
    /// # Safety
    /// `storage` comes from [`Storage::new`] and is not used afterwards.
    unsafe fn free(storage: *mut Storage) {
        // SAFETY: made by `Box::into_raw` (the contract).
        drop(unsafe { Box::from_raw(storage) });
    }
}

/// The first subset of `storage`, on its 16-byte boundary.
///
/// # Safety
/// `storage` comes from [`Storage::new`].
unsafe fn first(storage: *mut Storage) -> *mut OssaSubset {
    // SAFETY: a field of the live storage; no reference is made.
    unsafe { std::ptr::addr_of_mut!((*storage).first).cast() }
}

/// The subset `words` `u64`s past the start of `storage`'s second one (at most one:
/// its span then ends in `tail`).
///
/// # Safety
/// `storage` comes from [`Storage::new`]; `words` ≤ 1.
unsafe fn second_at(storage: *mut Storage, words: usize) -> *mut OssaSubset {
    // SAFETY: inside the live storage (the contract); no reference is made.
    unsafe { std::ptr::addr_of_mut!((*storage).second).cast::<u64>().add(words).cast() }
}

/// Transforms on a 16-byte boundary, or one `f32` past it.
#[repr(C, align(16))]
struct Poses([OssaTransform; OSSA_SUBSET_BONES + 1]);

/// Up to `OSSA_SUBSET_BONES` bones of a clip of `n`, ascending: all of them when they
/// fit, else the first, the last and bones spread between.
fn spread(n: u32) -> Vec<u32> {
    let count = (n as usize).min(OSSA_SUBSET_BONES) as u32;
    let mut bones: Vec<u32> = (0..count)
        .map(|i| if count == 1 { 0 } else { (i as u64 * (n - 1) as u64 / (count - 1) as u64) as u32 })
        .collect();
    bones.dedup();
    bones
}

#[test]
fn planned_subsets_through_the_abi_equal_listed_bones() {
    let names = ["wave.ossa", "cycle.ossa", "edges.ossa", "wave_additive.ossa", "in_place.ossa", "wide.ossa"];
    let names = if cfg!(miri) { &names[..3] } else { &names[..] };
    let storage = Storage::new();
    let mut poses = Box::new(Poses([OssaTransform::default(); OSSA_SUBSET_BONES + 1]));
    for name in names {
        let file = golden(name);
        let words = aligned(&file);
        let mut sampler = init(view(&words, file.len()));
        // SAFETY: an initialised sampler.
        let (n, duration) = unsafe { (ossa_sampler_bone_count(&*sampler), ossa_sampler_duration(&*sampler)) };
        let subsets = [spread(n), vec![n - 1], vec![0, n / 2]];
        for bones in &subsets {
            // SAFETY: storage from `Storage::new`.
            let subset = unsafe { first(storage) };
            // SAFETY: storage for a subset on a 16-byte boundary; `bones` readable.
            let status = unsafe { ossa_subset_init(subset, &*sampler, bones.as_ptr(), bones.len()) };
            assert_eq!(status, OssaStatus::Ok, "{name} {bones:?}");
            let mut expected = vec![OssaTransform::default(); bones.len()];
            // Forward through every segment, then back to the start and on: the plan
            // moves from segment to segment and back.
            let steps = if cfg!(miri) { 6 } else { 40 };
            let times = (0..=steps).chain(0..steps / 2).map(|k| duration * k as f32 / steps as f32);
            for (turn, time) in times.enumerate() {
                // One f32 past the boundary on odd turns: through the stack copy.
                let offset = turn % 2;
                // SAFETY: initialised sampler and subset; `poses` holds `bones.len()`
                // transforms from `offset` f32s in; `expected` as many.
                unsafe {
                    assert_eq!(ossa_sampler_seek(&mut *sampler, time, 0), OssaStatus::Ok);
                    let status = ossa_sampler_bones(
                        &*sampler,
                        bones.as_ptr(),
                        bones.len(),
                        expected.as_mut_ptr(),
                        expected.len(),
                    );
                    assert_eq!(status, OssaStatus::Ok);
                    let out = poses.0.as_mut_ptr().cast::<f32>().add(offset).cast::<OssaTransform>();
                    assert_eq!(ossa_sampler_subset(&*sampler, subset, out, bones.len()), OssaStatus::Ok);
                    for (i, expected) in expected.iter().enumerate() {
                        let got = out.add(i).read_unaligned();
                        assert_eq!(&got, expected, "{name} {bones:?} time {time} bone {}", bones[i]);
                        assert_eq!(got.reserved, [0.0; 2], "the padding is defined, zero");
                    }
                }
            }
        }
    }
    // SAFETY: from `Storage::new`, not used again.
    unsafe { Storage::free(storage) };
}

#[test]
fn misuse_of_a_subset_is_refused_by_its_status() {
    let (wave, wide) = (golden("wave.ossa"), golden("wide.ossa"));
    let (wave_words, wide_words) = (aligned(&wave), aligned(&wide));
    let sampler = init(view(&wave_words, wave.len()));
    let other = init(view(&wide_words, wide.len()));
    let storage = Storage::new();
    let mut out = [OssaTransform::default(); OSSA_SUBSET_BONES];
    // SAFETY: storage from `Storage::new`.
    let subset = unsafe { first(storage) };
    let many: Vec<u32> = (0..=OSSA_SUBSET_BONES as u32).collect();
    // SAFETY: pointers are null or to live storage of the right type and length.
    unsafe {
        let s: *const OssaSampler = &*sampler;
        let o = out.as_mut_ptr();
        let init = |subset, bones: &[u32]| ossa_subset_init(subset, s, bones.as_ptr(), bones.len());
        assert_eq!(ossa_subset_init(std::ptr::null_mut(), s, [0u32].as_ptr(), 1), OssaStatus::NullPointer);
        assert_eq!(ossa_subset_init(subset, std::ptr::null(), [0u32].as_ptr(), 1), OssaStatus::NullPointer);
        assert_eq!(ossa_subset_init(subset, s, std::ptr::null(), 1), OssaStatus::NullPointer);
        assert_eq!(init(subset, &[1, 1]), OssaStatus::BonesNotAscending);
        assert_eq!(init(subset, &[3, 2]), OssaStatus::BonesNotAscending);
        assert_eq!(init(subset, &[0, 8]), OssaStatus::BoneOutOfRange);
        // More bones than a subset holds, in a clip that has them.
        let wide_init = ossa_subset_init(subset, &*other, many.as_ptr(), many.len());
        assert_eq!(wide_init, OssaStatus::SubsetFull);
        // A failed init leaves the subset uninitialised.
        assert_eq!(ossa_sampler_subset(s, subset, o, out.len()), OssaStatus::SubsetNotInitialised);
        // An empty subset decodes nothing.
        assert_eq!(ossa_subset_init(subset, s, std::ptr::null(), 0), OssaStatus::Ok);
        assert_eq!(ossa_sampler_subset(s, subset, o, 0), OssaStatus::Ok);
        assert_eq!(init(subset, &[2, 5, 7]), OssaStatus::Ok);
        assert_eq!(ossa_sampler_subset(s, subset, o, 2), OssaStatus::OutputTooSmall);
        assert_eq!(ossa_sampler_subset(s, subset, std::ptr::null_mut(), 3), OssaStatus::NullPointer);
        assert_eq!(ossa_sampler_subset(std::ptr::null(), subset, o, 3), OssaStatus::NullPointer);
        assert_eq!(ossa_sampler_subset(s, std::ptr::null_mut(), o, 3), OssaStatus::NullPointer);
        assert_eq!(ossa_sampler_subset(&*other, subset, o, 3), OssaStatus::SubsetOfAnotherClip);
        assert_eq!(ossa_sampler_subset(s, subset, o, 3), OssaStatus::Ok);
        let read = || [o.read(), o.add(1).read(), o.add(2).read()];
        let first = read();
        // Copied whole to another 16-byte boundary, it is the same plan; one `u64`
        // off the boundary, it is refused rather than read misaligned.
        let copy = second_at(storage, 0);
        std::ptr::copy_nonoverlapping(subset, copy, 1);
        for i in 0..3 {
            o.add(i).write(OssaTransform::default());
        }
        assert_eq!(ossa_sampler_subset(s, copy, o, 3), OssaStatus::Ok);
        assert_eq!(read(), first);
        let off = second_at(storage, 1);
        std::ptr::copy(subset, off, 1);
        assert_eq!(ossa_sampler_subset(s, off, o, 3), OssaStatus::Misaligned);
        assert_eq!(init(off, &[1]), OssaStatus::Misaligned);
        assert_eq!(ossa_sampler_subset(s, off, o, 3), OssaStatus::SubsetNotInitialised);
        // Zeros are no subset.
        let mut blank: Box<MaybeUninit<Storage>> = Box::new(MaybeUninit::zeroed());
        let blank = std::ptr::addr_of_mut!((*blank.as_mut_ptr()).first).cast::<OssaSubset>();
        assert_eq!(ossa_sampler_subset(s, blank, o, 3), OssaStatus::SubsetNotInitialised);
        Storage::free(storage);
    }
}
