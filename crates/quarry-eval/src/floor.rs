//! The committed quality floor: `floor.json` maps metric names to their minimum value.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context;

use crate::Metric;

pub fn load_floor() -> anyhow::Result<BTreeMap<String, f64>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("floor.json");
    let content =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&content).with_context(|| format!("parsing {}", path.display()))
}

/// One message per floor entry that is missing from `metrics` or below its minimum.
pub fn check_floor(metrics: &[Metric], floor: &BTreeMap<String, f64>) -> Vec<String> {
    floor
        .iter()
        .filter_map(
            |(name, minimum)| match metrics.iter().find(|metric| &metric.name == name) {
                None => Some(format!("{name}: no such metric was reported")),
                Some(metric) if metric.value + 1e-9 < *minimum => {
                    Some(format!("{name} = {:.4}, floor {minimum:.4}", metric.value))
                }
                Some(_) => None,
            },
        )
        .collect()
}
