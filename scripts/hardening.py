#!/usr/bin/env python3
"""Measures how `quarry serve` holds up against hostile clients (issue 14), on loopback.

Three figures, each against a fresh server process:

  healthz   GET /healthz latency on fresh connections while N slow clients (slowloris: a partial
            request head, one more header line every 2 s, reconnecting when dropped) hold
            connections open.
  shutdown  seconds from SIGTERM to process exit while work is in flight: concurrent
            pathological /skill/extract requests (`www.` repeated, the URL scanner's worst case)
            plus one request whose body never finishes arriving.
  memory    the server's peak resident memory per input byte while K concurrent large
            /skill/extract entity requests are sent, and how many were answered 200 or 503.

Usage (stdlib only):
    cargo build --release -p quarry-cli
    python3 scripts/hardening.py --quarry target/release/quarry [--only healthz] [--slow 1000]
    python3 scripts/hardening.py --quarry old-quarry --serve-args ''   # a build without the flags

Extra `quarry serve` flags go in --serve-args (one string, split on spaces).
"""

import argparse
import json
import os
import random
import resource
import signal
import socket
import statistics
import subprocess
import threading
import time

HOST = "127.0.0.1"


def start_server(quarry, serve_args, fd_limit=None):
    def limit_fds():
        if fd_limit:
            resource.setrlimit(resource.RLIMIT_NOFILE, (fd_limit, fd_limit))

    process = subprocess.Popen(
        [quarry, "serve", "--addr", f"{HOST}:0", *serve_args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "QUARRY_LOG": "error"},
        preexec_fn=limit_fds,
    )
    for line in process.stderr:
        if line.startswith("listening on http://"):
            port = int(line.strip().rsplit(":", 1)[1])
            break
    else:
        raise SystemExit("quarry serve exited before listening")
    # Keep draining stderr so the server never blocks on a full pipe.
    threading.Thread(target=lambda: process.stderr.read(), daemon=True).start()
    return process, port


def stop_server(process):
    if process.poll() is None:
        process.kill()
        process.wait()


def request(port, method, path, body=b"", timeout=30.0):
    """One request on a fresh connection; (status, body) or raises on timeout/reset."""
    with socket.create_connection((HOST, port), timeout=timeout) as stream:
        stream.settimeout(timeout)
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: {HOST}\r\nConnection: close\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        stream.sendall(head.encode() + body)
        raw = b""
        while chunk := stream.recv(65536):
            raw += chunk
    head, _, payload = raw.partition(b"\r\n\r\n")
    if not head:
        raise ConnectionResetError("closed without an answer")
    return int(head.split()[1]), payload


def peak_rss_bytes(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def rss_bytes(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


class Slowloris:
    """N connections that each send a partial request head and one header line every 2 s,
    reopening when the server drops them."""

    def __init__(self, port, count):
        self.port, self.count = port, count
        self.reopened = 0
        self.stopping = False
        self.sockets = []
        self.thread = threading.Thread(target=self.run, daemon=True)

    def open_one(self):
        try:
            stream = socket.create_connection((HOST, self.port), timeout=2)
            stream.sendall(b"POST /skill/extract HTTP/1.1\r\nHost: x\r\n")
            stream.setblocking(False)
            return stream
        except OSError:
            return None

    def start(self):
        """Opens the connections; returns how many could not be opened."""
        failed = 0
        for _ in range(self.count):
            stream = self.open_one()
            if stream is None:
                failed += 1
            else:
                self.sockets.append(stream)
        self.thread.start()
        return failed

    def run(self):
        line = 0
        while not self.stopping:
            time.sleep(2)
            line += 1
            for index, stream in enumerate(self.sockets):
                try:
                    stream.send(f"X-Pad-{line}: {line}\r\n".encode())
                    # A closed connection shows up as EOF on read.
                    if stream.recv(1, socket.MSG_PEEK) == b"":
                        raise ConnectionResetError
                except BlockingIOError:
                    pass
                except OSError:
                    stream.close()
                    self.reopened += 1
                    self.sockets[index] = self.open_one() or stream

    def stop(self):
        self.stopping = True
        for stream in self.sockets:
            stream.close()


def measure_healthz(args):
    process, port = start_server(args.quarry, args.serve_args, args.server_fd_limit)
    try:
        slow = Slowloris(port, args.slow)
        not_opened = slow.start()
        time.sleep(2)
        latencies, failures = [], 0
        for _ in range(args.probes):
            began = time.perf_counter()
            try:
                status, _ = request(port, "GET", "/healthz", timeout=args.probe_timeout)
                if status == 200:
                    latencies.append((time.perf_counter() - began) * 1000)
                else:
                    failures += 1
            except OSError:
                failures += 1
            time.sleep(args.probe_every)
        slow.stop()
        latencies.sort()
        return {
            "slow_connections": args.slow,
            "server_fd_limit": args.server_fd_limit or "inherited",
            "probes": args.probes,
            "failed_or_timed_out": failures,
            "p50_ms": round(statistics.median(latencies), 2) if latencies else None,
            "max_ms": round(latencies[-1], 2) if latencies else None,
            "slow_connections_not_opened": not_opened,
            "slow_connections_dropped_by_server": slow.reopened,
        }
    finally:
        stop_server(process)


def measure_shutdown(args):
    process, port = start_server(args.quarry, args.serve_args)
    try:
        text = "www." * (args.pathological_kib * 256)
        body = json.dumps({"text": text, "target": "url"}).encode()
        for _ in range(args.in_flight):
            threading.Thread(
                target=lambda: _ignore(lambda: request(port, "POST", "/skill/extract", body, 300)),
                daemon=True,
            ).start()
        # One request whose body never finishes arriving.
        stalled = socket.create_connection((HOST, port))
        stalled.sendall(
            b"POST /skill/extract HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 1000\r\n\r\n{\"text\": \""
        )
        time.sleep(1.5)
        began = time.perf_counter()
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=args.shutdown_cap)
            seconds = round(time.perf_counter() - began, 2)
        except subprocess.TimeoutExpired:
            seconds = f"> {args.shutdown_cap} (killed)"
        stalled.close()
        return {
            "in_flight": f"{args.in_flight} x {args.pathological_kib} KiB 'www.' + 1 stalled body",
            "seconds_to_exit_after_sigterm": seconds,
        }
    finally:
        stop_server(process)


def entity_text(size):
    random.seed(14)
    words = (
        "Alice Smith met Bob Jones in Paris on Monday to discuss Project Apollo with Acme Corp "
        "and Maria Garcia of Globex in Berlin while Dr. Chen from Initech visited London."
    ).split()
    parts, length = [], 0
    while length < size:
        sentence = " ".join(random.choice(words) for _ in range(16)) + ".\n"
        parts.append(sentence)
        length += len(sentence)
    return "".join(parts)[:size]


def measure_memory(args):
    process, port = start_server(args.quarry, args.serve_args)
    try:
        size = args.large_mib * 1024 * 1024
        body = json.dumps({"text": entity_text(size), "target": "entity"}).encode()
        baseline = rss_bytes(process.pid)
        statuses = []

        def send():
            try:
                statuses.append(str(request(port, "POST", "/skill/extract", body, 300)[0]))
            except OSError as error:
                statuses.append(type(error).__name__)

        threads = [threading.Thread(target=send) for _ in range(args.concurrent)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        peak = peak_rss_bytes(process.pid)
        sent = args.concurrent * size
        return {
            "requests": f"{args.concurrent} concurrent x {args.large_mib} MiB entity",
            "answers": {s: statuses.count(s) for s in sorted(set(map(str, statuses)))},
            "peak_rss_mib": round(peak / 2**20, 1),
            "peak_above_idle_per_input_byte": round((peak - baseline) / sent, 2),
        }
    finally:
        stop_server(process)


def _ignore(call):
    try:
        call()
    except OSError:
        pass


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quarry", default="target/release/quarry")
    parser.add_argument("--serve-args", default="", type=lambda s: s.split())
    parser.add_argument("--only", choices=["healthz", "shutdown", "memory"])
    parser.add_argument("--slow", type=int, default=1000)
    parser.add_argument(
        "--server-fd-limit", type=int, help="run the server under this RLIMIT_NOFILE (healthz)"
    )
    parser.add_argument("--probes", type=int, default=40)
    parser.add_argument("--probe-every", type=float, default=0.5)
    parser.add_argument("--probe-timeout", type=float, default=5.0)
    parser.add_argument("--in-flight", type=int, default=4)
    parser.add_argument("--pathological-kib", type=int, default=256)
    parser.add_argument("--shutdown-cap", type=float, default=90.0)
    parser.add_argument("--concurrent", type=int, default=8)
    parser.add_argument("--large-mib", type=int, default=8)
    args = parser.parse_args()
    figures = {
        "healthz": measure_healthz,
        "shutdown": measure_shutdown,
        "memory": measure_memory,
    }
    for name, measure in figures.items():
        if args.only in (None, name):
            print(json.dumps({name: measure(args)}), flush=True)


if __name__ == "__main__":
    main()
