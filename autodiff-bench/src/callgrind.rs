//! Instruction counts by `valgrind --tool=callgrind`, for machines whose kernel refuses
//! the hardware counter: an example runs itself under valgrind with the arguments that
//! make it call one gradient `n` times and nothing else, once with few calls and once with
//! many, and the difference divided by the difference in calls is the count per call
//! (exact, so repeatable, where wall times move by tens of percent).

use std::process::Command;

/// The calls of the two runs.
const FEW: u64 = 10;
const MANY: u64 = 110;

/// Instructions per call of what this executable does when run with `args` followed by a
/// number of calls: the count of a run with 110 calls less that of a run with 10, divided
/// by 100. `None` when valgrind cannot be run, a run fails, or its output has no count.
#[must_use]
pub fn per_call(args: &[&str]) -> Option<f64> {
    let exe = std::env::current_exe().ok()?;
    let count = |calls: u64| -> Option<u64> {
        let output = Command::new("valgrind")
            .args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
            .arg(&exe)
            .args(args)
            .arg(calls.to_string())
            .output()
            .ok()?;
        if !output.status.success() {
            return None;
        }
        collected(&String::from_utf8_lossy(&output.stderr))
    };
    let (few, many) = (count(FEW)?, count(MANY)?);
    Some(many.checked_sub(few)? as f64 / (MANY - FEW) as f64)
}

/// The total of callgrind's `==pid== Collected : 123456` line.
fn collected(stderr: &str) -> Option<u64> {
    let line = stderr.lines().find(|l| l.contains("Collected :"))?;
    line.rsplit(' ').next()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_total() {
        let stderr = "==11448== Events    : Ir\n==11448== Collected : 390436\n==11448==\n";
        assert_eq!(collected(stderr), Some(390_436));
        assert_eq!(collected("no count here"), None);
    }
}
