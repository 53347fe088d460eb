"""Quarry's MCP server driven by the official Python SDK (PyPI `mcp`).

Run by crates/quarry-cli/tests/it/mcp.rs, which seeds a database, starts `quarry serve` and a
scripted model, and passes what it made in the JSON file named by $QUARRY_MCP_FIXTURE. Every tool
is called over stdio (`quarry mcp`, the local user) and over streamable HTTP (`/mcp`, an API key
with every scope) and its result checked; each has an error case (a tool error with the API's
error shape, never a crash or protocol error). Over HTTP: no key is 401, a key without a scope
neither sees nor may call the tool, another project's key sees nothing of this one; a server
without a database needs no key and offers only the tools that need none.
"""

import asyncio
import json
import os
import sys
import traceback
from contextlib import asynccontextmanager

import httpx2
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

FIXTURE = json.load(open(os.environ["QUARRY_MCP_FIXTURE"]))

ALL_TOOLS = {
    "extract", "check", "extract_with_schema", "add_document", "search_documents",
    "trigger_workflow", "get_workflow_status", "retry_fields", "submit_value",
    "list_pending_results", "approve_result", "reject_result", "add_episode", "search_graph",
    "get_entity",
}
# What a key with only entities:read may use.
READER_TOOLS = {
    "extract", "check", "search_documents", "get_workflow_status", "list_pending_results",
    "search_graph", "get_entity",
}

INVOICE_SCHEMA = {
    "type": "object",
    "properties": {"vendor": {"type": "string"}, "total": {"type": "number"}},
    "required": ["vendor", "total"],
}
INVOICE = "Invoice from Acme Supplies Ltd for the spring order. The amount is on the next page."


@asynccontextmanager
async def stdio_session():
    """`quarry mcp` on the fixture's database as a child process."""
    params = StdioServerParameters(
        command=FIXTURE["binary"],
        args=["mcp", "--db", FIXTURE["db"], *FIXTURE["model_args"]],
        env={"QUARRY_EMBEDDER": "hashing", "USER": "mcp-tester"},
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


@asynccontextmanager
async def http_session(key, url=None):
    """`/mcp` of the fixture's server (or `url`'s) with an API key (or none)."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        async with streamable_http_client((url or FIXTURE["url"]) + "/mcp", http_client=http) as streams:
            read, write = streams[0], streams[1]
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


async def call(session, tool, arguments):
    """A successful tool call's structured result (the client checked it against the tool's
    output schema)."""
    result = await session.call_tool(tool, arguments)
    text = result.content[0].text if result.content else ""
    assert not result.is_error, f"{tool}({arguments}) failed: {text}"
    assert result.structured_content is not None, f"{tool} answered no structured content"
    return result.structured_content


async def call_error(session, tool, arguments, code, mentions=None):
    """A failing tool call: a tool error (not a protocol error) with `code` in the API's error
    shape, its text 'Code - message', and the message naming `mentions`."""
    result = await session.call_tool(tool, arguments)
    assert result.is_error, f"{tool}({arguments}) should fail, answered {result.structured_content}"
    error = result.structured_content
    assert set(error) == {"error", "message"}, f"{tool}: not the error shape: {error}"
    assert error["error"] == code, f"{tool}({arguments}): expected {code}, got {error}"
    assert error["message"].strip(), f"{tool}: empty error message"
    assert result.content[0].text == f"{code} - {error['message']}", result.content[0].text
    if mentions is not None:
        assert mentions in error["message"], f"{tool}: '{mentions}' not in {error['message']!r}"
    return error


async def read_json(session, uri):
    """A resource's JSON."""
    result = await session.read_resource(uri)
    content = result.contents[0]
    assert content.mime_type == "application/json", content
    return json.loads(content.text)


async def read_error(session, uri, mentions):
    """A resource read that fails with a protocol error naming `mentions`."""
    try:
        await session.read_resource(uri)
    except Exception as error:  # the SDK raises its MCP error type
        assert mentions in str(error), f"{uri}: '{mentions}' not in {error}"
    else:
        raise AssertionError(f"{uri} was read")


async def wait_for(probe, what, seconds=60):
    """Polls `probe` until it answers something truthy."""
    for _ in range(seconds * 4):
        found = await probe()
        if found:
            return found
        await asyncio.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what}")


async def every_tool(session, transport):
    """Every tool with its result and an error case, on the transport's own entity."""
    entity = FIXTURE["entities"][transport]
    values = FIXTURE["values"]

    listed = await session.list_tools()
    tools = {tool.name: tool for tool in listed.tools}
    assert set(tools) == ALL_TOOLS, f"tools/list: {sorted(tools)}"
    for tool in tools.values():
        assert tool.input_schema["type"] == "object", tool.name
        assert tool.output_schema and tool.output_schema["type"] == "object", tool.name
        assert tool.description, tool.name
    assert tools["extract"].input_schema["required"] == ["text", "target"]

    # extract: the skill, as the CLI and POST /skill/extract answer it.
    found = await call(session, "extract", {"text": "Write to hello@agent.rs today.", "target": "email"})
    assert found == {"email": "hello@agent.rs"}, found
    detailed = await call(session, "extract", {
        "text": "Call +1 415 555 0100 or visit https://agent.rs.", "target": "url", "detail": True})
    assert detailed["url"] == "https://agent.rs" and detailed["matches"][0]["start"] == 30, detailed
    await call_error(session, "extract", {"text": "a", "target": "fax"}, "InvalidTarget", "'fax'")
    await call_error(session, "extract", {"target": "email"}, "MalformedRequest", "text")

    # check: the guardrail's verdict.
    accepted = await call(session, "check", {
        "text": "Write to hello@agent.rs.", "target": "email", "output": '{"email": "hello@agent.rs"}'})
    assert accepted["verdict"] == "accepted" and accepted["values"][0]["value"] == "hello@agent.rs"
    rejected = await call(session, "check", {
        "text": "Write to hello@agent.rs.", "target": "email", "output": '{"email": "nobody@else.rs"}'})
    assert rejected["verdict"] == "rejected" and rejected["reasons"], rejected
    await call_error(session, "check", {"text": "x", "target": "email"}, "InvalidArguments", "output")

    # extract_with_schema: a question, answered in the same conversation.
    first = await call(session, "extract_with_schema", {"document": INVOICE, "schema": INVOICE_SCHEMA})
    assert first["status"] == "needs_clarification", first
    assert first["value"]["vendor"] == FIXTURE["chat"]["vendor"], first
    assert first["question"] and "total" in first["question"], first
    done = await call(session, "extract_with_schema", {
        "conversation_id": first["conversation_id"], "answer": "The total is 1200 USD."})
    assert done["status"] == "complete" and done["question"] is None, done
    assert done["value"] == {"vendor": FIXTURE["chat"]["vendor"], "total": FIXTURE["chat"]["total"]}
    assert done["conversation_id"] == first["conversation_id"]
    await call_error(session, "extract_with_schema", {"document": INVOICE}, "InvalidSchema", "schema")
    await call_error(session, "extract_with_schema", {"answer": "1200"}, "InvalidArguments",
                     "conversation_id")
    await call_error(session, "extract_with_schema", {"conversation_id": "conv_nope", "answer": "x"},
                     "UnknownConversation", "conv_nope")

    # add_document: stored, linked, and idempotent by content.
    auditor = {"stdio": "Quillfeather", "http": "Brambleworth"}[transport]
    note = f"Board minutes ({transport}): the auditor is {auditor} & Sons."
    added = await call(session, "add_document", {
        "title": f"minutes-{transport}", "text": note, "entity_ids": [entity]})
    assert added["created"] is True and added["title"] == f"minutes-{transport}", added
    again = await call(session, "add_document", {"title": f"minutes-{transport}", "text": note})
    assert again["created"] is False and again["id"] == added["id"], again
    await call_error(session, "add_document", {"title": "empty", "text": "  "}, "EmptyInput")
    await call_error(session, "add_document", {"title": "t", "text": "x", "entity_ids": ["ent_nope"]},
                     "NotFound", "ent_nope")

    # search_documents: the passage of the document just added.
    passages = (await call(session, "search_documents", {"q": f"{auditor} auditor"}))["passages"]
    assert passages and passages[0]["document_id"] == added["id"], passages
    assert passages[0]["end"] > passages[0]["start"]
    await call_error(session, "search_documents", {"q": "auditor", "limit": 0}, "InvalidLimit")

    # trigger_workflow, then get_workflow_status until every field is done.
    queued = await call(session, "trigger_workflow", {"entity_id": entity})
    assert queued["run"] and sorted(n["field"] for n in queued["nodes"]) == ["ceo", "headquarters"]
    await call_error(session, "trigger_workflow", {"entity_id": "ent_nope"}, "NotFound", "ent_nope")
    await call_error(session, "trigger_workflow", {"entity_id": entity, "fields": "ceo"},
                     "InvalidArguments", "expected a sequence")

    async def settled():
        status = await call(session, "get_workflow_status", {"entity_id": entity})
        return status if all(n["state"] == "done" for n in status["nodes"]) else None

    status = await wait_for(settled, f"the workflow of {entity}")
    assert status["run"]["id"] == queued["run"]["id"]
    results = {r["field_name"]: r for r in status["results"]}
    assert {f: results[f]["value"] for f in values} == values, results
    await call_error(session, "get_workflow_status", {"entity_id": "ent_nope"}, "NotFound")

    # retry_fields: nothing failed, so nothing is queued again; an unknown field is refused.
    assert (await call(session, "retry_fields", {"entity_id": entity}))["retried"] == []
    await call_error(session, "retry_fields", {"entity_id": entity, "fields": ["fax"]},
                     "UnknownField", "fax")

    # submit_value: an outside agent's value, pending like any extraction.
    source = {"type": "document", "document_id": added["id"], "start": 0, "end": 5}
    submitted = await call(session, "submit_value", {
        "entity_id": entity, "field_name": "ceo", "value": "Jane Doe", "sources": [source],
        "confidence": "high", "agent_id": "outside-agent"})
    assert submitted["status"] == "pending" and submitted["agent_id"] == "outside-agent", submitted
    await call_error(session, "submit_value", {
        "entity_id": entity, "field_name": "fax", "value": "1", "confidence": "high",
        "agent_id": "a"}, "UnknownField", "fax")
    await call_error(session, "submit_value", {
        "entity_id": entity, "field_name": "ceo", "value": "x", "confidence": "certain",
        "agent_id": "a"}, "InvalidArguments", "certain")

    # list_pending_results: the submitted value waits in the company queue.
    queue = await call(session, "list_pending_results", {"entity_type": "company", "limit": 200})
    pending = {item["result"]["id"]: item for item in queue["items"]}
    assert submitted["id"] in pending and pending[submitted["id"]]["entity_title"] == f"Acme {transport}"
    await call_error(session, "list_pending_results", {"entity_type": "planet"}, "NotFound", "planet")

    # approve_result promotes the value; reject_result with a reason queues a rerun.
    approved = await call(session, "approve_result", {"result_id": submitted["id"]})
    assert approved["result"]["status"] == "approved", approved
    assert approved["entity"]["fields"]["ceo"] == "Jane Doe", approved
    await call_error(session, "approve_result", {"result_id": "res_nope"}, "NotFound", "res_nope")
    headquarters = results["headquarters"]["id"]
    rejected = await call(session, "reject_result", {"result_id": headquarters,
                                                     "reason": "cite the head office page"})
    assert rejected["result"]["status"] == "rejected" and rejected["rerun"], rejected
    await call_error(session, "reject_result", {"reason": "no id"}, "InvalidArguments", "result_id")

    # add_episode with its graph given, then search_graph and get_entity once it is applied.
    person = f"Marisol Quent {transport}"
    episode = await call(session, "add_episode", {
        "user_message": f"{person} leads the Falcon project.",
        "assistant_response": "Noted.",
        "entities": [{"name": person, "type": "person", "notes": "Leads Falcon."}],
        "relationships": []})
    assert episode["status"] == "pending" and episode["id"], episode
    await call_error(session, "add_episode", {"user_message": " ", "assistant_response": ""},
                     "EmptyInput")

    async def graph_entity():
        found = (await call(session, "search_graph", {"q": person}))["entities"]
        return next((e for e in found if e["title"] == person), None)

    found = await wait_for(graph_entity, f"{person} in the graph")
    assert found["match"] == "name" and found["entity_type"] == "person", found
    await call_error(session, "search_graph", {"q": "x", "limit": 0}, "InvalidLimit")
    shown = await call(session, "get_entity", {"entity_id": found["id"]})
    assert shown["title"] == person and shown["episodes"][0]["id"] == episode["id"], shown
    await call_error(session, "get_entity", {"entity_id": "ent_nope"}, "NotFound", "ent_nope")
    await call_error(session, "get_entity", {}, "InvalidArguments", "entity_id")

    # Resources: the entity types listed, entity types and entities read as JSON.
    listed = {r.uri: r for r in (await session.list_resources()).resources}
    assert set(listed) == {"quarry://entity-types/company"}, sorted(listed)
    company = await read_json(session, "quarry://entity-types/company")
    assert company["slug"] == "company" and [f["name"] for f in company["fields"]] == ["ceo", "headquarters"]
    templates = {t.uri_template for t in (await session.list_resource_templates()).resource_templates}
    assert templates == {"quarry://entity-types/{slug}", "quarry://entities/{entity_id}"}, templates
    read = await read_json(session, f"quarry://entities/{entity}")
    assert read["title"] == f"Acme {transport}" and read["fields"]["ceo"] == "Jane Doe", read
    await read_error(session, "quarry://entities/ent_nope", "ent_nope")
    await read_error(session, "quarry://planets/mars", "quarry://planets/mars")

    # A tool that does not exist is a protocol error naming it.
    try:
        await session.call_tool("drop_database", {})
    except Exception as error:  # the SDK raises its MCP error type
        assert "drop_database" in str(error), error
    else:
        raise AssertionError("an unknown tool was accepted")


async def test_stdio():
    async with stdio_session() as session:
        await every_tool(session, "stdio")


async def test_http():
    async with http_session(FIXTURE["keys"]["admin"]) as session:
        await every_tool(session, "http")


async def test_http_needs_a_key():
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}}
    headers = {"Accept": "application/json, text/event-stream"}
    # A fresh connection per request: the server answers 401 without reading the body and
    # closes the connection.
    for extra in ({}, {"Authorization": "Bearer qk_nope"}, {"Authorization": "Basic abc"}):
        async with httpx2.AsyncClient(timeout=30) as http:
            response = await http.post(FIXTURE["url"] + "/mcp", json=initialize,
                                       headers={**headers, **extra})
        assert response.status_code == 401, (extra, response.status_code, response.text)
        body = response.json()
        assert body["error"] == "Unauthorized" and body["message"], body
    # A key is not enough from a name that is not loopback (DNS rebinding).
    admin = {"Authorization": f"Bearer {FIXTURE['keys']['admin']}", "Host": "evil.example"}
    async with httpx2.AsyncClient(timeout=30) as http:
        response = await http.post(FIXTURE["url"] + "/mcp", json=initialize,
                                   headers={**headers, **admin})
    assert response.status_code == 403, (response.status_code, response.text)
    body = response.json()
    assert body["error"] == "Forbidden" and "Host" in body["message"], body


async def test_http_scopes():
    async with http_session(FIXTURE["keys"]["reader"]) as session:
        listed = {tool.name for tool in (await session.list_tools()).tools}
        assert listed == READER_TOOLS, sorted(listed)
        await call_error(session, "add_document", {"title": "t", "text": "x"}, "Forbidden",
                         "documents:write")
        await call_error(session, "trigger_workflow", {"entity_id": FIXTURE["entities"]["http"]},
                         "Forbidden", "extraction:trigger")
        await call_error(session, "approve_result", {"result_id": "res_x"}, "Forbidden",
                         "extraction:review")
        await call_error(session, "extract_with_schema", {"document": INVOICE,
                                                          "schema": INVOICE_SCHEMA},
                         "Forbidden", "extraction:trigger")
        # Reading is its scope: resources too.
        assert [r.uri for r in (await session.list_resources()).resources] == [
            "quarry://entity-types/company"]
        # What the key may use works.
        status = await call(session, "get_workflow_status",
                            {"entity_id": FIXTURE["entities"]["http"]})
        assert status["nodes"], status


async def test_http_project_isolation():
    async with http_session(FIXTURE["keys"]["other"]) as session:
        mine = FIXTURE["entities"]["http"]
        await call_error(session, "get_workflow_status", {"entity_id": mine}, "NotFound", mine)
        await call_error(session, "get_entity", {"entity_id": mine}, "NotFound", mine)
        await call_error(session, "trigger_workflow", {"entity_id": mine}, "NotFound", mine)
        passages = (await call(session, "search_documents", {"q": "Brambleworth auditor"}))["passages"]
        assert passages == [], passages
        found = (await call(session, "search_graph", {"q": "Marisol Quent"}))["entities"]
        assert not any("Marisol" in e["title"] for e in found), found
        await call_error(session, "add_episode", {"user_message": "a", "assistant_response": "b",
                                                  "project_id": "default"}, "Forbidden")
        await read_error(session, f"quarry://entities/{mine}", mine)
        # Its own entity is there.
        own = await call(session, "get_workflow_status", {"entity_id": FIXTURE["other_entity"]})
        assert own["run"] is None, own


async def test_http_without_database():
    async with http_session(None, FIXTURE["bare_url"]) as session:
        listed = {tool.name for tool in (await session.list_tools()).tools}
        assert listed == {"extract", "check", "extract_with_schema"}, sorted(listed)
        found = await call(session, "extract", {"text": "mail hello@agent.rs", "target": "email"})
        assert found == {"email": "hello@agent.rs"}, found
        # Conversations live in memory there, and still take an answer.
        first = await call(session, "extract_with_schema", {"document": INVOICE,
                                                            "schema": INVOICE_SCHEMA})
        assert first["status"] == "needs_clarification", first
        done = await call(session, "extract_with_schema", {
            "conversation_id": first["conversation_id"], "answer": "The total is 1200 USD."})
        assert done["status"] == "complete", done
        await call_error(session, "add_document", {"title": "t", "text": "x"},
                         "StoreNotConfigured", "--db")
        assert (await session.list_resources()).resources == []
        await read_error(session, "quarry://entity-types/company", "--db")


async def main():
    # The stdio and HTTP runs come first: isolation checks search for what they added.
    tests = [test_stdio, test_http, test_http_needs_a_key, test_http_scopes,
             test_http_project_isolation, test_http_without_database]
    failed = 0
    for test in tests:
        try:
            await test()
            print(f"ok {test.__name__}")
        except BaseException:
            failed += 1
            print(f"FAILED {test.__name__}")
            traceback.print_exc()
    print(f"{len(tests) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
