//! Deterministic recognizers for the `extract` skill: no model, no IO.
//!
//! Each detector module exposes `find(text, …) -> Vec<Detection>` over **byte** ranges; [`detect`]
//! runs the detectors a target needs and converts spans to code points once, in one pass.
//!
//! **Architecture Invariant:** nothing here does IO or reads the environment; gazetteers are
//! compiled in, so the crate builds for `wasm32-unknown-unknown`.

pub mod date;
mod detection;
pub mod email;
pub mod entity;
pub mod ip;
mod links;
pub mod names;
pub mod phone;
pub mod skill;
pub mod url;

use chrono::{DateTime, FixedOffset};
use quarry_core::{Match, Target};

#[cfg(test)]
pub(crate) use detection::slices_and_values;
pub use detection::{Detection, to_matches};

/// Settings that change what detectors find or how they normalise it.
#[derive(Debug, Clone)]
pub struct DetectOptions {
    /// Reference time for relative dates ("next Tuesday", "in 3 days").
    pub now: DateTime<FixedOffset>,
    /// Default region for phone numbers written without a country code.
    pub region: phonenumber::country::Id,
}

impl DetectOptions {
    pub fn new(now: DateTime<FixedOffset>) -> Self {
        DetectOptions {
            now,
            region: phonenumber::country::Id::US,
        }
    }
}

/// Finds every value of `target` in `text`, in text order, with code-point spans.
pub fn detect(text: &str, target: Target, options: &DetectOptions) -> Vec<Match> {
    let detections = match target {
        Target::Email => email::find(text),
        Target::Url => url::find(text),
        Target::Date => date::find(text, options.now),
        Target::Entity => entity::find(text),
        Target::Name => names::find(text),
        Target::Phone => phone::find(text, options.region),
        Target::Ip => ip::find(text),
    };
    to_matches(text, detections)
}

/// Runs every detector over `text` in one call (the benchmark's "all targets" figure).
pub fn detect_all(text: &str, options: &DetectOptions) -> Vec<Match> {
    let mut detections = email::find(text);
    detections.extend(url::find(text));
    detections.extend(date::find(text, options.now));
    detections.extend(entity::find(text));
    detections.extend(phone::find(text, options.region));
    detections.extend(ip::find(text));
    to_matches(text, detections)
}
