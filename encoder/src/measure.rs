//! Error measurement through the real decoder: decode a buffer at every original
//! sample time and compare every bone with the reference in object space.

use ossa_decoder::{Clip, Rounding, Sampler, Transform};

use crate::compress::reference::Reference;
use crate::error_metric::{vertex_error, Affine};

/// What the decoded clip's errors look like.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ErrorStats {
    /// Largest error over every bone and sample.
    pub max_error: f64,
    /// 99th percentile of the per-(bone, sample) errors.
    pub p99_error: f64,
    /// Share of (bone, sample) pairs within the precision (0 to 1).
    pub within_precision: f64,
    /// The bone and sample of the largest error.
    pub worst: Option<(usize, usize)>,
    /// Largest error in each segment.
    pub segment_max: Vec<f64>,
}

/// The time of original sample `i`, as a player would compute it.
pub fn sample_time(i: usize, sample_rate: f32) -> f32 {
    i as f32 / sample_rate
}

/// Decodes `bytes` at every sample and measures against `reference`.
pub fn measure(bytes: &[u8], reference: &Reference, precision: f64) -> Result<ErrorStats, ossa_decoder::Error> {
    let clip = Clip::from_bytes(bytes)?;
    let bones = reference.bone_count;
    let mut sampler = Sampler::new(clip);
    let mut pose = vec![Transform::IDENTITY; bones];
    let mut object: Vec<Affine> = vec![Affine::IDENTITY; bones];
    let mut all = Vec::with_capacity(bones * reference.sample_count);
    let mut stats = ErrorStats { segment_max: vec![0.0; clip.segment_count() as usize], ..ErrorStats::default() };
    for s in 0..reference.sample_count {
        sampler.seek(sample_time(s, clip.sample_rate()), Rounding::None);
        sampler.decompress_pose(&mut pose)?;
        let segment = ((s as u32) / u32::from(clip.segment_len())).min(clip.segment_count() - 1) as usize;
        for b in 0..bones {
            let t = &pose[b];
            let local = Affine::from_parts(
                t.rotation.to_array().map(f64::from),
                t.translation.to_array().map(f64::from),
                t.scale.to_array().map(f64::from),
            );
            object[b] = match reference.parents[b] {
                Some(p) => object[p].then(&local),
                None => local,
            };
            let e = vertex_error(&reference.vertices[reference.at(s, b)], &object[b].vertices(reference.shells[b]));
            if e > stats.max_error || stats.worst.is_none() {
                stats.max_error = stats.max_error.max(e);
                stats.worst = Some((b, s));
            }
            stats.segment_max[segment] = stats.segment_max[segment].max(e);
            all.push(e);
        }
    }
    if !all.is_empty() {
        stats.within_precision = all.iter().filter(|&&e| e <= precision).count() as f64 / all.len() as f64;
        all.sort_by(f64::total_cmp);
        let rank = ((all.len() as f64) * 0.99).ceil() as usize;
        stats.p99_error = all[rank.clamp(1, all.len()) - 1];
    }
    Ok(stats)
}
