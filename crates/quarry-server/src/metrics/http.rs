//! The server's own HTTP counters: requests per (method, route, status) and a latency histogram
//! per (method, route), fed by the request log middleware (`request_log.rs`). Labels come only
//! from the route table's templates, the standard methods and status codes, so the series stay
//! few whatever clients send.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

/// Upper bounds (seconds) of the latency histogram's buckets: Prometheus's defaults, which span
/// a health check to a long extraction.
pub const LATENCY_BUCKETS: [f64; 11] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// Requests and latencies observed since the server started.
#[derive(Debug, Default)]
pub struct HttpMetrics {
    observed: Mutex<Observed>,
}

/// A copy of the counts, as `/metrics` renders them.
#[derive(Debug, Clone, Default)]
pub struct Observed {
    /// Requests per (method, route, status).
    pub requests: BTreeMap<(&'static str, String, u16), u64>,
    /// Latency per (method, route).
    pub latency: BTreeMap<(&'static str, String), Histogram>,
}

/// One latency histogram: per bucket of [`LATENCY_BUCKETS`] the requests at or under its
/// bound (not cumulative here; the renderer sums), the sum of latencies and the count.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Histogram {
    pub buckets: [u64; LATENCY_BUCKETS.len()],
    pub sum_seconds: f64,
    pub count: u64,
}

impl Histogram {
    fn observe(&mut self, seconds: f64) {
        if let Some(bucket) = LATENCY_BUCKETS.iter().position(|bound| seconds <= *bound) {
            self.buckets[bucket] += 1;
        }
        self.sum_seconds += seconds;
        self.count += 1;
    }
}

impl HttpMetrics {
    /// Counts one answered request.
    pub fn record(&self, method: &'static str, route: &str, status: u16, latency: Duration) {
        let mut observed = self
            .observed
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        *observed
            .requests
            .entry((method, route.to_owned(), status))
            .or_default() += 1;
        observed
            .latency
            .entry((method, route.to_owned()))
            .or_default()
            .observe(latency.as_secs_f64());
    }

    /// The counts so far.
    pub fn snapshot(&self) -> Observed {
        self.observed
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_counted_per_status_and_timed_per_route() {
        let metrics = HttpMetrics::default();
        metrics.record("GET", "/v1/entities/{id}", 200, Duration::from_millis(3));
        metrics.record("GET", "/v1/entities/{id}", 404, Duration::from_millis(30));
        metrics.record("GET", "/v1/entities/{id}", 200, Duration::from_secs(60));
        let observed = metrics.snapshot();
        let route = "/v1/entities/{id}".to_owned();
        assert_eq!(observed.requests[&("GET", route.clone(), 200)], 2);
        assert_eq!(observed.requests[&("GET", route.clone(), 404)], 1);
        let histogram = &observed.latency[&("GET", route)];
        assert_eq!(histogram.count, 3);
        assert_eq!(histogram.buckets[0], 1, "3 ms is under 5 ms");
        assert_eq!(histogram.buckets[3], 1, "30 ms is under 50 ms");
        assert_eq!(
            histogram.buckets.iter().sum::<u64>(),
            2,
            "60 s is only in +Inf"
        );
    }
}
