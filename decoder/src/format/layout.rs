//! [`Layout`]: where a clip's bytes go, part by part, for tools that report sizes
//! (`ossa info`, `ossa stats`) and for the encoder's own size decisions. Computed from
//! a validated [`Clip`]'s counts and segment table, in time linear in the segments.

use crate::format::clip::Clip;
use crate::format::{self, RootMotionBlock, FLAG_ROOT_MOTION, HEADER_SIZE, SEGMENT_ENTRY_SIZE};
use zerocopy::FromBytes;

/// Byte counts of the parts of a clip. Every byte of the buffer is in exactly one
/// part: the parts add up to [`Layout::total`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    /// The fixed header, and a database clip's 16-byte database reference.
    pub header: u32,
    /// The root-motion block (0 without one).
    pub root_motion: u32,
    /// The bone bit sets of the sub-track lists and their rank directories.
    pub track_descriptions: u32,
    /// Values of constant sub-tracks.
    pub constants: u32,
    /// Clip ranges of animated sub-tracks.
    pub clip_ranges: u32,
    /// Segment table, frame directories and bit rates.
    pub segment_headers: u32,
    /// Per-segment ranges (and constant-in-segment values) of animated sub-tracks.
    pub segment_ranges: u32,
    /// Animated samples: the bits of the stored key frames, rounded up to bytes.
    pub samples: u32,
    /// Alignment padding between sections and the bit reader's slack.
    pub padding: u32,
    /// The optional metadata section (names, parents, bind pose): tools only.
    pub metadata: u32,
    /// Everything.
    pub total: u32,
}

impl Layout {
    /// What a game ships and loads: everything but the metadata section.
    pub fn compressed(&self) -> u32 {
        self.total.saturating_sub(self.metadata)
    }

    /// The named parts in file order, for reports: `(name, bytes)`.
    pub fn parts(&self) -> [(&'static str, u32); 10] {
        [
            ("header", self.header),
            ("root_motion", self.root_motion),
            ("track_descriptions", self.track_descriptions),
            ("constants", self.constants),
            ("clip_ranges", self.clip_ranges),
            ("segment_headers", self.segment_headers),
            ("segment_ranges", self.segment_ranges),
            ("samples", self.samples),
            ("padding", self.padding),
            ("metadata", self.metadata),
        ]
    }
}

impl Clip<'_> {
    /// Byte counts of the parts of the buffer.
    pub fn layout(&self) -> Layout {
        // Saturating throughout: these are reported sizes of a validated buffer, each
        // at most its total size.
        let total = self.total_size();
        let root_motion = if self.header.flags.get() & FLAG_ROOT_MOTION != 0 {
            self.bytes
                .get(HEADER_SIZE..)
                .and_then(|b| RootMotionBlock::read_from_prefix(b).ok())
                .map_or(0, |(b, _)| format::root_motion_len(b.options.get(), b.chain_len.get()) as u32)
        } else {
            0
        };
        // The clip ranges hold their grids, then four bytes per animated component.
        let range_grids = (self.ranges_offset as u32).saturating_sub(self.header.ranges_offset.get());
        let segments = self.segment_count;
        let ranges_per_segment = if segments > 1 { self.animated_components.saturating_mul(2) } else { 0 };
        let mut samples = 0u32;
        for index in 0..segments {
            let (_, frame_bits, present) = self.segment(index);
            let bits = u64::from(present.count_ones()).saturating_mul(u64::from(frame_bits));
            samples = samples.saturating_add(bits.div_ceil(8) as u32);
        }
        let mut layout = Layout {
            header: if self.header.flags.get() & format::FLAG_DATABASE != 0 {
                (HEADER_SIZE + format::database::CLIP_REFERENCE_SIZE) as u32
            } else {
                HEADER_SIZE as u32
            },
            root_motion,
            track_descriptions: format::track_section_len(
                self.bone_count as usize,
                format::stored_sets(self.header.flags.get(), self.header.version_minor.get()),
            ) as u32,
            constants: self.constants_len() as u32,
            clip_ranges: range_grids.saturating_add(self.animated_components.saturating_mul(4)),
            segment_headers: segments.saturating_mul(
                (SEGMENT_ENTRY_SIZE as u32)
                    .saturating_add(self.frame_directory_len)
                    .saturating_add(self.animated_count),
            ),
            segment_ranges: segments.saturating_mul(ranges_per_segment),
            samples,
            padding: 0,
            metadata: self.header.metadata_size.get(),
            total,
        };
        let accounted = layout.parts().iter().fold(0u32, |sum, &(_, bytes)| sum.saturating_add(bytes));
        layout.padding = total.saturating_sub(accounted);
        layout
    }
}
