#!/usr/bin/env python3
"""Regenerates crates/quarry-detect/data/tlds.txt from the root zone, as the Public Suffix List's
ICANN section states it: every rule's last label, lower-cased, deduplicated, each
internationalised one also in its xn-- form.

    python3 scripts/update_tlds.py [PATH_OR_URL]   # default: https://publicsuffix.org/list/public_suffix_list.dat

Run it when the root zone changes (new gTLDs are delegated, old ones retired) and commit the
result; the build embeds the file, so no network is needed at run time.
"""

import sys
import urllib.request
from pathlib import Path

SOURCE = "https://publicsuffix.org/list/public_suffix_list.dat"
TARGET = Path(__file__).resolve().parent.parent / "crates/quarry-detect/data/tlds.txt"
HEADER = """# Top-level domains of the root zone: the single-label rules of the ICANN section of the Public
# Suffix List (https://publicsuffix.org, MPL-2.0), each internationalised one also in its xn-- form.
# Derived: every non-comment rule of that section, its last label, lower-cased, deduplicated.
"""


def read(source: str) -> str:
    if source.startswith(("http://", "https://")):
        with urllib.request.urlopen(source, timeout=60) as answer:
            return answer.read().decode("utf-8")
    return Path(source).read_text(encoding="utf-8")


def tlds(psl: str) -> list[str]:
    labels: set[str] = set()
    in_icann = False
    for line in psl.splitlines():
        line = line.strip()
        if line.startswith("// ===BEGIN ICANN DOMAINS==="):
            in_icann = True
        elif line.startswith("// ===END ICANN DOMAINS==="):
            break
        elif in_icann and line and not line.startswith("//"):
            label = line.lstrip("!*.").split(".")[-1].lower()
            labels.add(label)
            if not label.isascii():
                labels.add("xn--" + label.encode("punycode").decode("ascii"))
    return sorted(labels)


def main() -> None:
    found = tlds(read(sys.argv[1] if len(sys.argv) > 1 else SOURCE))
    if len(found) < 1000:
        sys.exit(f"only {len(found)} top-level domains found; is this the Public Suffix List?")
    TARGET.write_text(HEADER + "\n".join(found) + "\n", encoding="utf-8")
    print(f"{TARGET}: {len(found)} top-level domains")


if __name__ == "__main__":
    main()
