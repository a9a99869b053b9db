// Deep nesting of parentheses and blocks, and one variable used many times.
use autodiff::prelude::*;

#[grad]
fn nested(x: f64) -> f64 {
    ((((((((((x + 1.0) * 2.0) - 3.0) / 4.0).sin()) * x) + x) * x) - x) * x) + {
        let a = {
            let b = {
                let c = { x * x };
                c + x
            };
            b * x
        };
        a + x
    }
}

#[grad]
fn many_uses(x: f64) -> f64 {
    x * x + x * x + x * x + x * x + x * x + x * x + x * x + x * x + x + x + x + x
}

fn main() {
    let x = 0.37;
    let h = 1e-6;
    let fd = (nested(x + h) - nested(x - h)) / (2.0 * h);
    let (value, dx) = nested_grad(x);
    assert_eq!(value, nested(x));
    assert!((dx - fd).abs() < 1e-6, "{dx} vs {fd}");
    let (value, dx) = many_uses_grad(x);
    assert_eq!(value, many_uses(x));
    assert!((dx - (16.0 * x + 4.0)).abs() < 1e-12);
}
