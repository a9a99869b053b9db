//! Prints one generated program as the build script writes it, with its entry in the
//! table of cases: `cargo run -p autodiff-difftest --example dump -- SEED INDEX`
//! (a failure of the tests names the program `pINDEX` of the batch's seed).

fn main() {
    let numbers: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("SEED and INDEX are numbers"))
        .collect();
    let [seed, index] = numbers[..] else {
        panic!("usage: dump SEED INDEX");
    };
    let program = autodiff_difftest::generator::random::program(seed, index);
    let name = format!("p{index:06}");
    let source = autodiff_difftest::generator::emit::module(&name, &program);
    print!("{source}");
    print!(
        "// {}",
        autodiff_difftest::generator::emit::case(&name, &program, &source)
    );
}
