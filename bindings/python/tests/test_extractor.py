"""The schema agent from Python against the scripted model server: a Pydantic model in, an
instance out; a hallucinated value rejected with feedback and escalated to a question; the
async twin; the GIL released while the model works; cancellation; errors."""

import asyncio
import threading
import time
from typing import Optional

import pydantic
import pytest

import quarry
from conftest import submit

DOCUMENT = "Invoice from Acme Supplies Ltd, 15 January 2024. Total due: $1,200."


class Invoice(pydantic.BaseModel):
    vendor: str = pydantic.Field(description="Who issued the invoice")
    total: float
    issued: Optional[str] = pydantic.Field(default=None, description="Issue date, ISO 8601")


def extractor(server, schema=Invoice, **options):
    return quarry.Extractor(
        schema, "openai:gpt-test", base_url=server.base_url, api_key="sk-test", **options
    )


def test_a_pydantic_model_in_an_instance_out_with_spans(server):
    server.push(
        submit({"vendor": "Acme Supplies Ltd", "total": 1200, "issued": "2024-01-15"}, usage=[300, 40])
    )
    extraction = extractor(server).extract(DOCUMENT)
    assert extraction.complete and extraction.question is None
    assert extraction.value == Invoice(vendor="Acme Supplies Ltd", total=1200, issued="2024-01-15")
    assert isinstance(extraction.value, Invoice)
    (vendor_span,) = extraction.spans["vendor"]
    assert DOCUMENT[vendor_span[0] : vendor_span[1]] == "Acme Supplies Ltd"
    assert extraction.grounding["vendor"] == "exact"
    assert extraction.confidence["vendor"] == "high"
    assert extraction.usage == quarry.TokenUsage(prompt_tokens=300, completion_tokens=40)
    assert extraction.model_calls == 1
    # The model was sent the Pydantic model's JSON Schema and the document.
    (request,) = server.requests()
    assert request["model"] == "gpt-test"
    assert DOCUMENT in str(request["messages"])
    assert "Who issued the invoice" in str(request)


def test_a_hallucinated_value_is_rejected_with_feedback_then_fixed(server):
    server.push(
        submit({"vendor": "Acme Supplies Ltd", "total": 1500}),
        submit({"vendor": "Acme Supplies Ltd", "total": 1200}),
    )
    extraction = extractor(server).extract(DOCUMENT)
    assert extraction.complete
    assert extraction.value.total == 1200
    second = server.requests()[1]
    feedback = [m for m in second["messages"] if m["role"] == "tool"]
    assert "1500 does not appear in the document" in feedback[0]["content"]


def test_a_value_the_model_keeps_inventing_escalates_to_a_person(server):
    server.push(*[submit({"vendor": "Globex", "total": 1200})] * 3)
    extraction = extractor(server).extract(DOCUMENT)
    assert not extraction.complete
    assert "'vendor' (Who issued the invoice)" in extraction.question
    assert [issue["field"] for issue in extraction.unresolved] == ["vendor"]
    assert extraction.fields["vendor"].grounding == "not_found"
    # The partial value is still an Invoice, built without validation, with the reason kept.
    assert isinstance(extraction.value, Invoice) and extraction.value.vendor is None
    assert isinstance(extraction.validation_error, pydantic.ValidationError)
    # The person's answer completes it.
    server.push(submit({"vendor": "Acme Supplies Ltd", "total": 1200}))
    answered = extractor(server).extract(DOCUMENT, clarifications=["The vendor is Acme Supplies Ltd"])
    assert answered.complete and answered.value.vendor == "Acme Supplies Ltd"


def test_a_json_schema_dict_gives_a_dict(server):
    schema = {"type": "object", "properties": {"vendor": {"type": "string"}}}
    server.push({"content": "```json\n{'vendor': 'Acme Supplies Ltd',}\n```"})
    extraction = extractor(server, schema).extract(DOCUMENT)
    assert extraction.value == {"vendor": "Acme Supplies Ltd"}
    assert "single_quotes" in extraction.fields["vendor"].repairs


def test_the_async_twin_runs_extractions_concurrently(server):
    # Each reply comes 2 s after its request: all three requests in flight before any answer
    # shows the three extractions overlap.
    for _ in range(3):
        server.push(submit({"vendor": "Acme Supplies Ltd", "total": 1200}, delay_ms=2000))
    invoices = extractor(server)

    async def main():
        tasks = [asyncio.ensure_future(invoices.aextract(DOCUMENT)) for _ in range(3)]
        while len(server.requests()) < 3:
            await asyncio.sleep(0.02)
        overlapped = not any(task.done() for task in tasks)
        return overlapped, await asyncio.gather(*tasks)

    overlapped, results = asyncio.run(main())
    assert overlapped
    assert all(r.complete and r.value.total == 1200 for r in results)


def test_the_gil_is_released_while_the_model_works(server):
    server.push(submit({"vendor": "Acme Supplies Ltd", "total": 1200}, delay_ms=2000))
    invoices = extractor(server)
    done = threading.Event()
    result = {}

    def work():
        result["extraction"] = invoices.extract(DOCUMENT)
        done.set()

    thread = threading.Thread(target=work)
    thread.start()
    # Python code on this thread sees the request in flight while the other thread is still
    # inside `extract`: it could not run if `extract` held the GIL.
    while not server.requests():
        time.sleep(0.01)
    seen_in_flight = not done.is_set()
    thread.join()
    assert seen_in_flight
    assert result["extraction"].complete


def test_cancelling_the_async_task_cancels_the_model_call(server):
    server.push(submit({"vendor": "Acme Supplies Ltd", "total": 1200}, delay_ms=600_000))
    invoices = extractor(server)

    async def main():
        task = asyncio.ensure_future(invoices.aextract(DOCUMENT))
        while not server.requests():  # the request is in flight
            await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # The executor's thread returns only if the native call stopped waiting for the reply
        # (ten minutes away).
        await asyncio.wait_for(asyncio.get_running_loop().shutdown_default_executor(), 60)

    asyncio.run(main())


def test_a_cancel_token_stops_a_blocking_call(server):
    from quarry import _native

    server.push(submit({"vendor": "Acme Supplies Ltd", "total": 1200}, delay_ms=600_000))
    invoices = extractor(server)
    token = _native.CancelToken()
    threading.Timer(0.3, token.cancel).start()
    with pytest.raises(quarry.InvalidState):
        invoices._native.extract(DOCUMENT, [], token)


def test_a_provider_that_keeps_failing_is_a_model_error(server):
    server.push({"status": 500, "body": "boom"}, {"status": 500, "body": "boom"})
    with pytest.raises(quarry.ModelError) as raised:
        extractor(server, retries=1).extract(DOCUMENT)
    assert "500" in raised.value.message


def test_configuration_errors_name_what_to_fix(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("QUARRY_API_KEY", raising=False)
    with pytest.raises(quarry.MissingApiKey) as missing:
        quarry.Extractor(Invoice, "openai:gpt-4o-mini")
    assert "OPENAI_API_KEY" in missing.value.message
    with pytest.raises(quarry.InvalidModel):
        quarry.Extractor(Invoice, "gpt-4o-mini")
    with pytest.raises(quarry.InvalidSchema):
        quarry.Extractor({"type": "object", "properties": {"a": {"$ref": "#/nowhere"}}}, "openai:x", api_key="k")
    with pytest.raises(TypeError):
        quarry.Extractor(42, "openai:x", api_key="k")
    with pytest.raises(TypeError):
        quarry.Extractor(Invoice, "openai:x", api_key="k", colour="blue")


def test_ctrl_c_interrupts_an_extraction_waiting_on_the_model(server):
    import signal
    import subprocess
    import sys

    server.push(submit({"vendor": "Acme Supplies Ltd", "total": 1200}, delay_ms=600_000))
    # A terminal's Ctrl-C: the child gets Python's KeyboardInterrupt handler even when this
    # suite runs in the background, where a shell starts commands with SIGINT ignored (and
    # Python then installs no handler for it).
    script = (
        "import signal\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "import quarry\n"
        f"e = quarry.Extractor({{'type': 'object', 'properties': {{'vendor': {{'type': 'string'}}}}}},"
        f" 'openai:gpt-test', base_url={server.base_url!r}, api_key='k')\n"
        "try:\n"
        f"    e.extract({DOCUMENT!r})\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted')\n"
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    while not server.requests():
        time.sleep(0.02)
    child.send_signal(signal.SIGINT)
    out, _ = child.communicate(timeout=60)
    assert out.strip() == "interrupted" and child.returncode == 0


def test_local_names_resolve_in_the_installed_models_directory(monkeypatch, tmp_path):
    monkeypatch.setenv("QUARRY_MODELS_DIR", str(tmp_path))
    with pytest.raises(quarry.QuarryError) as missing:
        quarry.Extractor(Invoice, "local:absent")
    assert str(tmp_path / "absent.gguf") in missing.value.message
