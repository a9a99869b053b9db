//! The `calc` language through the facade: `autodiff::calc`.

use autodiff::calc::{CalcError, Interpreter};

fn run(source: &str) -> String {
    Interpreter::new()
        .run_script(source)
        .unwrap_or_else(|e| panic!("unexpected error: {e}"))
}

fn fails(source: &str) -> CalcError {
    Interpreter::new()
        .run_script(source)
        .expect_err("the script should fail")
}

/// Runs `source` and returns the value of its last EXPR and its gradient.
fn value_and_gradient(source: &str) -> (f64, Vec<(String, f64)>) {
    let mut calc = Interpreter::new();
    calc.run_script(source)
        .unwrap_or_else(|e| panic!("unexpected error: {e}"));
    let gradient = calc
        .last_gradient()
        .expect("an EXPR ran")
        .into_iter()
        .map(|(name, d)| (name.to_string(), d))
        .collect();
    (calc.last_value().expect("an EXPR ran"), gradient)
}

#[track_caller]
fn assert_close(actual: f64, expected: f64, what: &str) {
    assert!(
        (actual - expected).abs() <= 1e-12 * expected.abs().max(1.0),
        "{what}: got {actual}, expected {expected}"
    );
}

#[test]
fn the_documented_example_exactly() {
    let out = run("# comment\nVAR a = 2\nVAR b = 3\nEXPR (a + b) * a\nGRAD\n");
    assert_eq!(out, "= 10\nda = 7\ndb = 2\n");
}

#[test]
fn micrograd_square() {
    let out = run("VAR a = 2\nVAR b = -3\nVAR c = 10\nEXPR (a*b + c)^2\nGRAD");
    assert_eq!(out, "= 16\nda = -24\ndb = 16\ndc = 8\n");
}

#[test]
fn the_shipped_example_scripts() {
    let basic = include_str!("../examples/calc/basic.calc");
    assert_eq!(run(basic), "= 10\nda = 7\ndb = 2\n");
    let micrograd = include_str!("../examples/calc/micrograd.calc");
    assert_eq!(run(micrograd), "= 16\nda = -24\ndb = 16\ndc = 8\n");
    check_neuron(include_str!("../examples/calc/neuron.calc"));
}

/// micrograd's tanh neuron: o = 1/√2, do/dx1 = -1.5, dx2 = 0.5, dw1 = 1, dw2 = 0, db = 0.5.
fn check_neuron(source: &str) {
    let (value, gradient) = value_and_gradient(source);
    assert_close(value, std::f64::consts::FRAC_1_SQRT_2, "o");
    let expected = [
        ("x1", -1.5),
        ("x2", 0.5),
        ("w1", 1.0),
        ("w2", 0.0),
        ("b", 0.5),
    ];
    assert_eq!(gradient.len(), expected.len());
    for ((name, d), (expected_name, expected_d)) in gradient.iter().zip(expected) {
        assert_eq!(name, expected_name);
        assert_close(*d, expected_d, &format!("d{name}"));
    }
}

#[test]
fn tanh_neuron() {
    let source = "VAR x1 = 2\nVAR x2 = 0\nVAR w1 = -3\nVAR w2 = 1\nVAR b = 6.8813735870195432\n\
                  EXPR tanh(x1*w1 + x2*w2 + b)\nGRAD\n";
    check_neuron(source);
    // The value is exactly f64's tanh of the same sum, in the same order.
    let n = 2.0f64 * -3.0 + 0.0 * 1.0 + 6.881_373_587_019_543;
    assert_eq!(
        run(source).lines().next(),
        Some(format!("= {}", n.tanh()).as_str())
    );
}

#[test]
fn square_plus_linear() {
    let out = run("VAR x = 3\nEXPR x^2 + 2*x\nGRAD");
    assert_eq!(out, "= 15\ndx = 8\n");
}

#[test]
fn a_variable_used_three_times_gets_three_contributions() {
    // d/dx (x·x·x) = 3x², and x + x + x has derivative 3.
    assert_eq!(run("VAR x = 2\nEXPR x * x * x\nGRAD"), "= 8\ndx = 12\n");
    assert_eq!(run("VAR x = 2\nEXPR x + x + x\nGRAD"), "= 6\ndx = 3\n");
    assert_eq!(
        run("VAR x = 2\nVAR y = 5\nEXPR x * y + sin(x) - x\nGRAD"),
        format!(
            "= {}\ndx = {}\ndy = 2\n",
            2.0 * 5.0 + 2f64.sin() - 2.0,
            5.0 + 2f64.cos() - 1.0
        )
    );
}

#[test]
fn unused_variables_get_zero() {
    assert_eq!(
        run("VAR a = 1\nVAR b = 2\nEXPR b * b\nGRAD"),
        "= 4\nda = 0\ndb = 4\n"
    );
}

#[test]
fn precedence_and_associativity() {
    let cases = [
        ("1 + 2 * 3", "7"),
        ("(1 + 2) * 3", "9"),
        ("10 - 4 - 3", "3"),
        ("64 / 4 / 2", "8"),
        ("2 * 3 / 4", "1.5"),
        ("-2^2", "-4"),
        ("(-2)^2", "4"),
        ("2^3^2", "512"),
        ("(2^3)^2", "64"),
        ("2^-2", "0.25"),
        ("-3 - -3", "0"),
        ("2 * -3^2", "-18"),
        ("1 - 2 + 3", "2"),
        ("1e-3 * 1000", "1"),
        ("2.5 * 2", "5"),
    ];
    for (expr, expected) in cases {
        assert_eq!(
            run(&format!("EXPR {expr}")),
            format!("= {expected}\n"),
            "{expr}"
        );
    }
    // With variables the gradient follows the same structure.
    assert_eq!(
        run("VAR x = 2\nEXPR -x^2\nGRAD"),
        "= -4\ndx = -4\n",
        "-x^2 is -(x^2)"
    );
    assert_eq!(
        run("VAR x = 2\nEXPR x^3^2\nGRAD"),
        "= 512\ndx = 2304\n",
        "x^3^2 is x^9"
    );
}

#[test]
fn number_formatting_is_rusts() {
    assert_eq!(run("EXPR 10"), "= 10\n");
    assert_eq!(
        run("VAR x = 2\nEXPR 1 / sqrt(x)"),
        format!("= {}\n", 1.0 / 2f64.sqrt())
    );
    assert_eq!(run("EXPR 0.1 + 0.2"), "= 0.30000000000000004\n");
}

#[test]
fn grad_is_taken_where_its_expr_ran() {
    let out = run("VAR x = 3\nEXPR x^2\nVAR x = 5\nGRAD\nEXPR x^2\nGRAD");
    assert_eq!(out, "= 9\ndx = 6\n= 25\ndx = 10\n");
}

#[test]
fn functions_and_their_derivatives() {
    let x = 0.3f64;
    let cases: [(&str, f64, f64); 12] = [
        ("tanh(x)", x.tanh(), 1.0 - x.tanh() * x.tanh()),
        ("relu(x)", x, 1.0),
        ("relu(-x)", 0.0, 0.0),
        ("exp(x)", x.exp(), x.exp()),
        ("log(x)", x.ln(), 1.0 / x),
        ("ln(x)", x.ln(), 1.0 / x),
        ("sqrt(x)", x.sqrt(), 0.5 / x.sqrt()),
        ("sin(x)", x.sin(), x.cos()),
        ("cos(x)", x.cos(), -x.sin()),
        ("tan(x)", x.tan(), 1.0 + x.tan() * x.tan()),
        ("abs(-x)", x, 1.0),
        ("sigmoid(x)", 1.0 / (1.0 + (-x).exp()), {
            let s = 1.0 / (1.0 + (-x).exp());
            s * (1.0 - s)
        }),
    ];
    for (expr, value, derivative) in cases {
        let (v, g) = value_and_gradient(&format!("VAR x = 0.3\nEXPR {expr}"));
        assert_eq!(v.to_bits(), value.to_bits(), "{expr}");
        assert_close(g[0].1, derivative, expr);
    }
}

#[test]
fn errors_report_line_and_column() {
    let check = |source: &str, line: usize, column: usize, needle: &str| {
        let e = fails(source);
        assert_eq!((e.line, e.column), (line, column), "{source:?}: {e}");
        assert!(e.message.contains(needle), "{source:?}: {e}");
        assert_eq!(
            e.to_string(),
            format!("line {line}, column {column}: {}", e.message)
        );
    };
    check("VAR a = 1\nEXPR a + z", 2, 10, "unknown variable `z`");
    check("EXPR 1 + )", 1, 10, "expected an expression, found `)`");
    check(
        "EXPR 1 +",
        1,
        9,
        "expected an expression, found end of line",
    );
    check("EXPR (1 + 2", 1, 12, "expected `)`");
    check("EXPR 1 2", 1, 8, "unexpected number `2`");
    check("EXPR 3 $ 4", 1, 8, "unexpected character `$`");
    check(
        "VAR x = 1\n\nEXPR 2 * foo(x)",
        3,
        10,
        "unknown function `foo`",
    );
    check(
        "VAR x = 0\nEXPR 1 + log(x)",
        2,
        10,
        "log of a non-positive number (0)",
    );
    check(
        "VAR x = -4\nEXPR sqrt(x)",
        2,
        6,
        "sqrt of a negative number (-4)",
    );
    check("# nothing yet\nGRAD", 2, 1, "GRAD before any EXPR");
    check("VAR 2 = 3", 1, 5, "expected a variable name after VAR");
    check("VAR a 3", 1, 7, "expected `=`");
    check("VAR a =", 1, 8, "expected a number");
    check("VAR a = x", 1, 9, "expected a number");
    check("VAR a = 1 + 2", 1, 11, "unexpected `+`");
    check("PRINT 3", 1, 1, "expected VAR, EXPR or GRAD");
    check("Expr 3", 1, 1, "case-sensitive");
    check("EXPR", 1, 5, "expected an expression after EXPR");
    check("GRAD now", 1, 6, "unexpected `now` after GRAD");
    check("EXPR max(1)", 1, 6, "`max` takes 2 arguments, found 1");
    check(
        "VAR x = 1\nEXPR exp x",
        2,
        6,
        "needs its argument in parentheses",
    );
}

#[test]
fn an_error_leaves_the_interpreter_unchanged() {
    let mut calc = Interpreter::new();
    assert_eq!(calc.run_line("VAR a = 2", 1).unwrap(), Vec::<String>::new());
    assert_eq!(calc.run_line("EXPR a * a", 2).unwrap(), ["= 4"]);
    let e = calc.run_line("EXPR a * log(a - 5)", 3).unwrap_err();
    assert_eq!((e.line, e.column), (3, 10));
    assert_eq!(calc.run_line("GRAD", 4).unwrap(), ["da = 4"]);
    assert!(calc.run_line("VAR a = 2 2", 5).is_err());
    assert_eq!(calc.variable("a"), Some(2.0));
}

/// The gradient of `expr` at `point` agrees with central differences of its value.
fn check_against_finite_differences(expr: &str, point: &[(&str, f64)]) {
    let script = |values: &[(&str, f64)]| {
        let mut s = String::new();
        for (name, v) in values {
            s.push_str(&format!("VAR {name} = {v:e}\n"));
        }
        s.push_str(&format!("EXPR {expr}\n"));
        s
    };
    let (_, gradient) = value_and_gradient(&script(point));
    for (i, (name, x)) in point.iter().enumerate() {
        let h = 1e-6 * x.abs().max(1.0);
        let mut plus = point.to_vec();
        let mut minus = point.to_vec();
        plus[i].1 = x + h;
        minus[i].1 = x - h;
        let (f_plus, _) = value_and_gradient(&script(&plus));
        let (f_minus, _) = value_and_gradient(&script(&minus));
        let fd = (f_plus - f_minus) / (plus[i].1 - minus[i].1);
        let (grad_name, d) = &gradient[i];
        assert_eq!(grad_name, name);
        assert!(
            (d - fd).abs() <= 1e-6 * d.abs().max(fd.abs()).max(1e-3),
            "{expr}: d{name} = {d}, finite differences give {fd}"
        );
    }
}

#[test]
fn gradients_agree_with_finite_differences() {
    check_against_finite_differences(
        "tanh(x1*w1 + x2*w2 + b)",
        &[
            ("x1", 0.5),
            ("x2", -1.2),
            ("w1", 0.7),
            ("w2", 0.3),
            ("b", 0.1),
        ],
    );
    check_against_finite_differences(
        "exp(-x^2 / 2) * sin(3*y) + log(x*x + y^2) - sqrt(y)",
        &[("x", 0.8), ("y", 1.3)],
    );
    check_against_finite_differences("x^y + y^x - 1/(x + y)", &[("x", 1.7), ("y", 0.6)]);
    check_against_finite_differences(
        "sigmoid(a*b) * relu(a - b) + cos(a)^3 / (1 + b^2) + tan(b/3)",
        &[("a", 2.1), ("b", -0.4)],
    );
    check_against_finite_differences(
        "(a*b + c)^2 * a - c^-2",
        &[("a", 2.0), ("b", -3.0), ("c", 10.0)],
    );
}
