use autodiff::Differentiable;

#[derive(Differentiable)]
struct Generic<T> {
    a: T,
}

#[derive(Differentiable)]
struct Tuple(f64, f64);

#[derive(Differentiable)]
enum Choice {
    A,
    B,
}

#[derive(Differentiable)]
struct Fields {
    a: f64,
    maybe: Option<f64>,
    #[differentiable(constant)]
    b: f64,
}

fn main() {}
