//! Every contender computes the same gradient as `#[grad]` on every workload, so that the
//! benchmarks compare equal work: the hand-written gradients and the engines to 1e-12,
//! the peer crates to 1e-9, central differences to 1e-6 (relative to the largest
//! component).

use autodiff_bench::{relative_error, visit_all, Contender, Run, Visitor, Workload};

/// How close each contender must come to the `#[grad]` gradient.
fn tolerance(contender: Contender) -> f64 {
    match contender {
        Contender::Generated | Contender::HandWritten | Contender::Value | Contender::Tape => 1e-12,
        Contender::FiniteDifferences => 1e-6,
        _ => 1e-9,
    }
}

struct Check {
    checked: usize,
}

impl Visitor for Check {
    fn visit<const N: usize>(&mut self, w: &Workload<N>) {
        let primal = (w.primal)(&w.point);
        let (value, reference) = (w.generated)(&w.point);
        assert_eq!(
            value.to_bits(),
            primal.to_bits(),
            "{}: value of #[grad]",
            w.name
        );
        assert!(reference.iter().all(|g| g.is_finite()), "{}", w.name);
        assert!(
            reference.iter().any(|g| g.abs() > 1e-3),
            "{}: a trivial gradient",
            w.name
        );
        for contender in Contender::ALL {
            let run = w.run(contender);
            let Some((value, gradient)) = run.call(&w.point) else {
                assert!(matches!(run, Run::Unsupported(_)));
                continue;
            };
            let label = format!("{} / {}", w.name, contender.label());
            if contender.returns_value() {
                let error = ((value - primal) / primal).abs();
                assert!(error <= 1e-12, "{label}: value {value} vs {primal}");
            } else {
                assert!(value.is_nan(), "{label}: a gradient-only contender");
            }
            if let Some(gradient) = gradient {
                let error = relative_error(&gradient, &reference);
                assert!(
                    error <= tolerance(contender),
                    "{label}: relative error {error:e}\n{gradient:?}\nvs {reference:?}"
                );
            }
            self.checked += 1;
        }
    }
}

#[test]
fn every_contender_agrees_with_grad() {
    let mut check = Check { checked: 0 };
    visit_all(&mut check);
    // 7 workloads × 11 contenders, less symdiff on `deep`.
    assert_eq!(check.checked, 7 * 11 - 1);
}

#[test]
fn hand_written_gradients_match_generated_ones_at_other_points() {
    struct Shifted;
    impl Visitor for Shifted {
        fn visit<const N: usize>(&mut self, w: &Workload<N>) {
            for shift in [-0.3, 0.1, 0.45] {
                let x: [f64; N] = std::array::from_fn(|i| w.point[i] + shift * (i as f64).cos());
                let (value, generated) = (w.generated)(&x);
                let (hand_value, hand) = (w.hand_written)(&x);
                assert!(((value - hand_value) / value).abs() <= 1e-12, "{}", w.name);
                let error = relative_error(&hand, &generated);
                assert!(error <= 1e-12, "{}: {error:e}", w.name);
            }
        }
    }
    visit_all(&mut Shifted);
}
