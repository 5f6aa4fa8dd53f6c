//! Shared poses (seed 002, "Is there any hope left?"): clips of one skeleton mostly
//! hold the same constant sub-tracks (translations at the bind pose, bones the capture
//! never moves), and each stores them again. A database stores such values once per
//! skeleton, in a *shared pose*, and its clips' default sub-tracks take them instead
//! of the identity ([`crate::compress::Settings::shared_pose`]).
//!
//! Clips are grouped by skeleton (bone count, parents, additive mode). For each bone
//! and sub-track kind of a group, the candidates are the identity and each clip's
//! constant value (near-equal values merged); the pose takes the candidate that
//! leaves the fewest constants stored, each clip judging a candidate with the test its
//! classification uses (the object-space error of holding the sub-track at that value,
//! within its share of the bound). A group gets a pose only when the constants it saves
//! outweigh the pose's own bytes in the index. The clips are then compressed with the
//! pose, and their classification, not this estimate, decides what each stores: the
//! bound holds whatever the pose.

use std::collections::HashMap;
use std::sync::Arc;

use ossa_decoder::format::database::POSE_BONE_SIZE;
use ossa_decoder::format::SubTrackKind;
use ossa_decoder::Additive;
use rayon::prelude::*;

use super::{ClipInput, DatabaseError};
use crate::compress::classify::{constant_value, CLASS_BUDGET};
use crate::compress::reference::Reference;
use crate::compress::shared_pose::SharedPoseValues;
use crate::compress::values::Lane4;
use crate::compress::CompressError;
use crate::error_metric::Affine;

/// Bytes a constant sub-track stores, as the estimate counts it: three 16-bit
/// integers (most constants; a raw one stores more, which only makes sharing it
/// worth more).
const CONSTANT_BYTES: usize = 6;

/// The shared poses of a database and the pose of each clip.
#[derive(Clone, Debug, Default)]
pub struct PosePlan {
    /// The poses, in index order.
    pub poses: Vec<Arc<SharedPoseValues>>,
    /// Each clip's pose (input order), `None` for a clip keeping its constants.
    pub of_clip: Vec<Option<Arc<SharedPoseValues>>>,
    /// The estimate's bytes saved over the database: constants no longer stored, less
    /// the poses' bytes.
    pub estimated_saving: i64,
}

impl PosePlan {
    /// No shared pose: each of `clips` clips keeps its constants.
    pub fn none(clips: usize) -> Self {
        PosePlan { of_clip: vec![None; clips], ..PosePlan::default() }
    }
}

/// How one clip's sub-track is classified without a shared pose.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Class {
    /// Within its share of the bound of the identity: stores nothing.
    Default,
    /// Within its share of the bound of this value: stores a constant.
    Constant(Lane4),
    /// Neither: stores samples whatever the pose.
    Animated,
}

/// What clips sharing a pose have in common: bone count, parents, additive mode.
type Skeleton = (usize, Vec<Option<usize>>, Additive);

/// When a skeleton's clips share a pose.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PosePolicy {
    /// When the constants it saves outweigh its bytes (the default).
    #[default]
    Auto,
    /// Whenever two clips or more have the skeleton, whatever it saves (for a
    /// database that will grow, and to test the format).
    Always,
    /// Never: every clip keeps its constants and decodes without the database.
    Never,
}

/// Chooses the shared poses of the clips `clips` (see the module documentation).
pub fn choose(clips: &[ClipInput<'_>], policy: PosePolicy) -> Result<PosePlan, DatabaseError> {
    if policy == PosePolicy::Never {
        return Ok(PosePlan::none(clips.len()));
    }
    let mut groups: HashMap<Skeleton, Vec<usize>> = HashMap::new();
    let mut order = Vec::new();
    for (i, input) in clips.iter().enumerate() {
        let clip = input.clip;
        let key = (
            clip.bones.len(),
            clip.bones.iter().map(|b| b.parent).collect::<Vec<_>>(),
            clip.additive.as_ref().map_or(Additive::None, |b| b.format),
        );
        let members = groups.entry(key.clone()).or_default();
        if members.is_empty() {
            order.push(key);
        }
        members.push(i);
    }
    let mut plan = PosePlan::none(clips.len());
    for key in order {
        let members = &groups[&key];
        // A pose costs its bytes once; one clip alone saves less than that.
        if members.len() < 2 || key.0 == 0 {
            continue;
        }
        let (bones, saving) = group_pose(clips, members, key.2)?;
        if saving <= 0 && policy == PosePolicy::Auto {
            continue;
        }
        let pose = Arc::new(SharedPoseValues::new(plan.poses.len() as u32, bones));
        for &m in members {
            plan.of_clip[m] = Some(Arc::clone(&pose));
        }
        plan.poses.push(pose);
        plan.estimated_saving += saving;
    }
    Ok(plan)
}

/// The pose of one group of clips (indices `members` of `clips`, one skeleton) and the
/// bytes it is estimated to save, its own bytes deducted.
fn group_pose(
    clips: &[ClipInput<'_>],
    members: &[usize],
    additive: Additive,
) -> Result<(Vec<[Lane4; 3]>, i64), DatabaseError> {
    let bones = clips[members[0]].clip.bones.len();
    let sub_tracks = bones * SubTrackKind::ALL.len();
    let identity = |kind: SubTrackKind| crate::compress::values::default_value(kind, additive);
    // Each clip's class of every sub-track (kind-major: kind × bones + bone).
    let classes: Vec<Vec<Class>> =
        members.par_iter().map(|&m| with_reference(&clips[m], classes_of)).collect::<Result<_, _>>()?;
    // Candidates per sub-track: the clips' constants, near-equal ones merged.
    let candidates: Vec<Vec<Lane4>> = (0..sub_tracks)
        .map(|i| {
            let kind = SubTrackKind::ALL[i / bones];
            let mut values: Vec<Lane4> = Vec::new();
            for clip in &classes {
                if let Class::Constant(v) = clip[i] {
                    if !values.iter().any(|u| near(kind, u, &v)) && !near(kind, &identity(kind), &v) {
                        values.push(v);
                    }
                }
            }
            values
        })
        .collect();
    // Which candidates each clip holds within its bound, for the sub-tracks it does not
    // animate anyway.
    let fits: Vec<Vec<Vec<bool>>> = members
        .par_iter()
        .zip(&classes)
        .map(|(&m, own)| {
            with_reference(&clips[m], |reference, precision| {
                let mut scratch: Vec<Affine> = Vec::new();
                let budget = precision * CLASS_BUDGET;
                (0..sub_tracks)
                    .map(|i| {
                        let (kind, bone) = (SubTrackKind::ALL[i / bones], i % bones);
                        candidates[i]
                            .iter()
                            .map(|v| {
                                own[i] != Class::Animated
                                    && reference.standalone_error(
                                        bone,
                                        kind as usize,
                                        0..reference.sample_count,
                                        budget,
                                        &mut scratch,
                                        |_| *v,
                                    ) <= budget
                            })
                            .collect()
                    })
                    .collect()
            })
        })
        .collect::<Result<_, _>>()?;
    let mut pose = vec![[[0.0f32; 4]; 3]; bones];
    let mut saving = -((bones * POSE_BONE_SIZE) as i64);
    for i in 0..sub_tracks {
        let (kind, bone) = (SubTrackKind::ALL[i / bones], i % bones);
        // Constants stored with the identity as the default: every clip's constant.
        let stored_identity = classes.iter().filter(|c| matches!(c[i], Class::Constant(_))).count();
        // With candidate `c`: every clip not animating it and not holding `c`.
        let stored_with = |c: usize| {
            classes.iter().zip(&fits).filter(|(class, fit)| class[i] != Class::Animated && !fit[i][c]).count()
        };
        let best = (0..candidates[i].len()).map(|c| (stored_with(c), c)).min();
        pose[bone][kind as usize] = match best {
            Some((stored, c)) if stored < stored_identity => {
                saving += ((stored_identity - stored) * CONSTANT_BYTES) as i64;
                candidates[i][c]
            }
            _ => identity(kind),
        };
    }
    Ok((pose, saving))
}

/// Runs `f` on the reference of `input`'s clip and its precision.
fn with_reference<T>(input: &ClipInput<'_>, f: impl FnOnce(&Reference, f64) -> T) -> Result<T, DatabaseError> {
    let clip_error = |error: CompressError| DatabaseError::Clip { name: input.name.to_owned(), error };
    input.clip.check().map_err(|e| clip_error(CompressError::InvalidClip(e)))?;
    let reference = Reference::new(input.clip).map_err(|e| clip_error(CompressError::OutOfMemory(e)))?;
    Ok(f(&reference, input.settings.precision))
}

/// Every sub-track's class without a shared pose (kind-major).
fn classes_of(reference: &Reference, precision: f64) -> Vec<Class> {
    let mut scratch: Vec<Affine> = Vec::new();
    let budget = precision * CLASS_BUDGET;
    let all = 0..reference.sample_count;
    let bones = reference.bone_count;
    (0..bones * SubTrackKind::ALL.len())
        .map(|i| {
            let (kind, bone) = (SubTrackKind::ALL[i / bones], i % bones);
            let part = kind as usize;
            let default = reference.default_of(bone, kind);
            if reference.standalone_error(bone, part, all.clone(), budget, &mut scratch, |_| default) <= budget {
                return Class::Default;
            }
            let value = constant_value(reference, kind, bone);
            if reference.standalone_error(bone, part, all.clone(), budget, &mut scratch, |_| value) <= budget {
                Class::Constant(value)
            } else {
                Class::Animated
            }
        })
        .collect()
}

/// Whether two values are the same candidate: components within 1e-6 (rotations,
/// either sign of the quaternion) or within 1e-6 relative (vectors). Merging only
/// saves tests: every clip checks the value it is given against its own bound.
fn near(kind: SubTrackKind, a: &Lane4, b: &Lane4) -> bool {
    let close = |x: f32, y: f32| (x - y).abs() <= 1e-6 * x.abs().max(y.abs()).max(1.0);
    match kind {
        SubTrackKind::Rotation => (0..4).all(|c| close(a[c], b[c])) || (0..4).all(|c| close(a[c], -b[c])),
        _ => (0..3).all(|c| close(a[c], b[c])),
    }
}
