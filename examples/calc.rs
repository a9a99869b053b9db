//! The `calc` language on the command line.
//!
//! ```text
//! cargo run --example calc -- examples/calc/neuron.calc   # run a script
//! cargo run --example calc < examples/calc/basic.calc     # a script on stdin
//! cargo run --example calc                                 # interactive prompt
//! ```
//!
//! A script stops at its first error, which is printed to stderr as
//! `error: line L, column C: message`, and the exit status is 1. At the interactive
//! prompt an error is printed and the prompt continues. See `autodiff::calc` for the
//! language.

use std::io::{self, BufRead, IsTerminal, Write};
use std::process::ExitCode;

use autodiff::calc::Interpreter;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] if io::stdin().is_terminal() => interactive(),
        [] => run(io::stdin().lock(), "<stdin>"),
        [path] if path == "-" => run(io::stdin().lock(), "<stdin>"),
        [path] => match std::fs::File::open(path) {
            Ok(file) => run(io::BufReader::new(file), path),
            Err(e) => {
                eprintln!("error: cannot open {path}: {e}");
                ExitCode::FAILURE
            }
        },
        _ => {
            eprintln!("usage: calc [FILE]   (no FILE: read stdin, or a prompt on a terminal)");
            ExitCode::from(2)
        }
    }
}

/// Runs a script line by line, printing the output of each line as soon as it is
/// evaluated; stops at the first error.
fn run(input: impl BufRead, name: &str) -> ExitCode {
    let mut calc = Interpreter::new();
    let mut stdout = io::stdout().lock();
    for (index, line) in input.lines().enumerate() {
        let line = match line {
            Ok(line) => line,
            Err(e) => {
                eprintln!("error: cannot read {name}: {e}");
                return ExitCode::FAILURE;
            }
        };
        match calc.run_line(&line, index + 1) {
            Ok(output) => {
                for out in output {
                    // A closed stdout (`calc file | head`) is not worth a panic.
                    if writeln!(stdout, "{out}").is_err() {
                        return ExitCode::FAILURE;
                    }
                }
            }
            Err(e) => {
                let _ = stdout.flush();
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}

/// A read-evaluate-print loop: `> ` prompt, errors reported and skipped, end of input
/// (Ctrl-D) quits.
fn interactive() -> ExitCode {
    let mut calc = Interpreter::new();
    let stdin = io::stdin();
    let mut line = String::new();
    for line_no in 1.. {
        print!("> ");
        let _ = io::stdout().flush();
        line.clear();
        match stdin.read_line(&mut line) {
            Ok(0) => {
                println!();
                break;
            }
            Ok(_) => {}
            Err(e) => {
                eprintln!("error: cannot read stdin: {e}");
                return ExitCode::FAILURE;
            }
        }
        match calc.run_line(line.trim_end_matches(['\n', '\r']), line_no) {
            Ok(output) => output.iter().for_each(|out| println!("{out}")),
            Err(e) => eprintln!("error: {e}"),
        }
    }
    ExitCode::SUCCESS
}
