"""The grounding aligner from Python: spans as string indices, every status, both modes."""

import quarry

TEXT = "Patient was given 400 mg ibuprofen. Later: ibuprofen again, then acetaminophen 500mg."


def test_repeated_values_map_to_successive_occurrences():
    first, second = quarry.ground(TEXT, ["ibuprofen", "ibuprofen"])
    assert (first.start, second.start) == (25, 43)
    assert TEXT[first.start : first.end] == "ibuprofen"
    assert first.status == second.status == "match_exact" and first.grounded


def test_normalized_fuzzy_and_missing_values():
    normalized, fuzzy, missing = quarry.ground(
        TEXT, ["IBUPROFEN", "given 400 mg of ibuprofen", "aspirin"]
    )
    assert normalized.status == "match_normalized"
    assert fuzzy.status == "match_fuzzy" and 0.75 <= fuzzy.score < 1.0
    assert TEXT[fuzzy.start : fuzzy.end] == "given 400 mg ibuprofen"
    assert not missing.grounded and missing.start is None
    assert "does not appear" in missing.reason


def test_langextract_mode_accepts_a_leading_part_as_match_lesser():
    (lesser,) = quarry.ground("The patient took aspirin daily.", ["aspirin daily for pain"], mode="langextract", fuzzy=False)
    assert lesser.status == "match_lesser"
    (refused,) = quarry.ground("The patient took aspirin daily.", ["aspirin daily for pain"], fuzzy=False)
    assert not refused.grounded


def test_offsets_count_code_points_in_cjk_and_emoji_text():
    text = "🎉 会议记录：张伟 met 李娜 in 東京 👩‍👩‍👧"
    for found in quarry.ground(text, ["张伟", "李娜", "東京"]):
        assert text[found.start : found.end] == found.value


def test_a_bad_mode_is_a_clear_error():
    try:
        quarry.ground(TEXT, ["x"], mode="fast")
    except quarry.InvalidArguments as error:
        assert "langextract" in error.message
    else:
        raise AssertionError("an unknown mode must raise")
