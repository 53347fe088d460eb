//! The grounding aligner (placeholder; being written).
