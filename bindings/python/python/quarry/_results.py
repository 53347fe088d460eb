"""The values Quarry's functions answer with: small frozen dataclasses over the JSON the native
module returns (offsets are code points, i.e. Python string indices)."""

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple


@dataclass(frozen=True)
class Match:
    """One value a detector found: `text[start:end] == match.text`."""

    target: str
    text: str
    start: int
    end: int
    value: str
    """The normalised value: E.164 phone, ISO date or interval, the text for emails and names."""
    kind: str
    """email, url, date, datetime, date_range, time, duration, set, phone, ip, person, …"""


@dataclass(frozen=True)
class Verdict:
    """The output guardrail's answer on what an extractor said about a text."""

    accepted: bool
    values: List[Dict[str, Any]] = field(default_factory=list)
    """When accepted: each value with where it was found."""
    reasons: List[Dict[str, Any]] = field(default_factory=list)
    """When rejected: `{"kind": "Hallucination", "message": …}` and the like."""


@dataclass(frozen=True)
class Grounding:
    """Where one value occurs in the source, or why it was not found."""

    value: str
    start: Optional[int]
    end: Optional[int]
    status: Optional[str]
    """match_exact, match_normalized, match_fuzzy, match_lesser; None when not found."""
    score: float
    reason: Optional[str] = None

    @property
    def grounded(self) -> bool:
        return self.status is not None


@dataclass(frozen=True)
class Parsed:
    """The lenient parser's best reading of a model's reply."""

    value: Any
    flags: List[str]
    """Each repair made, e.g. `single_quotes`, `trailing_comma`, `extracted_from_prose`."""
    score: int
    """The repairs' total cost: 0 for clean JSON; lower is better."""
    errors: List[Dict[str, str]] = field(default_factory=list)
    """Parts that could not be fitted to the schema, as `{"path": "$.total", "message": …}`."""


@dataclass(frozen=True)
class TokenUsage:
    prompt_tokens: int
    completion_tokens: int
    #: Prompt tokens the model did not read again (a local model's prefix cache, or a server
    #: that reports OpenAI's ``prompt_tokens_details.cached_tokens``).
    cached_tokens: int = 0

    @classmethod
    def from_report(cls, usage: dict) -> "TokenUsage":
        details = usage.get("prompt_tokens_details") or {}
        return cls(
            prompt_tokens=usage["prompt_tokens"],
            completion_tokens=usage["completion_tokens"],
            cached_tokens=details.get("cached_tokens", 0),
        )

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class FieldResult:
    """Everything known about one top-level field of an extraction."""

    name: str
    value: Any
    spans: List[Tuple[int, int]]
    """Where the value occurs in the text: `(start, end)` code points."""
    grounding: str
    """exact, normalized, clarified, fuzzy, exempt, empty or not_found."""
    confidence: str
    """high, medium or low."""
    attempts: int
    repairs: List[str]
    problems: List[Dict[str, Any]]


@dataclass(frozen=True)
class Extraction:
    """A schema agent's result. `value` holds every schema property (None where the text has no
    value); with a Pydantic model it is an instance of it."""

    value: Any
    fields: Dict[str, FieldResult]
    complete: bool
    question: Optional[str]
    """When fields stay unresolved: the question for a person. Pass the answer back with
    `extract(text, clarifications=[answer])`."""
    unresolved: List[Dict[str, Any]]
    usage: TokenUsage
    model_calls: int
    chunks: int
    validation_error: Optional[Exception] = None
    """With a Pydantic model: why the value did not validate (it was built without validation)."""

    @property
    def spans(self) -> Dict[str, List[Tuple[int, int]]]:
        return {name: result.spans for name, result in self.fields.items()}

    @property
    def grounding(self) -> Dict[str, str]:
        return {name: result.grounding for name, result in self.fields.items()}

    @property
    def confidence(self) -> Dict[str, str]:
        return {name: result.confidence for name, result in self.fields.items()}
