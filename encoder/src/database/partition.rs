//! Which key frames go to which tier (seed 002, "Final importance tier"): every
//! clip's stored key frames are ranked by the error their removal causes; over the
//! whole database, the least important `low` share of all stored key frames go to
//! the low tier, the next `medium` share to the medium tier, the rest stay in the
//! clips. Since the database knows every clip, the distribution is global: a clip
//! whose frames matter little gives more of them than one whose frames matter much.

/// One segment's removal order: local key frame and the error its removal causes
/// with those before it removed ([`crate::compress::Encoded::ranking`]).
pub type Ranking = Vec<(usize, f64)>;

/// Tier assignment: for each clip, for each segment, the key frames each tier takes
/// (`[medium, low]` bit sets).
pub type Assignment = Vec<Vec<[u32; 2]>>;

/// Assigns the key frames of `rankings` (per clip, per segment) to the tiers:
/// `round(low × stored)` to the low tier and `round(medium × stored)` to the medium
/// one, where `stored` counts every key frame the clips store (at most the movable
/// ones: a segment's first and last frame stay).
///
/// A frame's importance is the largest error of its segment's removals up to and
/// including it, so that importance never decreases along a segment's order: taking
/// the least important frames over the database then takes a prefix of every
/// segment's order, and the errors the ranking measured (each with the frames before
/// it removed) are the errors the tiers give.
pub fn assign(rankings: &[Vec<Ranking>], stored: usize, medium: f64, low: f64) -> Assignment {
    // (importance, clip, segment, position in its order, frame)
    let mut candidates: Vec<(f64, usize, usize, usize, usize)> = Vec::new();
    for (c, segments) in rankings.iter().enumerate() {
        for (s, order) in segments.iter().enumerate() {
            let mut importance = 0.0f64;
            for (position, &(frame, error)) in order.iter().enumerate() {
                importance = importance.max(error);
                candidates.push((importance, c, s, position, frame));
            }
        }
    }
    candidates.sort_by(|a, b| a.0.total_cmp(&b.0).then((a.1, a.2, a.3).cmp(&(b.1, b.2, b.3))));
    let share = |f: f64| ((f * stored as f64).round() as usize).min(candidates.len());
    let low_count = share(low);
    let medium_count = share(medium).min(candidates.len() - low_count);
    let mut assignment: Assignment = rankings.iter().map(|segments| vec![[0u32; 2]; segments.len()]).collect();
    for (i, &(_, c, s, _, frame)) in candidates.iter().enumerate().take(low_count + medium_count) {
        let tier = if i < low_count { 1 } else { 0 };
        assignment[c][s][tier] |= 1 << frame;
    }
    assignment
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_important_frames_go_low_then_medium_and_each_segment_gives_a_prefix() {
        // Clip 0: frames 2 (0.1), 1 (0.05 → importance 0.1), 3 (0.5).
        // Clip 1: frame 1 (0.2), frame 2 (0.3).
        let rankings = vec![vec![vec![(2, 0.1), (1, 0.05), (3, 0.5)]], vec![vec![(1, 0.2), (2, 0.3)]]];
        // 10 stored frames: low takes 2, medium 2.
        let a = assign(&rankings, 10, 0.2, 0.2);
        assert_eq!(a[0][0], [0, 1 << 2 | 1 << 1]);
        assert_eq!(a[1][0], [1 << 1 | 1 << 2, 0]);
    }

    #[test]
    fn shares_beyond_the_movable_frames_take_them_all() {
        let rankings = vec![vec![vec![(1, 0.1)], vec![(3, 0.2), (2, 0.4)]]];
        let a = assign(&rankings, 8, 0.5, 0.5);
        // Four low frames asked for, three movable: all three go low, none medium.
        assert_eq!(a[0][0], [0, 1 << 1]);
        assert_eq!(a[0][1], [0, 1 << 3 | 1 << 2]);
    }
}
