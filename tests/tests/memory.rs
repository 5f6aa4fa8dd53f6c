//! The compressor's memory is what `memory_estimate::compress_estimate` says, whatever the
//! shape of the clip: a counting allocator measures the peak of live heap bytes over
//! reading the text and compressing, on deep, wide, long and noisy clips, and the
//! estimate must cover it without overstating it wildly.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

mod common;

use common::Rng;
use ossa_encoder::compress::memory_estimate;
use ossa_encoder::formats::acl_text;
use ossa_encoder::{compress, Bone, BoneTrack, RawClip, RawTransform, Settings};

struct Peak;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(bytes: usize) {
    let now = LIVE.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every call is forwarded unchanged to the system allocator; the counters are
// atomics, which never allocate.
unsafe impl GlobalAlloc for Peak {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` came from this allocator with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            grew(new_size);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Peak = Peak;

/// The counters are process-wide: the tests measuring them run one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The shape of a test clip.
struct Shape {
    name: &'static str,
    bones: usize,
    samples: usize,
    /// Parent of bone `b` (b ≥ 1).
    parent: fn(usize) -> usize,
    /// Every how many bones one is animated (the others hold still).
    animated_every: usize,
    /// Every value random: nothing compresses (the worst case for the output).
    noise: bool,
    precision: f64,
}

fn clip(shape: &Shape) -> RawClip {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut tracks = Vec::new();
    let mut skeleton = Vec::new();
    for b in 0..shape.bones {
        skeleton.push(Bone {
            name: format!("bone_{b}"),
            parent: (b > 0).then(|| (shape.parent)(b)),
            shell_distance: 3.0,
            bind_pose: RawTransform::IDENTITY,
        });
        let phase = rng.next() * 6.0;
        let moving = b % shape.animated_every == 0;
        let mut t = BoneTrack::default();
        for s in 0..shape.samples {
            let wave = if moving { (s as f64 * 0.1).sin() } else { 0.0 };
            let a = if shape.noise { rng.next() * 6.0 } else { phase + 0.3 * wave };
            t.rotations.push([(a / 2.0).sin(), 0.0, 0.0, (a / 2.0).cos()]);
            let x = if shape.noise { rng.next() * 10.0 } else { 2.0 + 0.1 * wave };
            t.translations.push([x, 0.0, 0.0]);
            t.scales.push([1.0; 3]);
        }
        tracks.push(t);
    }
    RawClip {
        name: "memory".into(),
        sample_rate: 30.0,
        sample_count: shape.samples,
        bones: skeleton,
        tracks,
        additive: None,
        source: Default::default(),
    }
}

/// Peak live heap over reading `text` and compressing it, from a baseline of what
/// is live before.
fn measured_peak(text: String, precision: f64) -> (usize, usize) {
    let text_bytes = text.len();
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let raw = acl_text::read_clip(&text, "memory").unwrap();
    drop(text);
    let out = compress(&raw, &Settings { precision, ..Settings::default() }).unwrap();
    assert!(out.errors.max_error <= precision);
    drop((raw, out));
    (PEAK.load(Ordering::Relaxed).saturating_sub(base) + text_bytes, text_bytes)
}

#[test]
fn the_estimate_covers_the_peak_on_every_shape() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let threads = rayon::current_num_threads() as u64;
    let shape = |name, bones, samples, parent, animated_every, noise, precision| Shape {
        name,
        bones,
        samples,
        parent,
        animated_every,
        noise,
        precision,
    };
    let shapes = [
        shape("chain of 5,000 bones", 5_000, 4, |b| b - 1, 50, false, 0.01),
        shape("2,000 bones, flat", 2_000, 24, |_| 0, 1, false, 0.01),
        shape("3 bones, 30,000 samples", 3, 30_000, |b| b - 1, 1, false, 0.01),
        shape("noise, 20 bones", 20, 1_000, |b| b / 2, 1, true, 1e-5),
        shape("one sample, 10,000 bones", 10_000, 1, |b| b / 3, 1, false, 0.01),
        shape("binary tree, 511 bones", 511, 100, |b| (b - 1) / 2, 1, false, 0.01),
    ];
    for s in &shapes {
        let (name, bones, samples) = (s.name, s.bones, s.samples);
        let text = acl_text::write_clip(&clip(s));
        let (peak, text_bytes) = measured_peak(text, s.precision);
        let estimate =
            memory_estimate::compress_estimate(bones as u64, samples as u64, text_bytes as u64, threads) as usize;
        let n = bones * samples;
        println!(
            "{name:<28} peak {:>7.1} MiB ({:>4} B per transform sample), estimate {:>7.1} MiB ({:.2}x)",
            peak as f64 / 1048576.0,
            peak / n,
            estimate as f64 / 1048576.0,
            estimate as f64 / peak as f64
        );
        assert!(peak <= estimate, "{name}: peak {peak} above the estimate {estimate}");
        assert!(estimate <= 4 * peak + (32 << 20), "{name}: estimate {estimate} far above the peak {peak}");
    }
}

/// `acl_text::write_text` streams: its peak heap is the decode buffer it is
/// given, whatever the sample count, and both of its paths (bones in groups, or one
/// sample at a time when a bone alone exceeds the buffer) write the same text.
#[test]
fn streaming_decompression_memory_does_not_grow_with_the_sample_count() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    use ossa_decoder::Clip;
    use ossa_encoder::formats::acl_text::write_text_within;

    let budget = 1 << 20;
    let mut peaks = Vec::new();
    for samples in [5_000, 10_000, 30_000] {
        let shape = Shape {
            name: "long",
            bones: 3,
            samples,
            parent: |b| b - 1,
            animated_every: 1,
            noise: false,
            precision: 0.01,
        };
        let packed = compress(&clip(&shape), &Settings::default()).unwrap().bytes;
        let decoded = Clip::from_bytes(&packed).unwrap();
        let base = LIVE.load(Ordering::Relaxed);
        PEAK.store(base, Ordering::Relaxed);
        let mut counted = CountingSink(0);
        write_text_within(&decoded, "long", &mut counted, budget).unwrap();
        let peak = PEAK.load(Ordering::Relaxed) - base;
        println!("{samples:>6} samples: {} B of text, peak heap {peak} B", counted.0);
        assert!(peak < budget + (256 << 10), "{samples} samples: peak {peak} above the buffer");
        peaks.push(peak);
        // Same text from the grouped path, the per-sample path and the in-memory writer.
        let small = write_text_within(&decoded, "long", Vec::new(), 64 << 10).unwrap();
        let large = write_text_within(&decoded, "long", Vec::new(), 64 << 20).unwrap();
        assert_eq!(small, large);
        // The same clip as decoding it whole in memory: names, and every value as the
        // same f32 (the stream writes each in its shortest form).
        let whole = ossa_encoder::decompress::decompress(&decoded, "long").unwrap();
        let streamed = acl_text::read_clip(&String::from_utf8(large).unwrap(), "x").unwrap();
        assert_eq!((&streamed.name, streamed.sample_count, streamed.bones.len()), (&whole.name, whole.sample_count, 3));
        // (Rotations are normalised again in f64 on import: equal to within that.)
        let single = |track: &ossa_encoder::BoneTrack| -> Vec<f32> {
            track.translations.iter().flatten().chain(track.scales.iter().flatten()).map(|&v| v as f32).collect()
        };
        for (a, b) in streamed.tracks.iter().zip(&whole.tracks) {
            assert_eq!(single(a), single(b));
            let rotations = a.rotations.iter().flatten().zip(b.rotations.iter().flatten());
            assert!(rotations.into_iter().all(|(x, y)| (x - y).abs() < 1e-6));
        }
    }
    // The last clip's bones each exceed the buffer: decoded sample by sample.
    assert!(peaks[2] < 64 << 10, "{peaks:?}");
}

/// Counts bytes, keeps none.
struct CountingSink(u64);

impl std::io::Write for CountingSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
