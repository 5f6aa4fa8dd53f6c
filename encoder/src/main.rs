//! `ossa`: the command-line tool for asset pipelines.
//!
//! Every command exits 0 on success and 2 with a one-line message naming the file
//! and the problem on any error. Outputs are written to a temporary file beside the
//! destination and renamed into place, so they are whole or absent.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, Subcommand};
use ossa_decoder::Clip;
use ossa_encoder::{acl_text, compress, decompress::decompress, AlignedBytes, RawClip, Settings};
use serde_json::json;

#[derive(Parser)]
#[command(name = "ossa", version, about = "Compress skeletal animation clips with a hard accuracy bound")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Compress an ACL text clip (.acl.sjson) into an .ossa file.
    Compress {
        /// The clip to compress.
        input: PathBuf,
        /// Where to write the .ossa file.
        #[arg(short, long)]
        output: PathBuf,
        /// Largest object-space error allowed on any virtual vertex, in the clip's units.
        #[arg(long, default_value_t = 0.01)]
        precision: f64,
        /// Leave out the metadata section (names, parents, bind pose): only what a
        /// game needs to sample poses.
        #[arg(long)]
        strip_metadata: bool,
        /// Print one JSON object instead of a summary line.
        #[arg(long)]
        json: bool,
    },
    /// Decode an .ossa file into an ACL text clip, one pose per original sample.
    Decompress {
        /// The .ossa file.
        input: PathBuf,
        /// Where to write the .acl.sjson clip.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Validate an .ossa file (including its checksum) and describe it.
    Info {
        /// The .ossa file.
        input: PathBuf,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Compress clips in memory and report sizes, errors and times.
    Stats {
        /// The clips (.acl.sjson).
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// Largest object-space error allowed, in the clips' units.
        #[arg(long, default_value_t = 0.01)]
        precision: f64,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
}

/// An error for the user: the file it concerns and what is wrong.
struct Failure {
    path: Option<PathBuf>,
    message: String,
}

impl Failure {
    fn at(path: &Path, message: impl std::fmt::Display) -> Failure {
        Failure { path: Some(path.to_owned()), message: message.to_string() }
    }
}

fn main() -> ExitCode {
    // A panic is a bug; still, the user gets one line, not a backtrace.
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        eprintln!("ossa: internal error (please report): {msg}");
    }));
    let cli = Cli::parse();
    match std::panic::catch_unwind(|| run(cli)) {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(f)) => {
            match f.path {
                Some(p) => eprintln!("ossa: error: {}: {}", p.display(), f.message),
                None => eprintln!("ossa: error: {}", f.message),
            }
            ExitCode::from(2)
        }
        Err(_) => ExitCode::from(2),
    }
}

fn run(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        Command::Compress { input, output, precision, strip_metadata, json } => {
            cmd_compress(&input, &output, precision, strip_metadata, json)
        }
        Command::Decompress { input, output } => cmd_decompress(&input, &output),
        Command::Info { input, json } => cmd_info(&input, json),
        Command::Stats { inputs, precision, json } => cmd_stats(&inputs, precision, json),
    }
}

fn read_bytes(path: &Path) -> Result<Vec<u8>, Failure> {
    if path.is_dir() {
        return Err(Failure::at(path, "is a directory, not a file"));
    }
    std::fs::read(path).map_err(|e| Failure::at(path, format!("cannot read: {e}")))
}

fn clip_name(path: &Path) -> String {
    let file = path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
    file.strip_suffix(".acl.sjson").or_else(|| file.strip_suffix(".sjson")).unwrap_or(&file).to_owned()
}

fn read_clip(path: &Path) -> Result<RawClip, Failure> {
    let bytes = read_bytes(path)?;
    let text = String::from_utf8(bytes).map_err(|e| {
        Failure::at(path, format!("not UTF-8 text (invalid byte at offset {})", e.utf8_error().valid_up_to()))
    })?;
    if text.trim().is_empty() {
        return Err(Failure::at(path, "the file is empty"));
    }
    acl_text::read_clip(&text, &clip_name(path)).map_err(|e| Failure::at(path, e))
}

/// Writes `bytes` to `path` whole or not at all: a temporary file in the same
/// folder, flushed, then renamed over the destination.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
        _ => PathBuf::from("."),
    };
    if path.is_dir() {
        return Err(Failure::at(path, "output is a directory"));
    }
    let mut tmp = tempfile::Builder::new()
        .prefix(".ossa-")
        .suffix(".tmp")
        .tempfile_in(&dir)
        .map_err(|e| Failure::at(path, format!("cannot create output in {}: {e}", dir.display())))?;
    tmp.write_all(bytes)
        .and_then(|_| tmp.as_file().sync_all())
        .map_err(|e| Failure::at(path, format!("cannot write output: {e}")))?;
    tmp.persist(path).map_err(|e| Failure::at(path, format!("cannot write output: {}", e.error)))?;
    Ok(())
}

fn cmd_compress(input: &Path, output: &Path, precision: f64, strip: bool, json: bool) -> Result<(), Failure> {
    let clip = read_clip(input)?;
    let settings = Settings { precision, include_metadata: !strip };
    let started = Instant::now();
    let result = compress(&clip, &settings).map_err(|e| Failure::at(input, e))?;
    let seconds = started.elapsed().as_secs_f64();
    write_atomically(output, &result.bytes)?;
    let raw = clip.raw_bytes();
    let ratio = raw as f64 / result.compressed_bytes as f64;
    if json {
        let v = json!({
            "input": input.display().to_string(),
            "output": output.display().to_string(),
            "raw_bytes": raw,
            "compressed_bytes": result.compressed_bytes,
            "file_bytes": result.bytes.len(),
            "ratio": ratio,
            "max_error": result.errors.max_error,
            "precision": precision,
            "seconds": seconds,
        });
        println!("{v}");
    } else {
        println!(
            "{} -> {}: raw {} B, compressed {} B (ratio {:.2}:1), file {} B, max error {:.6} (precision {}), {:.3} s",
            input.display(),
            output.display(),
            raw,
            result.compressed_bytes,
            ratio,
            result.bytes.len(),
            result.errors.max_error,
            precision,
            seconds
        );
    }
    Ok(())
}

fn load_ossa(path: &Path) -> Result<AlignedBytes, Failure> {
    let bytes = read_bytes(path)?;
    if bytes.is_empty() {
        return Err(Failure::at(path, "the file is empty"));
    }
    Ok(AlignedBytes::new(&bytes))
}

fn cmd_decompress(input: &Path, output: &Path) -> Result<(), Failure> {
    let bytes = load_ossa(input)?;
    let clip = Clip::from_bytes_verified(&bytes).map_err(|e| Failure::at(input, e))?;
    let name = input.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let raw = decompress(&clip, &name).map_err(|e| Failure::at(input, e))?;
    write_atomically(output, acl_text::write_clip(&raw).as_bytes())
}

fn cmd_info(input: &Path, json: bool) -> Result<(), Failure> {
    let bytes = load_ossa(input)?;
    let clip = Clip::from_bytes_verified(&bytes).map_err(|e| Failure::at(input, e))?;
    let layout = clip.layout();
    let (major, minor) = clip.version();
    let flags: Vec<&str> = if clip.metadata().is_some() { vec!["metadata"] } else { vec![] };
    let compressed = layout.total - layout.metadata;
    if json {
        let v = json!({
            "file": input.display().to_string(),
            "version": format!("{major}.{minor}"),
            "bones": clip.bone_count(),
            "samples": clip.sample_count(),
            "sample_rate": clip.sample_rate(),
            "duration": clip.duration(),
            "segments": clip.segment_count(),
            "animated_sub_tracks": clip.animated_sub_tracks(),
            "flags": flags,
            "checksum": format!("{:08x}", clip.checksum()),
            "bytes": {
                "header": layout.header,
                "clip_metadata": layout.clip_metadata,
                "segment_metadata": layout.segment_metadata,
                "samples": layout.samples,
                "metadata": layout.metadata,
                "compressed": compressed,
                "total": layout.total,
            },
            "name": clip.metadata().map(|m| m.clip_name().to_owned()),
            "precision": clip.metadata().map(|m| m.precision()),
        });
        println!("{v}");
    } else {
        println!("{}: ossa format {major}.{minor}, checksum {:08x} ok", input.display(), clip.checksum());
        if let Some(m) = clip.metadata() {
            println!("  clip        {:?}, encoded with precision {}", m.clip_name(), m.precision());
        }
        println!(
            "  bones {}, samples {} at {} Hz ({:.3} s), segments {}, animated sub-tracks {}",
            clip.bone_count(),
            clip.sample_count(),
            clip.sample_rate(),
            clip.duration(),
            clip.segment_count(),
            clip.animated_sub_tracks()
        );
        println!("  flags       {}", if flags.is_empty() { "none".to_string() } else { flags.join(", ") });
        println!("  header            {:>8} B", layout.header);
        println!("  clip metadata     {:>8} B", layout.clip_metadata);
        println!("  segment metadata  {:>8} B", layout.segment_metadata);
        println!("  samples           {:>8} B", layout.samples);
        println!("  metadata section  {:>8} B (tools only)", layout.metadata);
        println!("  compressed        {:>8} B (what a game ships)", compressed);
        println!("  total             {:>8} B", layout.total);
    }
    Ok(())
}

fn cmd_stats(inputs: &[PathBuf], precision: f64, json: bool) -> Result<(), Failure> {
    let settings = Settings { precision, include_metadata: false };
    let mut rows = Vec::new();
    let (mut total_raw, mut total_compressed, mut total_seconds, mut worst) = (0u64, 0u64, 0.0f64, 0.0f64);
    let (mut pairs, mut pairs_within) = (0f64, 0f64);
    for input in inputs {
        let clip = read_clip(input)?;
        let started = Instant::now();
        let result = compress(&clip, &settings).map_err(|e| Failure::at(input, e))?;
        let seconds = started.elapsed().as_secs_f64();
        let raw = clip.raw_bytes();
        let e = &result.errors;
        total_raw += raw;
        total_compressed += result.compressed_bytes as u64;
        total_seconds += seconds;
        worst = worst.max(e.max_error);
        let n = (clip.bones.len() * clip.sample_count) as f64;
        pairs += n;
        pairs_within += n * e.within_precision;
        rows.push(json!({
            "clip": input.display().to_string(),
            "raw_bytes": raw,
            "compressed_bytes": result.compressed_bytes,
            "ratio": raw as f64 / result.compressed_bytes as f64,
            "max_error": e.max_error,
            "p99_error": e.p99_error,
            "within_precision": e.within_precision,
            "seconds": seconds,
        }));
        if !json {
            println!(
                "{:<40} raw {:>8} B  compressed {:>7} B  ratio {:>6.2}  max {:.5}  p99 {:.5}  within {:>6.2}%  {:.3} s",
                input.display(),
                raw,
                result.compressed_bytes,
                raw as f64 / result.compressed_bytes as f64,
                e.max_error,
                e.p99_error,
                e.within_precision * 100.0,
                seconds
            );
        }
    }
    let within = if pairs > 0.0 { pairs_within / pairs } else { 1.0 };
    let ratio = total_raw as f64 / total_compressed.max(1) as f64;
    if json {
        let v = json!({
            "precision": precision,
            "clips": rows,
            "total": {
                "raw_bytes": total_raw,
                "compressed_bytes": total_compressed,
                "ratio": ratio,
                "max_error": worst,
                "within_precision": within,
                "seconds": total_seconds,
            }
        });
        println!("{v}");
    } else {
        println!(
            "{:<40} raw {:>8} B  compressed {:>7} B  ratio {:>6.2}  max {:.5}  within {:>6.2}%  {:.3} s",
            format!("total ({} clips)", inputs.len()),
            total_raw,
            total_compressed,
            ratio,
            worst,
            within * 100.0,
            total_seconds
        );
    }
    Ok(())
}
