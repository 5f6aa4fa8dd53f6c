//! Streaming databases (`format-spec/database.md`): the index validated and each clip
//! bound to it ([`database`]), and which tier chunks are in memory ([`residency`]).

pub(crate) mod database;
pub(crate) mod residency;
