//! The generalisation check: ossa against ACL on clips neither was developed on.
//!
//! Every transform clip of `../shared/clips/` gives the variants of
//! [`ossa_tests::variants::STANDARD`] (resampled, time-stretched, mirrored, noisy).
//! Each variant is compressed by ossa's encoder (in this process, its bound checked
//! by ossa's own measurement) and by ACL (`../shared/tools/acl-reference.sh compress`,
//! on the variant written as ACL text with `error_threshold` set to the same
//! precision). Prints one line per variant kind and the total.
//!
//! usage: cargo run --release -p ossa-tests --bin generalisation -- [PRECISION…] [--clips DIR] [--per-clip]

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use ossa_encoder::formats::acl_text;
use ossa_encoder::{compress, RawClip, Settings};
use ossa_tests::variants::STANDARD;
use rayon::prelude::*;

struct Options {
    precisions: Vec<f64>,
    clips: PathBuf,
    per_clip: bool,
}

fn main() -> ExitCode {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap_or(Path::new(".")).to_owned();
    let options = match parse(std::env::args().skip(1), &root) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("generalisation: {e}\nusage: generalisation [PRECISION…] [--clips DIR] [--per-clip]");
            return ExitCode::from(2);
        }
    };
    let acl = root.join("../shared/tools/acl-reference.sh");
    if !acl.is_file() {
        eprintln!("generalisation: ACL's reference script is not at {} (../shared/ is missing)", acl.display());
        return ExitCode::FAILURE;
    }
    match run(&options, &acl) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("generalisation: {e}");
            ExitCode::FAILURE
        }
    }
}

fn parse(args: impl Iterator<Item = String>, root: &Path) -> Result<Options, String> {
    let mut options = Options { precisions: Vec::new(), clips: root.join("../shared/clips"), per_clip: false };
    let mut args = args.peekable();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--clips" => options.clips = args.next().ok_or("--clips needs a folder")?.into(),
            "--per-clip" => options.per_clip = true,
            _ => match arg.parse::<f64>() {
                Ok(p) if p.is_finite() && p > 0.0 => options.precisions.push(p),
                _ => return Err(format!("'{arg}' is neither an option nor a positive precision")),
            },
        }
    }
    if options.precisions.is_empty() {
        options.precisions.push(0.01);
    }
    Ok(options)
}

/// One variant of one clip at one precision: ossa's and ACL's compressed bytes.
struct Row {
    clip: String,
    variant: &'static str,
    ossa: usize,
    acl: usize,
    error: f64,
}

fn run(options: &Options, acl: &Path) -> Result<(), String> {
    let clips = transform_clips(&options.clips)?;
    let work = tempfile::tempdir().map_err(|e| format!("cannot make a temporary folder: {e}"))?;
    for &precision in &options.precisions {
        let jobs: Vec<(&PathBuf, &'static str, ossa_tests::variants::Variant)> =
            clips.iter().flat_map(|(path, _)| STANDARD.iter().map(move |&(name, v)| (path, name, v))).collect();
        let rows: Vec<Row> = jobs
            .par_iter()
            .map(|&(path, variant_name, variant)| {
                let source = &clips.iter().find(|(p, _)| p == path).expect("listed").1;
                let clip = variant.apply(source);
                let stem = format!("{}_{variant_name}", source.name);
                let settings = Settings { precision, ..Settings::default() };
                let out = compress(&clip, &settings).map_err(|e| format!("{stem}: ossa: {e}"))?;
                let error = out.errors.max_error;
                if error > precision {
                    return Err(format!("{stem}: ossa's error {error} is above the precision {precision}"));
                }
                let file = work.path().join(format!("{stem}.acl.sjson"));
                std::fs::write(&file, with_threshold(&acl_text::write_clip(&clip), precision))
                    .map_err(|e| format!("{}: {e}", file.display()))?;
                let acl = acl_bytes(acl, &file)?;
                Ok(Row { clip: source.name.clone(), variant: variant_name, ossa: out.compressed_bytes, acl, error })
            })
            .collect::<Result<_, String>>()?;
        report(precision, &rows, options.per_clip);
    }
    Ok(())
}

fn report(precision: f64, rows: &[Row], per_clip: bool) {
    println!("precision {precision}: {} clips × {} variants", rows.len() / STANDARD.len(), STANDARD.len());
    if per_clip {
        for r in rows {
            println!(
                "  {:<32} {:<7} ossa {:>7} B  ACL {:>7} B  {:.3} ×  max error {:.5}",
                r.clip,
                r.variant,
                r.ossa,
                r.acl,
                r.ossa as f64 / r.acl as f64,
                r.error
            );
        }
    }
    let (mut ossa, mut acl) = (0usize, 0usize);
    for &(name, _) in STANDARD {
        let of: Vec<&Row> = rows.iter().filter(|r| r.variant == name).collect();
        let (o, a) = (of.iter().map(|r| r.ossa).sum::<usize>(), of.iter().map(|r| r.acl).sum::<usize>());
        let worst = of.iter().map(|r| r.ossa as f64 / r.acl as f64).fold(0.0, f64::max);
        let max_error = of.iter().map(|r| r.error).fold(0.0, f64::max);
        println!(
            "  {name:<7} ossa {o:>8} B  ACL {a:>8} B  {:.3} ×  (worst clip {worst:.3} ×, max error {max_error:.5})",
            o as f64 / a as f64
        );
        ossa += o;
        acl += a;
    }
    println!("  total   ossa {ossa:>8} B  ACL {acl:>8} B  {:.3} ×", ossa as f64 / acl as f64);
}

/// The clips of `dir` that are transform clips (ACL text with bones), by name.
fn transform_clips(dir: &Path) -> Result<Vec<(PathBuf, RawClip)>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".acl.sjson"))
        .collect();
    paths.sort();
    let mut clips = Vec::new();
    for path in paths {
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let name = path.file_name().map(|n| n.to_string_lossy().replace(".acl.sjson", "")).unwrap_or_default();
        // Scalar track lists, and the format's reference file (a test of the reader),
        // are not transform clips.
        match acl_text::read_clip(&text, &name) {
            Ok(clip) if !clip.bones.is_empty() && !name.starts_with("no_output") && clip.additive.is_none() => {
                clips.push((path, clip))
            }
            _ => {}
        }
    }
    if clips.is_empty() {
        return Err(format!("no transform clips in {}", dir.display()));
    }
    Ok(clips)
}

/// ACL text with a `settings` block giving ACL the error threshold (ACL ignores the
/// `error_threshold` of a version-1 `clip` block).
fn with_threshold(text: &str, precision: f64) -> String {
    match text.find("\nbones") {
        Some(at) => format!("{}\nsettings = {{ error_threshold = {precision} }}\n{}", &text[..at], &text[at..]),
        None => text.to_owned(),
    }
}

/// ACL's compressed size of `file` (its reference script's `compress`).
fn acl_bytes(script: &Path, file: &Path) -> Result<usize, String> {
    let out = Command::new("bash")
        .arg(script)
        .arg("compress")
        .arg(file)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    // "NAME: N bytes, max error E, T ms"
    text.split(": ").nth(1).and_then(|rest| rest.split(' ').next()).and_then(|n| n.parse().ok()).ok_or_else(|| {
        format!("{}: ACL said '{}' {}", file.display(), text.trim(), String::from_utf8_lossy(&out.stderr).trim())
    })
}
