// In a module where `f64` names another type, `#[grad]` (which reads types as written)
// would take it for the primitive type: the error says so under that `f64`. Written as
// `::core::primitive::f64`, the primitive type is accepted in such a module.
mod shadowed {
    use autodiff::prelude::*;

    #[allow(non_camel_case_types)]
    type f64 = f32;

    #[grad]
    pub fn twice(x: f64) -> f64 {
        x + x
    }

    #[grad]
    pub fn thrice(x: ::core::primitive::f64) -> ::core::primitive::f64 {
        3.0 * x
    }
}

fn main() {
    let _ = shadowed::thrice_grad(1.0);
}
