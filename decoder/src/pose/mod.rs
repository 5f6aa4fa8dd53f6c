//! Poses: finishing decoded values (rotations rebuilt, sign-aligned, interpolated and
//! normalised: [`finish`]) and writing them where they go — a whole pose list by list
//! ([`whole`]), a pose kept between calls ([`kept`], with the plan of the segment its
//! keys lie in: [`kept_plan`]), one bone ([`bone`]), a planned
//! set of bones ([`subset`]); a clip's static parts decoded once ([`static_pose`]).
//! [`jobs`] names each as a decode the sampler runs on its backend. [`lists`] holds
//! what those share; [`interpolation`] gives the encoder the same arithmetic one value
//! at a time.

pub(crate) mod animated;
pub(crate) mod bone;
pub(crate) mod finish;
pub(crate) mod gathered_quad;
pub mod interpolation;
pub(crate) mod jobs;
pub(crate) mod kept;
pub(crate) mod kept_plan;
pub(crate) mod lists;
pub(crate) mod static_pose;
pub(crate) mod subset;
pub(crate) mod whole;
