//! The generalisation check: ossa against ACL on clips neither was developed on.
//!
//! Every transform clip of `../shared/clips/` gives the variants of
//! [`ossa_tests::variants::STANDARD`] (resampled, time-stretched, mirrored, noisy).
//! Each variant is compressed by ossa's encoder (in this process, its bound checked
//! by ossa's own measurement) and by ACL (`../shared/tools/acl-reference.sh compress`,
//! on the variant written as ACL text with `error_threshold` set to the same
//! precision). Prints a line for the clips as they are, one per variant kind, and the
//! variants' total.
//!
//! usage: cargo run --release -p ossa-tests --bin generalisation -- [PRECISION…] [--clips DIR] [--per-clip]

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use ossa_encoder::formats::acl_text;
use ossa_encoder::{compress, RawClip, Settings};
use ossa_tests::variants::{Variant, STANDARD};
use rayon::prelude::*;

/// The row of the clips as they are.
const SHARED: &str = "shared";

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
    acl_error: f64,
}

fn run(options: &Options, acl: &Path) -> Result<(), String> {
    let clips = transform_clips(&options.clips)?;
    let work = tempfile::tempdir().map_err(|e| format!("cannot make a temporary folder: {e}"))?;
    for &precision in &options.precisions {
        // The clips as they are (`shared`, apart from the variants' total), then each
        // variant of each.
        let kinds = std::iter::once((SHARED, None)).chain(STANDARD.iter().map(|&(name, v)| (name, Some(v))));
        let kinds: Vec<(&'static str, Option<Variant>)> = kinds.collect();
        let jobs: Vec<(&RawClip, &'static str, Option<Variant>)> =
            clips.iter().flat_map(|source| kinds.iter().map(move |&(name, v)| (source, name, v))).collect();
        let rows: Vec<Row> = jobs
            .par_iter()
            .map(|&(source, variant_name, variant)| {
                let clip = variant.map_or_else(|| source.clone(), |v| v.apply(source));
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
                let (acl, acl_error) = acl_result(acl, &file)?;
                Ok(Row {
                    clip: source.name.clone(),
                    variant: variant_name,
                    ossa: out.compressed_bytes,
                    acl,
                    error,
                    acl_error,
                })
            })
            .collect::<Result<_, String>>()?;
        report(precision, &rows, options.per_clip);
    }
    Ok(())
}

fn report(precision: f64, rows: &[Row], per_clip: bool) {
    let clips = rows.iter().filter(|r| r.variant == SHARED).count();
    println!("precision {precision}: {clips} clips, and {} variants of each", STANDARD.len());
    if per_clip {
        for r in rows {
            println!(
                "  {:<32} {:<7} ossa {:>7} B  ACL {:>7} B  {:.3} ×  max error ossa {:.5}, ACL {:.5}",
                r.clip,
                r.variant,
                r.ossa,
                r.acl,
                r.ossa as f64 / r.acl as f64,
                r.error,
                r.acl_error
            );
        }
    }
    let (mut ossa, mut acl) = (0usize, 0usize);
    for name in std::iter::once(SHARED).chain(STANDARD.iter().map(|&(name, _)| name)) {
        let of: Vec<&Row> = rows.iter().filter(|r| r.variant == name).collect();
        let (o, a) = (of.iter().map(|r| r.ossa).sum::<usize>(), of.iter().map(|r| r.acl).sum::<usize>());
        let worst = of.iter().map(|r| r.ossa as f64 / r.acl as f64).fold(0.0, f64::max);
        let max_error = of.iter().map(|r| r.error).fold(0.0, f64::max);
        let acl_above = of.iter().filter(|r| r.acl_error > precision).count();
        println!(
            "  {name:<7} ossa {o:>8} B  ACL {a:>8} B  {:.3} ×  (worst clip {worst:.3} ×; max error ossa {max_error:.5}, \
             ACL above {precision} on {acl_above} of {})",
            o as f64 / a as f64,
            of.len()
        );
        if name != SHARED {
            ossa += o;
            acl += a;
        }
    }
    println!("  variants ossa {ossa:>7} B  ACL {acl:>8} B  {:.3} ×", ossa as f64 / acl as f64);
}

/// The transform clips of `dir` ([`ossa_tests::transform_clips`]), read. A clip that
/// does not read is an error; one without bones, or an additive one (its variants
/// would not be what they say), is left out with a line on standard error.
fn transform_clips(dir: &Path) -> Result<Vec<RawClip>, String> {
    let paths = ossa_tests::transform_clips(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut clips = Vec::new();
    for path in paths {
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let name = path.file_name().map(|n| n.to_string_lossy().replace(".acl.sjson", "")).unwrap_or_default();
        let clip = acl_text::read_clip(&text, &name).map_err(|e| format!("{}: {e}", path.display()))?;
        if clip.bones.is_empty() || clip.additive.is_some() {
            eprintln!("{}: left out (no bones, or additive)", path.display());
        } else {
            clips.push(clip);
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

/// ACL's compressed size of `file` and its largest error (its reference script's
/// `compress`).
fn acl_result(script: &Path, file: &Path) -> Result<(usize, f64), String> {
    let out = Command::new("bash")
        .arg(script)
        .arg("compress")
        .arg(file)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    // "NAME: N bytes, max error E, T ms"
    let bytes = text.split(": ").nth(1).and_then(|rest| rest.split(' ').next()).and_then(|n| n.parse().ok());
    let error = text.split("max error ").nth(1).and_then(|rest| rest.split(',').next()).and_then(|e| e.parse().ok());
    bytes.zip(error).ok_or_else(|| {
        format!("{}: ACL said '{}' {}", file.display(), text.trim(), String::from_utf8_lossy(&out.stderr).trim())
    })
}
