#!/usr/bin/env python3
"""Measures the process CPU of one `quarry extract --schema` call (issue 13's start-up figure).

A scripted OpenAI-compatible model server (stdlib, in this process) answers every chat request
with the same `submit` tool call, so each call is one model round trip and the figure is the
binary's own cost: start-up, schema parse, one HTTP request on plain http://, grounding, output.

Two figures over --runs calls (after one warm-up call):
  cpu_ms        mean user+sys CPU per call, from the children's rusage;
  instructions  mean instructions per call (user and kernel), from `perf stat` when available.

Usage (stdlib only):
    cargo build --release -p quarry-cli
    python3 scripts/startup_cpu.py --quarry target/release/quarry [--runs 100] [--fields text]
"""

import argparse
import json
import os
import resource
import shutil
import subprocess
import tempfile

import scripted_model

SCHEMA = {
    "type": "object",
    "properties": {
        "vendor": {"type": "string"},
        "total": {"type": "number"},
        "issued": {"type": ["string", "null"], "format": "date"},
    },
}
DOCUMENT = "Invoice from Acme Supplies Ltd, 15 January 2024. Total due: $1,200."
ANSWER = {"vendor": "Acme Supplies Ltd", "total": 1200, "issued": "2024-01-15"}
# A schema of text fields only: grounding needs no number or date patterns.
TEXT_SCHEMA = {"type": "object", "properties": {"vendor": {"type": "string"}}}
TEXT_ANSWER = {"vendor": "Acme Supplies Ltd"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quarry", default="target/release/quarry")
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--fields", choices=["mixed", "text"], default="mixed",
                        help="mixed: a string, a number and a date (default); text: one string")
    args = parser.parse_args()
    schema_doc, answer = (SCHEMA, ANSWER) if args.fields == "mixed" else (TEXT_SCHEMA, TEXT_ANSWER)

    server, base_url = scripted_model.start(answer)

    with tempfile.TemporaryDirectory() as work:
        schema = os.path.join(work, "schema.json")
        with open(schema, "w") as f:
            json.dump(schema_doc, f)
        command = [
            os.path.abspath(args.quarry), "extract", "--schema", schema, "--text", DOCUMENT,
            "--model", "openai-compatible:scripted", "--base-url", base_url,
        ]
        env = {k: v for k, v in os.environ.items() if not k.startswith("QUARRY_")}
        env["XDG_CONFIG_HOME"] = work  # no user quarry.toml

        def call():
            out = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True)
            if out.returncode != 0 or json.loads(out.stdout) != answer:
                raise SystemExit(f"quarry failed ({out.returncode}): {out.stderr}{out.stdout}")

        call()  # warm-up: page cache, first-run effects
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        for _ in range(args.runs):
            call()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        figures = {"runs": args.runs, "fields": args.fields, "cpu_ms": round(cpu * 1000 / args.runs, 2)}

        if shutil.which("perf"):
            stat = subprocess.run(
                ["perf", "stat", "-x,", "-e", "instructions,task-clock", "-r", str(min(args.runs, 20)),
                 *command],
                cwd=work, env=env, capture_output=True, text=True,
            )
            for line in stat.stderr.splitlines():
                fields = line.split(",")
                if len(fields) > 2 and fields[0].replace(".", "").isdigit():
                    if fields[2].startswith("instructions"):
                        figures["instructions_m"] = round(float(fields[0]) / 1e6, 1)
                    elif fields[2].startswith("task-clock"):
                        figures["perf_task_clock_ms"] = round(float(fields[0]), 2)
        print(json.dumps(figures))
    server.shutdown()


if __name__ == "__main__":
    main()
