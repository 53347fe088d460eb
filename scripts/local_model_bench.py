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

Usage:
    cargo build --release -p quarry-cli
    python3 scripts/local_model_bench.py --model path/to/model.gguf \\
        [--quarry target/release/quarry] [--llama-server path/to/llama-server] \\
        [--threads 2] [--prompt-tokens 512] [--generate 128] [--json]

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
import subprocess
import sys
import tempfile
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


def wait_healthy(proc, port, log_path):
    deadline = time.monotonic() + HEALTH_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise BenchError(f"llama-server exited with status {proc.returncode} while loading: "
                             f"{one_line(log_tail(log_path) or 'no output')}")
        try:
            status, _ = http_request(port, "GET", "/health", timeout=2.0)
            if status == 200:
                return
        except (OSError, http.client.HTTPException):
            pass
        time.sleep(0.25)
    raise BenchError(f"llama-server did not answer GET /health with 200 within "
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
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    line = lambda r: "  ".join(c.ljust(widths[0]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(r))
    print(line(header))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print(line(r))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quarry", default="target/release/quarry", help="quarry binary (default: %(default)s)")
    parser.add_argument("--model", required=True, help="GGUF model file used by both sides")
    parser.add_argument("--llama-server", help="llama.cpp llama-server binary; without it only Quarry is measured")
    parser.add_argument("--threads", type=int, default=2, help="CPU threads for both sides (default: %(default)s)")
    parser.add_argument("--prompt-tokens", type=int, default=512, help="approximate prompt length (default: %(default)s)")
    parser.add_argument("--generate", type=int, default=128, help="tokens to generate (default: %(default)s)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = parser.parse_args()

    if not os.path.isfile(args.model):
        parser.error(f"--model {args.model}: no such file")
    if args.threads < 1 or args.prompt_tokens < 1 or args.generate < 1:
        parser.error("--threads, --prompt-tokens and --generate must be positive")
    model = os.path.abspath(args.model)

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
