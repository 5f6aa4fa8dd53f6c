//! How the process asks glibc's allocator for memory: in large steps, kept once
//! obtained, and in 2 MiB pages where the kernel offers them.
//!
//! Compressing a 1.3 MB clip touches about 5 MiB of memory. In 4 KiB pages, each
//! costs about 1.35 µs here when first touched and 0.26 µs more when the process
//! ends (C probes on these machines), and `ossa compress` of 49_15 made about 1,370
//! page faults: the largest single cost outside the compressor's arithmetic. glibc by
//! default also grows each heap 128 KiB at a time (a `brk` or `mprotect` call each,
//! under the lock the other threads' page faults take), and gives freed memory at a
//! heap's top back, to fault it in again at the next step of the pipeline.
//!
//! Each setting below was measured with `ossa compress`, whole processes alternated
//! with the builds before it and with ACL's compressor, medians of 41 runs (31 for
//! 81_18 and 121_10):
//!
//! | setting | 49_15 (1.3 MB) | 81_18 (1.6 MB) | 121_10 (21 KB) |
//! |---|---|---|---|
//! | blocks up to 32 MiB kept in the heaps (before) | 10.58 ms, 0.506 × ACL | 12.33 ms, 0.289 × | 2.73 ms |
//! | and heaps grown 16 MiB at a time ([`TOP_PAD`]) | 9.85 ms, 0.471 × | 11.67 ms, 0.273 × | 2.73 ms |
//! | and the main heap in huge pages | 9.65 ms, 0.462 × | 11.19 ms, 0.262 × | 2.67 ms |
//! | and the worker threads' heaps too | 9.46 ms, 0.453 × | 11.18 ms, 0.262 × | 2.61 ms |
//!
//! The clip's text, the first large block, fell in the main heap's first 2 MiB,
//! which was already partly in use and so in 4 KiB pages: a block kept from the
//! heap's top up to the first 2 MiB boundary puts it after that boundary. Another
//! run (31 runs each), before / without that block / with it: 49_15 0.496 / 0.459 /
//! 0.424 × ACL, 81_18 0.286 / 0.256 / 0.236 ×, 121_10 2.69 / 2.71 / 2.51 ms.
//!
//! With all of it, 49_15 makes about 440 page faults instead of 1,370. The output
//! does not depend on any of this.
//!
//! Huge pages are only advice (`madvise(MADV_HUGEPAGE)`): where the kernel's
//! transparent huge pages are off, or no 2 MiB page is free, it uses 4 KiB pages as
//! before. On other platforms and C libraries these functions do nothing.

/// How much more than asked the main heap grows by, how much free memory at its top
/// it keeps rather than giving back, and how large a thread's heap starts. Far above
/// what one step of the compressor allocates for clips of a few megabytes, so that a
/// heap grows once or twice per run; only memory that is touched counts towards the
/// process's resident size. With glibc's own huge-page setting (`GLIBC_TUNABLES=
/// glibc.malloc.hugetlb=1`), pads of 4, 8 and 16 MiB measured alike (9.31, 9.34 and
/// 9.20 ms on 49_15, 41 alternated runs); the larger leaves more room for larger
/// clips. The cost: near an address-space limit (`ulimit -v`), the main heap's
/// growth asks for this much more, so an allocation may be refused up to 16 MiB
/// earlier (reported as any refused allocation is).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const TOP_PAD: usize = 16 << 20;

/// Blocks up to this size are served from the heaps, where a freed block is used
/// again, rather than each mapped anew and faulted in page by page: the clip's text
/// (megabytes) is freed once parsed, and the compressor's later buffers are of the
/// same order (about 400 fewer page faults and 0.3 ms less for a 1.3 MB clip, when
/// it was introduced). glibc's largest allowed threshold on 64-bit targets (it
/// refuses more); larger blocks are still mapped and given back when freed.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD: usize = 32 << 20;

/// The size of a transparent huge page on x86-64 and of the usual 4 KiB-page
/// aarch64 kernels; where it is larger, the advice covers fewer whole pages.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const HUGE_PAGE: usize = 2 << 20;

/// The size and alignment of the heaps glibc makes for threads other than the main
/// one (its `HEAP_MAX_SIZE` on 64-bit targets): a pointer a thread's allocation
/// returns lies in the heap starting at the pointer rounded down to it.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const THREAD_HEAP: usize = 64 << 20;

/// The bytes glibc adds to a block's size for its header: a block of `n` bytes ends
/// `n + 8` bytes (rounded up to 16) after the previous block's end.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const FILLER_HEADER: usize = 8;

/// A block larger than glibc's per-thread cache serves (1,032 bytes): a thread's
/// cache may hold blocks of other heaps (a thread's first free is often of a block
/// the spawning thread made), while a larger block comes from the thread's own heap.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const PROBE: usize = 4096;

/// A block this close below the main heap's end is taken to lie in the main heap
/// (threads past glibc's arena limit share it): thread heaps are mapped far from it,
/// and a wrong guess only misplaces advice.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MAIN_HEAP_SPAN: usize = 1 << 30;

/// Sets the allocator's parameters and advises the main heap; called first thing in
/// `main`, before any large allocation.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn configure() {
    // SAFETY: `mallopt` only sets parameters of glibc's allocator, under its own lock;
    // it takes no pointers, and a refusal (0) leaves the default. `sbrk(0)` only
    // reads the current end of the main heap. The blocks are allocated (and the
    // first freed) by glibc's own functions and never read or written; the second is
    // kept for the life of the process. `madvise(MADV_HUGEPAGE)` over
    // pages of the main heap, which lie between the two ends `sbrk` reported, changes
    // no content and no protection, only how the kernel may back them.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD as libc::c_int);
        libc::mallopt(libc::M_TOP_PAD, TOP_PAD as libc::c_int);
        let before = libc::sbrk(0) as usize;
        // A block larger than anything left at the heap's top makes it grow now, by
        // the pad; freed, it stays in the heap (glibc keeps `TOP_PAD` at the top).
        // `black_box`: an allocation that is never used may otherwise be removed.
        let block = std::hint::black_box(libc::malloc(2 * (128 << 10)));
        libc::free(block);
        let after = libc::sbrk(0) as usize;
        if block.is_null() || before == usize::MAX || after == usize::MAX || after <= before {
            return;
        }
        // The freed block is the start of the heap's top again, where the next large
        // block (the clip's text) will be carved. Huge pages can only back whole
        // aligned 2 MiB ranges not yet touched: a block reaching from here to the
        // first boundary is kept (never touched past its first bytes, so it costs
        // address space, not memory), and what follows is advised.
        let at = block as usize;
        let start = at.next_multiple_of(HUGE_PAGE);
        if after > start {
            libc::madvise(start as *mut libc::c_void, after - start, libc::MADV_HUGEPAGE);
            // glibc puts 8 bytes of header before a block (so the next one's data
            // begins at `start`).
            if start - at > FILLER_HEADER {
                std::hint::black_box(libc::malloc(start - at - FILLER_HEADER));
            }
        }
    }
}

/// Advises the heap of the calling thread, when it has one of its own; called as
/// each worker thread starts, before it does any work.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn advise_this_thread() {
    // SAFETY: the block is allocated and freed by glibc's own functions and never
    // read or written; its address only says which heap serves this thread. The
    // advice covers that heap's reserved range (glibc maps each thread heap as one
    // `THREAD_HEAP`-aligned reservation), and `madvise(MADV_HUGEPAGE)` changes no
    // content and no protection, only how the kernel may back the pages.
    unsafe {
        let block = std::hint::black_box(libc::malloc(PROBE));
        let at = block as usize;
        libc::free(block);
        let main_end = libc::sbrk(0) as usize;
        if at == 0 || (at < main_end && main_end - at < MAIN_HEAP_SPAN) {
            return;
        }
        let base = at & !(THREAD_HEAP - 1);
        libc::madvise(base as *mut libc::c_void, THREAD_HEAP, libc::MADV_HUGEPAGE);
    }
}

/// Other allocators keep their own policy.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn configure() {}

/// Other allocators keep their own policy.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn advise_this_thread() {}
