//! The token budget (`max_tokens_budget`): a model call is made only if the tokens already used,
//! plus those reserved by calls in flight, plus this call's worst case fit in the budget.
//!
//! A call's worst case is estimated before it is made as `ceil(prompt bytes / 3)` — the bytes of
//! every message, tool definition and schema sent; real tokenizers average 3.5–4.5 bytes per
//! token for English and about 3 for CJK, so this over-estimates — plus `max_completion_tokens`,
//! the completion cap sent with the request. After the call, the reservation is replaced by the
//! usage the provider reported (or by the estimate when it reported none). Concurrent chunk
//! extractions share one budget, so the rule holds for the whole run.

use std::sync::Mutex;

use quarry_llm::{ChatRequest, Usage};

use crate::error::EngineError;

#[derive(Debug)]
pub(crate) struct Budget {
    limit: Option<u64>,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    used: u64,
    reserved: u64,
    usage: Usage,
}

/// Tokens set aside for one call in flight.
#[derive(Debug)]
#[must_use]
pub(crate) struct Reservation(u64);

impl Budget {
    pub(crate) fn new(limit: Option<u64>) -> Self {
        Budget {
            limit,
            state: Mutex::new(State::default()),
        }
    }

    /// Sets aside the next call's worst case, `next_call()`, or refuses when it does not fit.
    /// Without a limit nothing can be refused, and the estimate (a walk over the whole request)
    /// is not made.
    pub(crate) fn reserve(
        &self,
        next_call: impl FnOnce() -> u64,
    ) -> Result<Reservation, EngineError> {
        let Some(budget) = self.limit else {
            return Ok(Reservation(0));
        };
        let next_call = next_call();
        let mut state = self.state.lock().expect("budget lock is never poisoned");
        let committed = state.used + state.reserved;
        if committed + next_call > budget {
            return Err(EngineError::BudgetExceeded {
                budget,
                used: state.used,
                remaining: budget.saturating_sub(committed),
                next_call,
                usage: state.usage,
            });
        }
        state.reserved += next_call;
        Ok(Reservation(next_call))
    }

    /// Replaces the reservation with what the call really cost.
    pub(crate) fn settle(&self, reservation: Reservation, usage: Usage) {
        let mut state = self.state.lock().expect("budget lock is never poisoned");
        state.reserved -= reservation.0;
        let charged = if usage.total() == 0 {
            reservation.0
        } else {
            usage.total()
        };
        state.used += charged;
        state.usage.add(usage);
    }

    /// Tokens the run has consumed so far, as the providers reported them.
    pub(crate) fn usage(&self) -> Usage {
        self.state
            .lock()
            .expect("budget lock is never poisoned")
            .usage
    }

    /// Returns a reservation whose call failed before consuming anything we know of.
    pub(crate) fn release(&self, reservation: Reservation) {
        let mut state = self.state.lock().expect("budget lock is never poisoned");
        state.reserved -= reservation.0;
    }
}

/// The worst case of one call: estimated prompt tokens plus the completion cap.
pub(crate) fn estimate(request: &ChatRequest) -> u64 {
    let mut bytes = request.model.len();
    for message in &request.messages {
        bytes += message.content.as_deref().map_or(0, str::len) + 8;
        for call in &message.tool_calls {
            bytes += call.name.len() + call.arguments.len() + call.id.len();
        }
    }
    for tool in &request.tools {
        bytes += tool.name.len() + tool.description.len() + tool.parameters.to_string().len();
    }
    (bytes as u64).div_ceil(3) + u64::from(request.max_tokens.unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_that_would_cross_the_budget_is_refused() {
        let budget = Budget::new(Some(1000));
        let first = budget.reserve(|| 600).unwrap();
        // 600 reserved in flight: 500 more would cross 1000.
        assert!(matches!(
            budget.reserve(|| 500),
            Err(EngineError::BudgetExceeded { remaining: 400, .. })
        ));
        budget.settle(
            first,
            Usage {
                prompt_tokens: 200,
                completion_tokens: 50,
                ..Usage::default()
            },
        );
        let second = budget.reserve(|| 700).unwrap();
        budget.release(second);
        let err = budget.reserve(|| 800).unwrap_err();
        assert!(
            err.to_string()
                .contains("only 750 of the 1000-token budget remain (250 used)"),
            "{err}"
        );
    }

    #[test]
    fn no_limit_never_refuses() {
        let budget = Budget::new(None);
        for _ in 0..2 {
            let reservation = budget.reserve(|| u64::MAX / 2).unwrap();
            budget.settle(reservation, Usage::default());
        }
    }
}
