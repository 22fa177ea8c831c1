//! `xr-bench plot-build`: draws the build benchmark's scale series
//! (scripts/bench-build.sh writes it as CSV) as a PNG: cold build time
//! against matrix size, one line per tool.

use anyhow::{Context, bail};
use plotters::prelude::*;
use std::{collections::BTreeMap, path::PathBuf};

/// Arguments of `xr-bench plot-build`.
#[derive(clap::Args)]
pub struct Args {
    /// The CSV scripts/bench-build.sh wrote (matrix,artifacts,tool,scenario,seconds,peak_kb).
    #[arg(long)]
    csv: PathBuf,
    /// The PNG to write.
    #[arg(long)]
    out: PathBuf,
    /// A TrueType font for the labels (Debian's fonts-dejavu-core).
    #[arg(long, default_value = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")]
    font: PathBuf,
}

/// Draws the cold builds of every tool measured at more than one size.
pub fn run(args: Args) -> anyhow::Result<()> {
    let font = std::fs::read(&args.font).with_context(|| format!("reading the font {}", args.font.display()))?;
    plotters::style::register_font("sans-serif", FontStyle::Normal, Box::leak(font.into_boxed_slice()))
        .map_err(|_| anyhow::anyhow!("{} is not a TrueType font", args.font.display()))?;
    let text = std::fs::read_to_string(&args.csv).with_context(|| format!("reading {}", args.csv.display()))?;
    let mut series: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for (number, line) in text.lines().enumerate().skip(1) {
        let fields: Vec<&str> = line.split(',').collect();
        let [_, artifacts, tool, scenario, seconds, _] = fields[..] else {
            bail!("{}:{}: expected 6 fields, found {}", args.csv.display(), number + 1, fields.len());
        };
        if scenario != "cold" {
            continue;
        }
        let parse = |what: &str, value: &str| {
            value.parse::<f64>().with_context(|| format!("{}:{}: {what} '{value}'", args.csv.display(), number + 1))
        };
        series.entry(tool.to_owned()).or_default().push((parse("artifacts", artifacts)?, parse("seconds", seconds)?));
    }
    // Tools measured at one size only (the in-process rounds) are no line.
    series.retain(|_, points| points.iter().any(|p| p.0 != points[0].0));
    if series.is_empty() {
        bail!("{}: no tool was measured cold at more than one matrix size", args.csv.display());
    }
    let x_max = series.values().flatten().map(|p| p.0).fold(0.0, f64::max) * 1.05;
    let y_max = series.values().flatten().map(|p| p.1).fold(0.0, f64::max) * 1.15;

    // The plot is drawn where the benchmark ran (scripts/bench-build.sh).
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let root = BitMapBackend::new(&args.out, (900, 560)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(format!("Cold build time against matrix size ({cores} cores)"), ("sans-serif", 24))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(64)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max)?;
    chart
        .configure_mesh()
        .x_desc("artifacts (program variants x targets)")
        .y_desc("wall seconds")
        .label_style(("sans-serif", 15))
        .draw()?;
    let colors = [RGBColor(200, 60, 40), RGBColor(40, 90, 200), RGBColor(40, 150, 60), RGBColor(120, 120, 120)];
    for ((tool, points), color) in series.iter_mut().zip(colors.iter().cycle()) {
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        let label = match tool.as_str() {
            "xr" => "xr build -j 2 (validation included)".to_owned(),
            "glslc-batched" => "glslc, 2 processes per target, many files each (no validation)".to_owned(),
            "glslang-floor" => "the glslang floor: the same over the distinct stage variants only".to_owned(),
            other => other.to_owned(),
        };
        let style = color.stroke_width(3);
        chart
            .draw_series(LineSeries::new(points.iter().copied(), style))?
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
        chart.draw_series(points.iter().map(|&p| Circle::new(p, 4, color.filled())))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .label_font(("sans-serif", 15))
        .draw()?;
    root.present().with_context(|| format!("writing {}", args.out.display()))?;
    println!("wrote {}", args.out.display());
    Ok(())
}
