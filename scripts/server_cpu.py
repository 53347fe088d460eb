#!/usr/bin/env python3
"""Measures warm server CPU per schema extraction: `quarry serve` beside instructor (issue 13).

Both answer the same extraction (a string, a number and a date from one invoice line) against
the same scripted OpenAI-compatible model (scripts/scripted_model.py), which runs in a process of
its own so its CPU is counted for neither side.

- quarry: `quarry serve` with the scripted model, logging at its default level to a file; the client posts `POST /v1/chat` (the
  conversation endpoint; the reply streams as Server-Sent Events) over one kept-alive
  connection. The figure is the server process's CPU (user+sys of all its threads, from
  /proc/PID/stat) over --requests requests, after --warmup requests. `--db sqlite` stores every
  conversation and turn in a SQLite file (and authenticates with a key), as a real server does;
  `--db none` is the server without a database, which keeps conversations in memory.
- instructor: `instructor.from_openai(OpenAI(...))` with a pydantic model of the same fields
  (mode TOOLS, the default), one `create` per extraction; the figure is that process's own CPU
  (time.process_time) per call, which includes the openai client and its HTTP stack, as
  quarry's includes its HTTP server and its model client. Installed by scripts/pip-target.sh.

Usage:
    cargo build --release -p quarry-cli
    python3 scripts/server_cpu.py --quarry target/release/quarry [--requests 1000] [--db sqlite]
    python3 scripts/server_cpu.py --skip-instructor ...   # quarry only

Prints one JSON line per side: cpu_ms per extraction, requests, and wall time per request.
"""

import argparse
import http.client
import json
import os
import subprocess
import sys
import tempfile
import time

import scripted_model
from startup_cpu import ANSWER, DOCUMENT, SCHEMA

HERE = os.path.dirname(os.path.abspath(__file__))
INSTRUCTOR_VERSION = "1.17.0"
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")

INSTRUCTOR_CLIENT = r"""
import datetime, json, sys, time
from typing import Optional
import instructor
from openai import OpenAI
from pydantic import BaseModel

class Invoice(BaseModel):
    vendor: str
    total: float
    issued: Optional[datetime.date] = None

base_url, document, warmup, requests = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
client = instructor.from_openai(OpenAI(base_url=base_url, api_key="scripted", max_retries=0))

def extract():
    return client.chat.completions.create(
        model="scripted",
        response_model=Invoice,
        max_retries=0,
        messages=[{"role": "user", "content": f"Extract the invoice from: {document}"}],
    )

for _ in range(warmup):
    extract()
cpu, wall = time.process_time(), time.perf_counter()
for _ in range(requests):
    invoice = extract()
cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
assert invoice.vendor == "Acme Supplies Ltd" and invoice.total == 1200, invoice
print(json.dumps({"cpu_s": cpu, "wall_s": wall}))
"""

MODEL_SERVER = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
import json, scripted_model
server, base_url = scripted_model.start(json.loads(sys.argv[2]))
print(base_url, flush=True)
while True:
    time.sleep(3600)
"""


def process_cpu_seconds(pid):
    """(user, sys) CPU of every thread of `pid`, living or exited, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # Fields 14 and 15 of proc(5) (utime, stime), counted from the state field (3).
    return int(fields[11]) / CLOCK_TICKS, int(fields[12]) / CLOCK_TICKS


def start_quarry(binary, base_url, database, work):
    env = {k: v for k, v in os.environ.items() if not k.startswith("QUARRY_")}
    env["XDG_CONFIG_HOME"] = work  # no user quarry.toml
    command = [binary, "serve", "--addr", "127.0.0.1:0",
               "--model", "openai-compatible:scripted", "--base-url", base_url]
    headers = {"Content-Type": "application/json"}
    if database == "sqlite":
        db = os.path.join(work, "quarry.db")
        created = subprocess.run(
            [binary, "key", "create", "--scopes", "extraction:trigger", "--json", "--db", db],
            cwd=work, env=env, capture_output=True, text=True, check=True)
        headers["Authorization"] = "Bearer " + json.loads(created.stdout)["key"]
        command += ["--db", db, "--no-worker"]
    # The log (one line per request at the default level) goes to a file, as a real server's
    # would, so writing it is part of the figure.
    log = os.path.join(work, "serve.log")
    with open(log, "w") as stderr:
        server = subprocess.Popen(command, cwd=work, env=env, stderr=stderr)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and server.poll() is None:
        with open(log) as f:
            for line in f:
                if line.startswith("listening on http://"):
                    host, port = line.strip().removeprefix("listening on http://").rsplit(":", 1)
                    return server, (host, int(port)), headers
        time.sleep(0.05)
    server.kill()
    with open(log) as f:
        raise SystemExit(f"quarry serve did not start listening: {f.read()[-2000:]}")


def measure_quarry(args, base_url):
    with tempfile.TemporaryDirectory() as work:
        server, (host, port), headers = start_quarry(
            os.path.abspath(args.quarry), base_url, args.db, work)
        try:
            connection = http.client.HTTPConnection(host, port)
            body = json.dumps({"message": DOCUMENT, "schema": SCHEMA})

            def extract():
                connection.request("POST", "/v1/chat", body=body, headers=headers)
                response = connection.getresponse()
                stream = response.read().decode()
                if response.status != 200 or '"Acme Supplies Ltd"' not in stream:
                    raise SystemExit(f"/v1/chat answered {response.status}: {stream[:500]}")

            for _ in range(args.warmup):
                extract()
            (user, system), wall = process_cpu_seconds(server.pid), time.perf_counter()
            for _ in range(args.requests):
                extract()
            after = process_cpu_seconds(server.pid)
            user, system = after[0] - user, after[1] - system
            wall = time.perf_counter() - wall
        finally:
            server.terminate()
            server.wait()
    return {"side": "quarry", "route": "POST /v1/chat", "db": args.db, "requests": args.requests,
            "cpu_ms": round((user + system) * 1000 / args.requests, 3),
            "user_ms": round(user * 1000 / args.requests, 3),
            "sys_ms": round(system * 1000 / args.requests, 3),
            "wall_ms": round(wall * 1000 / args.requests, 3)}


def measure_instructor(args, base_url):
    path = subprocess.run(
        [os.path.join(HERE, "pip-target.sh"), "instructor", INSTRUCTOR_VERSION,
         "instructor", "openai", "pydantic"],
        capture_output=True, text=True, check=True).stdout.strip()
    out = subprocess.run(
        [sys.executable, "-c", INSTRUCTOR_CLIENT, base_url, DOCUMENT,
         str(args.warmup), str(args.requests)],
        env={**os.environ, "PYTHONPATH": path}, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"instructor failed: {out.stderr}")
    figures = json.loads(out.stdout)
    return {"side": "instructor", "version": INSTRUCTOR_VERSION, "requests": args.requests,
            "cpu_ms": round(figures["cpu_s"] * 1000 / args.requests, 3),
            "wall_ms": round(figures["wall_s"] * 1000 / args.requests, 3)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quarry", default="target/release/quarry")
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--db", choices=["none", "sqlite"], default="none")
    parser.add_argument("--skip-instructor", action="store_true")
    args = parser.parse_args()

    model = subprocess.Popen([sys.executable, "-c", MODEL_SERVER, HERE, json.dumps(ANSWER)],
                             stdout=subprocess.PIPE, text=True)
    try:
        base_url = model.stdout.readline().strip()
        print(json.dumps(measure_quarry(args, base_url)), flush=True)
        if not args.skip_instructor:
            print(json.dumps(measure_instructor(args, base_url)), flush=True)
    finally:
        model.terminate()
        model.wait()


if __name__ == "__main__":
    main()
