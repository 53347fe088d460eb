//! The output guardrail (placeholder; being written).
