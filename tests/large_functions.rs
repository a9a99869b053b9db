//! A long function: 600 lines of straight-line code, about 3,000 operations, whose
//! gradient has about 7,000 `let`s in one block. Without the flat scopes of long blocks
//! (`codegen/scopes.rs`), rustc overflows its stack on it in a debug build (a crash while
//! it writes debug information for one nested scope per `let`), so this file compiling at
//! all, in the test profile, is the first check. The gradient is then compared with
//! `Tape` running the same computation, and with central differences.
//!
//! Its forward mode (`long_jvp`) has as many `let`s, flattened and cut the same way.
//!
//! Gradients this long are also cut into functions of at most 250 statements each
//! (`codegen/outline.rs`), in modules of their own beside the function, the values crossing
//! from one to the next in arrays: `long` crosses them between straight runs and the
//! assignments to `s` and `u`, `mixed` around a loop and a branch in the middle, with
//! values used twice, an array parameter and a parameter reassigned, `sliced` through the
//! buffers of `_grad_into` and `_vjp`, and `nested` from a test function's body, naming a
//! constant of the module; `with_items` defines a constant in its body, and its segments
//! stay nested in it.

mod common;

use autodiff::prelude::*;
use common::{assert_all_close, fd_gradient};

/// `long` with its 600 lines written out by a macro, one per number listed.
macro_rules! long_function {
    ($($k:literal)*) => {
        #[grad(jvp)]
        fn long(x: f64, y: f64, z: f64) -> f64 {
            let mut s = 0.1;
            let mut u = 0.2;
            $(
                let t = (s * x + u * (1.0 + ($k % 7) as f64 * 0.01)).sin();
                s = t * 0.9 + s * 0.1 + y * 0.01;
                u = (u * z).tanh() + t * 0.5;
            )*
            s * u + x * y * z
        }

        /// The same computation on a tape.
        fn long_on_tape<'t>(x: Var<'t>, y: Var<'t>, z: Var<'t>) -> Var<'t> {
            let mut s = x * 0.0 + 0.1;
            let mut u = x * 0.0 + 0.2;
            $(
                let t = (s * x + u * (1.0 + ($k % 7) as f64 * 0.01)).sin();
                s = t * 0.9 + s * 0.1 + y * 0.01;
                u = (u * z).tanh() + t * 0.5;
            )*
            s * u + x * y * z
        }
    };
}

long_function! {
        0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29
        30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59
        60 61 62 63 64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 82 83 84 85 86 87 88 89
        90 91 92 93 94 95 96 97 98 99 100 101 102 103 104 105 106 107 108 109 110 111 112 113 114 115 116 117 118 119
        120 121 122 123 124 125 126 127 128 129 130 131 132 133 134 135 136 137 138 139 140 141 142 143 144 145 146 147 148 149
        150 151 152 153 154 155 156 157 158 159 160 161 162 163 164 165 166 167 168 169 170 171 172 173 174 175 176 177 178 179
        180 181 182 183 184 185 186 187 188 189 190 191 192 193 194 195 196 197 198 199 200 201 202 203 204 205 206 207 208 209
        210 211 212 213 214 215 216 217 218 219 220 221 222 223 224 225 226 227 228 229 230 231 232 233 234 235 236 237 238 239
        240 241 242 243 244 245 246 247 248 249 250 251 252 253 254 255 256 257 258 259 260 261 262 263 264 265 266 267 268 269
        270 271 272 273 274 275 276 277 278 279 280 281 282 283 284 285 286 287 288 289 290 291 292 293 294 295 296 297 298 299
        300 301 302 303 304 305 306 307 308 309 310 311 312 313 314 315 316 317 318 319 320 321 322 323 324 325 326 327 328 329
        330 331 332 333 334 335 336 337 338 339 340 341 342 343 344 345 346 347 348 349 350 351 352 353 354 355 356 357 358 359
        360 361 362 363 364 365 366 367 368 369 370 371 372 373 374 375 376 377 378 379 380 381 382 383 384 385 386 387 388 389
        390 391 392 393 394 395 396 397 398 399 400 401 402 403 404 405 406 407 408 409 410 411 412 413 414 415 416 417 418 419
        420 421 422 423 424 425 426 427 428 429 430 431 432 433 434 435 436 437 438 439 440 441 442 443 444 445 446 447 448 449
        450 451 452 453 454 455 456 457 458 459 460 461 462 463 464 465 466 467 468 469 470 471 472 473 474 475 476 477 478 479
        480 481 482 483 484 485 486 487 488 489 490 491 492 493 494 495 496 497 498 499 500 501 502 503 504 505 506 507 508 509
        510 511 512 513 514 515 516 517 518 519 520 521 522 523 524 525 526 527 528 529 530 531 532 533 534 535 536 537 538 539
        540 541 542 543 544 545 546 547 548 549 550 551 552 553 554 555 556 557 558 559 560 561 562 563 564 565 566 567 568 569
        570 571 572 573 574 575 576 577 578 579 580 581 582 583 584 585 586 587 588 589 590 591 592 593 594 595 596 597 598 599
}

#[test]
fn the_gradient_of_a_long_function_compiles_and_is_right() {
    for point in [[0.3, -0.2, 0.7], [1.1, 0.4, -0.9], [-0.6, 0.8, 0.2]] {
        let [x, y, z] = point;
        let (value, dx, dy, dz) = long_grad(x, y, z);
        assert_eq!(value.to_bits(), long(x, y, z).to_bits());

        let tape = Tape::new();
        let (tx, ty, tz) = (tape.var(x), tape.var(y), tape.var(z));
        let out = long_on_tape(tx, ty, tz);
        let g = out.gradient();
        assert_all_close(&[dx, dy, dz], &[g[tx], g[ty], g[tz]], 1e-12, "against Tape");

        let fd = fd_gradient(|p| long(p[0], p[1], p[2]), &point);
        assert_all_close(&[dx, dy, dz], &fd, 1e-6, "against central differences");

        // Forward mode along each axis gives the same partials.
        let along = |t: [f64; 3]| long_jvp(x, y, z, t[0], t[1], t[2]);
        assert_eq!(along([1.0, 0.0, 0.0]).0.to_bits(), value.to_bits());
        let tangents = [
            along([1.0, 0.0, 0.0]).1,
            along([0.0, 1.0, 0.0]).1,
            along([0.0, 0.0, 1.0]).1,
        ];
        assert_all_close(&tangents, &[dx, dy, dz], 1e-12, "forward mode");
    }
}

/// `mixed` with 150 lines written out twice, a loop and a branch between them.
macro_rules! mixed_function {
    ($($k:literal)*) => {
        #[grad]
        fn mixed(x: f64, mut y: f64, w: &[f64; 4]) -> f64 {
            let mut a = x;
            let mut b = y;
            $(
                let c = a * b;
                let d = c.sin() + a;
                a = (d - b * 0.5).tanh();
                b = (c + d) * 0.1 + w[$k % 4];
                y = y * 0.999 + c * 0.001;
            )*
            let mut acc = 0.0;
            for i in 0..4 {
                acc += w[i] * a + b + y;
            }
            if acc > 0.0 {
                b *= acc;
            } else {
                b -= acc;
            }
            $(
                let c = a * b;
                let d = c.sin() + a;
                a = (d - b * 0.5).tanh();
                b = (c + d) * 0.1 + w[$k % 4];
            )*
            a * b + x
        }

        /// The same computation on a tape.
        fn mixed_on_tape<'t>(x: Var<'t>, mut y: Var<'t>, w: [Var<'t>; 4]) -> Var<'t> {
            let mut a = x;
            let mut b = y;
            $(
                let c = a * b;
                let d = c.sin() + a;
                a = (d - b * 0.5).tanh();
                b = (c + d) * 0.1 + w[$k % 4];
                y = y * 0.999 + c * 0.001;
            )*
            let mut acc = x * 0.0;
            for wi in w {
                acc = acc + wi * a + b + y;
            }
            if acc.value() > 0.0 {
                b *= acc;
            } else {
                b -= acc;
            }
            $(
                let c = a * b;
                let d = c.sin() + a;
                a = (d - b * 0.5).tanh();
                b = (c + d) * 0.1 + w[$k % 4];
            )*
            a * b + x
        }
    };
}

mixed_function! {
        0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 82 83 84 85 86 87 88 89 90 91 92 93 94 95 96 97 98 99 100 101 102 103 104 105 106 107 108 109 110 111 112 113 114 115 116 117 118 119 120 121 122 123 124 125 126 127 128 129 130 131 132 133 134 135 136 137 138 139 140 141 142 143 144 145 146 147 148 149
}

#[test]
fn a_long_function_cut_around_a_loop_and_a_branch_is_right() {
    for (x, y, w) in [
        (0.3, -0.2, [0.5, -0.1, 0.2, 0.3]),
        (-0.7, 0.4, [-0.4, 0.6, -0.2, 0.1]),
    ] {
        let (value, dx, dy, dw) = mixed_grad(x, y, &w);
        assert_eq!(value.to_bits(), mixed(x, y, &w).to_bits());

        let tape = Tape::new();
        let (tx, ty) = (tape.var(x), tape.var(y));
        let tw = w.map(|wi| tape.var(wi));
        let out = mixed_on_tape(tx, ty, tw);
        let g = out.gradient();
        let mut expected = vec![g[tx], g[ty]];
        expected.extend(tw.iter().map(|&v| g[v]));
        let mut actual = vec![dx, dy];
        actual.extend(dw);
        assert_all_close(&actual, &expected, 1e-12, "against Tape");

        let point = [x, y, w[0], w[1], w[2], w[3]];
        let fd = fd_gradient(|p| mixed(p[0], p[1], &[p[2], p[3], p[4], p[5]]), &point);
        assert_all_close(&actual, &fd, 1e-6, "against central differences");
    }
}

/// `sliced`, on a slice, with 200 lines written out.
macro_rules! sliced_function {
    ($($k:literal)*) => {
        #[grad]
        fn sliced(xs: &[f64], y: f64) -> f64 {
            let mut a = y;
            $(
                let c = xs[$k % 3] * a;
                a = (c + a * 0.5).sin() + xs[($k + 1) % 3] * 0.1;
            )*
            a * y
        }

        /// The same computation on a tape.
        fn sliced_on_tape<'t>(xs: &[Var<'t>], y: Var<'t>) -> Var<'t> {
            let mut a = y;
            $(
                let c = xs[$k % 3] * a;
                a = (c + a * 0.5).sin() + xs[($k + 1) % 3] * 0.1;
            )*
            a * y
        }
    };
}

sliced_function! {
        0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 82 83 84 85 86 87 88 89 90 91 92 93 94 95 96 97 98 99 100 101 102 103 104 105 106 107 108 109 110 111 112 113 114 115 116 117 118 119 120 121 122 123 124 125 126 127 128 129 130 131 132 133 134 135 136 137 138 139 140 141 142 143 144 145 146 147 148 149 150 151 152 153 154 155 156 157 158 159 160 161 162 163 164 165 166 167 168 169 170 171 172 173 174 175 176 177 178 179 180 181 182 183 184 185 186 187 188 189 190 191 192 193 194 195 196 197 198 199
}

#[test]
fn a_long_function_on_a_slice_fills_its_buffers() {
    let (xs, y) = ([0.4, -0.3, 0.7], 0.6);
    let (value, dxs, dy) = sliced_grad(&xs, y);
    assert_eq!(value.to_bits(), sliced(&xs, y).to_bits());

    let tape = Tape::new();
    let txs: Vec<_> = xs.iter().map(|&x| tape.var(x)).collect();
    let ty = tape.var(y);
    let g = sliced_on_tape(&txs, ty).gradient();
    let mut expected: Vec<f64> = txs.iter().map(|&v| g[v]).collect();
    expected.push(g[ty]);
    let mut actual = dxs.clone();
    actual.push(dy);
    assert_all_close(&actual, &expected, 1e-12, "against Tape");

    let point = [xs[0], xs[1], xs[2], y];
    let fd = fd_gradient(|p| sliced(&p[..3], p[3]), &point);
    assert_all_close(&actual, &fd, 1e-6, "against central differences");

    // The pullback adds `seed` times the gradient to what its buffers hold.
    let (mut d_xs, mut d_y) = (vec![1.0; 3], 1.0);
    let pulled = sliced_vjp(&xs, y, 2.0, &mut d_xs, &mut d_y);
    assert_eq!(pulled.to_bits(), value.to_bits());
    let scaled: Vec<f64> = actual.iter().map(|d| 1.0 + 2.0 * d).collect();
    d_xs.push(d_y);
    assert_all_close(&d_xs, &scaled, 1e-12, "the pullback");
}

/// A constant of the module, which `nested`'s segments (in modules of their own, beside
/// the function) name through their `use super::*`.
const STEP: usize = 3;

/// `nested`, defined in a test function's body, naming a constant of the module; and
/// `with_items`, whose body defines a constant of its own (its segments then stay nested
/// in it); each with 400 lines written out.
macro_rules! nested_functions {
    ($($k:literal)*) => {
        #[test]
        fn a_long_function_in_a_function_body_is_right() {
            #[grad]
            fn nested(x: f64, y: f64) -> f64 {
                let mut s = x;
                $(
                    s = (s * 0.97 + y * (($k + STEP) as f64) * 1e-3).sin() + 0.5 * y;
                )*
                s * x
            }

            #[grad]
            fn with_items(x: f64, y: f64) -> f64 {
                const LOCAL: usize = 3;
                let mut s = x;
                $(
                    s = (s * 0.97 + y * (($k + LOCAL) as f64) * 1e-3).sin() + 0.5 * y;
                )*
                s * x
            }

            fn on_tape<'t>(x: Var<'t>, y: Var<'t>) -> Var<'t> {
                let mut s = x;
                $(
                    s = (s * 0.97 + y * (($k + STEP) as f64) * 1e-3).sin() + y * 0.5;
                )*
                s * x
            }

            for point in [[0.3, -0.2], [-0.8, 0.6]] {
                let [x, y] = point;
                let tape = Tape::new();
                let (tx, ty) = (tape.var(x), tape.var(y));
                let g = on_tape(tx, ty).gradient();
                let fd = fd_gradient(|p| nested(p[0], p[1]), &point);
                let (value, dx, dy) = nested_grad(x, y);
                assert_eq!(value.to_bits(), nested(x, y).to_bits());
                assert_all_close(&[dx, dy], &[g[tx], g[ty]], 1e-12, "against Tape");
                assert_all_close(&[dx, dy], &fd, 1e-6, "against central differences");
                let (value, ex, ey) = with_items_grad(x, y);
                assert_eq!(value.to_bits(), with_items(x, y).to_bits());
                assert_eq!([ex.to_bits(), ey.to_bits()], [dx.to_bits(), dy.to_bits()]);
            }
        }
    };
}

nested_functions! {
        0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32
        33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61
        62 63 64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 82 83 84 85 86 87 88 89 90
        91 92 93 94 95 96 97 98 99 100 101 102 103 104 105 106 107 108 109 110 111 112 113 114
        115 116 117 118 119 120 121 122 123 124 125 126 127 128 129 130 131 132 133 134 135 136
        137 138 139 140 141 142 143 144 145 146 147 148 149 150 151 152 153 154 155 156 157 158
        159 160 161 162 163 164 165 166 167 168 169 170 171 172 173 174 175 176 177 178 179 180
        181 182 183 184 185 186 187 188 189 190 191 192 193 194 195 196 197 198 199 200 201 202
        203 204 205 206 207 208 209 210 211 212 213 214 215 216 217 218 219 220 221 222 223 224
        225 226 227 228 229 230 231 232 233 234 235 236 237 238 239 240 241 242 243 244 245 246
        247 248 249 250 251 252 253 254 255 256 257 258 259 260 261 262 263 264 265 266 267 268
        269 270 271 272 273 274 275 276 277 278 279 280 281 282 283 284 285 286 287 288 289 290
        291 292 293 294 295 296 297 298 299 300 301 302 303 304 305 306 307 308 309 310 311 312
        313 314 315 316 317 318 319 320 321 322 323 324 325 326 327 328 329 330 331 332 333 334
        335 336 337 338 339 340 341 342 343 344 345 346 347 348 349 350 351 352 353 354 355 356
        357 358 359 360 361 362 363 364 365 366 367 368 369 370 371 372 373 374 375 376 377 378
        379 380 381 382 383 384 385 386 387 388 389 390 391 392 393 394 395 396 397 398 399
}
