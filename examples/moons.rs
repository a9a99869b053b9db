//! micrograd's `demo.ipynb`, trained with `#[grad]`: a 2-16-16-1 ReLU network (337
//! parameters) learns to separate the two moons with full-batch gradient descent.
//!
//! `cargo run --release --example moons`
//!
//! It prints the loss and accuracy as it trains, then trains the same model again with the
//! `Value` engine (micrograd's way) and compares the time per step, with a hand-written
//! backpropagation as the reference, and finally draws the decision boundary (in the
//! terminal, and as an SVG file).
//!
//! The model is a struct, `Mlp`, with `#[derive(Differentiable)]`, and the training loss
//! is its method `Mlp::loss`, over slices of samples (`xs.len()` is known only at run
//! time), as it would be for a data set read from a file: `model.loss_grad(xs, ys)`
//! returns the loss and an `Mlp` of partials, and a gradient step is
//! `model.add_scaled(-rate, &grad)`. The same loss over a flat parameter array
//! (`loss_slices`) and with a constant number of samples (`loss`) is timed next to it.

#[path = "moons_model/mod.rs"]
mod model;

use autodiff::Differentiable;
use model::{
    accuracy, init, loss, loss_backprop, loss_backprop_dense, loss_grad, loss_slices,
    loss_slices_grad, loss_value, moons, score, Mlp, PARAMS,
};
use std::time::{Duration, Instant};

const STEPS: usize = 100;
const DATA_SEED: u64 = 1337;
const INIT_SEED: u64 = 7;

/// Full-batch gradient descent on the model as a struct: the loss is a method, its
/// gradient an `Mlp`, and a step one line. Returns the model and the time spent in
/// gradients.
fn train_mlp(xs: &[[f64; 2]], ys: &[f64]) -> (Mlp, Duration) {
    let mut model = Mlp::from_flat(&init(INIT_SEED));
    let mut spent = Duration::ZERO;
    for k in 0..STEPS {
        let start = Instant::now();
        let (value, grad) = model.loss_grad(xs, ys);
        spent += start.elapsed();
        let rate = 1.0 - 0.9 * k as f64 / STEPS as f64;
        model.add_scaled(-rate, &grad);
        if k % 10 == 0 || k == STEPS - 1 {
            let all: (&[[f64; 2]; 100], &[f64; 100]) = (
                xs.try_into().expect("100 samples"),
                ys.try_into().expect("100 samples"),
            );
            println!(
                "step {k:3}  loss {value:.6}  accuracy {:5.1}%",
                100.0 * accuracy(&model.to_flat(), all.0, all.1)
            );
        }
    }
    (model, spent)
}

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

    // The data as a user with a data set of any size holds it: slices.
    let (xs_slice, ys_slice): (&[[f64; 2]], &[f64]) = (&xs, &ys);

    // The first call on a thread grows the workspace the gradient keeps its saved values
    // on; later calls reuse it. Make that first call outside the timed training.
    let _ = Mlp::from_flat(&init(INIT_SEED)).loss_grad(xs_slice, ys_slice);

    println!("training with #[grad] (the model a struct, its loss a method over slices):");
    let (mlp, struct_time) = train_mlp(xs_slice, ys_slice);
    println!(
        "final loss {:.6}, training accuracy {:.0}%\n",
        mlp.loss(xs_slice, ys_slice),
        100.0 * accuracy(&mlp.to_flat(), &xs, &ys)
    );
    let (p, grad_time) = train(|p| loss_slices_grad(p, xs_slice, ys_slice), &xs, &ys, false);
    let same =
        mlp.loss(xs_slice, ys_slice).to_bits() == loss_slices(&p, xs_slice, ys_slice).to_bits();
    let apart = mlp
        .to_flat()
        .iter()
        .zip(&p)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    println!(
        "trained again over a flat parameter array: parameters {apart:.1e} apart, final loss {}",
        if same {
            "equal bit for bit"
        } else {
            "different"
        }
    );
    let (p_constant, constant_time) = train(|p| loss_grad(p, &xs, &ys), &xs, &ys, false);
    let apart = p
        .iter()
        .zip(&p_constant)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    let same_loss =
        loss(&p_constant, &xs, &ys).to_bits() == loss_slices(&p, xs_slice, ys_slice).to_bits();
    println!(
        "trained again with the constant-size loss: parameters {apart:.1e} apart, final loss {}\n",
        if same_loss {
            "equal bit for bit"
        } else {
            "different"
        }
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
    println!("  #[grad], struct Mlp   {:10.1} µs", per_step(struct_time));
    println!("  #[grad], flat array   {:10.1} µs", per_step(grad_time));
    println!(
        "  #[grad], constant     {:10.1} µs",
        per_step(constant_time)
    );
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
    let [structured, slices, constant, dense] = interleaved(&p0(), xs_slice, ys_slice);
    println!(
        "  interleaved, median per gradient: struct {structured:.1} µs, flat array \
         {slices:.1} µs, constant size {constant:.1} µs, dense {dense:.1} µs"
    );
    println!(
        "  struct / flat array = {:.2}x;  flat array / constant size = {:.2}x;  \
         flat array / dense = {:.2}x\n",
        structured / slices,
        slices / constant,
        slices / dense
    );

    print_boundary(&p, &xs, &ys);
    match write_svg(&p, &xs, &ys) {
        Ok(path) => println!("\ndecision boundary written to {path}"),
        Err(error) => println!("\ncould not write the SVG: {error}"),
    }
}

/// The starting parameters.
fn p0() -> [f64; PARAMS] {
    init(INIT_SEED)
}

/// Time per gradient (µs) of the struct model's loss, the flat slice loss, the
/// constant-size loss and the dense hand-written backpropagation at `p`: the median over
/// rounds, each round timing a batch of each in turn (the order rotating), so that a slow
/// spell of the machine falls on all of them alike.
fn interleaved(p: &[f64; PARAMS], xs: &[[f64; 2]], ys: &[f64]) -> [f64; 4] {
    use std::hint::black_box;
    const ROUNDS: usize = 31;
    const BATCH: u32 = 40;
    let xs_array: &[[f64; 2]; 100] = xs.try_into().expect("100 samples");
    let ys_array: &[f64; 100] = ys.try_into().expect("100 samples");
    // Each result goes to `black_box` whole, so that no part of a gradient can be skipped.
    let mlp = Mlp::from_flat(p);
    let contenders: [&dyn Fn(); 4] = [
        &|| {
            black_box(&black_box(&mlp).loss_grad(black_box(xs), black_box(ys)));
        },
        &|| {
            black_box(&loss_slices_grad(
                black_box(p),
                black_box(xs),
                black_box(ys),
            ));
        },
        &|| {
            black_box(&loss_grad(
                black_box(p),
                black_box(xs_array),
                black_box(ys_array),
            ));
        },
        &|| {
            black_box(&loss_backprop_dense(
                black_box(p),
                black_box(xs_array),
                black_box(ys_array),
            ));
        },
    ];
    let n = contenders.len();
    let mut samples = [[0.0; ROUNDS]; 4];
    // Indexed by round and by contender, the rotation mixing the two.
    #[allow(clippy::needless_range_loop)]
    for round in 0..ROUNDS {
        for k in 0..n {
            let i = (k + round) % n;
            let start = Instant::now();
            for _ in 0..BATCH {
                contenders[i]();
            }
            samples[i][round] = start.elapsed().as_secs_f64() * 1e6 / f64::from(BATCH);
        }
    }
    samples.map(|mut s| {
        s.sort_by(f64::total_cmp);
        s[ROUNDS / 2]
    })
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
