//! Batches: many clips (files, and folders standing for the `.acl.sjson` clips in
//! them) processed on every core, with a progress bar on a terminal, every failure
//! reported at the end and the others' outputs written.
//!
//! Results come back in input order whatever the thread count, and each clip's bytes
//! do not depend on it (compression is deterministic), so a batch writes the same
//! files on one core or many. `--shard K/N` keeps the clips whose file name hashes to
//! share K of N: N machines of a build farm each run the same command with their own
//! K and together cover every clip once, whatever order they list them in.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use serde_json::{json, Value};

use crate::failure::Failure;
use crate::memory_limit::MemoryLimit;

/// `--shard K/N`: the clips of share `index` (0-based) of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    index: u64,
    count: u64,
}

impl FromStr for Shard {
    type Err = String;

    /// `K/N` with `1 ≤ K ≤ N`.
    fn from_str(text: &str) -> Result<Shard, String> {
        let (k, n) = text.split_once('/').ok_or_else(|| format!("'{text}' is not K/N (for example 2/8)"))?;
        let parse = |v: &str| v.trim().parse::<u64>().map_err(|_| format!("'{text}' is not K/N (for example 2/8)"));
        let (k, n) = (parse(k)?, parse(n)?);
        if n == 0 || k == 0 || k > n {
            return Err(format!("shard {k}/{n}: K must be 1 to N, and N at least 1"));
        }
        Ok(Shard { index: k - 1, count: n })
    }
}

impl Shard {
    /// Whether the clip at `path` belongs to this shard: FNV-1a 64 of its file name,
    /// modulo the shard count (the name alone, so that machines listing the clips
    /// from other folders or in another order agree).
    pub fn holds(&self, path: &Path) -> bool {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let hash = ossa_decoder::format::database::fnv1a_64(
            name.as_bytes(),
            ossa_decoder::format::database::FNV64_OFFSET_BASIS,
        );
        hash % self.count == self.index
    }
}

/// The clips `inputs` name (folders expanded, [`super::expand`]), those of `shard`
/// only; and the inputs that failed already (an unreadable or empty folder). With a
/// shard, a note says how many of the clips it holds (so that a shard of none is not
/// silent).
pub fn inputs(inputs: &[PathBuf], shard: Option<Shard>) -> (Vec<PathBuf>, Vec<(PathBuf, Failure)>) {
    let (mut paths, mut failures, mut total) = (Vec::new(), Vec::new(), 0usize);
    for item in super::expand(inputs) {
        match item {
            Ok(path) => {
                total += 1;
                if shard.is_none_or(|s| s.holds(&path)) {
                    paths.push(path);
                }
            }
            Err(failure) => failures.push(failure),
        }
    }
    if let Some(shard) = shard {
        let held = if paths.is_empty() { ": nothing to do" } else { "" };
        crate::failure::note(format!(
            "ossa: note: shard {}/{} holds {} of the {total} clip(s) given{held}",
            shard.index + 1,
            shard.count,
            paths.len()
        ));
    }
    (paths, failures)
}

/// Each clip's output file name in the batch's folder (its name, then `.extension`);
/// a clip whose output another one already takes fails (its file would be
/// overwritten) and is left out.
pub fn output_names(
    paths: &[PathBuf],
    extension: &str,
    failures: &mut Vec<(PathBuf, Failure)>,
) -> Vec<(PathBuf, String)> {
    let mut seen: std::collections::HashMap<String, PathBuf> = std::collections::HashMap::new();
    let mut out = Vec::new();
    for path in paths {
        let name = format!("{}.{extension}", super::clip_name(path));
        if let Some(first) = seen.get(&name) {
            failures.push((
                path.clone(),
                Failure::at(
                    path,
                    format!(
                        "its output {name} is also {}'s: clip names in a batch must differ",
                        ossa_encoder::message::path(first)
                    ),
                ),
            ));
            continue;
        }
        seen.insert(name.clone(), path.clone());
        out.push((path.clone(), name));
    }
    out
}

/// Runs `job` on every item on every core (each with an equal share of `limit`, so
/// that the jobs running at once stay within it together), with a progress bar on
/// standard error when it is a terminal (none when piped); results in input order.
pub fn run_parallel<I: Sync, T: Send>(
    items: &[I],
    verb: &str,
    limit: &MemoryLimit,
    job: impl Fn(&I, &MemoryLimit) -> Result<T, Failure> + Sync,
) -> Vec<Result<T, Failure>> {
    let share = limit.share(rayon::current_num_threads().min(items.len()).max(1) as u64);
    // `stderr()` draws nothing when standard error is not a terminal.
    let bar = ProgressBar::with_draw_target(Some(items.len() as u64), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("{msg} {bar:40} {pos}/{len} clips, {elapsed} (eta {eta})") {
        bar.set_style(style);
    }
    bar.set_message(verb.to_owned());
    let results = items
        .par_iter()
        .map(|item| {
            let result = job(item, &share);
            bar.inc(1);
            result
        })
        .collect();
    bar.finish_and_clear();
    results
}

/// The failures as `--json` lists them: each clip and its error.
pub fn failures_json(failures: &[(PathBuf, Failure)]) -> Vec<Value> {
    failures
        .iter()
        .map(|(path, f)| {
            let error = match f {
                Failure::Problem { message, .. } => message.clone(),
                Failure::ClosedPipe => String::new(),
            };
            json!({ "clip": path.display().to_string(), "error": error })
        })
        .collect()
}

/// Ends a batch of `done` clips that worked: every failure reported on standard
/// error, and a failure (exit status 2) when there was any.
pub fn finish(done: usize, failures: Vec<(PathBuf, Failure)>) -> Result<(), Failure> {
    if failures.is_empty() {
        return Ok(());
    }
    for (_, f) in &failures {
        f.report();
    }
    let total = done + failures.len();
    Err(Failure::general(format!("{} of {total} clips failed (listed above)", failures.len())))
}
