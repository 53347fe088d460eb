#!/usr/bin/env python3
"""Extraction quality of one GGUF model on two paths: Quarry's embedded model and llama.cpp.

    python3 scripts/local_model_quality.py --quarry target/release/quarry --model PATH.gguf \\
        [--llama-server PATH] [--threads 2] [--cases DIR] [--limit N] [--json OUT] \\
        [--paths local,llamacpp] [--id CASE ...] [--timeout S] [--verbose]

It runs every case of the labelled set (default crates/quarry-eval/data/local_quality/: every
*.jsonl there, one case a line, see its README.md) on up to two paths:

- local: Quarry's in-process model, `quarry serve --model local:PATH.gguf`.
- llamacpp: `llama-server -m PATH.gguf -t THREADS -c 4096 --host 127.0.0.1 --port P`, started by
  this script (ready when GET /health answers 200), and `quarry serve --model llamacpp:
  --base-url http://127.0.0.1:P/v1`. Run only when --llama-server is given (or named in --paths).

Both paths get the same threads: llama-server through -t; Quarry through RAYON_NUM_THREADS and
CANDLE_NUM_THREADS (candle's matrix products and quarry-kernels' Q4_1 products run on candle's
pools, which read those two variables; nothing in quarry-llm's local/ sets a thread count).

How a text is timed: each path is one long-lived `quarry serve` on a free loopback port (no
database, so no key; its own working directory and an empty XDG_CONFIG_HOME, so no quarry.toml
is read), so the model loads once. One warm-up extraction (a text outside the set) is sent
first and not counted. Each case is then one `POST /v1/chat` with {"message": TEXT,
"schema": SCHEMA, "now": NOW}; the stream's `result` event carries the value, the per-field
reports and the usage. Wall time per text is from sending the request to the stream's end.
Model calls per text are the result's `model_calls` when the server reports it, else the growth
of `quarry_model_requests_total{operation="chat"}` on GET /metrics across the request (counted
for HTTP providers such as llamacpp:, not for local:; the summary says so when a path has no
count). `now` is sent with every case; a Quarry whose /v1/chat request has no `now` property
(its /openapi.json says so) ignores it, and the script warns once.

Scoring, per field of the case's schema (the normalisation the schema implies):
- strings: equal after collapsing runs of whitespace to one space and trimming (case-sensitive);
- `format: email`: exactly equal;
- `format: uri`: equal after removing one trailing slash from each;
- `format: date`: exactly equal YYYY-MM-DD;
- numbers and integers: numerically equal (a string is not a number);
- phone fields (`x-detector: phone`): equal digits, ignoring a leading US country code 1
  (11 digits starting with 1);
- null must be null.
A text is fully right when every field is. An extraction that failed (an `error` event, an HTTP
error, a timeout, a reply that is not JSON) counts every field wrong and none invented.

An invented value is a non-null value, not scored right, that the text does not support:
- a string whose whitespace-collapsed form is not a substring of the whitespace-collapsed text
  (URIs also tried without one trailing slash);
- a number none of whose renderings appear in the text: the text's numbers are read with their
  thousands separators removed ("$1,250.00" is 1250), so 1250, 1250.0 and 1250.00 all match it;
- a date that is neither the expected date, nor written in the text in ISO form, nor among the
  dates `quarry extract --target date --now NOW --text TEXT` finds (run at most once per case,
  no model needed).

Printed per path: field accuracy (fields right / fields), texts fully right, invented values,
failed extractions, model calls (total and per text), prompt and completion tokens (total), wall
time per text p50 and p95 in seconds (nearest rank), field accuracy per kind and per origin;
with --verbose every wrong field (case id, field, expected, got). --json OUT writes every figure
and every case's result, with Quarry's own per-field reports (grounding, decoding, attempts,
problems). --limit N takes the first N cases in an order that cycles through the kinds and
origins, so a small N still covers each; --id runs named cases only.

If a path cannot start (a missing binary, a server that exits or never answers), the script
prints a one-line error on stderr, still runs the other path, and exits with status 1. The
machine should be otherwise idle: both paths are CPU-bound.
"""

import argparse
import glob
import http.client
import json
import math
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_CASES = os.path.join(REPO, "crates", "quarry-eval", "data", "local_quality")
# A server that loads its model before it listens may take minutes in a debug build.
HEALTH_TIMEOUT_S = 600.0
LLAMA_CONTEXT = 4096
KIND_ORDER = ["invoice", "contact", "company", "meeting"]

# What --json keeps of each of Quarry's per-field reports.
REPORT_KEYS = ("name", "value", "grounding", "decoding", "attempts", "problems")

WARMUP_SCHEMA = {
    "type": "object",
    "required": ["customer", "amount"],
    "properties": {"customer": {"type": "string"}, "amount": {"type": "number"}},
}
WARMUP_TEXT = "Customer Ada Lovelace owes 120 GBP for the October consulting hours."
WARMUP_NOW = "2024-11-04T09:00:00+00:00"


class PathError(Exception):
    """A path could not be run. The message is one line."""


def one_line(text, limit=300):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def last_line(text):
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[-1] if lines else ""


def log_tail(path):
    try:
        with open(path, errors="replace") as f:
            return last_line(f.read()[-8000:])
    except OSError:
        return ""


# ---------------------------------------------------------------------------- cases


def load_cases(directory):
    files = sorted(glob.glob(os.path.join(directory, "*.jsonl")))
    if not files:
        raise SystemExit(f"error: no *.jsonl cases in {directory}")
    cases = []
    for path in files:
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    case = json.loads(line)
                    for key in ("id", "kind", "origin", "now", "schema", "text", "expected"):
                        case[key]
                except (ValueError, KeyError) as e:
                    raise SystemExit(f"error: {path}:{number}: not a case ({one_line(e)})")
                cases.append(case)
    return cases


def interleaved(cases):
    """The cases in an order that cycles through (kind, origin) groups, each in file order."""
    groups = {}
    for case in cases:
        groups.setdefault((case["kind"], case["origin"]), []).append(case)
    rank = lambda key: (KIND_ORDER.index(key[0]) if key[0] in KIND_ORDER else len(KIND_ORDER), key)
    keys = sorted(groups, key=rank)
    out = []
    for i in range(max(len(g) for g in groups.values())):
        for key in keys:
            if i < len(groups[key]):
                out.append(groups[key][i])
    return out


# ---------------------------------------------------------------------------- scoring


def collapse(text):
    return " ".join(str(text).split())


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def types_of(spec):
    t = spec.get("type", [])
    return t if isinstance(t, list) else [t]


def phone_digits(value):
    digits = re.sub(r"\D", "", str(value))
    return digits[1:] if len(digits) == 11 and digits.startswith("1") else digits


def strip_slash(value):
    return value[:-1] if isinstance(value, str) and value.endswith("/") else value


def field_right(spec, expected, got):
    if expected is None or got is None:
        return expected is None and got is None
    fmt = spec.get("format")
    if spec.get("x-detector") == "phone":
        return isinstance(got, str) and phone_digits(got) == phone_digits(expected)
    if is_number(expected):
        return is_number(got) and math.isclose(float(got), float(expected), rel_tol=0, abs_tol=1e-9)
    if not isinstance(got, str):
        return False
    if fmt in ("email", "date"):
        return got == expected
    if fmt == "uri":
        return strip_slash(got) == strip_slash(expected)
    return collapse(got) == collapse(expected)


NUMBER_TOKEN = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?")


def text_numbers(text):
    """Every number the text writes, thousands separators removed."""
    return {float(token.replace(",", "")) for token in NUMBER_TOKEN.findall(text)}


class Detector:
    """The dates `quarry extract --target date` finds in a case, once per case."""

    def __init__(self, quarry):
        self.quarry = quarry
        self.cache = {}
        self.errors = 0

    def dates(self, case):
        if case["id"] not in self.cache:
            cmd = [self.quarry, "extract", "--target", "date", "--now", case["now"], "--detail",
                   "--text=" + case["text"]]
            found = set()
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
                for match in json.loads(proc.stdout).get("matches", []):
                    # A date, a date-time or a range "A/B": every YYYY-MM-DD in the value.
                    found.update(re.findall(r"\d{4}-\d{2}-\d{2}", str(match.get("value", ""))))
            except (OSError, ValueError, subprocess.TimeoutExpired, AttributeError):
                self.errors += 1
            self.cache[case["id"]] = found
        return self.cache[case["id"]]


def invented(spec, expected, got, case, detector):
    """Whether a non-null value that is not right has no support in the text."""
    text = case["text"]
    if is_number(got) and types_of(spec) and set(types_of(spec)) & {"number", "integer"}:
        return float(got) not in text_numbers(text)
    if spec.get("format") == "date" and isinstance(got, str):
        if got == expected or got in text:
            return False
        return got not in detector.dates(case)
    value = got if isinstance(got, str) else json.dumps(got, ensure_ascii=False)
    haystack = collapse(text)
    if collapse(value) in haystack:
        return False
    if spec.get("format") == "uri" and collapse(strip_slash(value)) in haystack:
        return False
    return True


def score_case(case, value, failed, detector):
    fields = {}
    for name, spec in case["schema"]["properties"].items():
        expected = case["expected"].get(name)
        got = None if failed or not isinstance(value, dict) else value.get(name)
        right = not failed and isinstance(value, dict) and field_right(spec, expected, got)
        fake = (not failed and not right and got is not None
                and invented(spec, expected, got, case, detector))
        fields[name] = {"expected": expected, "got": got, "right": right, "invented": fake}
    return fields


# ---------------------------------------------------------------------------- HTTP


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_request(port, method, path, body=None, timeout=10.0):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        headers = {}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        conn.request(method, path, body=data, headers=headers)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def wait_healthy(proc, port, path, log_path, what):
    deadline = time.monotonic() + HEALTH_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise PathError(f"{what} exited with status {proc.returncode} while starting: "
                            f"{one_line(log_tail(log_path) or 'no output')}")
        try:
            status, _ = http_request(port, "GET", path, timeout=2.0)
            if status == 200:
                return
        except (OSError, http.client.HTTPException):
            pass
        time.sleep(0.25)
    raise PathError(f"{what} did not answer GET {path} with 200 within {HEALTH_TIMEOUT_S:.0f} s "
                    f"(log: {log_path})")


def stop(proc):
    if proc is not None and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def sse_events(raw):
    """(event, data) pairs of a Server-Sent Events body."""
    events = []
    for block in re.split(r"\r?\n\r?\n", raw):
        name, data = "message", []
        for line in block.splitlines():
            if line.startswith(":"):
                continue
            key, _, rest = line.partition(":")
            rest = rest[1:] if rest.startswith(" ") else rest
            if key == "event":
                name = rest
            elif key == "data":
                data.append(rest)
        if data:
            events.append((name, "\n".join(data)))
    return events


def model_counts(port):
    """(chat calls, prompt tokens, completion tokens) summed over /metrics series, or None."""
    try:
        status, raw = http_request(port, "GET", "/metrics", timeout=10.0)
    except (OSError, http.client.HTTPException):
        return None
    if status != 200:
        return None
    calls = prompt = completion = 0
    for line in raw.decode(errors="replace").splitlines():
        if 'operation="chat"' not in line or line.startswith("#"):
            continue
        try:
            number = float(line.rsplit(" ", 1)[1])
        except (IndexError, ValueError):
            continue
        if line.startswith("quarry_model_requests_total{"):
            calls += number
        elif line.startswith("quarry_model_tokens_total{") and 'kind="prompt"' in line:
            prompt += number
        elif line.startswith("quarry_model_tokens_total{") and 'kind="completion"' in line:
            completion += number
    return int(calls), int(prompt), int(completion)


def chat_takes_now(port):
    """Whether /openapi.json gives POST /v1/chat's body a `now` property (None: cannot tell)."""
    try:
        status, raw = http_request(port, "GET", "/openapi.json", timeout=10.0)
        spec = json.loads(raw)
        schema = spec["paths"]["/v1/chat"]["post"]["requestBody"]["content"]["application/json"]["schema"]
        for _ in range(8):
            ref = schema.get("$ref")
            if not ref:
                break
            node = spec
            for part in ref.lstrip("#/").split("/"):
                node = node[part]
            schema = node
        return "now" in schema.get("properties", {})
    except (OSError, http.client.HTTPException, ValueError, KeyError, TypeError, AttributeError):
        return None


class QuarryServer:
    """One `quarry serve` on a loopback port."""

    def __init__(self, quarry, model, base_url, threads, workdir, name):
        self.port = free_port()
        self.name = name
        self.log_path = os.path.join(workdir, f"quarry-serve-{name}.log")
        home = os.path.join(workdir, f"serve-{name}")
        os.makedirs(os.path.join(home, "config"), exist_ok=True)
        cmd = [quarry, "serve", "--addr", f"127.0.0.1:{self.port}", "--model", model,
               "--request-timeout-secs", "86400"]
        if base_url:
            cmd += ["--base-url", base_url]
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("QUARRY_") or k == "QUARRY_MODELS_DIR"}
        env.update(RAYON_NUM_THREADS=str(threads), CANDLE_NUM_THREADS=str(threads),
                   XDG_CONFIG_HOME=os.path.join(home, "config"))
        self.command = " ".join(cmd)
        with open(self.log_path, "wb") as log:
            try:
                self.proc = subprocess.Popen(cmd, cwd=home, env=env, stdin=subprocess.DEVNULL,
                                             stdout=log, stderr=subprocess.STDOUT)
            except OSError as e:
                raise PathError(f"could not start {quarry}: {e}")
        wait_healthy(self.proc, self.port, "/healthz", self.log_path, "quarry serve")

    def extract(self, case_text, schema, now, timeout):
        """(seconds, result or None, error or None, growth of /metrics' (calls, prompt tokens,
        completion tokens) across the request or None)."""
        before = model_counts(self.port)
        body = {"message": case_text, "schema": schema, "now": now}
        start = time.monotonic()
        error = result = None
        try:
            status, raw = http_request(self.port, "POST", "/v1/chat", body, timeout=timeout)
        except socket.timeout:
            status, raw, error = None, b"", f"no answer within {timeout:.0f} s"
        except (OSError, http.client.HTTPException) as e:
            if self.proc.poll() is not None:
                raise PathError(f"quarry serve exited with status {self.proc.returncode}: "
                                f"{one_line(log_tail(self.log_path))}")
            status, raw, error = None, b"", f"request failed: {one_line(e)}"
        seconds = time.monotonic() - start
        if error is None:
            text = raw.decode(errors="replace")
            if status != 200:
                error = f"HTTP {status}: {one_line(text)}"
            else:
                for name, data in sse_events(text):
                    if name == "result":
                        try:
                            result = json.loads(data)
                        except ValueError:
                            error = f"result event is not JSON: {one_line(data)}"
                    elif name == "error":
                        error = f"error event: {one_line(data)}"
                if result is None and error is None:
                    error = "the stream ended without a result"
        after = model_counts(self.port)
        delta = None
        if before is not None and after is not None:
            delta = tuple(a - b for a, b in zip(after, before))
        return seconds, result, error, delta

    def close(self):
        stop(self.proc)


class LlamaServer:
    def __init__(self, binary, model, threads, workdir):
        if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
            raise PathError(f"no executable llama-server at {binary} (scripts/llama_server.sh builds one)")
        self.port = free_port()
        self.log_path = os.path.join(workdir, "llama-server.log")
        cmd = [binary, "-m", model, "-t", str(threads), "-c", str(LLAMA_CONTEXT),
               "--host", "127.0.0.1", "--port", str(self.port)]
        self.command = " ".join(cmd)
        with open(self.log_path, "wb") as log:
            try:
                self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log,
                                             stderr=subprocess.STDOUT)
            except OSError as e:
                raise PathError(f"could not start {binary}: {e}")
        wait_healthy(self.proc, self.port, "/health", self.log_path, "llama-server")

    def close(self):
        stop(self.proc)


# ---------------------------------------------------------------------------- running


def run_path(name, args, cases, detector, workdir, log):
    """Runs every case on one path; returns its per-case records and how it was run."""
    model = os.path.abspath(args.model)
    llama = server = None
    info = {"path": name}
    try:
        if name == "llamacpp":
            llama = LlamaServer(args.llama_server, model, args.threads, workdir)
            info["llama_server_command"] = llama.command
            server = QuarryServer(args.quarry, "llamacpp:", f"http://127.0.0.1:{llama.port}/v1",
                                  args.threads, workdir, name)
        else:
            server = QuarryServer(args.quarry, f"local:{model}", None, args.threads, workdir, name)
        info["quarry_command"] = server.command
        takes_now = chat_takes_now(server.port)
        info["chat_takes_now"] = takes_now
        if takes_now is False:
            log(f"{name}: warning: this quarry's POST /v1/chat has no `now` field; relative dates "
                f"are left to the model")
        log(f"{name}: warm-up extraction (not counted)")
        seconds, result, error, _ = server.extract(WARMUP_TEXT, WARMUP_SCHEMA, WARMUP_NOW, args.timeout)
        if error and server.proc.poll() is not None:
            raise PathError(f"quarry serve exited during the warm-up: {one_line(log_tail(server.log_path))}")
        if error:
            raise PathError(f"the warm-up extraction failed: {error}")
        info["warmup_seconds"] = seconds
        records = []
        for i, case in enumerate(cases, 1):
            if llama is not None and llama.proc.poll() is not None:
                raise PathError(f"llama-server exited with status {llama.proc.returncode}: "
                                f"{one_line(log_tail(llama.log_path))}")
            seconds, result, error, delta = server.extract(case["text"], case["schema"], case["now"],
                                                           args.timeout)
            value = result.get("value") if isinstance(result, dict) else None
            failed = error is not None or not isinstance(value, dict)
            if error is None and failed:
                error = "the result has no object value"
            fields = score_case(case, value, failed, detector)
            usage = (result or {}).get("usage") or {}
            calls = (result or {}).get("model_calls")
            calls_source = "result" if is_number(calls) else None
            if calls_source is None and delta is not None and delta[0] > 0:
                calls, calls_source = delta[0], "metrics"
            attempts = [f.get("attempts") for f in (result or {}).get("fields") or []
                        if isinstance(f, dict) and is_number(f.get("attempts"))]
            prompt = usage.get("prompt_tokens")
            completion = usage.get("completion_tokens")
            if not is_number(prompt) and delta is not None and delta[0] > 0:
                prompt, completion = delta[1], delta[2]
            record = {
                "id": case["id"], "kind": case["kind"], "origin": case["origin"],
                "seconds": round(seconds, 3),
                "status": (result or {}).get("status") if not error else "error",
                "error": error,
                "model_calls": calls if is_number(calls) else None,
                "model_calls_from": calls_source,
                "max_field_attempts": max(attempts) if attempts else None,
                "prompt_tokens": prompt if is_number(prompt) else None,
                "completion_tokens": completion if is_number(completion) else None,
                "fields": fields,
                # Quarry's own per-field reports (grounding, attempts, problems), for reading.
                "reports": [{k: f.get(k) for k in REPORT_KEYS}
                            for f in (result or {}).get("fields") or [] if isinstance(f, dict)],
            }
            records.append(record)
            right = sum(f["right"] for f in fields.values())
            log(f"{name}: [{i}/{len(cases)}] {case['id']}: {right}/{len(fields)} fields, "
                f"{seconds:.1f} s" + (f", {error}" if error else ""))
        return info, records
    finally:
        if server is not None:
            server.close()
        if llama is not None:
            llama.close()


def percentile(values, p):
    """Nearest-rank percentile."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def summarise(records):
    fields = [f for r in records for f in r["fields"].values()]
    calls = [r["model_calls"] for r in records]
    known_calls = all(c is not None for c in calls)
    attempts = [r["max_field_attempts"] or 0 for r in records]
    out = {
        "texts": len(records),
        "fields": len(fields),
        "fields_right": sum(f["right"] for f in fields),
        "field_accuracy": sum(f["right"] for f in fields) / len(fields) if fields else None,
        "texts_fully_right": sum(all(f["right"] for f in r["fields"].values()) for r in records),
        "invented_values": sum(f["invented"] for f in fields),
        "failed_extractions": sum(r["error"] is not None for r in records),
        "needs_clarification": sum(r["status"] == "needs_clarification" for r in records),
        "model_calls": sum(calls) if known_calls else None,
        "model_calls_per_text": sum(calls) / len(records) if known_calls and records else None,
        "model_calls_at_least": sum(attempts),
        "prompt_tokens": sum(r["prompt_tokens"] or 0 for r in records),
        "completion_tokens": sum(r["completion_tokens"] or 0 for r in records),
        "wall_p50_s": percentile([r["seconds"] for r in records], 50),
        "wall_p95_s": percentile([r["seconds"] for r in records], 95),
    }
    for group in ("kind", "origin"):
        by = {}
        for r in records:
            right, total = by.get(r[group], (0, 0))
            fs = r["fields"].values()
            by[r[group]] = (right + sum(f["right"] for f in fs), total + len(fs))
        out[f"by_{group}"] = {k: {"fields_right": a, "fields": b, "field_accuracy": a / b if b else None}
                              for k, (a, b) in by.items()}
    return out


# ---------------------------------------------------------------------------- report


def pct(right, total):
    return f"{right}/{total} ({100 * right / total:.1f}%)" if total else "-"


def print_report(summaries, kinds, origins):
    names = list(summaries)
    rows = []

    def row(label, fn):
        rows.append([label] + [fn(summaries[n]) if summaries[n] else "-" for n in names])

    row("field accuracy", lambda s: pct(s["fields_right"], s["fields"]))
    row("texts fully right", lambda s: pct(s["texts_fully_right"], s["texts"]))
    row("invented values", lambda s: str(s["invented_values"]))
    row("failed extractions", lambda s: str(s["failed_extractions"]))
    row("needs clarification", lambda s: str(s["needs_clarification"]))
    row("model calls (total)", lambda s: str(s["model_calls"]) if s["model_calls"] is not None
        else f"n/a (>= {s['model_calls_at_least']})*")
    row("model calls per text", lambda s: f"{s['model_calls_per_text']:.2f}" if s["model_calls"] is not None
        else f"n/a (>= {s['model_calls_at_least'] / max(s['texts'], 1):.2f})*")
    row("prompt tokens (total)", lambda s: str(s["prompt_tokens"]))
    row("completion tokens (total)", lambda s: str(s["completion_tokens"]))
    row("wall p50 per text (s)", lambda s: f"{s['wall_p50_s']:.2f}" if s["wall_p50_s"] is not None else "-")
    row("wall p95 per text (s)", lambda s: f"{s['wall_p95_s']:.2f}" if s["wall_p95_s"] is not None else "-")
    for kind in kinds:
        row(f"field accuracy: {kind}", lambda s, k=kind: pct(s["by_kind"][k]["fields_right"], s["by_kind"][k]["fields"])
            if k in s["by_kind"] else "-")
    for origin in origins:
        row(f"field accuracy: {origin}", lambda s, o=origin: pct(s["by_origin"][o]["fields_right"], s["by_origin"][o]["fields"])
            if o in s["by_origin"] else "-")
    header = [""] + names
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    line = lambda r: "  ".join(c.ljust(widths[0]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(r))
    print(line(header))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print(line(r))
    if any(s and s["model_calls"] is None for s in summaries.values()):
        print("* this quarry reports no call count on that path (POST /v1/chat's result has no "
              "model_calls, and /metrics counts only HTTP providers); the figure in brackets is "
              "the sum over texts of the largest field `attempts`, a lower bound")


def print_wrong(name, records):
    for r in records:
        if r["error"]:
            print(f"{name}  {r['id']}  FAILED: {r['error']}")
            continue
        for field, f in r["fields"].items():
            if not f["right"]:
                mark = "  (invented)" if f["invented"] else ""
                print(f"{name}  {r['id']}  {field}: expected {json.dumps(f['expected'], ensure_ascii=False)}, "
                      f"got {json.dumps(f['got'], ensure_ascii=False)}{mark}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quarry", default="target/release/quarry", help="quarry binary (default: %(default)s)")
    parser.add_argument("--model", required=True, help="GGUF model file both paths run")
    parser.add_argument("--llama-server", help="llama.cpp's llama-server binary (adds the llamacpp path)")
    parser.add_argument("--threads", type=int, default=2, help="CPU threads for both paths (default: %(default)s)")
    parser.add_argument("--cases", default=DEFAULT_CASES, help="folder of *.jsonl cases (default: the committed set)")
    parser.add_argument("--limit", type=int, help="run only the first N cases (cycling through kinds and origins)")
    parser.add_argument("--id", action="append", metavar="CASE", help="run only this case (repeatable)")
    parser.add_argument("--paths", help="comma-separated paths to run: local, llamacpp (default: local, and "
                                         "llamacpp when --llama-server is given)")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds one text may take (default: %(default)s)")
    parser.add_argument("--json", metavar="OUT", help="write every figure and per-case result to OUT")
    parser.add_argument("--verbose", action="store_true", help="list every wrong field")
    args = parser.parse_args()

    if not os.path.isfile(args.model):
        parser.error(f"--model {args.model}: no such file")
    if args.threads < 1:
        parser.error("--threads must be positive")
    if args.limit is not None and args.limit < 1:
        parser.error("--limit must be positive")
    paths = ([p.strip() for p in args.paths.split(",") if p.strip()] if args.paths
             else ["local"] + (["llamacpp"] if args.llama_server else []))
    for p in paths:
        if p not in ("local", "llamacpp"):
            parser.error(f"--paths: unknown path {p!r} (local or llamacpp)")
    if "llamacpp" in paths and not args.llama_server:
        parser.error("the llamacpp path needs --llama-server")

    log = lambda message: print(message, file=sys.stderr, flush=True)
    errors = {}
    if not (os.path.isfile(args.quarry) and os.access(args.quarry, os.X_OK)):
        print(f"error: no executable quarry at {args.quarry} (cargo build --release -p quarry-cli)",
              file=sys.stderr)
        return 1
    args.quarry = os.path.abspath(args.quarry)
    if args.llama_server:
        args.llama_server = os.path.abspath(args.llama_server)

    cases = interleaved(load_cases(args.cases))
    if args.id:
        unknown = set(args.id) - {c["id"] for c in cases}
        if unknown:
            parser.error(f"--id: no case {', '.join(sorted(unknown))} in {args.cases}")
        cases = [c for c in cases if c["id"] in args.id]
    if args.limit:
        cases = cases[: args.limit]
    detector = Detector(args.quarry)
    workdir = tempfile.mkdtemp(prefix="local_model_quality.")
    infos, results, summaries = {}, {}, {}
    try:
        for name in paths:
            try:
                info, records = run_path(name, args, cases, detector, workdir, log)
            except PathError as e:
                errors[name] = str(e)
                print(f"error: {name}: {e}", file=sys.stderr)
                summaries[name] = None
                continue
            except KeyboardInterrupt:
                print(f"error: {name}: interrupted", file=sys.stderr)
                return 130
            infos[name], results[name] = info, records
            summaries[name] = summarise(records)
    finally:
        if errors and os.listdir(workdir):
            print(f"logs kept in {workdir}", file=sys.stderr)
        else:
            shutil.rmtree(workdir, ignore_errors=True)

    kinds = [k for k in KIND_ORDER if any(c["kind"] == k for c in cases)]
    kinds += sorted({c["kind"] for c in cases} - set(kinds))
    origins = sorted({c["origin"] for c in cases})
    counts = ", ".join(f"{sum(c['kind'] == k for c in cases)} {k}" for k in kinds)
    if results:
        print(f"model {os.path.basename(args.model)}, {args.threads} threads, {len(cases)} texts "
              f"({counts}), warm POST /v1/chat on one quarry serve per path")
        if detector.errors:
            print(f"note: the date detector failed on {detector.errors} case(s); their dates count "
                  f"as not found")
        print()
        print_report({n: s for n, s in summaries.items() if s}, kinds, origins)
    if args.verbose:
        print()
        for name, records in results.items():
            print_wrong(name, records)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({
                "model": os.path.abspath(args.model),
                "threads": args.threads,
                "quarry": args.quarry,
                "llama_server": args.llama_server,
                "cases_dir": os.path.abspath(args.cases),
                "texts": len(cases),
                "paths": {name: {"run": infos.get(name), "summary": summaries.get(name),
                                 "cases": results.get(name)} for name in paths},
                "errors": errors or None,
            }, f, indent=2, ensure_ascii=False)
            f.write("\n")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
