//! Ids and timestamps. Times are RFC 3339 UTC with a fixed microsecond precision, so their text
//! order is their time order in both backends; within one process they strictly increase, so
//! "newest first" never depends on which of two same-microsecond rows the database returns first.

use std::sync::atomic::{AtomicI64, Ordering};

use chrono::{DateTime, SecondsFormat, Utc};

static LAST_MICROS: AtomicI64 = AtomicI64::new(0);

/// A fresh UUID v4 as text.
pub(crate) fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// Now, strictly later than any earlier call in this process.
pub(crate) fn now() -> String {
    let wall = Utc::now().timestamp_micros();
    let mut last = LAST_MICROS.load(Ordering::Relaxed);
    let micros = loop {
        let next = wall.max(last + 1);
        match LAST_MICROS.compare_exchange_weak(last, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => break next,
            Err(seen) => last = seen,
        }
    };
    format_micros(micros)
}

fn format_micros(micros: i64) -> String {
    DateTime::<Utc>::from_timestamp_micros(micros)
        .unwrap_or_default()
        .to_rfc3339_opts(SecondsFormat::Micros, true)
}

/// Milliseconds from `start` to `end`, both as written by [`now`]; `None` if either is unreadable.
pub(crate) fn millis_between(start: &str, end: &str) -> Option<i64> {
    let start = DateTime::parse_from_rfc3339(start).ok()?;
    let end = DateTime::parse_from_rfc3339(end).ok()?;
    Some((end - start).num_milliseconds())
}

/// The wall clock `delay` from now (lease expiries, retry times), in the format of [`now`].
pub(crate) fn after(delay: std::time::Duration) -> String {
    let delay = i64::try_from(delay.as_micros()).unwrap_or(i64::MAX / 2);
    format_micros(Utc::now().timestamp_micros().saturating_add(delay))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_have_fixed_width_and_increase() {
        let a = now();
        let b = now();
        assert_eq!(a.len(), "2024-01-01T00:00:00.000000Z".len());
        assert!(a < b, "{a} < {b}");
        assert_eq!(
            millis_between("2024-01-01T00:00:00.000000Z", "2024-01-01T00:00:01.500000Z"),
            Some(1500)
        );
    }
}
