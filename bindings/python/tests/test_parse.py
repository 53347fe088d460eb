"""The lenient parser from Python, on the JSON-repair cases the repository keeps from the peers'
suites (crates/quarry-eval/data/dev/json_repair.jsonl), held to the Rust evaluation's floor."""

import json

import pytest

import quarry
from conftest import REPO

CASES = REPO / "crates/quarry-eval/data/dev/json_repair.jsonl"
FLOORS = REPO / "crates/quarry-eval/floor.json"


def same(a, b):
    """Structural equality with numbers compared by value (1 == 1.0), as the evaluation does."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return a == b


def nothing(value):
    return value is None or value == "" or value == [] or value == {}


def test_the_shared_json_repair_cases_meet_the_evaluations_floor():
    records = [json.loads(line) for line in CASES.read_text().splitlines() if line.strip()]
    default = [r for r in records if not r.get("options")]
    assert len(default) > 50
    correct = 0
    for record in default:
        parsed = quarry.parse_json(record["input"])
        if record.get("expected_error"):
            correct += parsed is None
        elif parsed is None:
            correct += nothing(record["expected"])
        else:
            correct += same(parsed.value, record["expected"])
    floors = json.loads(FLOORS.read_text())
    floor = floors.get("json_repair.default_mode.accuracy")
    assert floor is not None, "floor.json names the default-mode accuracy"
    assert correct / len(default) >= floor, f"{correct}/{len(default)} below the floor {floor}"


def test_a_schema_fits_the_reply_and_reports_each_repair():
    reply = "Sure! Here it is:\n```json\n{'vendor': 'Acme', 'total': '1,200', 'paid': 'yes',}\n```"
    schema = {
        "type": "object",
        "properties": {
            "vendor": {"type": "string"},
            "total": {"type": "number"},
            "paid": {"type": "boolean"},
        },
    }
    parsed = quarry.parse_json(reply, schema)
    assert parsed.value == {"vendor": "Acme", "total": 1200, "paid": True}
    assert {"single_quotes", "trailing_comma"} <= set(parsed.flags)
    assert parsed.score > 0 and parsed.errors == []


def test_clean_json_costs_nothing_and_prose_is_a_costly_misfit():
    assert quarry.parse_json('{"a": [1, 2]}') == quarry.Parsed(value={"a": [1, 2]}, flags=[], score=0)
    assert quarry.parse_json("   ") is None
    misfit = quarry.parse_json("no braces here at all", {"type": "object"})
    assert misfit.errors == [{"path": "$", "message": "expected object, found a string"}]
    assert "unfitted" in misfit.flags


def test_strict_mode_refuses_what_default_mode_repairs():
    assert quarry.parse_json('{"a": 1', strict=False).value == {"a": 1}
    assert quarry.parse_json('{"a": 1', strict=True) is None


def test_a_schema_that_is_not_json_serialisable_is_a_type_error():
    with pytest.raises(TypeError):
        quarry.parse_json("{}", {"type": object})
