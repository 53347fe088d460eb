"""The extract skill's contract from Python: the seven examples of
shared/reference/extract-skill-contract.md §9, byte-for-byte the values the CLI prints, and its
failure modes as exceptions with the table's codes."""

import datetime as dt

import pytest

import quarry

NOW = "2024-01-10T12:00:00+01:00"


@pytest.mark.parametrize(
    "text, target, expected",
    [
        (
            "For support, email us at support@agent.rs or sales@agent.rs",
            "email",
            {"email": ["support@agent.rs", "sales@agent.rs"]},
        ),
        (
            "Visit https://agent.rs or check https://github.com/hwclass/agent.rs",
            "url",
            {"url": ["https://agent.rs", "https://github.com/hwclass/agent.rs"]},
        ),
        (
            "The meeting is scheduled for January 15, 2024 at 3pm",
            "date",
            {"date": "2024-01-15"},
        ),
        (
            "John Smith from Anthropic met with Sarah at Google headquarters",
            "entity",
            {
                "entity": {
                    "people": ["John Smith", "Sarah"],
                    "organizations": ["Anthropic", "Google"],
                    "locations": ["Google headquarters"],
                }
            },
        ),
        (
            "The report was prepared by Dr. Jane Smith and reviewed by Michael Johnson.",
            "name",
            {"name": ["Dr. Jane Smith", "Michael Johnson"]},
        ),
        ("This text contains no email addresses", "email", {"email": []}),
    ],
)
def test_contract_examples(text, target, expected):
    assert quarry.extract(text, target, now=NOW) == expected


def test_contract_example_7_the_guardrail_rejects_a_hallucination():
    verdict = quarry.check("Contact us anytime", "email", {"email": "contact@example.com"})
    assert not verdict.accepted
    assert verdict.reasons[0]["kind"] == "hallucination"
    assert (
        verdict.reasons[0]["message"]
        == "contact@example.com does not appear in source text - hallucination detected"
    )


def test_the_guardrail_accepts_grounded_output_with_its_span():
    text = "Write to hello@agent.rs today"
    verdict = quarry.check(text, "email", '{"email": "hello@agent.rs"}')
    assert verdict.accepted and verdict.reasons == []
    (value,) = verdict.values
    alignment = value["evidence"]["alignment"]
    assert (value["value"], alignment["start"], alignment["end"]) == ("hello@agent.rs", 9, 23)
    assert text[alignment["start"] : alignment["end"]] == "hello@agent.rs"


def test_detail_lists_matches_with_code_point_offsets():
    text = "日本語のメモ: 明日 call +44 20 7946 0958 tomorrow"
    answer = quarry.extract(text, "phone", region="GB", detail=True)
    assert answer["phone"] == "+442079460958"
    (found,) = answer["matches"]
    assert text[found["start"] : found["end"]] == found["text"] == "+44 20 7946 0958"


def test_relative_dates_use_now_as_a_datetime_or_a_string():
    as_text = quarry.extract("see you tomorrow", "date", now=NOW)
    as_datetime = quarry.extract(
        "see you tomorrow",
        "date",
        now=dt.datetime(2024, 1, 10, 12, tzinfo=dt.timezone(dt.timedelta(hours=1))),
    )
    assert as_text == as_datetime == {"date": "2024-01-11"}


def test_a_phone_region_changes_how_national_numbers_read():
    assert quarry.extract("call 020 7946 0958", "phone", region="gb") == {"phone": "+442079460958"}


@pytest.mark.parametrize(
    "call, error, code",
    [
        (lambda: quarry.extract("hello@agent.rs", "fax"), quarry.InvalidTarget, "InvalidTarget"),
        (lambda: quarry.extract("   ", "email"), quarry.EmptyInput, "EmptyInput"),
        (lambda: quarry.extract("tomorrow", "date", now="next week"), quarry.InvalidNow, "InvalidNow"),
        (lambda: quarry.extract("555 1234", "phone", region="XX"), quarry.InvalidRegion, "InvalidRegion"),
        (lambda: list(quarry.scan("a@b.co", [])), quarry.MissingTarget, "MissingTarget"),
        (lambda: quarry.check("x", "fax", "{}"), quarry.InvalidTarget, "InvalidTarget"),
    ],
)
def test_failure_modes_raise_the_tables_skill_errors(call, error, code):
    with pytest.raises(error) as raised:
        call()
    assert isinstance(raised.value, quarry.SkillError)
    assert isinstance(raised.value, ValueError)
    assert raised.value.code == code
    assert str(raised.value).startswith(f"{code} - ")


def test_the_unknown_target_message_is_the_contracts():
    with pytest.raises(quarry.SkillError) as raised:
        quarry.extract("Contact: hello@agent.rs", "phone-number")
    assert raised.value.message == "unknown target 'phone-number'"


def test_a_wrong_type_for_now_is_a_type_error():
    with pytest.raises(TypeError):
        quarry.extract("tomorrow", "date", now=12)
