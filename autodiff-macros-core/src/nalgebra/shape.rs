//! The shapes of nalgebra's fixed-size types, read from how they are written, and the
//! arrays that stand for them inside the pipeline.
//!
//! A vector or a point of `n` numbers is `[f64; n]`; a matrix of `r` rows and `c`
//! columns is `[[f64; r]; c]`, its columns, as nalgebra stores it, so that the
//! conversions at the boundary are nalgebra's own `From` impls and copy nothing.

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};
use syn::{GenericArgument, PathArguments, Type};

/// What a value is: a number, or one of nalgebra's fixed-size types.
#[derive(Clone, Debug)]
pub enum Shape {
    /// A number, or anything that is not one of nalgebra's types.
    Scalar,
    /// `Vector3<f64>`, `SVector<f64, N>`, or with `point`, `Point3<f64>`.
    Vector {
        /// Its length, as written (`3`, `N`).
        len: TokenStream,
        /// A point (`Point3`), not a vector: `p - q` of two points is a vector.
        point: bool,
    },
    /// `DVector<f64>`: a vector of run-time length, `len` its length (`v.len()` of the
    /// variable that holds it), standing for a slice or a `Vec<f64>`.
    Dynamic {
        /// Its length, an expression.
        len: TokenStream,
    },
    /// `Matrix3<f64>`, `Matrix2x3<f64>`, `SMatrix<f64, R, C>`.
    Matrix {
        /// Its rows, as written.
        rows: TokenStream,
        /// Its columns, as written.
        cols: TokenStream,
    },
}

impl Shape {
    /// Whether this is one of nalgebra's types.
    pub fn is_array(&self) -> bool {
        !matches!(self, Shape::Scalar)
    }

    /// The same lengths: vectors of one length (points or not), matrices of one shape.
    pub fn same_lengths(&self, other: &Shape) -> bool {
        let eq = |a: &TokenStream, b: &TokenStream| a.to_string() == b.to_string();
        match (self, other) {
            (Shape::Vector { len: a, .. }, Shape::Vector { len: b, .. }) => eq(a, b),
            // Checked where the elements are read, as nalgebra checks them.
            (Shape::Dynamic { .. }, Shape::Dynamic { .. }) => true,
            (Shape::Matrix { rows: r1, cols: c1 }, Shape::Matrix { rows: r2, cols: c2 }) => {
                eq(r1, r2) && eq(c1, c2)
            }
            _ => false,
        }
    }

    /// The array type standing for it, of numbers of type `real`.
    pub fn array_type(&self, real: &Type) -> TokenStream {
        match self {
            Shape::Scalar => real.to_token_stream(),
            Shape::Vector { len, .. } => quote!([#real; #len]),
            Shape::Dynamic { .. } => quote!(::std::vec::Vec<#real>),
            Shape::Matrix { rows, cols } => quote!([[#real; #rows]; #cols]),
        }
    }

    /// How it is named in messages.
    pub fn describe(&self) -> String {
        match self {
            Shape::Scalar => "a number".to_string(),
            Shape::Vector { len, point: true } => format!("a point of {len}"),
            Shape::Vector { len, .. } => format!("a vector of {len}"),
            Shape::Dynamic { .. } => "a vector of run-time length".to_string(),
            Shape::Matrix { rows, cols } => format!("a {rows} × {cols} matrix"),
        }
    }
}

/// The names of nalgebra's fixed-size aliases with their shapes: `Vector3` → (3, None),
/// `Matrix2x3` → (2, Some(3)), `Point3` → a point.
fn alias(name: &str) -> Option<Shape> {
    let literal = |n: &str| n.parse::<usize>().ok().filter(|n| (1..=6).contains(n));
    let lit = |n: usize| proc_macro2::Literal::usize_unsuffixed(n).into_token_stream();
    if let Some(n) = name.strip_prefix("Vector").and_then(literal) {
        return Some(Shape::Vector {
            len: lit(n),
            point: false,
        });
    }
    if let Some(n) = name.strip_prefix("Point").and_then(literal) {
        return Some(Shape::Vector {
            len: lit(n),
            point: true,
        });
    }
    let dims = name.strip_prefix("Matrix")?;
    let (rows, cols) = match dims.split_once('x') {
        Some((r, c)) => (literal(r)?, literal(c)?),
        None => (literal(dims)?, literal(dims)?),
    };
    Some(Shape::Matrix {
        rows: lit(rows),
        cols: lit(cols),
    })
}

/// Whether `name` names one of the types this module reads (for a quick test of a
/// function's tokens).
pub fn is_type_name(name: &str) -> bool {
    matches!(
        name,
        "SVector" | "SMatrix" | "OVector" | "OMatrix" | "DVector"
    ) || alias(name).is_some()
}

/// The shape and number type of `ty` (through one `&`), if it is one of nalgebra's
/// fixed-size types of `f64` or `f32`.
pub fn of_type(ty: &Type) -> Option<(Shape, Type)> {
    let ty = match ty {
        Type::Reference(reference) => &*reference.elem,
        Type::Paren(paren) => &*paren.elem,
        ty => ty,
    };
    let Type::Path(path) = ty else {
        return None;
    };
    if path.qself.is_some() {
        return None;
    }
    let last = path.path.segments.last()?;
    let PathArguments::AngleBracketed(arguments) = &last.arguments else {
        return None;
    };
    let args: Vec<&GenericArgument> = arguments.args.iter().collect();
    let real = match args.first() {
        Some(GenericArgument::Type(real)) if crate::types::scalar_float(real).is_some() => {
            real.clone()
        }
        _ => return None,
    };
    let length = |arg: &GenericArgument| -> Option<TokenStream> {
        match arg {
            GenericArgument::Const(expr) => Some(expr.to_token_stream()),
            // `N` reads as a type to the parser.
            GenericArgument::Type(Type::Path(p)) if p.path.get_ident().is_some() => {
                Some(p.to_token_stream())
            }
            _ => None,
        }
    };
    let name = last.ident.to_string();
    let shape = match (name.as_str(), &args[1..]) {
        ("SVector", [len]) => Shape::Vector {
            len: length(len)?,
            point: false,
        },
        ("DVector", []) => Shape::Dynamic { len: quote!(0) },
        ("SMatrix", [rows, cols]) => Shape::Matrix {
            rows: length(rows)?,
            cols: length(cols)?,
        },
        (name, []) => alias(name)?,
        _ => return None,
    };
    Some((shape, real))
}

/// The shape and number type of the elements of `ty`, if it is a slice of nalgebra's
/// fixed-size types (`&[Vector3<f64>]`, `&mut [Point3<f64>]`).
pub fn of_slice(ty: &Type) -> Option<(Shape, Type)> {
    let Type::Reference(reference) = ty else {
        return None;
    };
    let Type::Slice(slice) = &*reference.elem else {
        return None;
    };
    match &*slice.elem {
        Type::Reference(_) => None,
        elem => of_type(elem),
    }
}

/// The shape named by the type of an associated function's path, `Vector3::new`,
/// `SVector::<f64, 3>::zeros`, `Matrix3::<f64>::identity`: its shape (`None` for a
/// length not written, `SVector::zeros()`) and the function's name.
pub fn of_constructor(path: &syn::Path) -> Option<(Option<Shape>, String)> {
    let n = path.segments.len();
    if n < 2 {
        return None;
    }
    let owner = &path.segments[n - 2];
    let function = path.segments[n - 1].ident.to_string();
    let name = owner.ident.to_string();
    if !is_type_name(&name) {
        return None;
    }
    let shape = match &owner.arguments {
        PathArguments::None => alias(&name),
        PathArguments::AngleBracketed(arguments) => {
            let ty: Type = syn::parse2(quote!(#owner)).ok()?;
            let _ = arguments;
            of_type(&ty).map(|(shape, _)| shape)
        }
        PathArguments::Parenthesized(_) => None,
    };
    Some((shape, function))
}
