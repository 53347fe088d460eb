//! Choosing one value among several agents' answers for a field: `majority` (the most common
//! value, compared fuzzily), `unanimous` (all must agree) or `best-confidence` (ties by agent
//! order). The winner is stored pending, the others superseded, with the agreement ratio.

use quarry_core::model::{Confidence, ConsensusStrategy};
use serde_json::Value;

/// The verdict on the candidates of one field.
#[derive(Debug, Clone, PartialEq)]
pub struct ConsensusDecision {
    /// Index of the winning candidate; `None` when the strategy failed the field.
    pub winner: Option<usize>,
    /// Share of all agents whose value agrees with the winner's (or, on failure, with the most
    /// common value).
    pub agreement: f64,
    /// Why the field failed, if it did.
    pub failure: Option<String>,
}

/// Decides among `candidates` (in agent order); `agents` counts every agent asked, including any
/// that produced no value.
pub fn decide(
    strategy: ConsensusStrategy,
    candidates: &[(Value, Confidence)],
    agents: usize,
) -> ConsensusDecision {
    let agents = agents.max(candidates.len()).max(1);
    if candidates.is_empty() {
        return ConsensusDecision {
            winner: None,
            agreement: 0.0,
            failure: Some("no agent produced a value".to_owned()),
        };
    }
    let supporters = |i: usize| {
        candidates
            .iter()
            .filter(|(value, _)| values_agree(&candidates[i].0, value))
            .count()
    };
    let ratio = |count: usize| count as f64 / agents as f64;
    match strategy {
        ConsensusStrategy::Majority => {
            // The first candidate of the largest group wins: ties go to agent order.
            let (best, count) =
                (0..candidates.len())
                    .map(|i| (i, supporters(i)))
                    .fold(
                        (0, 0),
                        |best, (i, n)| if n > best.1 { (i, n) } else { best },
                    );
            ConsensusDecision {
                winner: Some(best),
                agreement: ratio(count),
                failure: None,
            }
        }
        ConsensusStrategy::Unanimous => {
            let count = supporters(0);
            if count == agents {
                ConsensusDecision {
                    winner: Some(0),
                    agreement: 1.0,
                    failure: None,
                }
            } else {
                let most = (0..candidates.len()).map(supporters).max().unwrap_or(0);
                ConsensusDecision {
                    winner: None,
                    agreement: ratio(most),
                    failure: Some(format!(
                        "the agents disagree ({} of {agents} agree); unanimous consensus failed",
                        most
                    )),
                }
            }
        }
        ConsensusStrategy::BestConfidence => {
            let best = (0..candidates.len()).fold(0, |best, i| {
                if candidates[i].1 > candidates[best].1 {
                    i
                } else {
                    best
                }
            });
            ConsensusDecision {
                winner: Some(best),
                agreement: ratio(supporters(best)),
                failure: None,
            }
        }
    }
}

/// Whether two extracted values say the same thing: strings ignoring case, whitespace and
/// trailing punctuation, and near-equal (one edit in ten); numbers within a relative 1e-6; lists
/// as sets; objects key by key.
pub fn values_agree(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => numbers_agree(x.as_f64(), y.as_f64()),
        (Value::String(x), Value::String(y)) => strings_agree(x, y),
        (Value::Number(x), Value::String(y)) | (Value::String(y), Value::Number(x)) => {
            numbers_agree(x.as_f64(), y.trim().replace(',', "").parse().ok())
        }
        (Value::Array(x), Value::Array(y)) => {
            x.iter()
                .all(|item| y.iter().any(|other| values_agree(item, other)))
                && y.iter()
                    .all(|item| x.iter().any(|other| values_agree(item, other)))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(key, value)| y.get(key).is_some_and(|other| values_agree(value, other)))
        }
        _ => a == b,
    }
}

fn numbers_agree(a: Option<f64>, b: Option<f64>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a == b || (a - b).abs() <= 1e-6 * a.abs().max(b.abs()),
        _ => false,
    }
}

fn normalize(text: &str) -> Vec<char> {
    let lowered = text.to_lowercase();
    let words: Vec<&str> = lowered.split_whitespace().collect();
    let joined = words.join(" ");
    joined
        .trim_end_matches(['.', ',', ';', ':', '!'])
        .chars()
        .collect()
}

fn strings_agree(a: &str, b: &str) -> bool {
    let (a, b) = (normalize(a), normalize(b));
    if a == b {
        return true;
    }
    let longest = a.len().max(b.len());
    // Short strings must match exactly: "Q1" and "Q2" are different answers.
    longest >= 10 && edit_distance(&a, &b) * 10 <= longest
}

fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        current[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use Confidence::{High, Low, Medium};

    #[test]
    fn fuzzy_comparison() {
        assert!(values_agree(&json!("Acme  Corp."), &json!("acme corp")));
        assert!(values_agree(
            &json!("Acme Corporation"),
            &json!("Acme Corporatin")
        ));
        assert!(!values_agree(&json!("Q1"), &json!("Q2")));
        assert!(values_agree(&json!(1200000.0), &json!(1200000.0000001)));
        assert!(!values_agree(&json!(1200), &json!(1201)));
        assert!(values_agree(&json!(["a", "B"]), &json!(["b", "a", "A"])));
        assert!(!values_agree(&json!(["a"]), &json!(["a", "c"])));
    }

    #[test]
    fn majority_takes_the_largest_group_and_ties_go_to_agent_order() {
        let candidates = [
            (json!("Globex"), High),
            (json!("Acme"), Low),
            (json!("acme "), Medium),
        ];
        let decision = decide(ConsensusStrategy::Majority, &candidates, 3);
        assert_eq!(decision.winner, Some(1));
        assert!((decision.agreement - 2.0 / 3.0).abs() < 1e-9);
        let tie = decide(ConsensusStrategy::Majority, &candidates[..2], 2);
        assert_eq!(tie.winner, Some(0));
    }

    #[test]
    fn unanimous_fails_on_disagreement_or_a_missing_agent() {
        let agree = [(json!(5), High), (json!(5.0), Low)];
        assert_eq!(
            decide(ConsensusStrategy::Unanimous, &agree, 2).winner,
            Some(0)
        );
        assert!(
            decide(ConsensusStrategy::Unanimous, &agree, 3)
                .failure
                .is_some()
        );
        let split = [(json!(5), High), (json!(6), High)];
        let decision = decide(ConsensusStrategy::Unanimous, &split, 2);
        assert_eq!(decision.winner, None);
        assert_eq!(decision.agreement, 0.5);
    }

    #[test]
    fn best_confidence_ties_by_agent_order() {
        let candidates = [(json!(1), Medium), (json!(2), High), (json!(3), High)];
        assert_eq!(
            decide(ConsensusStrategy::BestConfidence, &candidates, 3).winner,
            Some(1)
        );
    }
}
