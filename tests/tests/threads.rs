//! The output does not depend on the number of threads: reading spreads the tracks
//! over the cores, compression the classification, the reference and the segments'
//! searches, the final measure its runs of samples, and every result is collected
//! in order.

mod common;

use ossa_encoder::compress::ErrorStats;
use ossa_encoder::formats::acl_text;
use ossa_encoder::{compress, Settings};

/// Reads and compresses `text` on a pool of `threads` threads: the bytes, and the
/// errors measured on them.
fn compress_on(threads: usize, text: &str, settings: &Settings) -> (Vec<u8>, ErrorStats) {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("thread pool");
    pool.install(|| {
        let clip = acl_text::read_clip(text, "clip").expect("read");
        let compressed = compress(&clip, settings).expect("compress");
        (compressed.bytes.to_vec(), compressed.errors)
    })
}

#[test]
#[cfg_attr(shared_clips_missing, ignore = "skipped: ../shared/clips not found")]
fn the_same_bytes_whatever_the_thread_count() {
    let Some(dir) = common::shared_clips() else { return };
    let clips = common::transform_clips(&dir);
    assert!(clips.len() >= 18, "{} clips", clips.len());
    let default = Settings::default();
    // A tight precision takes several rounds of measuring and searching again.
    let tight = Settings { precision: 1e-5, ..Settings::default() };
    let mut runs = 0;
    for path in &clips {
        let text = std::fs::read_to_string(path).expect("read clip");
        let tight_too = path.ends_with("49_15.acl.sjson") || path.ends_with("09_02.acl.sjson");
        for settings in [Some(&default), tight_too.then_some(&tight)].into_iter().flatten() {
            let one = compress_on(1, &text, settings);
            for threads in [2, 3] {
                let many = compress_on(threads, &text, settings);
                assert!(one.0 == many.0, "{}: {threads} threads give other bytes than one", path.display());
                // Every statistic, the worst bone and sample included.
                assert_eq!(one.1, many.1, "{}: {threads} threads measure otherwise than one", path.display());
                runs += 1;
            }
        }
    }
    assert!(runs >= 40, "{runs}");
}
