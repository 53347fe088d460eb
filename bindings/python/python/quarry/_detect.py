"""The deterministic part: the extract skill, the output guardrail, the multi-target scan, the
grounding aligner and the lenient JSON parser. No model, no network."""

import datetime as _dt
import json
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Union

from . import _native
from ._results import Grounding, Match, Parsed, Verdict

Now = Union[_dt.datetime, str, None]


def _now_text(now: Now) -> str:
    """RFC 3339 for the reference time: the current local time when None; a naive datetime is
    read as local time."""
    if now is None:
        return _dt.datetime.now().astimezone().isoformat()
    if isinstance(now, _dt.datetime):
        return (now if now.tzinfo is not None else now.astimezone()).isoformat()
    if isinstance(now, str):
        return now
    raise TypeError(f"now must be a datetime, an RFC 3339 string or None, not {type(now).__name__}")


def extract(
    text: str,
    target: str,
    *,
    now: Now = None,
    region: Optional[str] = None,
    detail: bool = False,
) -> Dict[str, Any]:
    """The extract skill's answer for one target, exactly as the CLI and the HTTP API give it:
    `{"email": "a@b.co"}` for one value, a list for several, `[]` for none; `entity` answers
    `{"entity": {"people": […], "organizations": […], "locations": […]}}`. With `detail`, a
    `matches` list gives every match's code-point offsets and normalised value.

    `now` anchors relative dates ("next Friday"); `region` is the default phone region (US).
    Raises a `SkillError` subclass (`InvalidTarget`, `EmptyInput`, `InvalidNow`, …).
    """
    return json.loads(_native.extract(text, target, _now_text(now), region, detail))


def check(text: str, target: str, output: Union[str, Mapping[str, Any]]) -> Verdict:
    """The output guardrail: is `output` (what a model or any extractor answered for `target`)
    valid JSON of the target's shape, well-formed and grounded in `text`?"""
    if not isinstance(output, str):
        output = json.dumps(output)
    verdict = json.loads(_native.check(text, target, output))
    return Verdict(
        accepted=verdict["verdict"] == "accepted",
        values=verdict.get("values", []),
        reasons=verdict.get("reasons", []),
    )


def scan(
    text: str,
    targets: Union[str, Iterable[str]] = ("email", "url", "phone", "date", "ip", "entity"),
    *,
    now: Now = None,
    region: Optional[str] = None,
) -> Iterator[Match]:
    """Every match of every target, in text order, with code-point offsets: for each match
    `text[m.start:m.end] == m.text`."""
    if isinstance(targets, str):
        targets = [targets]
    found = json.loads(_native.scan(text, list(targets), _now_text(now), region))
    return (
        Match(
            target=m["target"],
            text=m["text"],
            start=m["start"],
            end=m["end"],
            value=m["value"],
            kind=m["type"],
        )
        for m in found
    )


def ground(
    text: str,
    values: Union[str, Sequence[str]],
    *,
    mode: str = "quarry",
    fuzzy: bool = True,
    fuzzy_threshold: Optional[float] = None,
    accept_partial: Optional[bool] = None,
) -> List[Grounding]:
    """Where each value occurs in `text`, in order.

    `mode="quarry"` (the default) prefers successive occurrences for repeated values, accepts a
    fuzzy match of at least `fuzzy_threshold` (0.75) of the value's words, and refuses a value
    only partly present. `mode="langextract"` reproduces LangExtract's resolver: all values
    aligned at once as token blocks, a leading part accepted as `match_lesser`, the rest fuzzy.
    """
    if isinstance(values, str):
        values = [values]
    found = json.loads(
        _native.ground(text, list(values), mode, fuzzy, fuzzy_threshold, accept_partial)
    )
    return [Grounding(**entry) for entry in found]


def parse_json(
    reply: str,
    schema: Optional[Mapping[str, Any]] = None,
    *,
    strict: bool = False,
) -> Optional[Parsed]:
    """The lenient parser: the best JSON reading of a model's reply (code fences, prose around
    it, single quotes, trailing commas, comments, Python literals, truncation …).

    With a JSON Schema every candidate in the reply is fitted to it (strings to numbers, enums by
    case …) and the one needing the fewest, cheapest repairs wins; without one the reply is read
    as one JSON document, as json_repair does (bare prose reads as a string, flagged). None when
    the reply is blank or cannot be read at all.
    """
    schema_text = None if schema is None else json.dumps(schema)
    parsed = json.loads(_native.parse_json(reply, schema_text, strict))
    if parsed is None:
        return None
    return Parsed(**parsed)
