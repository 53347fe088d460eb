"""Quarry for Python against the CLI and the Python peers, on `quarry bench`'s generated corpus.

    scripts/python.sh            # builds and installs the package into target/python-bindings
    target/python-bindings/bin/pip install urlextract==1.9.0 dateparser==1.2.1
    cargo build --release -p quarry-cli
    target/python-bindings/bin/python bindings/python/bench/bench.py --quarry target/release/quarry

Prints, on one core: the MB/s of `quarry.extract` for url and email against `quarry bench`'s
(the goal is at least 90 % of the CLI for url+email); Python's `re`, urlextract and dateparser on
the same text (dateparser on a slice: it is too slow for the whole corpus); the import time of
`quarry`; the size of the wheel. Peers that are not installed are left out of the table.
"""

import argparse
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time

import quarry

MIB = 1024 * 1024
NOW = "2024-01-10T12:00:00Z"
# Common hand-written patterns (the kind people paste): a URL with a scheme or www., an email.
URL_RE = re.compile(r"\b(?:https?://|www\.)[^\s<>\"')\]]+", re.I)
EMAIL_RE = re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b")


def best_of(passes, work):
    best = float("inf")
    for _ in range(passes):
        started = time.perf_counter()
        found = work()
        best = min(best, time.perf_counter() - started)
    return best, found


def mbps(size, seconds):
    return size / MIB / seconds


def cli_figures(quarry_bin, size_mib, passes):
    out = subprocess.run(
        [quarry_bin, "bench", "--json", "--size-mib", str(size_mib), "--passes", str(passes)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    figures = json.loads(out)
    return {row["target"]: row["mb_per_s"] for row in figures["throughput_mb_per_s"]}


def import_time(runs=5):
    code = "import time; t = time.perf_counter(); import quarry; print(time.perf_counter() - t)"
    times = [
        float(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout)
        for _ in range(runs)
    ]
    return min(times)


def wheel_size(package_dir):
    with tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, PATH=f"{pathlib.Path(sys.executable).parent}:{os.environ['PATH']}")
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w", out, str(package_dir)],
            check=True,
            env=env,
        )
        (wheel,) = pathlib.Path(out).glob("*.whl")
        return wheel.name, wheel.stat().st_size


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quarry", required=True, help="the quarry binary (a release build)")
    parser.add_argument("--size-mib", type=int, default=8)
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--dateparser-kib", type=int, default=64)
    parser.add_argument("--no-wheel", action="store_true", help="skip building the wheel")
    args = parser.parse_args()

    with tempfile.NamedTemporaryFile(suffix=".txt") as corpus:
        subprocess.run(
            [args.quarry, "bench", "--write-corpus", corpus.name, "--size-mib", str(args.size_mib)],
            check=True,
        )
        text = pathlib.Path(corpus.name).read_text()
    size = len(text.encode())
    rows = []

    cli = cli_figures(args.quarry, args.size_mib, args.passes)
    py = {}
    for target in ("url", "email", "date"):
        seconds, found = best_of(args.passes, lambda: quarry.extract(text, target, now=NOW))
        py[target] = seconds
        values = found[target]
        count = len(values) if isinstance(values, list) else 1
        rows.append((f"quarry.extract {target}", mbps(size, seconds), count))
        rows.append((f"quarry CLI bench {target}", cli[target], None))
    # As `quarry bench` measures "email+url": both targets over the text, one after the other.
    seconds, _ = best_of(
        args.passes,
        lambda: (quarry.extract(text, "email", now=NOW), quarry.extract(text, "url", now=NOW)),
    )
    both_py, both_cli = mbps(size, seconds), cli["email+url"]
    rows.append(("quarry.extract url+email", both_py, None))
    rows.append(("quarry CLI url+email", both_cli, None))

    seconds, found = best_of(args.passes, lambda: URL_RE.findall(text))
    rows.append(("re (URL pattern)", mbps(size, seconds), len(set(found))))
    seconds, found = best_of(args.passes, lambda: EMAIL_RE.findall(text))
    rows.append(("re (email pattern)", mbps(size, seconds), len(set(found))))
    try:
        import urlextract

        extractor = urlextract.URLExtract()
        seconds, found = best_of(1, lambda: extractor.find_urls(text, only_unique=True))
        rows.append(("urlextract find_urls", mbps(size, seconds), len(found)))
    except ImportError:
        print("urlextract is not installed: left out", file=sys.stderr)
    try:
        import dateparser.search

        piece = text[: args.dateparser_kib * 1024]
        piece_size = len(piece.encode())
        seconds, found = best_of(1, lambda: dateparser.search.search_dates(piece, languages=["en"]) or [])
        rows.append((f"dateparser search_dates ({args.dateparser_kib} KiB)", mbps(piece_size, seconds), len(found)))
        seconds, found = best_of(args.passes, lambda: quarry.extract(piece, "date", now=NOW))
        rows.append((f"quarry.extract date ({args.dateparser_kib} KiB)", mbps(piece_size, seconds), len(found["date"])))
    except ImportError:
        print("dateparser is not installed: left out", file=sys.stderr)

    print(f"corpus: {size / MIB:.1f} MiB, best of {args.passes} passes, one core")
    print(f"{'':44} {'MB/s':>10} {'values':>8}")
    for name, speed, count in rows:
        print(f"{name:44} {speed:10.1f} {'' if count is None else count:>8}")
    print(f"url+email: Python at {100 * both_py / both_cli:.0f} % of the CLI (goal: at least 90 %)")
    print(f"import quarry: {1000 * import_time():.1f} ms (best of 5 fresh interpreters)")
    if not args.no_wheel:
        name, wheel_bytes = wheel_size(pathlib.Path(__file__).resolve().parents[1])
        print(f"wheel: {name}, {wheel_bytes / MIB:.1f} MiB")


if __name__ == "__main__":
    main()
