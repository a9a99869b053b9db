//! Without the `alloc` feature, the constructs whose gradients need a `Vec` are compile
//! errors under the offending tokens that name the feature.

#[cfg(not(feature = "alloc"))]
#[test]
fn needs_alloc() {
    trybuild::TestCases::new().compile_fail("tests/ui/*.rs");
}
