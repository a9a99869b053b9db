//! Prints one generated program as the build script writes it, with its entry in the
//! table of cases: `cargo run -p autodiff-difftest --example dump -- SEED INDEX`
//! (a failure of the tests names the program `pINDEX` of the batch's seed), or
//! `… -- SEED INDEX long` for the long program `lINDEX` (of
//! `generator::random::LONG_OPS` operations, as the build script writes it by default).

fn main() {
    let words: Vec<String> = std::env::args().skip(1).collect();
    let long = words.last().is_some_and(|w| w == "long");
    let numbers: Vec<u64> = words
        .iter()
        .filter(|w| *w != "long")
        .map(|a| a.parse().expect("SEED and INDEX are numbers"))
        .collect();
    let [seed, index] = numbers[..] else {
        panic!("usage: dump SEED INDEX [long]");
    };
    use autodiff_difftest::generator::random;
    let (program, name) = if long {
        (
            random::long_program(seed, index, random::LONG_OPS),
            format!("l{index:04}"),
        )
    } else {
        (random::program(seed, index), format!("p{index:06}"))
    };
    let source = autodiff_difftest::generator::emit::module(&name, &program);
    print!("{source}");
    print!(
        "// {}",
        autodiff_difftest::generator::emit::case(&name, &program, &source)
    );
}
