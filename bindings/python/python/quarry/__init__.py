"""Quarry for Python: structured, validated, grounded data from text.

- `extract`, `check`, `scan`: deterministic detectors (emails, URLs, dates, phones, IPs, names,
  entities) with the extract skill's exact contract; no model.
- `ground`: where each value occurs in a text (Quarry's aligner, or LangExtract's resolver).
- `parse_json`: the lenient parser for model replies.
- `Extractor`: the schema agent over any model, every value grounded to its span.

Failures raise `quarry.errors` classes named after Quarry's error-code table.
"""

from . import errors
from ._detect import check, extract, ground, parse_json, scan
from ._extractor import Extractor
from ._native import __version__
from ._results import Extraction, FieldResult, Grounding, Match, Parsed, TokenUsage, Verdict
from .errors import *  # noqa: F403 (the error classes, named after the table)
from .errors import __all__ as _error_names

__all__ = [
    "extract",
    "check",
    "scan",
    "ground",
    "parse_json",
    "Extractor",
    "Extraction",
    "FieldResult",
    "Grounding",
    "Match",
    "Parsed",
    "TokenUsage",
    "Verdict",
    "errors",
    "__version__",
    *_error_names,
]
