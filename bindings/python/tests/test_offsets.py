"""Match offsets are Python string indices: generated texts place known values between ASCII,
CJK, emoji (outside the BMP) and combining-mark filler, and every match must slice back to its
text at the place the value was put."""

import random

import pytest

import quarry

FILLERS = {
    # No "-" or "to": between two dates they make a range, rightly.
    "ascii": ["see", "the notes", "and", "|", "then", "(call)", "ok."],
    "cjk": ["会议记录", "请联系", "東京で", "자세한 내용은", "。", "和"],
    "emoji": ["🎉", "👩‍👩‍👧", "🇯🇵", "🙂🙂", "🧪 test", "𝒳"],
    "combining": ["café", "naïve", "e\u0301te\u0301", "Zoë"],
}

VALUES = [
    ("email", "ada@example.com"),
    ("email", "grace.hopper@navy.mil"),
    ("url", "https://example.org/path?q=1"),
    ("url", "http://quarry.dev/docs"),
    ("phone", "+1 415 555 2671"),
    ("ip", "192.168.10.4"),
    ("date", "March 3, 2024"),
]


def generated_texts(kind: str, count: int, seed: int):
    rng = random.Random(seed)
    for _ in range(count):
        parts, placed, length = [], [], 0
        for _ in range(rng.randint(1, 4)):
            filler = " ".join(rng.choice(FILLERS[kind]) for _ in range(rng.randint(1, 3)))
            parts.append(filler + " ")
            length += len(filler) + 1
            target, value = rng.choice(VALUES)
            placed.append((target, value, length))
            parts.append(value + " ")
            length += len(value) + 1
        parts.append(rng.choice(FILLERS[kind]))
        yield "".join(parts), placed


@pytest.mark.parametrize("kind", sorted(FILLERS))
def test_matches_slice_back_to_their_text_where_the_value_was_placed(kind):
    for text, placed in generated_texts(kind, 150, seed=len(kind)):
        matches = list(quarry.scan(text, ["email", "url", "phone", "ip", "date"]))
        for m in matches:
            assert text[m.start : m.end] == m.text, (text, m)
        found = {(m.target, m.text, m.start) for m in matches}
        for target, value, start in placed:
            assert (target, value, start) in found, (text, target, value, start, matches)


def test_detail_offsets_slice_too():
    text = "🎉🎉 会议 ada@example.com 和 https://example.org/x"
    for target in ("email", "url"):
        for m in quarry.extract(text, target, detail=True)["matches"]:
            assert text[m["start"] : m["end"]] == m["text"]


def test_scan_orders_by_position_and_names_the_target():
    text = "Mail bob@example.com on 2024-05-01 from 10.0.0.1"
    found = [(m.target, m.text, m.kind) for m in quarry.scan(text, ["ip", "date", "email"], now="2024-01-01T00:00:00Z")]
    assert found == [
        ("email", "bob@example.com", "email"),
        ("date", "2024-05-01", "date"),
        ("ip", "10.0.0.1", "ip"),
    ]
