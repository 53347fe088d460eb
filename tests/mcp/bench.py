"""Latency of the MCP `extract` tool, as an agent using the official Python SDK sees it.

    PYTHONPATH=$(scripts/mcp.sh) python3 tests/mcp/bench.py --binary target/release/quarry

Makes a throwaway database and API key, starts `quarry serve` on a free loopback port (and a
second one without a database) and `quarry mcp` as a child process, then calls `extract`
sequentially (--calls, default 1,000, after --warmup calls) over stdio, over streamable HTTP
(`/mcp` with the key; and on the server without a database, where no key is checked), and for
comparison posts the same request to `POST /skill/extract` over one kept-alive connection. Prints p50/p99/mean per transport (and --json for the figures as JSON). Each figure is
the client's wall time per call: the SDK's JSON-RPC framing and output-schema validation, the
transport, the key check (HTTP) and the extraction.
"""

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import httpx2
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

REQUEST = {"text": "Contact hello@agent.rs for the details, or visit https://agent.rs.",
           "target": "email"}
EXPECTED = {"email": "hello@agent.rs"}


def percentile(samples, q):
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def summary(samples):
    ms = [s * 1000 for s in samples]
    return {"calls": len(ms), "p50_ms": round(percentile(ms, 0.50), 3),
            "p99_ms": round(percentile(ms, 0.99), 3), "mean_ms": round(statistics.fmean(ms), 3)}


async def timed_calls(session, calls, warmup):
    for _ in range(warmup):
        await session.call_tool("extract", REQUEST)
    samples = []
    for _ in range(calls):
        start = time.perf_counter()
        result = await session.call_tool("extract", REQUEST)
        samples.append(time.perf_counter() - start)
        if result.is_error or result.structured_content != EXPECTED:
            raise SystemExit(f"extract answered {result}")
    return samples


async def stdio(binary, db, env, calls, warmup):
    params = StdioServerParameters(command=binary, args=["mcp", "--db", db, "--no-worker"], env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            return await timed_calls(session, calls, warmup)


async def http(url, key, calls, warmup):
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as client:
        async with streamable_http_client(url + "/mcp", http_client=client) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                return await timed_calls(session, calls, warmup)


async def rest(url, calls, warmup):
    async with httpx2.AsyncClient(timeout=60) as client:
        samples = []
        for i in range(warmup + calls):
            start = time.perf_counter()
            response = await client.post(url + "/skill/extract", json=REQUEST)
            elapsed = time.perf_counter() - start
            if response.status_code != 200 or response.json() != EXPECTED:
                raise SystemExit(f"/skill/extract answered {response.status_code} {response.text}")
            if i >= warmup:
                samples.append(elapsed)
        return samples


def start_server(binary, env, extra):
    """`quarry serve` on a free loopback port with `extra` flags: (process, URL)."""
    server = subprocess.Popen([binary, "serve", "--addr", "127.0.0.1:0", *extra], env=env,
                              stderr=subprocess.PIPE, text=True)
    for line in server.stderr:
        found = re.search(r"listening on (http://\S+)", line)
        if found:
            return server, found.group(1)
    raise SystemExit("quarry serve did not start")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default="target/release/quarry")
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    binary = os.path.abspath(args.binary)
    env = {"QUARRY_EMBEDDER": "hashing", "QUARRY_LOG": "warn", "PATH": os.environ.get("PATH", "")}
    with tempfile.TemporaryDirectory(prefix="quarry-mcp-bench-") as folder:
        db = os.path.join(folder, "quarry.db")
        key = subprocess.run([binary, "key", "create", "--db", db, "--name", "bench",
                              "--scopes", "entities:read"], env=env, check=True,
                             capture_output=True, text=True).stdout.strip()
        server, url = start_server(binary, env, ["--db", db, "--no-worker"])
        bare, bare_url = start_server(binary, env, [])
        try:
            figures = {
                "stdio": summary(asyncio.run(stdio(binary, db, env, args.calls, args.warmup))),
                "http": summary(asyncio.run(http(url, key, args.calls, args.warmup))),
                "http_without_database": summary(
                    asyncio.run(http(bare_url, None, args.calls, args.warmup))),
                "rest_skill_extract": summary(asyncio.run(rest(url, args.calls, args.warmup))),
            }
        finally:
            for process in (server, bare):
                process.terminate()
                process.wait(timeout=10)
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print(f"extract, {args.calls} sequential calls after {args.warmup} warm-up calls")
        for name, figure in figures.items():
            print(f"  {name:<22} p50 {figure['p50_ms']:7.3f} ms   p99 {figure['p99_ms']:7.3f} ms"
                  f"   mean {figure['mean_ms']:7.3f} ms")


if __name__ == "__main__":
    sys.exit(main())
