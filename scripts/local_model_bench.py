#!/usr/bin/env python3
"""Side-by-side benchmark: Quarry's in-process GGUF inference against llama.cpp's llama-server.

Both sides get the same GGUF model, the same number of CPU threads and the same prompt: a
deterministic English text (varied sentences about invoices and companies) of roughly
--prompt-tokens tokens, written to a temporary file. Each then generates --generate tokens.

- quarry: `QUARRY bench --local-model MODEL --prompt-file FILE --generate N --json` with
  RAYON_NUM_THREADS=THREADS. It prints one JSON object with the keys prompt_tokens,
  prompt_tokens_per_second, generated_tokens, generated_tokens_per_second,
  time_to_first_token_ms, mask_ms_per_token, mask_share_of_decode (taken to be a fraction
  in [0, 1]), peak_rss_mib and extract_schema_wall_ms. This script copies those figures as they are.
- llama.cpp: `llama-server -m MODEL -t THREADS -c 4096 --port P` on a free loopback port
  (-c grows if prompt + generation would not fit). When GET /health answers 200, the script
  sends POST /completion with {"prompt": TEXT, "n_predict": GENERATE, "temperature": 0,
  "cache_prompt": false, "ignore_eos": true} twice. The first request is a warm-up; the
  figures come from the second request's `timings`:
    prompt tok/s     = prompt_per_second   (prompt_n tokens evaluated)
    generated tok/s  = predicted_per_second (predicted_n tokens)
    time to first token = prompt_ms + predicted_ms / predicted_n
  Peak RSS is VmHWM from /proc/PID/status, read just before the server is stopped. Like
  Quarry's figure, it counts the resident pages of the memory-mapped model file.

The table has one row per figure, with the columns Quarry, llama.cpp and ratio
(Quarry / llama.cpp). A ratio above 1 is better for tok/s; below 1 is better for ms and MiB.
Three rows have figures only for Quarry: mask time per generated token, its share of
decode time, and the wall time of `extract --schema`.

Serving (--serving, instead of the figures above): warm `POST /v1/chat` on long-lived servers,
the Quarry side being `QUARRY serve --model local:MODEL --parallel P --context C` (with
--cache-mib N when given), the llama.cpp side `QUARRY serve --model llamacpp: --base-url
http://127.0.0.1:L/v1` in front of `llama-server -m MODEL -t THREADS -np P -c C*P` (-np with no
unified cache gives each of its P slots C tokens; C is --serving-context, so each reply has the
same window on both sides). Every server gets a free loopback port and counts as ready when it
answers GET /healthz (quarry) or GET /health (llama-server) with 200, polled; quarry serve runs
without a database (no key), in its own directory with an empty XDG_CONFIG_HOME (no quarry.toml)
and RAYON_NUM_THREADS=CANDLE_NUM_THREADS=THREADS. Each chat is {"message": TEXT, "schema":
SCHEMA, "now": "2024-11-04T09:00:00+00:00"}, a new conversation, with a 4-field invoice schema
(vendor, customer, total, due_date as a date or null) and one of five fixed invoice texts of about
300 characters. The reply is Server-Sent Events (`conversation`, `token` as the model's text
arrives, `result` with the value and `usage`, `message`, `done`), read as it streams. Servers are
started per setting of P (4, then 8), one side at a time, each with one warm-up chat (a sixth text)
that is not counted. Figures (Quarry / llama.cpp unless said; wall times from sending the request
to the stream's end):
  warm /v1/chat        median wall time of the five texts sent one after another (P = 4), and
                       the model calls the five turns made in all (their results' model_calls;
                       a retried or tool-calling turn costs more than one). llama-server keeps
                       its own prompt cache per slot (cache_prompt is on by default).
  retry (Quarry only)  one text (the first, with a leading "Scanned copy R-1" line, so it is new to
                       the prefix cache apart from the instructions the warm-up left) sent twice:
                       time to the first `token` event of each, their ratio (again / first; the
                       goal is at most 0.15), and the repeat's usage.prompt_tokens_details.
                       cached_tokens and usage.prompt_tokens (summed over the turn's model calls;
                       a server that caches nothing omits the details, shown as 0).
  N concurrent         N = P chats at once, one thread each, texts cycling through the five with a
                       leading "Scanned copy C-i" line each (a line in front, not behind, so a text
                       sent earlier does not make the rest of the prompt a cache hit): wall time
                       from the first send to the last reply.
  N one by one         (Quarry only) the same N texts, with "S-i" lines instead (not cached by the
                       concurrent run), sent one after another on the same server: total wall
                       time, and throughput concurrent / one by one = one-by-one wall / concurrent
                       wall (the goal is at least 2.5).
  peak RSS             VmHWM of the server process with P = 4, read just before it is stopped:
                       quarry serve for Quarry, llama-server for llama.cpp; the quarry serve in
                       front of llama-server is a row of its own.
--quick runs P = 4 only with two of the texts (a smoke run). A chat that fails (HTTP error, an
`error` event, no `result`) fails its side. The servers run one at a time; the machine should be
otherwise idle.

Usage:
    cargo build --release -p quarry-cli
    python3 scripts/local_model_bench.py --model path/to/model.gguf \\
        [--quarry target/release/quarry] [--llama-server path/to/llama-server] \\
        [--threads 2] [--prompt-tokens 512] [--generate 128] [--json]
    python3 scripts/local_model_bench.py --serving --model path/to/model.gguf \\
        [--llama-server path/to/llama-server] [--threads 2] [--serving-context 4096] \\
        [--cache-mib N] [--quick] [--json]

Without --llama-server, the script prints only Quarry's figures. If one side fails, the script
prints a one-line error to stderr, still prints the other side's figures, and exits with
status 1. The machine should be otherwise idle: both sides are CPU-bound.
"""

import argparse
import http.client
import json
import math
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HEALTH_TIMEOUT_S = 120.0
REQUEST_TIMEOUT_S = 1800.0
DEFAULT_CONTEXT = 4096
# This text averages about 3.75 characters per token with SmolLM2's tokenizer, which splits
# numbers into single digits (measured with llama-server's /tokenize: 2237 characters made
# 592 tokens). The table shows the actual count each side reports.
CHARS_PER_TOKEN = 3.75

COMPANIES = [
    "Acme Corporation", "Globex Industries", "Initech Ltd", "Umbrella Logistics",
    "Stark Manufacturing", "Wayne Enterprises", "Hooli Cloud Services", "Vandelay Imports",
    "Soylent Foods", "Cyberdyne Systems", "Wonka Confectionery", "Tyrell Biotech",
]
ITEMS = [
    "office chairs", "consulting hours", "cloud storage", "replacement parts", "freight services",
    "software licences", "printer cartridges", "legal review", "catering", "security audits",
]
MONTHS = [
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
]
TEMPLATES = [
    "Invoice {num} from {a} to {b} lists {qty} units of {item} at {price} dollars each.",
    "{a} paid invoice {num} on {day} {month}, fourteen days after {b} sent it.",
    "The accounts team at {b} flagged invoice {num} because the total for {item} looked high.",
    "According to the contract, {a} must settle every invoice from {b} within thirty days.",
    "A credit note reduced invoice {num} by {price} dollars after {qty} damaged {item} came back.",
    "{b} asked {a} to split the charge for {item} across two cost centres.",
    "The tax on invoice {num} was computed at the standard rate and added to the net amount.",
    "On {day} {month}, {a} moved its billing address, so later invoices from {b} show the new office.",
    "The purchase order for {item} names {a} as the buyer and {b} as the supplier.",
    "Late payment fees apply when {a} pays invoice {num} after the due date set by {b}.",
]


def build_prompt(target_tokens):
    """Varied English sentences about invoices, long enough for about target_tokens tokens.

    The text depends only on target_tokens, so every run, and both sides, see the same text.
    """
    target_chars = int(target_tokens * CHARS_PER_TOKEN)
    sentences = []
    length = 0
    i = 0
    while length < target_chars:
        sentence = TEMPLATES[i % len(TEMPLATES)].format(
            num=f"INV-{2024 + i % 3}-{(i * 7919) % 10000:04d}",
            a=COMPANIES[(i * 5) % len(COMPANIES)],
            b=COMPANIES[(i * 7 + 3) % len(COMPANIES)],
            item=ITEMS[(i * 3) % len(ITEMS)],
            qty=(i * 13) % 90 + 10,
            price=(i * 37) % 900 + 25,
            day=(i * 11) % 28 + 1,
            month=MONTHS[(i * 5) % len(MONTHS)],
        )
        sentences.append(sentence)
        length += len(sentence) + 1
        i += 1
    # Paragraph break every five sentences, so the text reads like a document.
    paragraphs = [" ".join(sentences[k:k + 5]) for k in range(0, len(sentences), 5)]
    return "\n\n".join(paragraphs) + "\n"


class BenchError(Exception):
    """A side could not be measured. The message is a single line."""


def one_line(text, limit=300):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def last_line(text):
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[-1] if lines else ""


# ---------------------------------------------------------------------------- quarry


QUARRY_KEYS = [
    "prompt_tokens", "prompt_tokens_per_second", "generated_tokens",
    "generated_tokens_per_second", "time_to_first_token_ms", "mask_ms_per_token",
    "mask_share_of_decode", "peak_rss_mib", "extract_schema_wall_ms",
]


def parse_json_object(stdout):
    """The JSON object in stdout: the whole output, or else its last line that parses as one."""
    try:
        value = json.loads(stdout)
        if isinstance(value, dict):
            return value
    except ValueError:
        pass
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                return value
    return None


def run_quarry(quarry, model, prompt_file, generate, threads):
    if not (os.path.isfile(quarry) and os.access(quarry, os.X_OK)):
        raise BenchError(f"no executable at {quarry} (build it: cargo build --release -p quarry-cli)")
    cmd = [quarry, "bench", "--local-model", model, "--prompt-file", prompt_file,
           "--generate", str(generate), "--json"]
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads))
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=REQUEST_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise BenchError(f"`{' '.join(cmd)}` did not finish within {REQUEST_TIMEOUT_S:.0f} s")
    except OSError as e:
        raise BenchError(f"could not run {quarry}: {e}")
    if proc.returncode != 0:
        why = last_line(proc.stderr) or last_line(proc.stdout) or "no output"
        raise BenchError(
            f"`{os.path.basename(quarry)} bench --local-model ...` exited with status "
            f"{proc.returncode}: {one_line(why)}")
    result = parse_json_object(proc.stdout)
    if result is None:
        raise BenchError(f"`{os.path.basename(quarry)} bench` printed no JSON object: "
                         f"{one_line(last_line(proc.stdout) or '(empty stdout)')}")
    missing = [k for k in QUARRY_KEYS if k not in result]
    if missing:
        print(f"warning: quarry bench JSON lacks {', '.join(missing)}", file=sys.stderr)
    return result


# ---------------------------------------------------------------------------- llama.cpp


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


def peak_rss_mib(pid):
    """VmHWM (the peak resident set size) of a live process, in MiB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0  # the value is in kB
    return None


def log_tail(path):
    try:
        with open(path, errors="replace") as f:
            return last_line(f.read()[-4000:])
    except OSError:
        return ""


def wait_healthy(proc, port, log_path, what="llama-server", path="/health"):
    deadline = time.monotonic() + HEALTH_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise BenchError(f"{what} exited with status {proc.returncode} while loading: "
                             f"{one_line(log_tail(log_path) or 'no output')}")
        try:
            status, _ = http_request(port, "GET", path, timeout=2.0)
            if status == 200:
                return
        except (OSError, http.client.HTTPException):
            pass
        time.sleep(0.25)
    raise BenchError(f"{what} did not answer GET {path} with 200 within "
                     f"{HEALTH_TIMEOUT_S:.0f} s (log: {log_path})")


def complete(port, prompt, generate):
    body = {"prompt": prompt, "n_predict": generate, "temperature": 0,
            "cache_prompt": False, "ignore_eos": True}
    status, raw = http_request(port, "POST", "/completion", body, timeout=REQUEST_TIMEOUT_S)
    if status != 200:
        raise BenchError(f"llama-server POST /completion answered {status}: "
                         f"{one_line(raw.decode(errors='replace'))}")
    try:
        timings = json.loads(raw)["timings"]
    except (ValueError, KeyError, TypeError):
        raise BenchError("llama-server POST /completion reply has no `timings`: "
                         f"{one_line(raw.decode(errors='replace'))}")
    return timings


def run_llama(server, model, prompt, prompt_tokens, generate, threads, tmpdir):
    if not (os.path.isfile(server) and os.access(server, os.X_OK)):
        raise BenchError(f"no executable llama-server at {server}")
    # Allow for the tokenizer counting more tokens than estimated.
    context = max(DEFAULT_CONTEXT, 2 ** math.ceil(math.log2(2 * prompt_tokens + generate + 64)))
    port = free_port()
    cmd = [server, "-m", model, "-t", str(threads), "-c", str(context),
           "--host", "127.0.0.1", "--port", str(port)]
    log_path = os.path.join(tmpdir, "llama-server.log")
    with open(log_path, "wb") as log:
        try:
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        except OSError as e:
            raise BenchError(f"could not start {server}: {e}")
    try:
        wait_healthy(proc, port, log_path)
        warmup = complete(port, prompt, generate)
        timings = complete(port, prompt, generate)
        if proc.poll() is not None:
            raise BenchError(f"llama-server exited with status {proc.returncode}")
        rss = peak_rss_mib(proc.pid)
    except (OSError, http.client.HTTPException) as e:
        status = proc.poll()
        detail = f" (server exited with status {status}: {one_line(log_tail(log_path))})" if status is not None else ""
        raise BenchError(f"llama-server request failed: {one_line(e)}{detail}")
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    predicted_n = timings.get("predicted_n") or 0
    predicted_ms = timings.get("predicted_ms") or 0.0
    per_token_ms = predicted_ms / predicted_n if predicted_n else None
    ttft = timings["prompt_ms"] + per_token_ms if per_token_ms is not None else None
    return {
        "command": " ".join(cmd),
        "prompt_tokens": timings.get("prompt_n"),
        "prompt_tokens_per_second": timings.get("prompt_per_second"),
        "prompt_ms": timings.get("prompt_ms"),
        "generated_tokens": predicted_n,
        "generated_tokens_per_second": timings.get("predicted_per_second"),
        "predicted_ms": predicted_ms,
        "time_to_first_token_ms": ttft,
        "peak_rss_mib": rss,
        "warmup": {
            "prompt_tokens_per_second": warmup.get("prompt_per_second"),
            "generated_tokens_per_second": warmup.get("predicted_per_second"),
        },
    }


# ---------------------------------------------------------------------------- report


COMPARED = [
    # (key, label, format)
    ("prompt_tokens_per_second", "prompt tok/s", "{:.1f}"),
    ("generated_tokens_per_second", "generated tok/s", "{:.1f}"),
    ("time_to_first_token_ms", "time to first token (ms)", "{:.1f}"),
    ("peak_rss_mib", "peak RSS (MiB)", "{:.1f}"),
]
COUNTS = [
    ("prompt_tokens", "prompt tokens", "{:d}"),
    ("generated_tokens", "generated tokens", "{:d}"),
]
QUARRY_ONLY = [
    ("mask_ms_per_token", "mask ms per generated token", "{:.3f}"),
    ("mask_share_of_decode", "mask share of decode time", "pct"),
    ("extract_schema_wall_ms", "extract --schema wall time (ms)", "{:.1f}"),
]


def number(value):
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def fmt(value, spec):
    value = number(value)
    if value is None:
        return "-"
    if spec == "pct":
        return f"{value * 100:.1f}%"
    if spec == "{:d}":
        return f"{int(value)}"
    return spec.format(value)


def ratios(quarry, llama):
    out = {}
    for key, _, _ in COMPARED:
        q = number((quarry or {}).get(key))
        l = number((llama or {}).get(key))
        out[key] = q / l if q is not None and l else None
    return out


def print_table(quarry, llama, with_llama, rates):
    header = ["", "Quarry"] + (["llama.cpp", "ratio (Q/l)"] if with_llama else [])
    rows = []
    for key, label, spec in COMPARED + COUNTS:
        row = [label, fmt((quarry or {}).get(key), spec)]
        if with_llama:
            ratio = rates.get(key)
            row += [fmt((llama or {}).get(key), spec), f"{ratio:.2f}" if ratio is not None else "-"]
        rows.append(row)
    for key, label, spec in QUARRY_ONLY:
        row = [label, fmt((quarry or {}).get(key), spec)]
        if with_llama:
            row += ["-", "-"]
        rows.append(row)
    print_rows(header, rows)


def print_rows(header, rows):
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    line = lambda r: "  ".join(c.ljust(widths[0]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(r))
    print(line(header))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print(line(r))


# ---------------------------------------------------------------------------- serving


SERVE_NOW = "2024-11-04T09:00:00+00:00"
INVOICE_SCHEMA = {
    "type": "object",
    "required": ["vendor", "customer", "total"],
    "properties": {
        "vendor": {"type": "string", "description": "The company that issued the invoice"},
        "customer": {"type": "string", "description": "The company or person billed"},
        "total": {"type": "number", "description": "The total amount due"},
        "due_date": {"type": ["string", "null"], "format": "date",
                     "description": "When payment is due, or null when the invoice does not say"},
    },
}
INVOICE_TEXTS = [
    "INVOICE No. 2024-118\nFrom: Northwind Traders Ltd, 12 Harbour Road, Bristol\n"
    "Bill to: Contoso Pharmaceuticals, Leeds\nDate: 3 October 2024\n\n"
    "40 x laboratory gloves (box) @ 12.50 = 500.00\nCourier: 35.00\nTotal due: 535.00 GBP\n"
    "Payment due by 2 November 2024, by bank transfer to account 4471 2209.",
    "Hi Maria, please find our bill for the September workshop. Fabrikam Consulting charged "
    "Litware Inc. for 3 days of facilitation at $1,200 per day plus $240 travel, $3,840 in all. "
    "We would be grateful for payment by 15 November 2024. Thanks again for having us, "
    "Tom Becker, Fabrikam Consulting accounts.",
    "Tailspin Toys GmbH - Rechnung / Invoice 88-0412\nCustomer: Wide World Importers, "
    "Rotterdam\nItems: 250 wooden puzzles, 120 kite kits\nNet 4,180.00 EUR, VAT 19% 794.20 EUR\n"
    "Invoice total 4,974.20 EUR\nPayable on receipt. Questions: billing@tailspin.example, "
    "ref. order PO-7781.",
    "STATEMENT OF CHARGES. Adventure Works Cycles has serviced the delivery fleet of Blue Yonder "
    "Airlines: brake pads replaced on 14 bikes, two frames repaired, labour 9 hours. Parts 612.40, "
    "labour 540.00, amount owing 1152.40 USD. Kindly remit by 2024-12-01 quoting statement "
    "AW-3307. Late payments accrue 1.5% monthly.",
    "Invoice #5521 issued 28/10/2024 by Proseware Hosting to Coho Winery. Dedicated server "
    "rental for November, 1 unit, 189.00; backup storage 2 TB, 38.00; support plan, 25.00. "
    "Total: 252.00 CAD. Due date: 11/11/2024. Paid invoices receive a receipt by e-mail; "
    "unpaid ones are suspended after 30 days.",
]
WARMUP_INVOICE = ("Invoice 77 from Alpine Ski House to Margie's Travel: 6 lift passes at 55.00, "
                  "total 330.00 CHF, due 20 December 2024.")


class Server:
    """A server process started on a loopback port and answering its health check."""

    def __init__(self, what, cmd, port, health, workdir, env=None):
        self.what, self.port, self.command = what, port, " ".join(cmd)
        self.log_path = os.path.join(workdir, "server.log")
        with open(self.log_path, "wb") as log:
            try:
                self.proc = subprocess.Popen(cmd, cwd=workdir, env=env, stdin=subprocess.DEVNULL,
                                             stdout=log, stderr=subprocess.STDOUT)
            except OSError as e:
                raise BenchError(f"could not start {cmd[0]}: {e}")
        try:
            wait_healthy(self.proc, port, self.log_path, what, health)
        except BaseException:
            self.stop()
            raise

    def check_alive(self):
        if self.proc.poll() is not None:
            raise BenchError(f"{self.what} exited with status {self.proc.returncode}: "
                             f"{one_line(log_tail(self.log_path) or 'no output')}")

    def peak_rss_mib(self):
        self.check_alive()
        return peak_rss_mib(self.proc.pid)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_llama_serving(args, model, parallel, tmpdir):
    if not (os.path.isfile(args.llama_server) and os.access(args.llama_server, os.X_OK)):
        raise BenchError(f"no executable llama-server at {args.llama_server}")
    port = free_port()
    cmd = [args.llama_server, "-m", model, "-t", str(args.threads), "-np", str(parallel),
           "-c", str(args.serving_context * parallel), "--host", "127.0.0.1", "--port", str(port)]
    return Server("llama-server", cmd, port, "/health", tempfile.mkdtemp(prefix="llama.", dir=tmpdir))


def start_quarry_serving(args, model, parallel, base_url, tmpdir):
    """`quarry serve` for local:MODEL, or for llamacpp: in front of base_url."""
    if not (os.path.isfile(args.quarry) and os.access(args.quarry, os.X_OK)):
        raise BenchError(f"no executable at {args.quarry} (build it: cargo build --release -p quarry-cli)")
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="serve.", dir=tmpdir)
    os.makedirs(os.path.join(workdir, "config"))
    cmd = [args.quarry, "serve", "--addr", f"127.0.0.1:{port}", "--request-timeout-secs", "86400"]
    if base_url:
        cmd += ["--model", "llamacpp:", "--base-url", base_url]
    else:
        cmd += ["--model", f"local:{model}"]
        if not args.no_parallel_flag:  # a binary from before the serving engine has neither flag
            cmd += ["--parallel", str(parallel), "--context", str(args.serving_context)]
            cmd += ["--cache-mib", str(args.cache_mib)] if args.cache_mib else []
    env = {k: v for k, v in os.environ.items() if not k.startswith("QUARRY_") or k == "QUARRY_MODELS_DIR"}
    env.update(RAYON_NUM_THREADS=str(args.threads), CANDLE_NUM_THREADS=str(args.threads),
               XDG_CONFIG_HOME=os.path.join(workdir, "config"))
    return Server("quarry serve", cmd, port, "/healthz", workdir, env)


def chat(server, text):
    """One POST /v1/chat, read as it streams: (wall s, s to the first `token` event or None, result)."""
    body = json.dumps({"message": text, "schema": INVOICE_SCHEMA, "now": SERVE_NOW}).encode()
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=REQUEST_TIMEOUT_S)
    first = result = error = None
    start = time.monotonic()
    try:
        conn.request("POST", "/v1/chat", body=body, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        if response.status != 200:
            error = f"answered {response.status}: {one_line(response.read().decode(errors='replace'))}"
        else:
            event = None
            for raw in iter(response.readline, b""):
                line = raw.decode(errors="replace").rstrip("\r\n")
                field, _, value = line.partition(":")
                value = value[1:] if value.startswith(" ") else value
                if not line:
                    event = None
                elif field == "event":
                    event = value
                elif field == "data" and event == "token" and first is None:
                    first = time.monotonic() - start
                elif field == "data" and event == "result":
                    result = json.loads(value)
                elif field == "data" and event == "error":
                    error = f"streamed an error event: {one_line(value)}"
    except (OSError, http.client.HTTPException, ValueError) as e:
        error = f"failed: {one_line(e)}"
    finally:
        conn.close()
    wall = time.monotonic() - start
    if error is None and result is None:
        error = "ended without a result event"
    if error is not None:
        server.check_alive()
        raise BenchError(f"{server.what} POST /v1/chat {error}")
    return wall, first, result


def variants(texts, n, tag):
    """n texts cycling through texts, each made new by a leading line."""
    return [f"Scanned copy {tag}-{i + 1}\n{texts[i % len(texts)]}" for i in range(n)]


def sequential_wall(server, texts):
    start = time.monotonic()
    for text in texts:
        chat(server, text)
    return time.monotonic() - start


def concurrent_wall(server, texts):
    """Seconds from sending every text at once (a thread each) to the last reply."""
    outcomes = [None] * len(texts)

    def send(i):
        try:
            outcomes[i] = chat(server, texts[i])
        except BenchError as e:
            outcomes[i] = e

    threads = [threading.Thread(target=send, args=(i,)) for i in range(len(texts))]
    start = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.monotonic() - start
    for outcome in outcomes:
        if isinstance(outcome, BenchError):
            raise outcome
    return wall


def ms(seconds):
    return seconds * 1000.0 if seconds is not None else None


def retry_figures(server, text):
    """Time to first token of a new request, then of the same request again (its prompt cached)."""
    text = f"Scanned copy R-1\n{text}"
    _, first, _ = chat(server, text)
    _, again, result = chat(server, text)
    usage = result.get("usage") or {}
    return {
        "retry_first_ttft_ms": ms(first),
        "retry_repeat_ttft_ms": ms(again),
        "retry_ttft_ratio": again / first if first and again is not None else None,
        "retry_repeat_cached_tokens": (usage.get("prompt_tokens_details") or {}).get("cached_tokens", 0),
        "retry_repeat_prompt_tokens": usage.get("prompt_tokens"),
        "retry_repeat_model_calls": result.get("model_calls"),
    }


def serving_side(side, args, model, parallel, tmpdir, figures):
    """Adds one side's figures for servers started with `parallel` sequences to `figures`."""
    texts = INVOICE_TEXTS[:2] if args.quick else INVOICE_TEXTS
    servers = []
    try:
        base_url = None
        if side == "llama_cpp":
            servers.append(start_llama_serving(args, model, parallel, tmpdir))
            base_url = f"http://127.0.0.1:{servers[0].port}/v1"
        quarry = start_quarry_serving(args, model, parallel, base_url, tmpdir)
        servers.append(quarry)
        figures.setdefault("commands", []).extend(s.command for s in servers)
        chat(quarry, WARMUP_INVOICE)
        if parallel == 4:
            replies = [chat(quarry, text) for text in texts]
            walls = [ms(wall) for wall, _, _ in replies]
            figures.update(warm_chat_ms=walls, warm_chat_median_ms=statistics.median(walls),
                           warm_chat_model_calls=sum(r.get("model_calls") or 0 for _, _, r in replies))
            if side == "quarry":
                figures.update(retry_figures(quarry, texts[0]))
        together = ms(concurrent_wall(quarry, variants(texts, parallel, "C")))
        figures[f"concurrent_{parallel}_wall_ms"] = together
        if side == "quarry":
            apart = ms(sequential_wall(quarry, variants(texts, parallel, "S")))
            figures[f"sequential_{parallel}_wall_ms"] = apart
            figures[f"concurrency_{parallel}_throughput_ratio"] = apart / together
        if parallel == 4:
            figures["peak_rss_mib"] = servers[0].peak_rss_mib()
            if side == "llama_cpp":
                figures["proxy_peak_rss_mib"] = quarry.peak_rss_mib()
    except (OSError, http.client.HTTPException) as e:
        raise BenchError(f"{side} at {parallel} sequences: {one_line(e)}")
    finally:
        for server in reversed(servers):
            server.stop()


def serving_rows(settings):
    """(key, label, format, compared) per row of the serving table."""
    rows = [
        ("warm_chat_median_ms", "warm /v1/chat, median wall (ms)", "{:.0f}", True),
        ("warm_chat_model_calls", "warm /v1/chat, model calls in all", "{:d}", False),
        ("retry_first_ttft_ms", "retry: first request, time to first token (ms)", "{:.0f}", False),
        ("retry_repeat_ttft_ms", "retry: same request again, time to first token (ms)", "{:.0f}", False),
        ("retry_ttft_ratio", "retry: again / first (goal <= 0.15)", "{:.3f}", False),
        ("retry_repeat_cached_tokens", "retry: cached tokens of the repeat", "{:d}", False),
        ("retry_repeat_prompt_tokens", "retry: prompt tokens of the repeat", "{:d}", False),
    ]
    for n in settings:
        rows += [
            (f"concurrent_{n}_wall_ms", f"{n} chats at once, wall to the last reply (ms)", "{:.0f}", True),
            (f"sequential_{n}_wall_ms", f"{n} chats one by one, wall (ms)", "{:.0f}", False),
            (f"concurrency_{n}_throughput_ratio", f"{n} chats: throughput at once / one by one (goal >= 2.5)",
             "{:.2f}", False),
        ]
    rows += [
        ("peak_rss_mib", "peak RSS with 4 sequences (MiB)", "{:.1f}", True),
        ("proxy_peak_rss_mib", "  quarry serve in front of llama-server (MiB)", "{:.1f}", False),
    ]
    return rows


def run_serving(args, model):
    # The servers run in directories of their own.
    args.quarry = os.path.abspath(args.quarry)
    args.llama_server = args.llama_server and os.path.abspath(args.llama_server)
    settings = [4] if args.quick else [4, 8]
    sides = ["quarry"] + (["llama_cpp"] if args.llama_server else [])
    figures = {side: {} for side in sides}
    errors = {}
    with tempfile.TemporaryDirectory(prefix="local_model_bench.") as tmpdir:
        for parallel in settings:
            for side in sides:
                if side in errors:
                    continue
                try:
                    serving_side(side, args, model, parallel, tmpdir, figures[side])
                except BenchError as e:
                    errors[side] = str(e)
                    print(f"{'quarry' if side == 'quarry' else 'llama.cpp'}: {e}", file=sys.stderr)
    quarry, llama = figures["quarry"], figures.get("llama_cpp")
    rows = serving_rows(settings)
    rates = {}
    for key, _, _, compared in rows:
        q, l = number(quarry.get(key)), number((llama or {}).get(key))
        if compared and llama is not None:
            rates[key] = q / l if q is not None and l else None
    if args.json:
        print(json.dumps({
            "mode": "serving", "model": model, "threads": args.threads, "settings": settings,
            "texts": 2 if args.quick else len(INVOICE_TEXTS), "context_per_sequence": args.serving_context,
            "cache_mib": args.cache_mib, "quarry": quarry, "llama_cpp": llama,
            "ratio_quarry_over_llama_cpp": rates or None, "errors": errors or None,
        }, indent=2))
    else:
        print(f"model {os.path.basename(model)}, {args.threads} threads, warm POST /v1/chat, "
              f"{args.serving_context} tokens of context per sequence, settings of P: {settings}")
        print()
        header = ["", "Quarry"] + (["llama.cpp", "ratio (Q/l)"] if llama is not None else [])
        table = []
        for key, label, spec, _ in rows:
            row = [label, fmt(quarry.get(key), spec)]
            if llama is not None:
                ratio = rates.get(key)
                row += [fmt(llama.get(key), spec), f"{ratio:.2f}" if ratio is not None else "-"]
            table.append(row)
        print_rows(header, table)
    return 1 if errors else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quarry", default="target/release/quarry", help="quarry binary (default: %(default)s)")
    parser.add_argument("--model", required=True, help="GGUF model file used by both sides")
    parser.add_argument("--llama-server", help="llama.cpp llama-server binary; without it only Quarry is measured")
    parser.add_argument("--threads", type=int, default=2, help="CPU threads for both sides (default: %(default)s)")
    parser.add_argument("--prompt-tokens", type=int, default=512, help="approximate prompt length (default: %(default)s)")
    parser.add_argument("--generate", type=int, default=128, help="tokens to generate (default: %(default)s)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.add_argument("--serving", action="store_true",
                        help="measure warm POST /v1/chat on quarry serve and llama-server instead "
                             "(see the docstring)")
    parser.add_argument("--serving-context", type=int, default=4096,
                        help="with --serving, context tokens per sequence on both sides (default: %(default)s)")
    parser.add_argument("--cache-mib", type=int, help="with --serving, quarry serve's --cache-mib (default: its own)")
    parser.add_argument("--quick", action="store_true", help="with --serving, 4 sequences only and two texts")
    # For a quarry binary from before --parallel and --context (a smoke run of this script).
    parser.add_argument("--no-parallel-flag", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if not os.path.isfile(args.model):
        parser.error(f"--model {args.model}: no such file")
    if args.threads < 1 or args.prompt_tokens < 1 or args.generate < 1:
        parser.error("--threads, --prompt-tokens and --generate must be positive")
    model = os.path.abspath(args.model)
    if args.serving:
        if args.serving_context < 256:
            parser.error("--serving-context must be at least 256")
        return run_serving(args, model)

    prompt = build_prompt(args.prompt_tokens)
    quarry = llama = None
    errors = {}
    with tempfile.TemporaryDirectory(prefix="local_model_bench.") as tmpdir:
        prompt_file = os.path.join(tmpdir, "prompt.txt")
        with open(prompt_file, "w") as f:
            f.write(prompt)

        try:
            quarry = run_quarry(args.quarry, model, prompt_file, args.generate, args.threads)
        except BenchError as e:
            errors["quarry"] = str(e)
            print(f"quarry: {e}", file=sys.stderr)

        if args.llama_server:
            try:
                llama = run_llama(args.llama_server, model, prompt, args.prompt_tokens,
                                  args.generate, args.threads, tmpdir)
            except BenchError as e:
                errors["llama_cpp"] = str(e)
                print(f"llama.cpp: {e}", file=sys.stderr)

    rates = ratios(quarry, llama) if args.llama_server else {}
    if args.json:
        print(json.dumps({
            "model": model,
            "threads": args.threads,
            "prompt_tokens_requested": args.prompt_tokens,
            "prompt_chars": len(prompt),
            "generate": args.generate,
            "quarry": quarry,
            "llama_cpp": llama,
            "ratio_quarry_over_llama_cpp": rates or None,
            "errors": errors or None,
        }, indent=2))
    else:
        print(f"model {os.path.basename(model)}, {args.threads} threads, prompt ~{args.prompt_tokens} "
              f"tokens ({len(prompt)} chars), {args.generate} generated tokens")
        if llama:
            print("llama.cpp: second of two /completion requests (the first warms up)")
        print()
        print_table(quarry, llama, bool(args.llama_server), rates)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
