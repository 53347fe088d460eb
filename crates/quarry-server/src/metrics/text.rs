//! Prometheus's text exposition format, version 0.0.4 (`text/plain; version=0.0.4`): a `# HELP`
//! and `# TYPE` line per family, then one line per sample, label values escaped.
//!
//! Hand-written rather than through the `prometheus-client` crate: every family here but the
//! HTTP ones is read at scrape time (the store's queues, the LLM counters of `quarry-llm`, the
//! extraction slots), which that crate's registry of live handles does not fit, and it writes
//! OpenMetrics text (`# EOF`, `_total` added to counter names) rather than this format.

use std::fmt::Write;

/// The response's content type.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// A family's type.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    Counter,
    Gauge,
    Histogram,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
            Kind::Histogram => "histogram",
        }
    }
}

/// The exposition being written.
#[derive(Debug, Default)]
pub struct Exposition {
    text: String,
}

impl Exposition {
    /// Starts a family: its help text and type.
    pub fn family(&mut self, name: &str, kind: Kind, help: &str) {
        let help = help.replace('\\', "\\\\").replace('\n', "\\n");
        let _ = writeln!(self.text, "# HELP {name} {help}");
        let _ = writeln!(self.text, "# TYPE {name} {}", kind.name());
    }

    /// One sample of the family started last (`name` may carry a histogram's suffix).
    pub fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: f64) {
        self.text.push_str(name);
        if !labels.is_empty() {
            self.text.push('{');
            for (at, (label, value)) in labels.iter().enumerate() {
                if at > 0 {
                    self.text.push(',');
                }
                let _ = write!(self.text, "{label}=\"{}\"", escape(value));
            }
            self.text.push('}');
        }
        let _ = writeln!(self.text, " {}", number(value));
    }

    pub fn finish(self) -> String {
        self.text
    }
}

/// A label value escaped as the format asks: backslash, double quote and line feed.
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// A sample value: integers without a fraction, `+Inf`/`-Inf`/`NaN` spelled as the format does.
fn number(value: f64) -> String {
    if value.is_nan() {
        "NaN".to_owned()
    } else if value.is_infinite() {
        if value > 0.0 { "+Inf" } else { "-Inf" }.to_owned()
    } else if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{value:.0}")
    } else {
        format!("{value}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_samples_and_escaped_labels() {
        let mut out = Exposition::default();
        out.family("quarry_x_total", Kind::Counter, "Things.\nCounted.");
        out.sample(
            "quarry_x_total",
            &[("model", "a\"b\\c\nd"), ("k", "v")],
            3.0,
        );
        out.sample("quarry_x_total", &[], 0.25);
        out.sample("quarry_x_total", &[("le", "+Inf")], f64::INFINITY);
        assert_eq!(
            out.finish(),
            "# HELP quarry_x_total Things.\\nCounted.\n\
             # TYPE quarry_x_total counter\n\
             quarry_x_total{model=\"a\\\"b\\\\c\\nd\",k=\"v\"} 3\n\
             quarry_x_total 0.25\n\
             quarry_x_total{le=\"+Inf\"} +Inf\n"
        );
    }
}
