//! micrograd's `demo.ipynb`, trained with `#[grad]`: a 2-16-16-1 ReLU network (337
//! parameters) learns to separate the two moons with full-batch gradient descent.
//!
//! `cargo run --release --example moons`
//!
//! It prints the loss and accuracy as it trains, then trains the same model again with the
//! `Value` engine (micrograd's way) and compares the time per step, with a hand-written
//! backpropagation as the reference, and finally draws the decision boundary (in the
//! terminal, and as an SVG file).

#[path = "moons_model/mod.rs"]
mod model;

use model::{
    accuracy, init, loss, loss_backprop, loss_backprop_dense, loss_grad, loss_value, moons, score,
    PARAMS,
};
use std::time::{Duration, Instant};

const STEPS: usize = 100;
const DATA_SEED: u64 = 1337;
const INIT_SEED: u64 = 7;

/// One full-batch gradient-descent run with the given gradient; returns the parameters,
/// the total time spent computing gradients, and the progress lines.
fn train(
    gradient: impl Fn(&[f64; PARAMS]) -> (f64, [f64; PARAMS]),
    xs: &[[f64; 2]; 100],
    ys: &[f64; 100],
    report: bool,
) -> ([f64; PARAMS], Duration) {
    let mut p = init(INIT_SEED);
    let mut spent = Duration::ZERO;
    for k in 0..STEPS {
        let start = Instant::now();
        let (value, grad) = gradient(&p);
        spent += start.elapsed();
        let rate = 1.0 - 0.9 * k as f64 / STEPS as f64;
        for (q, g) in p.iter_mut().zip(grad) {
            *q -= rate * g;
        }
        if report && (k % 10 == 0 || k == STEPS - 1) {
            println!(
                "step {k:3}  loss {value:.6}  accuracy {:5.1}%",
                100.0 * accuracy(&p, xs, ys)
            );
        }
    }
    (p, spent)
}

fn main() {
    let (xs, ys) = moons(DATA_SEED);
    println!(
        "two moons: {} points, MLP 2-16-16-1 with {PARAMS} parameters\n",
        xs.len()
    );

    println!("training with #[grad]:");
    let (p, grad_time) = train(|p| loss_grad(p, &xs, &ys), &xs, &ys, true);
    let final_accuracy = accuracy(&p, &xs, &ys);
    println!(
        "final loss {:.6}, training accuracy {:.0}%\n",
        loss(&p, &xs, &ys),
        100.0 * final_accuracy
    );

    println!("training the same model with the Value engine (micrograd's way)...");
    let (p_value, value_time) = train(|p| loss_value(p, &xs, &ys), &xs, &ys, false);
    let (_, backprop_time) = train(|p| loss_backprop(p, &xs, &ys), &xs, &ys, false);
    let (_, dense_time) = train(|p| loss_backprop_dense(p, &xs, &ys), &xs, &ys, false);
    let drift = p
        .iter()
        .zip(&p_value)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    println!("largest difference between the two trained parameter sets: {drift:.1e}\n");

    let per_step = |t: Duration| t.as_secs_f64() * 1e6 / STEPS as f64;
    println!("gradient time per step (100 samples, 337 parameters):");
    println!("  #[grad]               {:10.1} µs", per_step(grad_time));
    println!("  hand-written, dense   {:10.1} µs", per_step(dense_time));
    println!(
        "  hand-written, sparse  {:10.1} µs  (skips inactive samples and units)",
        per_step(backprop_time)
    );
    println!("  Value engine          {:10.1} µs", per_step(value_time));
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64();
    println!(
        "  Value / #[grad] = {:.0}x;  #[grad] / dense = {:.2}x;  #[grad] / sparse = {:.2}x\n",
        ratio(value_time, grad_time),
        ratio(grad_time, dense_time),
        ratio(grad_time, backprop_time)
    );

    print_boundary(&p, &xs, &ys);
    match write_svg(&p, &xs, &ys) {
        Ok(path) => println!("\ndecision boundary written to {path}"),
        Err(error) => println!("\ncould not write the SVG: {error}"),
    }
}

/// The plane from (-1.5, -1) to (2.5, 1.5), as (columns, rows) of cells.
const VIEW: (f64, f64, f64, f64) = (-1.5, 2.5, -1.0, 1.5);

/// The decision boundary in the terminal: `.` and `:` are the two predicted classes, `o`
/// and `x` the training points of each label.
fn print_boundary(p: &[f64; PARAMS], xs: &[[f64; 2]; 100], ys: &[f64; 100]) {
    let (columns, rows) = (72, 24);
    let (x0, x1, y0, y1) = VIEW;
    let mut grid = vec![vec![' '; columns]; rows];
    for (r, row) in grid.iter_mut().enumerate() {
        for (c, cell) in row.iter_mut().enumerate() {
            let x = x0 + (x1 - x0) * (c as f64 + 0.5) / columns as f64;
            let y = y1 - (y1 - y0) * (r as f64 + 0.5) / rows as f64;
            *cell = if score(p, [x, y]) > 0.0 { ':' } else { '.' };
        }
    }
    for (x, y) in xs.iter().zip(ys) {
        let c = ((x[0] - x0) / (x1 - x0) * columns as f64) as isize;
        let r = ((y1 - x[1]) / (y1 - y0) * rows as f64) as isize;
        if (0..columns as isize).contains(&c) && (0..rows as isize).contains(&r) {
            grid[r as usize][c as usize] = if *y > 0.0 { 'x' } else { 'o' };
        }
    }
    for row in grid {
        println!("  {}", row.into_iter().collect::<String>());
    }
}

/// The decision boundary as an SVG image under the build directory.
fn write_svg(p: &[f64; PARAMS], xs: &[[f64; 2]; 100], ys: &[f64; 100]) -> std::io::Result<String> {
    let (width, height, cell) = (480.0, 300.0, 6.0);
    let (x0, x1, y0, y1) = VIEW;
    let to_px = |x: f64, y: f64| ((x - x0) / (x1 - x0) * width, (y1 - y) / (y1 - y0) * height);
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\">\n"
    );
    let mut py = 0.0;
    while py < height {
        let mut px = 0.0;
        while px < width {
            let x = x0 + (px + cell / 2.0) / width * (x1 - x0);
            let y = y1 - (py + cell / 2.0) / height * (y1 - y0);
            let fill = if score(p, [x, y]) > 0.0 {
                "#f4c7a1"
            } else {
                "#a9c8e8"
            };
            svg.push_str(&format!(
                "<rect x=\"{px}\" y=\"{py}\" width=\"{cell}\" height=\"{cell}\" fill=\"{fill}\"/>\n"
            ));
            px += cell;
        }
        py += cell;
    }
    for (x, y) in xs.iter().zip(ys) {
        let (cx, cy) = to_px(x[0], x[1]);
        let fill = if *y > 0.0 { "#c0392b" } else { "#1f4e89" };
        svg.push_str(&format!(
            "<circle cx=\"{cx:.1}\" cy=\"{cy:.1}\" r=\"4\" fill=\"{fill}\" stroke=\"white\"/>\n"
        ));
    }
    svg.push_str("</svg>\n");
    let dir = std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "target".to_string());
    std::fs::create_dir_all(&dir)?;
    let path = format!("{dir}/moons.svg");
    std::fs::write(&path, svg)?;
    Ok(path)
}
