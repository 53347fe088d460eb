//! The quality gate: every metric named in `floor.json` must reach its committed minimum on the
//! committed corpus (`data/dev/`, or `QUARRY_EVAL_DIR`).

use quarry_eval::floor::{check_floor, load_floor};
use quarry_eval::{corpus, evaluate_all};

#[test]
fn detectors_and_aligner_reach_the_committed_floor() {
    let metrics = evaluate_all(&corpus::default_dir()).expect("the eval corpus is readable");
    let failures = check_floor(&metrics, &load_floor().expect("floor.json is valid"));
    assert!(
        failures.is_empty(),
        "below the floor:\n{}",
        failures.join("\n")
    );
}
