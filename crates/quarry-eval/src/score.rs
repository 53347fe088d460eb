//! Precision / recall / F1 counting and the named metrics the suites report.

use std::collections::HashMap;
use std::hash::Hash;

/// True-positive, false-positive and false-negative counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SpanScore {
    pub tp: usize,
    pub fp: usize,
    pub fn_: usize,
}

impl SpanScore {
    /// Scores one record: predicted and gold are multisets of keys (e.g. `(start, end, type)`).
    pub fn add_record<K: Eq + Hash + Clone>(&mut self, predicted: &[K], gold: &[K]) {
        let mut remaining: HashMap<K, usize> = HashMap::new();
        for key in gold {
            *remaining.entry(key.clone()).or_default() += 1;
        }
        let mut tp = 0;
        for key in predicted {
            if let Some(count) = remaining.get_mut(key).filter(|count| **count > 0) {
                *count -= 1;
                tp += 1;
            }
        }
        self.tp += tp;
        self.fp += predicted.len() - tp;
        self.fn_ += gold.len() - tp;
    }

    pub fn merge(&mut self, other: SpanScore) {
        self.tp += other.tp;
        self.fp += other.fp;
        self.fn_ += other.fn_;
    }

    pub fn precision(&self) -> f64 {
        ratio(self.tp, self.tp + self.fp)
    }

    pub fn recall(&self) -> f64 {
        ratio(self.tp, self.tp + self.fn_)
    }

    pub fn f1(&self) -> f64 {
        let (p, r) = (self.precision(), self.recall());
        if p + r == 0.0 {
            0.0
        } else {
            2.0 * p * r / (p + r)
        }
    }

    /// `name.precision`, `name.recall` and `name.f1` metrics over `records` records.
    pub fn metrics(&self, name: &str, records: usize) -> Vec<Metric> {
        vec![
            Metric::new(format!("{name}.precision"), self.precision(), records),
            Metric::new(format!("{name}.recall"), self.recall(), records),
            Metric::new(format!("{name}.f1"), self.f1(), records),
        ]
    }
}

/// `numerator / denominator`, and 1.0 for an empty denominator (nothing to get wrong).
pub fn ratio(numerator: usize, denominator: usize) -> f64 {
    if denominator == 0 {
        1.0
    } else {
        numerator as f64 / denominator as f64
    }
}

/// One named figure, e.g. `url.linkify-it.f1 = 0.98 over 64 records`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Metric {
    pub name: String,
    pub value: f64,
    pub records: usize,
}

impl Metric {
    pub fn new(name: impl Into<String>, value: f64, records: usize) -> Self {
        Metric {
            name: name.into(),
            value,
            records,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_multiset_matches() {
        let mut score = SpanScore::default();
        score.add_record(&[(0, 3), (0, 3), (5, 7)], &[(0, 3), (8, 9)]);
        assert_eq!(
            score,
            SpanScore {
                tp: 1,
                fp: 2,
                fn_: 1
            }
        );
        assert!((score.precision() - 1.0 / 3.0).abs() < 1e-9);
        assert!((score.recall() - 0.5).abs() < 1e-9);
    }
}
