//! The report's plots, each an SVG element drawn with `plotters` (text as SVG text, so
//! no font files are needed).

use plotters::prelude::*;

use super::{escape, ClipTrace};

/// Plot size in pixels.
const SIZE: (u32, u32) = (560, 360);

/// Colours of the worst bones' lines and of the byte parts.
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// Draws with `draw` into an SVG string wrapped in a figure with `caption`; a
/// drawing error becomes a line of text in its place.
fn figure(
    caption: &str,
    draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, plotters::coord::Shift>) -> Result<(), String>,
) -> String {
    let mut svg = String::new();
    let result = {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        let drawn = root.fill(&WHITE).map_err(|e| e.to_string()).and_then(|()| draw(&root));
        drawn.and_then(|()| root.present().map_err(|e| e.to_string()))
    };
    match result {
        Ok(()) => format!("<figure>{svg}<figcaption>{}</figcaption></figure>", escape(caption)),
        Err(e) => format!("<figure><p>({} could not be drawn: {})</p></figure>", escape(caption), escape(&e)),
    }
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// Compression ratio against max error, one point per clip, the precision marked.
pub fn ratio_against_error(clips: &[ClipTrace]) -> String {
    figure("compression ratio against max error, per clip", |root| {
        let precision = clips.iter().map(|c| c.precision).fold(0.0, f64::max);
        let x_max = clips.iter().map(ClipTrace::max_error).fold(precision, f64::max) * 1.1;
        let y_max = clips.iter().map(ClipTrace::ratio).fold(1.0, f64::max) * 1.1;
        let mut chart = ChartBuilder::on(root)
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d(0.0..x_max.max(1e-12), 0.0..y_max)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("max error")
            .y_desc("ratio (raw : compressed)")
            .x_label_formatter(&|v| format!("{v:.4}"))
            .draw()
            .map_err(err)?;
        chart
            .draw_series(LineSeries::new([(precision, 0.0), (precision, y_max)], RED.stroke_width(1)))
            .map_err(err)?
            .label("precision")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], RED));
        chart
            .draw_series(clips.iter().map(|c| Circle::new((c.max_error(), c.ratio()), 4, PALETTE[0].filled())))
            .map_err(err)?
            .label("clip")
            .legend(|(x, y)| Circle::new((x + 8, y), 4, PALETTE[0].filled()));
        chart.configure_series_labels().background_style(WHITE.mix(0.8)).border_style(BLACK).draw().map_err(err)?;
        Ok(())
    })
}

/// How the error of every bone at every sample of every clip distributes, in twentieths
/// of the precision.
pub fn error_distribution(clips: &[ClipTrace]) -> String {
    figure("error of every bone at every sample, in share of the precision", |root| {
        const BINS: usize = 20;
        let mut counts = [0u64; BINS + 1];
        for c in clips {
            for &e in &c.errors {
                let share = f64::from(e) / c.precision.max(f64::MIN_POSITIVE);
                counts[((share * BINS as f64) as usize).min(BINS)] += 1;
            }
        }
        let total: u64 = counts.iter().sum::<u64>().max(1);
        let shares: Vec<f64> = counts.iter().map(|&n| n as f64 / total as f64 * 100.0).collect();
        let y_max = shares.iter().copied().fold(1.0, f64::max) * 1.1;
        let mut chart = ChartBuilder::on(root)
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d(0.0..1.05f64, 0.0..y_max)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("error / precision (the last bar: at or above it)")
            .y_desc("% of bone-samples")
            .draw()
            .map_err(err)?;
        chart
            .draw_series(shares.iter().enumerate().map(|(i, &p)| {
                let x0 = i as f64 / BINS as f64;
                let x1 = (x0 + 1.0 / BINS as f64 * 0.9).min(1.05);
                let colour = if i == BINS { RED } else { PALETTE[0] };
                Rectangle::new([(x0, 0.0), (x1, p)], colour.filled())
            }))
            .map_err(err)?;
        Ok(())
    })
}

/// The chosen clip's error over time for its five worst bones.
pub fn error_over_time(clip: &ClipTrace) -> String {
    figure(&format!("{}: error over time of the worst bones", clip.name), |root| {
        let bones = clip.bones.len().max(1);
        let duration = (clip.samples.saturating_sub(1)) as f64 / clip.sample_rate.max(f64::MIN_POSITIVE);
        let y_max = clip.max_error().max(clip.precision) * 1.1;
        let mut chart = ChartBuilder::on(root)
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..duration.max(1e-6), 0.0..y_max.max(1e-12))
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("time (s)")
            .y_desc("error")
            .y_label_formatter(&|v| format!("{v:.4}"))
            .draw()
            .map_err(err)?;
        chart
            .draw_series(LineSeries::new([(0.0, clip.precision), (duration, clip.precision)], RED.stroke_width(1)))
            .map_err(err)?
            .label("precision")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], RED));
        for (i, &b) in clip.worst_bones(5).iter().enumerate() {
            let colour = PALETTE[(i + 1) % PALETTE.len()];
            let points = (0..clip.samples).map(|s| {
                (s as f64 / clip.sample_rate, f64::from(clip.errors.get(s * bones + b).copied().unwrap_or(0.0)))
            });
            chart
                .draw_series(LineSeries::new(points, colour.stroke_width(2)))
                .map_err(err)?
                .label(clip.bones[b].0.clone())
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], colour.stroke_width(2)));
        }
        chart.configure_series_labels().background_style(WHITE.mix(0.8)).border_style(BLACK).draw().map_err(err)?;
        Ok(())
    })
}

/// Where the compressed bytes go, over all clips: a bar per part.
pub fn bytes(clips: &[ClipTrace]) -> String {
    figure("where the bytes go, all clips", |root| {
        let mut parts: Vec<(&'static str, u64)> = Vec::new();
        for c in clips {
            for (name, n) in c.layout.parts() {
                if name == "metadata" {
                    continue;
                }
                match parts.iter_mut().find(|p| p.0 == name) {
                    Some(p) => p.1 += u64::from(n),
                    None => parts.push((name, u64::from(n))),
                }
            }
        }
        let total = parts.iter().map(|p| p.1).sum::<u64>().max(1);
        let x_max = parts.iter().map(|p| p.1).max().unwrap_or(1) as f64 * 1.9;
        let mut chart = ChartBuilder::on(root)
            .margin(12)
            // Room for the last tick's label, centred on the plot's right edge.
            .margin_right(32)
            .x_label_area_size(40)
            .y_label_area_size(10)
            .build_cartesian_2d(0.0..x_max, 0.0..parts.len() as f64)
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .x_labels(6)
            .x_label_formatter(&|v| format!("{v:.0}"))
            .x_desc("bytes")
            .draw()
            .map_err(err)?;
        chart
            .draw_series(parts.iter().enumerate().map(|(i, p)| {
                Rectangle::new(
                    [(0.0, i as f64 + 0.15), (p.1 as f64, i as f64 + 0.85)],
                    PALETTE[i % PALETTE.len()].filled(),
                )
            }))
            .map_err(err)?;
        chart
            .draw_series(parts.iter().enumerate().map(|(i, p)| {
                Text::new(
                    format!("{} {} B ({:.1} %)", p.0.replace('_', " "), p.1, p.1 as f64 / total as f64 * 100.0),
                    (p.1 as f64 + x_max * 0.01, i as f64 + 0.7),
                    ("sans-serif", 13),
                )
            }))
            .map_err(err)?;
        Ok(())
    })
}
