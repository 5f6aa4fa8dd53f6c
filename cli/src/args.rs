//! The command line: commands, options, and the checks that make a bad value an
//! error before any work starts.

use std::path::PathBuf;

use crate::commands::batch::Shard;
use clap::{Parser, Subcommand};

use crate::memory_limit::MemoryLimit;

#[derive(Parser)]
#[command(name = "ossa", version, about = "Compress skeletal animation clips with a hard accuracy bound")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Most memory a command may use, e.g. 512M, 8G (powers of 1000), 16GiB (of
    /// 1024), or 'none'. A clip whose estimated need is larger is refused before it is
    /// loaded. Default: 3/4 of the memory available (within the control group and
    /// `ulimit -v`).
    #[arg(long, global = true, value_name = "SIZE")]
    pub memory_limit: Option<MemoryLimit>,
}

#[derive(Subcommand)]
pub enum Command {
    /// Compress clips into .ossa files: ACL text clips and scalar track lists
    /// (.acl.sjson), BVH motion capture (.bvh) and glTF models (.gltf, .glb: each
    /// animation a clip). One clip into a file, or many (files, and folders standing
    /// for the clips in them) into a folder, on every core. Every clip of a batch is
    /// tried: failures are listed at the end, and make the exit status 2.
    Compress {
        /// The clips to compress (.acl.sjson, .bvh, .gltf, .glb; '-' for standard
        /// input), or folders of them.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// Where to write: the .ossa file ('-' for standard output) for one clip, a
        /// folder (created if missing) for several, each clip as NAME.ossa.
        #[arg(short, long)]
        output: PathBuf,
        /// Only the clips of share K of N (K from 1 to N), by a hash of their file
        /// name: N machines running the same batch with K = 1 … N cover every clip
        /// once.
        #[arg(long, value_name = "K/N")]
        shard: Option<Shard>,
        /// glTF models: samples per second the animations are resampled at.
        #[arg(long, default_value_t = 30.0, value_parser = rate)]
        rate: f64,
        /// glTF models: the animation to compress, by name or index (default: all).
        #[arg(long, value_name = "NAME|INDEX")]
        animation: Option<String>,
        /// Largest object-space error allowed on any virtual vertex, in the units the
        /// skeleton is seen in: an ACL text clip's or BVH file's own (default 0.01,
        /// ACL's centimetres), a glTF model's scene, its armature's transform applied
        /// (default 0.0001: metres, by the glTF specification).
        #[arg(long, value_parser = precision, allow_negative_numbers = true)]
        precision: Option<f64>,
        /// Leave out the metadata section (names, parents, bind pose): only what a
        /// game needs to sample poses.
        #[arg(long)]
        strip_metadata: bool,
        /// Samples per segment, 1 to 16: shorter segments fit their ranges tighter
        /// but store more range bytes.
        #[arg(long, default_value_t = ossa_decoder::format::DEFAULT_SEGMENT_LEN,
              value_parser = clap::value_parser!(u8).range(1..=i64::from(ossa_decoder::format::MAX_SEGMENT_LEN)))]
        segment_len: u8,
        /// Looping: 'clamp' stores every sample and stops at the last; 'wrap' drops
        /// the last sample (a repeat of the first) and plays from the one before it
        /// back to the first; 'auto' wraps only when every bone's last sample matches
        /// its first within the precision in object space (never when the root
        /// travels).
        #[arg(long = "loop", value_enum, default_value_t = Loop::Auto)]
        looping: Loop,
        /// The bone that carries root motion (a bone without a parent); default: the
        /// first root.
        #[arg(long, value_name = "NAME")]
        root_motion_bone: Option<String>,
        /// Take the root motion out of the poses: they show the root-motion bone at
        /// its first sample (in place), and the decoder's root-motion queries give its
        /// motion. A loop whose pose closes in place then wraps even when its root
        /// travels, its last sample kept.
        #[arg(long)]
        extract_root_motion: bool,
        /// Store every sample as a key frame. By default a segment leaves out the
        /// samples that interpolation between the stored frames around them
        /// reproduces within the precision (the bound holds at every sample either
        /// way; seeking then finds the stored frames with two bit scans).
        #[arg(long)]
        keep_every_frame: bool,
        /// Lossy, beyond the precision: leave out this share of the clip's key frames
        /// (0 to 1, e.g. 0.5), the least important first (by the object-space error
        /// their removal causes; never a segment's first or last). The precision then
        /// holds at the frames kept; the summary reports the largest error, at the
        /// stripped frames. Default: nothing stripped.
        #[arg(long, value_name = "FRACTION", default_value_t = 0.0, value_parser = fraction, allow_negative_numbers = true)]
        strip_frames: f64,
        /// Print one JSON object instead of a summary line.
        #[arg(long)]
        json: bool,
    },
    /// Decode an .ossa file, one pose per original sample, into an ACL text clip or
    /// scalar track list (.acl.sjson) or a glTF model (.gltf), with the names, order
    /// and settings the metadata keeps.
    Decompress {
        /// The .ossa file ('-' for standard input).
        input: PathBuf,
        /// Where to write: an .acl.sjson or .gltf file ('-' for standard output), or a
        /// folder (one that exists, or a path ending in '/') to write NAME.acl.sjson
        /// into.
        #[arg(short, long)]
        output: PathBuf,
        /// The streaming database (.ossadb) the clip belongs to: its tiers' key frames
        /// are decoded with the clip's, up to --fidelity. Without it, the clip plays
        /// from what it holds (the lowest fidelity).
        #[arg(long, value_name = "DATABASE")]
        database: Option<PathBuf>,
        /// With --database: 'highest' streams both tiers in, 'medium' the medium tier
        /// only, 'lowest' none.
        #[arg(long, value_enum, requires = "database", default_value_t = FidelityArg::Highest)]
        fidelity: FidelityArg,
    },
    /// Build a streaming database from clips (seed 002): every clip's key frames are
    /// ranked by the object-space error their removal causes; the least important
    /// move out of the clips into two tiers (medium and low) laid out in chunks, which
    /// a game streams in and out at run time. Writes OUT_DIR/NAME.ossa for every clip
    /// (each still plays on its own, from the key frames it keeps) and
    /// OUT_DIR/database.ossadb. A folder stands for the .acl.sjson, .bvh, .gltf and
    /// .glb clips in it (its scalar track lists are skipped). Nothing is written
    /// unless every clip works, and the folder is this run's alone while it writes.
    Database {
        /// The clips (.acl.sjson, .bvh, .gltf, .glb), or folders of them. Each clip's
        /// name is its file name without extension (a glTF model's animations
        /// MODEL_ANIMATION when it has several); names must differ.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// The folder to write the clips and the database into (created if missing).
        #[arg(short, long, value_name = "OUT_DIR")]
        output: PathBuf,
        /// The share of all stored key frames each tier receives, the least important
        /// ones: e.g. medium=0.25,low=0.25 (each 0 to 1, together at most 1).
        #[arg(long, value_name = "medium=M,low=L", default_value = "medium=0.25,low=0.25", value_parser = tiers)]
        tiers: (f64, f64),
        /// Size of a tier's chunks, the unit a game streams: a power of two from 256 B
        /// to 1 GiB, e.g. 1MiB, 256KiB, 4096.
        #[arg(long, value_name = "SIZE", default_value = "1MiB", value_parser = chunk_size)]
        chunk_size: u8,
        /// Leave the low tier out of the database: its key frames are dropped, and
        /// the medium fidelity is the highest.
        #[arg(long)]
        strip_lowest: bool,
        /// When the constants that clips of one skeleton have in common are stored
        /// once, in a shared pose of the database's index (its clips then decode only
        /// with the index): auto when that saves bytes, always for a skeleton of two
        /// clips or more, never (every clip decodes on its own).
        #[arg(long, value_enum, value_name = "WHEN", default_value_t = SharedPoses::Auto)]
        shared_poses: SharedPoses,
        /// Largest object-space error allowed with every tier resident, in the units
        /// the skeletons are seen in (see compress --precision; default 0.01, and
        /// 0.0001 for glTF models).
        #[arg(long, value_parser = precision, allow_negative_numbers = true)]
        precision: Option<f64>,
        /// glTF models: samples per second the animations are resampled at.
        #[arg(long, default_value_t = 30.0, value_parser = rate)]
        rate: f64,
        /// Leave out the clips' metadata sections (names, parents, bind pose).
        #[arg(long)]
        strip_metadata: bool,
        /// Print one JSON object: sizes per tier and the max error at each fidelity.
        #[arg(long)]
        json: bool,
    },
    /// Validate an .ossa file or an .ossadb database (including its checksum) and
    /// describe it.
    Info {
        /// The .ossa or .ossadb file ('-' for standard input).
        input: PathBuf,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Measure decoding speed: seek + whole pose (fresh, with and without the clip's
    /// static pose, and kept between calls), seek and the pose bone by bone, and seek
    /// and four bones, forward over 100 evenly spaced times, interpolating; median and
    /// minimum of many rounds, in nanoseconds per pose.
    Bench {
        /// The .ossa file ('-' for standard input).
        input: PathBuf,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
        /// Spread copies of the clip over 64 MiB and visit them in turn, so that each
        /// call finds its data out of the caches.
        #[arg(long)]
        cold: bool,
        /// The clip's streaming database (needed for a clip with a shared pose): the
        /// clip is opened through it and plays from its own key frames.
        #[arg(long, value_name = "DB.ossadb")]
        database: Option<PathBuf>,
    },
    /// Compress clips in memory and report sizes, errors and times. A folder stands
    /// for the .acl.sjson, .bvh, .gltf and .glb files in it (its scalar track lists
    /// are skipped). Every clip is tried: failures are listed at the end, and make
    /// the exit status 2.
    Stats {
        /// The clips (.acl.sjson, .bvh, .gltf, .glb), or folders of them.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// Only the clips of share K of N (K from 1 to N), by a hash of their file
        /// name (see compress --shard).
        #[arg(long, value_name = "K/N")]
        shard: Option<Shard>,
        /// glTF models: samples per second the animations are resampled at.
        #[arg(long, default_value_t = 30.0, value_parser = rate)]
        rate: f64,
        /// Largest object-space error allowed, in the units the skeleton is seen in
        /// (see compress --precision; default 0.01, and 0.0001 for glTF models).
        #[arg(long, value_parser = precision, allow_negative_numbers = true)]
        precision: Option<f64>,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
        /// Also write a self-contained HTML page: plots of size and error, and a clip
        /// playing, source beside decoded, bones coloured by their error.
        #[arg(long, value_name = "REPORT.html")]
        report: Option<PathBuf>,
        /// The clip the report plays (its name; default: the one of the largest error).
        #[arg(long, value_name = "NAME", requires = "report")]
        report_clip: Option<String>,
    },
}

/// `--fidelity`.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum FidelityArg {
    Highest,
    Medium,
    Lowest,
}

impl From<FidelityArg> for ossa_encoder::database::Fidelity {
    fn from(f: FidelityArg) -> Self {
        match f {
            FidelityArg::Highest => ossa_encoder::database::Fidelity::Highest,
            FidelityArg::Medium => ossa_encoder::database::Fidelity::Medium,
            FidelityArg::Lowest => ossa_encoder::database::Fidelity::Lowest,
        }
    }
}

/// `--rate`: samples per second, above 0 and at most 10,000.
fn rate(text: &str) -> Result<f64, String> {
    let max = ossa_encoder::formats::gltf::import::MAX_RATE;
    match text.trim().parse::<f64>() {
        Ok(r) if r.is_finite() && r > 0.0 && r <= max => Ok(r),
        _ => Err(format!("'{text}' is not a sample rate (a number above 0, at most {max})")),
    }
}

/// `--shared-poses`.
#[derive(Clone, Copy, PartialEq, Eq, Debug, clap::ValueEnum)]
pub enum SharedPoses {
    Auto,
    Always,
    Never,
}

impl From<SharedPoses> for ossa_encoder::database::poses::PosePolicy {
    fn from(p: SharedPoses) -> Self {
        use ossa_encoder::database::poses::PosePolicy;
        match p {
            SharedPoses::Auto => PosePolicy::Auto,
            SharedPoses::Always => PosePolicy::Always,
            SharedPoses::Never => PosePolicy::Never,
        }
    }
}

/// `--tiers medium=M,low=L`: either order, either one alone (the other keeps its
/// default of 0.25).
fn tiers(text: &str) -> Result<(f64, f64), String> {
    let (mut medium, mut low) = (0.25, 0.25);
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (name, value) = part.split_once('=').ok_or_else(|| format!("'{part}' is not medium=SHARE or low=SHARE"))?;
        let value = fraction(value)?;
        match name.trim() {
            "medium" => medium = value,
            "low" => low = value,
            other => return Err(format!("unknown tier '{other}': the tiers are medium and low")),
        }
    }
    if medium + low > 1.0 {
        return Err(format!("the shares add up to {}, more than 1", medium + low));
    }
    Ok((medium, low))
}

/// `--chunk-size`: a power of two from 256 B to 1 GiB, as its exponent.
fn chunk_size(text: &str) -> Result<u8, String> {
    use ossa_decoder::format::database::{MAX_CHUNK_SHIFT, MIN_CHUNK_SHIFT};
    let size = text
        .trim()
        .parse::<bytesize::ByteSize>()
        .map_err(|_| format!("'{text}' is not a size such as 1MiB, 256KiB or 4096"))?
        .as_u64();
    if !size.is_power_of_two() {
        return Err(format!("{size} bytes is not a power of two (1MiB is, 1MB is not)"));
    }
    let shift = size.trailing_zeros() as u8;
    if !(MIN_CHUNK_SHIFT..=MAX_CHUNK_SHIFT).contains(&shift) {
        return Err(format!("{size} bytes is outside 256 B to 1 GiB"));
    }
    Ok(shift)
}

/// `--loop`.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Loop {
    Auto,
    Clamp,
    Wrap,
}

impl From<Loop> for ossa_encoder::LoopSetting {
    fn from(l: Loop) -> Self {
        match l {
            Loop::Auto => ossa_encoder::LoopSetting::Auto,
            Loop::Clamp => ossa_encoder::LoopSetting::Clamp,
            Loop::Wrap => ossa_encoder::LoopSetting::Wrap,
        }
    }
}

/// A precision: a positive number that single precision can hold.
fn fraction(text: &str) -> Result<f64, String> {
    let value: f64 = text.trim().parse().map_err(|_| format!("'{text}' is not a number"))?;
    if (0.0..=1.0).contains(&value) {
        Ok(value)
    } else {
        Err(format!("{text} is not a fraction from 0 to 1"))
    }
}

fn precision(text: &str) -> Result<f64, String> {
    let value: f64 = text.trim().parse().map_err(|_| format!("'{text}' is not a number"))?;
    match ossa_encoder::compress::precision_problem(value) {
        Some(problem) => Err(problem),
        None => Ok(value),
    }
}
