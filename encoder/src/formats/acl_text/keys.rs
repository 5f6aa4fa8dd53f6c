//! The keys ACL's text format knows, section by section, and the message for a key
//! it does not.
//!
//! A misspelled key must not pass in silence: `translation = [...]` read as "no
//! translations" gives a bone identity translations, `parnet = "hips"` makes a bone a
//! root, and nobody notices until the game runs. The lists follow ACL's own reader
//! (file versions 1 to 5), including the keys it reads and ignores (legacy settings,
//! `error_threshold` of version 1 clips), so that every file ACL writes is accepted.

use crate::message;

/// A part of the file and the keys it may hold.
#[derive(Clone, Copy, Debug)]
pub struct Section {
    /// How messages name the section: "at the top level", "in 'clip'"…
    pub place: &'static str,
    /// Its keys.
    pub keys: &'static [&'static str],
}

/// Top-level keys.
pub const TOP: Section = Section {
    place: "at the top level",
    keys: &["version", "clip", "settings", "bones", "base_tracks", "tracks", "track_list"],
};

/// Keys of `clip = { … }`.
pub const CLIP: Section = Section {
    place: "in 'clip'",
    keys: &[
        "name",
        "num_samples",
        "sample_rate",
        "error_threshold",
        "is_binary_exact",
        "additive_format",
        "additive_base_name",
        "additive_base_num_samples",
        "additive_base_sample_rate",
    ],
};

/// Keys of `settings = { … }` (read and ignored: ossa has its own settings).
pub const SETTINGS: Section = Section {
    place: "in 'settings'",
    keys: &[
        "algorithm_name",
        "level",
        "rotation_format",
        "translation_format",
        "scale_format",
        "rotation_range_reduction",
        "translation_range_reduction",
        "scale_range_reduction",
        "segmenting",
        "constant_rotation_threshold_angle",
        "constant_translation_threshold",
        "constant_scale_threshold",
        "error_threshold",
    ],
};

/// Keys of `settings = { segmenting = { … } }`.
pub const SEGMENTING: Section = Section {
    place: "in 'segmenting'",
    keys: &[
        "enabled",
        "ideal_num_samples",
        "max_num_samples",
        "rotation_range_reduction",
        "translation_range_reduction",
        "scale_range_reduction",
    ],
};

/// Keys of a bone in `bones = [ … ]`.
pub const BONE: Section = Section {
    place: "in a bone",
    keys: &["name", "parent", "vertex_distance", "bind_rotation", "bind_translation", "bind_scale"],
};

/// Keys of a track in `tracks = [ … ]` (and `base_tracks`).
pub const TRACK: Section = Section { place: "in a track", keys: &["name", "rotations", "translations", "scales"] };

/// Keys of `track_list = { … }`.
pub const TRACK_LIST: Section =
    Section { place: "in 'track_list'", keys: &["name", "num_samples", "sample_rate", "is_binary_exact"] };

/// Keys of a track in a track list's `tracks` (ACL's, transform-only ones included:
/// they are read and ignored).
pub const SCALAR_TRACK: Section = Section {
    place: "in a list track",
    keys: &[
        "name",
        "type",
        "precision",
        "constant_threshold",
        "output_index",
        "parent_index",
        "shell_distance",
        "constant_rotation_threshold_angle",
        "constant_translation_threshold",
        "constant_scale_threshold",
        "bind_rotation",
        "bind_translation",
        "bind_scale",
        "data",
    ],
};

const ALL: [Section; 8] = [TOP, CLIP, SETTINGS, SEGMENTING, BONE, TRACK, TRACK_LIST, SCALAR_TRACK];

/// Index of `key` in `section`, if it is one of its keys.
pub fn index(section: &Section, key: &str) -> Option<usize> {
    section.keys.iter().position(|k| *k == key)
}

/// The message for `key`, unknown in `section`: the nearest known key when one is
/// close enough to be a misspelling, the section it belongs to when it is another
/// section's key, else the keys that are allowed.
pub fn unknown(section: &Section, key: &str) -> String {
    let shown = message::name(key);
    if let Some(near) = nearest(key, section.keys.iter().copied()) {
        return format!("unknown key '{shown}' {} (did you mean '{near}'?)", section.place);
    }
    if let Some(home) = ALL.iter().find(|s| s.place != section.place && index(s, key).is_some()) {
        return format!("key '{shown}' does not belong {}: it goes {}", section.place, home.place);
    }
    format!("unknown key '{shown}' {} (known keys: {})", section.place, section.keys.join(", "))
}

/// The candidate closest to `word` by edit distance (a swap of two neighbouring
/// letters counts as one edit), when it is close enough to be a misspelling of it:
/// at most one edit for short words, one per three letters for longer ones. Of
/// equally close candidates, the first is chosen: give them in a stable order.
pub fn nearest<'c>(word: &str, candidates: impl IntoIterator<Item = &'c str>) -> Option<&'c str> {
    let allowed = (word.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .map(|c| (strsim::osa_distance(word, c), c))
        .filter(|&(d, _)| d <= allowed)
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misspellings_find_their_key() {
        assert_eq!(nearest("translation", TRACK.keys.iter().copied()), Some("translations"));
        assert_eq!(nearest("parnet", BONE.keys.iter().copied()), Some("parent"));
        assert_eq!(nearest("vertex_distanse", BONE.keys.iter().copied()), Some("vertex_distance"));
        assert_eq!(nearest("num_sample", CLIP.keys.iter().copied()), Some("num_samples"));
        assert_eq!(nearest("colour", TRACK.keys.iter().copied()), None);
    }

    #[test]
    fn messages_say_what_to_do() {
        assert_eq!(
            unknown(&TRACK, "translation"),
            "unknown key 'translation' in a track (did you mean 'translations'?)"
        );
        assert_eq!(
            unknown(&TRACK, "vertex_distance"),
            "key 'vertex_distance' does not belong in a track: it goes in a bone"
        );
        assert!(unknown(&BONE, "colour")
            .ends_with("(known keys: name, parent, vertex_distance, bind_rotation, bind_translation, bind_scale)"));
        assert_eq!(unknown(&BONE, "a\nb"), "unknown key 'a\\nb' in a bone (known keys: name, parent, vertex_distance, bind_rotation, bind_translation, bind_scale)");
    }
}
