//! [`Playback`]: how the tools sample a clip, on its own or as a clip of a streaming
//! database with some of its tiers resident, so that measuring and decompressing read
//! the same keys a game would (the poses and the in-place root's own track).

use ossa_decoder::{Binding, Clip, Error, Residency, Rounding, Sampler, Slot, Transform};

/// How a clip is sampled.
#[derive(Clone, Copy)]
pub enum Playback<'p, 'a> {
    /// From the clip's own key frames.
    Alone,
    /// With the key frames of the tiers `residency` holds.
    Streamed {
        /// The clip's binding to its database.
        binding: &'p Binding<'p>,
        /// The chunks resident.
        residency: &'p Residency<'a, Vec<Slot<'a>>>,
    },
}

impl<'a> Playback<'_, 'a> {
    /// Moves `sampler` to `time`, interpolating.
    pub fn seek(&self, sampler: &mut Sampler<'a>, time: f32) -> Result<(), Error> {
        match self {
            Playback::Alone => {
                sampler.seek(time, Rounding::None);
                Ok(())
            }
            Playback::Streamed { binding, residency } => {
                sampler.seek_streamed(time, Rounding::None, binding, residency)
            }
        }
    }

    /// The root-motion bone's own track at `time` ([`Clip::root_local`]).
    pub fn root_local(&self, clip: &Clip<'a>, time: f32) -> Result<Transform, Error> {
        match self {
            Playback::Alone => Ok(clip.root_local(time)),
            Playback::Streamed { binding, residency } => clip.root_local_streamed(time, binding, residency),
        }
    }
}
