//! `#[grad(jacobian)]`: `<name>_jacobian(p…) -> (value, J_p…)`, one block per
//! differentiated parameter, composed from the two transformations the function already
//! has: forward mode (`_jvp`, one sweep per differentiated number, each giving a column)
//! and the pullback (`_vjp`, one sweep per output number, each giving a row).
//!
//! ```text
//! fn r(p: [f64; 2], t: &[f64]) -> Vec<f64>
//! fn r_jacobian(p: [f64; 2], t: &[f64]) -> (Vec<f64>, Vec<[f64; 2]>)
//! ```
//! The choice is by shape, at run time where a size is: forward sweeps when the
//! differentiated numbers are no more than the outputs (a tie goes forward, whose sweep is
//! the cheaper), reverse sweeps otherwise. A block is (output numbers) × (the parameter's
//! numbers), row-major: `[[f64; N]; M]` for fixed sizes (`[f64; M]` for a number
//! parameter), `Vec<[f64; N]>` (`Vec<f64>`) for a `Vec` output, and a
//! [`Matrix`](../../autodiff/struct.Matrix.html) for a slice or struct parameter (a
//! struct's numbers in the order of its flat view). A scalar output's Jacobian is its
//! gradient, `_grad`'s numbers.

use super::{attributes, doc_link, names, partial_type, zero_partial, zeros};
use crate::check::Activity;
use crate::ir::Function;
use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, ToTokens};

/// The name of the Jacobian function of `ident`: `f` → `f_jacobian`, with `f`'s span.
pub fn jacobian_ident(ident: &Ident) -> Ident {
    let name = ident.to_string();
    let name = name.strip_prefix("r#").unwrap_or(&name);
    Ident::new(&format!("{name}_jacobian"), ident.span())
}

/// A generated local, mixed-site.
fn local(name: &str) -> Ident {
    Ident::new(name, Span::mixed_site())
}

/// How the generated code calls a function generated beside `function` (or `function`
/// itself): by a mixed-site name, through `Self::` in an `impl` block, with the const
/// generic parameters.
pub(crate) fn sibling(function: &Function, ident: &Ident) -> TokenStream {
    let ident = Ident::new(
        &ident.to_string(),
        Span::mixed_site().located_at(ident.span()),
    );
    let turbofish = super::turbofish(function);
    if function.in_impl {
        quote!(Self::#ident #turbofish)
    } else {
        quote!(#ident #turbofish)
    }
}

/// How many numbers the output has: a constant expression, or `None` for a `Vec`.
fn output_count(function: &Function) -> Option<TokenStream> {
    match &function.output {
        Some(output) => {
            let var = &function.vars[output.var];
            let dims = &var.dims;
            (!var.slice).then(|| length(dims))
        }
        None => {
            let outputs = function.outputs;
            Some(quote!(#outputs))
        }
    }
}

/// Whether parameter `index` has a block of run-time width, a row-major matrix: a slice
/// or a struct.
fn matrix_block(function: &Function, index: usize) -> bool {
    let param = &function.params[index];
    param.strukt.is_some() || function.vars[param.var].slice
}

/// `numbers::<f>(args)` of the runtime's view of a struct's numbers by position.
pub(super) fn numbers(f: &str, args: TokenStream) -> TokenStream {
    let f = Ident::new(f, Span::call_site());
    quote!(::autodiff::__private::numbers::#f(#args))
}

/// The arguments of `function`'s parameters for a sibling called once per sweep (or per
/// product): a struct passed by value is copied for each (without `Clone`), a vector by
/// value cloned.
pub(super) fn repeated_args(function: &Function) -> Vec<TokenStream> {
    function
        .params
        .iter()
        .map(|p| {
            let ident = &p.ident;
            let by_value = !matches!(p.ty, syn::Type::Reference(_));
            if by_value && p.strukt.is_some() {
                numbers("copy", quote!(&#ident))
            } else if by_value && function.vars[p.var].slice {
                quote!(::core::clone::Clone::clone(&#ident))
            } else {
                quote!(#ident)
            }
        })
        .collect()
}

/// The number of numbers of parameter `index`: a constant expression for a number or an
/// array, `p.len() * …` for a slice, the count of its flat view for a struct.
fn param_count(function: &Function, index: usize) -> TokenStream {
    let param = &function.params[index];
    let var = &function.vars[param.var];
    let dims = &var.dims;
    let ident = &param.ident;
    if let Some(strukt) = &param.strukt {
        let value = match &param.ty {
            syn::Type::Reference(_) => quote!(#ident),
            _ => quote!(&#ident),
        };
        quote!(<_ as ::autodiff::__private::PartialOf<#strukt>>::partial_count(#value))
    } else if var.slice {
        quote!((#ident.len() #(* (#dims))*))
    } else {
        length(dims)
    }
}

/// The number of elements of an array of lengths `dims` (outermost first), as an array
/// type's length: `1`, the one length as written (where a const generic parameter must
/// stand alone), or their product.
fn length(dims: &[TokenStream]) -> TokenStream {
    match dims {
        [] => quote!(1),
        [dim] => dim.clone(),
        dims => quote!((1 #(* (#dims))*)),
    }
}

/// Whether `length(dims)` is a length Rust accepts in a type: not a product that involves
/// a const generic parameter.
fn typed_length(function: &Function, dims: &[TokenStream]) -> bool {
    dims.len() < 2
        || !dims
            .iter()
            .any(|dim| crate::types::mentions(dim, &|ident| is_const_param(function, ident)))
}

fn is_const_param(function: &Function, ident: &Ident) -> bool {
    function
        .original
        .sig
        .generics
        .const_params()
        .any(|c| c.ident == *ident)
}

/// The error for a block whose size Rust cannot write as an array type's length: the
/// product of several lengths, one a const generic parameter.
fn untyped_block(function: &Function) -> Option<syn::Error> {
    let output = function.output.as_ref()?;
    let output_var = &function.vars[output.var];
    let output_typed = output_var.slice || typed_length(function, &output_var.dims);
    if !output_typed {
        return Some(syn::Error::new_spanned(
            &output.ty,
            "#[grad(jacobian)]: this output's Jacobian would have a product of lengths, one \
             a const generic parameter, as its number of rows, which Rust cannot write as an \
             array's length; return a flat `[f64; N]`, or a `Vec<f64>`",
        ));
    }
    function.wrt.iter().find_map(|&i| {
        let param = &function.params[i];
        let var = &function.vars[param.var];
        (!matrix_block(function, i) && !typed_length(function, &var.dims)).then(|| {
            syn::Error::new_spanned(
                &param.ty,
                "#[grad(jacobian)]: this parameter's block would have a product of lengths, \
                 one a const generic parameter, as its number of columns, which Rust cannot \
                 write as an array's length; take a flat `[f64; N]`, or a slice",
            )
        })
    })
}

/// The type of parameter `index`'s block, with the rows `rows` (a constant, or `None` for
/// a `Vec` output).
fn block_type(function: &Function, index: usize) -> TokenStream {
    let var = &function.vars[function.params[index].var];
    let real = function.real;
    let row = if var.dims.is_empty() {
        quote!(#real)
    } else {
        let dims = &var.dims;
        let length = length(dims);
        quote!([#real; #length])
    };
    let output_typed = function.output.as_ref().is_none_or(|output| {
        let var = &function.vars[output.var];
        var.slice || typed_length(function, &var.dims)
    });
    if matrix_block(function, index) || !output_typed || !typed_length(function, &var.dims) {
        // (Untyped lengths are reported by `untyped_block`; a matrix keeps the stand-in's
        // signature well-formed.)
        return quote!(::autodiff::__private::Matrix<#real>);
    }
    match output_count(function) {
        Some(rows) => quote!([#row; #rows]),
        None => quote!(::autodiff::__private::vec::Vec<#row>),
    }
}

/// `&mut [f64]` over every number of `value`, whose nesting is `depth` arrays deep below
/// the slice `value[..]` gives.
fn flat_mut(value: &TokenStream, depth: usize) -> TokenStream {
    (0..depth).fold(
        quote!((&mut #value[..])),
        |inner, _| quote!(#inner.as_flattened_mut()),
    )
}

/// `&[f64]` over every number of `value` (see [`flat_mut`]).
fn flat(value: &TokenStream, depth: usize) -> TokenStream {
    (0..depth).fold(
        quote!((&#value[..])),
        |inner, _| quote!(#inner.as_flattened()),
    )
}

/// The signature of `<name>_jacobian`.
pub fn jacobian_signature(function: &Function) -> TokenStream {
    let original = &function.original;
    let vis = &original.vis;
    let name = jacobian_ident(&original.sig.ident);
    let params = super::param_list(function);
    let generics = &original.sig.generics;
    let attributes = attributes(function);
    let value = match &function.output {
        Some(output) => output.ty.to_token_stream(),
        None => super::forward::real_tuple(function.real, function.outputs),
    };
    let blocks: Vec<TokenStream> = if function.outputs == 1 && function.output.is_none() {
        function
            .wrt
            .iter()
            .map(|&i| partial_type(function, i))
            .collect()
    } else {
        function
            .wrt
            .iter()
            .map(|&i| block_type(function, i))
            .collect()
    };
    let doc = format!(
        " Jacobian of {}, generated by `#[grad(jacobian)]`: the value, then one block per \
         differentiated parameter, (output numbers) × (the parameter's numbers), row-major. \
         Computed by forward sweeps (`_jvp`, one per differentiated number) when those are \
         no more than the outputs, by reverse sweeps (`_vjp`, one per output number) \
         otherwise.",
        doc_link(function)
    );
    quote! {
        #[doc = #doc]
        #[must_use]
        #attributes
        #vis fn #name #generics(#(#params),*) -> (#value, #(#blocks),*)
    }
}

/// `<name>_jacobian`, or a spanned error for what it cannot differentiate yet.
pub fn jacobian_fn(function: &Function, activity: &Activity) -> syn::Result<TokenStream> {
    if let Some(error) = untyped_block(function) {
        return Err(error);
    }
    let signature = jacobian_signature(function);
    let names = names(function);
    let args = repeated_args(function);
    if function.outputs == 1 && function.output.is_none() {
        // One output: the Jacobian is the gradient.
        let grad = &names.grad;
        return Ok(quote!(#signature { #grad(#(#args),*) }));
    }
    let real = function.real;
    let usize = super::usize_type();
    let one = real.literal("1.0");
    let zero = real.literal("0.0");
    let value = local("__value");
    let rows = local("__rows");
    let (row, column) = (local("__r"), local("__c"));
    let primal = sibling(function, &function.original.sig.ident);
    let jvp = sibling(
        function,
        &super::jvp::jvp_ident(&function.original.sig.ident),
    );
    let vjp = &names.vjp;

    // The output: its number count, its flat view, and a seed of its shape.
    let (count, output_depth, vector) = match &function.output {
        Some(output) => {
            let var = &function.vars[output.var];
            let depth = var.dims.len().saturating_sub(usize::from(!var.slice));
            (output_count(function), depth, var.slice)
        }
        None => (output_count(function), 0, false),
    };
    let flat_output = |tangent: &Ident| -> TokenStream {
        if function.output.is_some() {
            flat(&tangent.to_token_stream(), output_depth)
        } else {
            let parts = (0..function.outputs).map(syn::Index::from);
            quote!([#(#tangent.#parts),*])
        }
    };
    let (mut start, value_of) = match &count {
        Some(count) => (
            quote! {
                let #rows: #usize = #count;
                let mut #value = ::core::option::Option::None;
            },
            quote! {
                match #value {
                    ::core::option::Option::Some(#value) => #value,
                    ::core::option::Option::None => #primal(#(#args),*),
                }
            },
        ),
        None => (
            // A `Vec`'s length is known once it is computed (by the first forward sweep
            // when there is one; see `first` below).
            quote! {
                let #value = #primal(#(#args),*);
                let #rows: #usize = #value.len();
            },
            quote!(#value),
        ),
    };
    // A `Vec` output whose first differentiated parameter has a fixed size: the first
    // forward sweep gives the value and the length, and its column is kept.
    let first = local("__first");
    let first_sweep = count.is_none()
        && function
            .wrt
            .first()
            .is_some_and(|&i| !matrix_block(function, i));
    let keep_value = |from: TokenStream| {
        if count.is_some() {
            quote!(#value = ::core::option::Option::Some(#from);)
        } else {
            quote!(let _ = #from;)
        }
    };

    // The blocks, zero.
    let blocks: Vec<Ident> = (0..function.wrt.len())
        .map(|k| local(&format!("__jacobian_{k}")))
        .collect();
    let cols: Vec<Ident> = (0..function.wrt.len())
        .map(|k| local(&format!("__cols_{k}")))
        .collect();
    let mut setup = TokenStream::new();
    for (k, &i) in function.wrt.iter().enumerate() {
        let var = &function.vars[function.params[i].var];
        let n = param_count(function, i);
        let (block, col) = (&blocks[k], &cols[k]);
        let row_zero = if var.dims.is_empty() {
            zero.clone()
        } else {
            quote!([#zero; #n])
        };
        let init = if matrix_block(function, i) {
            quote!(::autodiff::__private::Matrix::zeros(#rows, #col))
        } else if let Some(count) = &count {
            quote!([#row_zero; #count])
        } else {
            quote!(::autodiff::__private::vec![#row_zero; #rows])
        };
        let ty = block_type(function, i);
        setup.extend(quote! {
            let #col: #usize = #n;
            let mut #block: #ty = #init;
        });
    }
    // Each block's numbers, row after row.
    let block_flat = |k: usize| -> TokenStream {
        let i = function.wrt[k];
        let var = &function.vars[function.params[i].var];
        let block = &blocks[k];
        if matrix_block(function, i) {
            quote!(#block.as_mut_slice())
        } else if var.dims.is_empty() {
            quote!((&mut #block[..]))
        } else {
            quote!(#block.as_flattened_mut())
        }
    };

    // Forward: the tangent of one parameter is a basis vector, the others zero.
    let tangents: Vec<Ident> = function
        .wrt
        .iter()
        .map(|&i| local(&format!("__t_{i}")))
        .collect();
    let mut tangent_setup = TokenStream::new();
    let mut tangent_args = Vec::new();
    for (k, &i) in function.wrt.iter().enumerate() {
        let param = &function.params[i];
        let t = &tangents[k];
        let init = zero_partial(function, i);
        tangent_setup.extend(quote!(let mut #t = #init;));
        tangent_args.push(if matches!(param.ty, syn::Type::Reference(_)) {
            quote!(&#t)
        } else if param.strukt.is_some() {
            // A struct by value: a copy of the direction, which stays for the next sweep.
            numbers("copy", quote!(&#t))
        } else if function.vars[param.var].slice {
            quote!(::core::clone::Clone::clone(&#t))
        } else {
            quote!(#t)
        });
    }
    let tangent = local("__tangent");
    let flat_tangent = flat_output(&tangent);
    let mut forward = TokenStream::new();
    for (k, &i) in function.wrt.iter().enumerate() {
        let var = &function.vars[function.params[i].var];
        let t = &tangents[k];
        let depth = var.dims.len() + usize::from(var.slice);
        let strukt = function.params[i].strukt.is_some();
        let set = |at: &TokenStream, to: &TokenStream| {
            if strukt {
                let call = numbers("set", quote!(&mut #t, #at, #to));
                quote!(#call;)
            } else if depth == 0 {
                quote!(#t = #to;)
            } else {
                let view = flat_mut(&t.to_token_stream(), depth - 1);
                quote!(#view[#at] = #to;)
            }
        };
        let at = column.to_token_stream();
        let (set_one, set_zero) = (set(&at, &one), set(&at, &zero));
        let col = &cols[k];
        let block = block_flat(k);
        let keep = keep_value(quote!(__v));
        let sweep = quote! {
            #set_one
            let (__v, #tangent) = #jvp(#(#args,)* #(#tangent_args),*);
            #set_zero
            #keep
        };
        let sweep = if k == 0 && first_sweep {
            let (first_one, first_zero) = (set(&quote!(0), &one), set(&quote!(0), &zero));
            start = quote! {
                #tangent_setup
                #first_one
                let (#value, #first) = #jvp(#(#args,)* #(#tangent_args),*);
                #first_zero
                let #rows: #usize = #value.len();
                let mut #first = ::core::option::Option::Some(#first);
            };
            quote! {
                let #tangent = match #first.take() {
                    ::core::option::Option::Some(#tangent) => #tangent,
                    ::core::option::Option::None => {
                        #sweep
                        #tangent
                    }
                };
            }
        } else {
            sweep
        };
        forward.extend(quote! {
            for #column in 0..#col {
                #sweep
                {
                    let __column = #flat_tangent;
                    let __block = #block;
                    for #row in 0..#rows {
                        __block[#row * #col + #column] = __column[#row];
                    }
                }
            }
        });
    }

    // Reverse: the seed is a basis vector of the output's shape; every parameter that
    // holds numbers has a buffer, those of the blocks are copied out after each sweep.
    let seed = local("__seed");
    let (seed_setup, seed_arg, seed_set) = match &function.output {
        Some(output) => {
            let var = &function.vars[output.var];
            let zero_seed = if var.slice {
                quote!(::autodiff::__private::vec![#zero; #rows])
            } else {
                zeros(real, &var.dims)
            };
            let view = flat_mut(&seed.to_token_stream(), output_depth);
            let arg = if vector {
                quote!(&#seed)
            } else {
                quote!(#seed)
            };
            (
                quote!(let mut #seed = #zero_seed;),
                arg,
                Some({
                    let row = row.clone();
                    move |to: &TokenStream| quote!(#view[#row] = #to;)
                }),
            )
        }
        None => {
            let parts =
                (0..function.outputs).map(|k| quote!(if #row == #k { #one } else { #zero }));
            (TokenStream::new(), quote!((#(#parts),*)), None)
        }
    };
    let (seed_one, seed_zero) = match &seed_set {
        Some(set) => (set(&one), set(&zero)),
        None => (TokenStream::new(), TokenStream::new()),
    };
    let mut buffer_setup = TokenStream::new();
    let mut buffer_clear = TokenStream::new();
    let mut buffer_args = Vec::new();
    let mut copy_rows = TokenStream::new();
    for i in super::vjp::buffered_params(function) {
        let param = &function.params[i];
        let var = &function.vars[param.var];
        let buffer = local(&format!("__d_{i}"));
        let init = zero_partial(function, i);
        buffer_setup.extend(quote!(let mut #buffer = #init;));
        let element = zeros(real, &var.dims);
        buffer_clear.extend(if param.strukt.is_some() {
            let call = numbers("clear", quote!(&mut #buffer));
            quote!(#call;)
        } else if var.slice {
            quote!(#buffer.fill(#element);)
        } else {
            quote!(#buffer = #element;)
        });
        buffer_args.push(quote!(&mut #buffer));
        let Some(k) = function.wrt.iter().position(|&w| w == i) else {
            continue;
        };
        let col = &cols[k];
        let block = block_flat(k);
        if param.strukt.is_some() {
            let call = numbers(
                "write",
                quote!(&#buffer, &mut #block[#row * #col..(#row + 1) * #col]),
            );
            copy_rows.extend(quote!(#call;));
        } else {
            let depth = var.dims.len() + usize::from(var.slice);
            let source = if depth == 0 {
                quote!((&[#buffer][..]))
            } else {
                flat(&buffer.to_token_stream(), depth - 1)
            };
            copy_rows.extend(quote! {
                #block[#row * #col..(#row + 1) * #col].copy_from_slice(#source);
            });
        }
    }
    let keep = keep_value(quote!(__v));
    let reverse = quote! {
        #seed_setup
        #buffer_setup
        for #row in 0..#rows {
            #seed_one
            #buffer_clear
            let __v = #vjp(#(#args,)* #seed_arg, #(#buffer_args),*);
            #seed_zero
            #copy_rows
            #keep
        }
    };
    let inputs = quote!(0 #(+ #cols)*);
    // With the first sweep done up front, the tangents are declared before it.
    let forward_setup = (!first_sweep).then_some(tangent_setup);
    let mut forward = quote!(#forward_setup #forward);

    // Vector forward mode: every column in one pass, the directions the basis of the
    // differentiated numbers, when there are at most `MAX_LANES` of them.
    let mut lanes_fn = TokenStream::new();
    if let Some((k, small)) =
        lanes_count(function).filter(|_| super::jvp::lanes_apply(function, activity))
    {
        let lanes = quote!({ #k });
        let basis = super::jvp::lanes_basis(function);
        lanes_fn = super::jvp::lanes_fn(function, activity, &lanes, &basis);
        let name = sibling(
            function,
            &super::jvp::lanes_ident(&function.original.sig.ident),
        );
        let mut seeds = TokenStream::new();
        let mut seed_args = Vec::new();
        let mut offset = quote!(0);
        let mut copies = TokenStream::new();
        let all_rows = local("__lanes");
        for (k, &i) in function.wrt.iter().enumerate() {
            let var = &function.vars[function.params[i].var];
            let t = local(&format!("__t_{i}"));
            let dims = &var.dims;
            let lanes_ty = dims.iter().rev().fold(
                quote!(::autodiff::__private::Lanes<#lanes>),
                |inner, dim| quote!([#inner; #dim]),
            );
            let zero = super::filled(dims, quote!(::autodiff::__private::Lanes::<#lanes>::ZERO));
            let col = param_count(function, i);
            let unit = quote!(::autodiff::__private::Lanes::<#lanes>::unit(#offset + #column));
            let set = if dims.is_empty() {
                quote!(#t = #unit;)
            } else {
                let view = flat_mut(&t.to_token_stream(), dims.len() - 1);
                quote!(#view[#column] = #unit;)
            };
            // A parameter read number by number is seeded inside, its tangents units.
            if !basis[k] {
                seeds.extend(quote! {
                    let mut #t: #lanes_ty = #zero;
                    for #column in 0..#col {
                        #set
                    }
                });
                seed_args.push(t.to_token_stream());
            }
            let block = block_flat(k);
            copies.extend(quote! {
                {
                    let __block = #block;
                    for #column in 0..#col {
                        __block[#row * #col + #column] = #all_rows[#row].0[#offset + #column];
                    }
                }
            });
            offset = quote!(#offset + #col);
        }
        let lanes_tangent = local("__lanes_tangent");
        let flat_lanes = flat_output(&lanes_tangent);
        let call = quote!(#name(#(#args,)* #(#seed_args),*));
        let fill = quote! {
            let #all_rows = #flat_lanes;
            for #row in 0..#rows {
                #copies
            }
        };
        if count.is_some() {
            let keep = keep_value(quote!(__v));
            let lanes_forward = quote! {
                #seeds
                let (__v, #lanes_tangent) = #call;
                #fill
                #keep
            };
            forward = if small {
                lanes_forward
            } else {
                // A size named by a constant: the sweeps one by one past the limit.
                let max = proc_macro2::Literal::u64_unsuffixed(MAX_LANES);
                quote!(if #k <= #max { #lanes_forward } else { #forward })
            };
        } else if small {
            // A `Vec` output: its value and length come from the one pass.
            start = quote! {
                #seeds
                let (#value, #lanes_tangent) = #call;
                let #rows: #usize = #value.len();
            };
            forward = fill;
        }
        // (A `Vec` output with sizes named by constants keeps its sweeps one by one.)
        if !small && count.is_none() {
            lanes_fn = TokenStream::new();
        }
    }
    Ok(quote! {
        #lanes_fn

        #[allow(clippy::identity_op, clippy::erasing_op, clippy::needless_range_loop)]
        #signature {
            #start
            #setup
            if #inputs <= #rows {
                #forward
            } else {
                #reverse
            }
            (#value_of, #(#blocks),*)
        }
    })
}

/// The most directions vector forward mode carries at once.
const MAX_LANES: u64 = 64;

/// The number of differentiated numbers as a constant expression, when every parameter's
/// size is: an integer (then at most [`MAX_LANES`] in all) or a `const` item (checked
/// against [`MAX_LANES`] where it is used), not a const generic parameter (which Rust
/// does not let a type's length compute with). `None` otherwise.
fn lanes_count(function: &Function) -> Option<(TokenStream, bool)> {
    let generic: Vec<String> = function
        .original
        .sig
        .generics
        .const_params()
        .map(|c| c.ident.to_string())
        .collect();
    let mut known = Some(0u64);
    let mut terms = Vec::new();
    for &i in &function.wrt {
        let var = &function.vars[function.params[i].var];
        if matrix_block(function, i) {
            return None;
        }
        let mut n = Some(1u64);
        for dim in &var.dims {
            if crate::types::mentions(dim, &|ident| generic.contains(&ident.to_string())) {
                return None;
            }
            let literal = syn::parse2::<syn::LitInt>(dim.clone())
                .ok()
                .and_then(|l| l.base10_parse::<u64>().ok());
            n = n.zip(literal).and_then(|(n, l)| n.checked_mul(l));
        }
        known = known.zip(n).and_then(|(k, n)| k.checked_add(n));
        let dims = &var.dims;
        terms.push(quote!((1 #(* (#dims))*)));
    }
    match known {
        Some(k) if (1..=MAX_LANES).contains(&k) => Some((
            proc_macro2::Literal::u64_unsuffixed(k).into_token_stream(),
            true,
        )),
        Some(_) => None,
        None => Some((quote!((0 #(+ #terms)*)), false)),
    }
}
