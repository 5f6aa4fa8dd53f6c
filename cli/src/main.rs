//! `ossa`: the command-line tool for asset pipelines.
//!
//! Every command exits 0 on success and 2 with a one-line message naming the file
//! and the problem on any error (`stats`, which goes on past bad clips, lists each
//! failure on its own line). Outputs are whole or absent and never replace what is
//! not theirs to replace (see `output`); memory is bounded by `--memory-limit` (see
//! `memory_limit`); a closed standard output ends the program quietly.

mod args;
mod commands;
mod failure;
mod heap;
mod input;
mod memory_limit;
mod output;
mod report;
mod temporaries;

use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::Parser as _;

use args::{Cli, Command};
use failure::Failure;
use memory_limit::MemoryLimit;

fn main() -> ExitCode {
    heap::configure();
    start_thread_pool();
    // A panic is a bug; still, the user gets one line, not a backtrace.
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        failure::note(format!("ossa: internal error (please report): {msg}"));
    }));
    // The signal handler (a thread to start) and the default memory limit (files of
    // /proc and the control group to read) are set up beside the parsing of the
    // arguments, on whichever thread of the pool is free: both are done before a
    // command runs.
    // A panic there is reported as one in a command is (the hook's line, status 2).
    let joined = std::panic::catch_unwind(|| {
        rayon::join(
            || {
                temporaries::install();
                MemoryLimit::detect()
            },
            Cli::try_parse,
        )
    });
    let Ok((detected, parsed)) = joined else { return ExitCode::from(2) };
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    match std::panic::catch_unwind(|| run(cli, detected)) {
        Ok(Ok(())) | Ok(Err(Failure::ClosedPipe)) => ExitCode::SUCCESS,
        Ok(Err(f)) => {
            f.report();
            ExitCode::from(2)
        }
        Err(_) => ExitCode::from(2),
    }
}

/// Builds the rayon pool every parallel step of the command runs on, with this
/// thread as one of its workers, and one more worker per core besides it (unless
/// `RAYON_NUM_THREADS` says how many in all).
///
/// Why not rayon's default (one worker per core, this thread blocked while they
/// work): the compressor alternates short serial steps on this thread with short
/// parallel ones, and Linux often wakes a sleeping worker onto the core of the thread
/// that woke it, where it waits for that core instead of taking the idle one; the
/// per-thread scheduler statistics showed workers waiting 3 to 8 ms in a 13 ms run.
/// With this thread working inside the pool and a worker to spare, a woken worker is
/// seldom left without a core: `ossa compress` of a 1.3 MB clip took 0.5 to 0.8 ms
/// less (medians of 101 alternating runs, 2 cores; this thread in the pool with one
/// worker per core in all was slower than rayon's default). The output does not
/// depend on the thread count.
///
/// Why a pool of this thread's rather than rayon's global one: building the global
/// pool waits until every worker has started, and starting a thread took about
/// 0.1 ms here. This thread being one of its workers, the pool serves every parallel
/// step it starts all the same, and the workers start while it goes on with its own
/// work (measured when that was reading the input): 1.3 to 2.2 % less time for a 1.3 MB clip, 2.1 % for a 1.6 MB one (medians
/// of 301, 101 and 61 alternating runs). The pool is never dropped: it lives as long
/// as the process, as the global one would.
///
/// Why first thing in `main`, before the arguments are parsed and the other threads
/// are started: a worker's own start (its stack, its heap) then overlaps with that
/// work rather than with the reading of the input. Measured against starting it in
/// `run` (alternated whole processes, ACL's compressor in the same runs): 49_15
/// 0.451 -> 0.423 x ACL (41 runs), 0.465 -> 0.441 x on a busier host; 81_18 0.267
/// -> 0.258 x (31 runs); a 474-byte clip 2.57 -> 2.39 ms. `--help` and usage errors
/// start it too, for nothing (a fraction of a millisecond).
fn start_thread_pool() {
    let threads = std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|n| n.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()) + 1);
    // Without a pool (no thread could start), rayon makes its global one when first
    // asked.
    let builder = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .use_current_thread()
        .start_handler(|_| heap::advise_this_thread());
    if let Ok(pool) = builder.build() {
        std::mem::forget(pool);
    }
}

/// Help and version go to standard output as clap writes them; a usage error
/// becomes one line (with clap's suggestion, if it has one) and exit status 2.
fn usage_error(e: clap::Error) -> ExitCode {
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        // `ossa` alone: the help, on standard error, and a usage error's status.
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            return ExitCode::from(2);
        }
        _ => {}
    }
    // clap's message: the error (perhaps over several lines), tips, a usage line.
    let text = e.render().to_string();
    let (mut message, mut tips, mut command) = (Vec::new(), Vec::new(), "ossa".to_owned());
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Some(usage) = line.strip_prefix("Usage: ") {
            let words: Vec<&str> = usage.split_whitespace().take_while(|w| !w.starts_with(['[', '<', '-'])).collect();
            command = words.join(" ");
        } else if let Some(tip) = line.strip_prefix("tip: ") {
            tips.push(tip.to_owned());
        } else if !line.starts_with("For more information") {
            message.push(line.trim_start_matches("error: ").to_owned());
        }
    }
    let tips = if tips.is_empty() { String::new() } else { format!(" ({})", tips.join("; ")) };
    Failure::general(format!("{}{tips}; see '{command} --help'", message.join(" "))).report();
    ExitCode::from(2)
}

/// Runs the command, within `--memory-limit` or else the `detected` limit.
fn run(cli: Cli, detected: MemoryLimit) -> Result<(), Failure> {
    let limit = cli.memory_limit.unwrap_or(detected);
    match cli.command {
        Command::Compress {
            inputs,
            output,
            shard,
            rate,
            animation,
            precision,
            strip_metadata,
            segment_len,
            looping,
            root_motion_bone,
            extract_root_motion,
            keep_every_frame,
            strip_frames,
            json,
        } => {
            let settings = ossa_encoder::Settings {
                precision: precision.unwrap_or(ossa_encoder::Settings::default().precision),
                include_metadata: !strip_metadata,
                segment_len,
                looping: looping.into(),
                root_motion_bone,
                extract_root_motion,
                remove_key_frames: !keep_every_frame,
                strip_frames,
                shared_pose: None,
            };
            let gltf = commands::GltfOptions {
                rate,
                precision: precision.unwrap_or(ossa_encoder::formats::gltf::DEFAULT_PRECISION),
                animation: match animation {
                    Some(name) => ossa_encoder::formats::gltf::AnimationChoice::Named(name),
                    None => ossa_encoder::formats::gltf::AnimationChoice::All,
                },
            };
            commands::compress::run(&inputs, &output, &settings, json, shard, &gltf, &limit)
        }
        Command::Decompress { input, output, database, fidelity } => {
            commands::decompress::run(&input, &output, database.as_deref(), fidelity.into(), &limit)
        }
        Command::Database {
            inputs,
            output,
            tiers,
            chunk_size,
            strip_lowest,
            shared_poses,
            precision,
            rate,
            strip_metadata,
            json,
        } => {
            let gltf = commands::GltfOptions {
                rate,
                precision: precision.unwrap_or(ossa_encoder::formats::gltf::DEFAULT_PRECISION),
                animation: ossa_encoder::formats::gltf::AnimationChoice::All,
            };
            let settings = ossa_encoder::database::DatabaseSettings {
                compression: ossa_encoder::Settings {
                    precision: precision.unwrap_or(ossa_encoder::Settings::default().precision),
                    include_metadata: !strip_metadata,
                    ..ossa_encoder::Settings::default()
                },
                medium: tiers.0,
                low: tiers.1,
                chunk_shift: chunk_size,
                strip_lowest,
                shared_poses: shared_poses.into(),
            };
            commands::database::run(&inputs, &output, &settings, &gltf, json, &limit)
        }
        Command::Info { input, json } => commands::info::run(&input, json, &limit),
        Command::Bench { input, json, cold, database } => {
            commands::bench::run(&input, json, cold, database.as_deref(), &limit)
        }
        Command::Stats { inputs, shard, rate, precision, json, report, report_clip } => {
            let gltf = commands::GltfOptions {
                rate,
                precision: precision.unwrap_or(ossa_encoder::formats::gltf::DEFAULT_PRECISION),
                animation: ossa_encoder::formats::gltf::AnimationChoice::All,
            };
            let report = report.map(|path| commands::stats::ReportRequest { path, clip: report_clip });
            let precision = precision.unwrap_or(ossa_encoder::Settings::default().precision);
            commands::stats::run(&inputs, precision, json, shard, &gltf, report.as_ref(), &limit)
        }
    }
}
