//! Behaviour of `date::find` against a fixed reference time.

use chrono::{DateTime, FixedOffset};
use quarry_core::MatchKind;

use super::find;

/// Monday 2016-11-07 09:00, UTC.
fn now() -> DateTime<FixedOffset> {
    DateTime::parse_from_rfc3339("2016-11-07T09:00:00+00:00").expect("valid reference time")
}

/// `(matched text, kind, value)` for each detection.
fn found(text: &str) -> Vec<(String, MatchKind, String)> {
    find(text, now())
        .into_iter()
        .map(|d| (text[d.range].to_owned(), d.kind, d.value))
        .collect()
}

fn one(text: &str) -> (String, MatchKind, String) {
    let all = found(text);
    assert_eq!(all.len(), 1, "expected one match in {text:?}, got {all:?}");
    all.into_iter().next().expect("one match")
}

#[test]
fn contract_example_is_one_datetime() {
    let (span, kind, value) = one("The meeting is scheduled for January 15, 2024 at 3pm");
    assert_eq!(span, "January 15, 2024 at 3pm");
    assert_eq!(kind, MatchKind::DateTime);
    assert_eq!(value, "2024-01-15T15:00:00");
}

#[test]
fn absolute_formats_normalise_to_iso() {
    for (text, want) in [
        ("on 15 Jan 2024.", "2024-01-15"),
        ("the 04th Jan 2019 report", "2019-01-04"),
        ("due 2024-01-15", "2024-01-15"),
        ("dated 15.01.2024", "2024-01-15"),
        ("fourth of july, 1995", "1995-07-04"),
        ("Fri, Jul 18, 2014", "2014-07-18"),
        ("31/Oct/1974", "1974-10-31"),
    ] {
        assert_eq!(one(text).2, want, "{text}");
    }
}

#[test]
fn slash_dates_read_month_first_unless_first_number_exceeds_12() {
    assert_eq!(one("paid 01/22/2016").2, "2016-01-22");
    assert_eq!(one("paid 03/04/2016").2, "2016-03-04");
    assert_eq!(one("paid 22/01/2016").2, "2016-01-22");
}

#[test]
fn iso_datetime_keeps_its_offset_and_times_stay_naive() {
    assert_eq!(
        one("at 2024-01-15T15:00:00+02:00").2,
        "2024-01-15T15:00:00+02:00"
    );
    assert_eq!(
        one("see you at 3:30 p.m."),
        ("3:30 p.m.".into(), MatchKind::Time, "15:30:00".into())
    );
    assert_eq!(one("from 15:30 on").2, "15:30:00");
}

#[test]
fn relative_expressions_resolve_against_now() {
    for (text, want) in [
        ("see you tomorrow", "2016-11-08"),
        ("it was yesterday", "2016-11-06"),
        ("next Tuesday works", "2016-11-15"),
        ("last Friday", "2016-11-04"),
        ("in 3 days", "2016-11-10"),
        ("2 weeks ago", "2016-10-24"),
        ("next month", "2016-12-01/2016-12-31"),
        ("this week", "2016-11-07/2016-11-13"),
    ] {
        assert_eq!(one(text).2, want, "{text}");
    }
}

#[test]
fn month_day_without_year_is_the_next_occurrence() {
    assert_eq!(one("on Jan 15th").2, "2017-01-15");
    assert_eq!(one("on Dec 15th").2, "2016-12-15");
}

#[test]
fn ranges_become_iso_intervals() {
    let (span, kind, value) = one("I'll be out January 12, 2016 - 01/22/2016");
    assert_eq!(span, "January 12, 2016 - 01/22/2016");
    assert_eq!(kind, MatchKind::DateRange);
    assert_eq!(value, "2016-01-12/2016-01-22");
    assert_eq!(one("between 2014 and 2018").2, "2014-01-01/2018-12-31");
    assert_eq!(one("July 13 to 15").2, "2017-07-13/2017-07-15");
    assert_eq!(one("from 3:30-6:00pm").2, "15:30:00/18:00:00");
}

#[test]
fn durations_are_iso_8601() {
    assert_eq!(
        one("it takes 3 days"),
        ("3 days".into(), MatchKind::Duration, "P3D".into())
    );
    assert_eq!(one("one and a half hours").2, "PT1H30M");
}

#[test]
fn versions_scores_phones_and_money_are_not_dates() {
    for text in [
        "version 1.2.3 is out",
        "the score was 3-1",
        "call 650-650-6500",
        "it costs $12.50",
        "A4 A5",
        "Pay ABC 2000",
        "add 1/2 cup of flour",
        "0.8/15 looks like a formula",
    ] {
        assert!(found(text).is_empty(), "{text}: {:?}", found(text));
    }
}

#[test]
fn may_as_a_verb_is_not_a_month() {
    assert!(found("This may or may not be right.").is_empty());
    assert!(found("May I ask why?").is_empty());
    assert_eq!(one("due May 5, 2020").2, "2020-05-05");
    assert_eq!(one("back in May").2, "2017-05-01/2017-05-31");
}

#[test]
fn code_point_offsets_in_non_ascii_text() {
    let text = "Café ☕ à 東京 on January 15, 2024.";
    let matches = crate::to_matches(text, find(text, now()));
    assert_eq!(matches.len(), 1);
    let m = &matches[0];
    assert_eq!(m.text, "January 15, 2024");
    let by_code_points: String = text.chars().skip(m.start).take(m.end - m.start).collect();
    assert_eq!(by_code_points, m.text);
}

#[test]
fn spans_never_cross_a_line_break() {
    let all = found("23.04.2022 14:55\n30.04.2022 12:04");
    let values: Vec<&str> = all.iter().map(|(_, _, v)| v.as_str()).collect();
    assert_eq!(values, ["2022-04-23T14:55:00", "2022-04-30T12:04:00"]);
}

#[test]
fn span_conventions_and_holidays() {
    let now = chrono::DateTime::parse_from_rfc3339("2019-12-26T00:00:00+00:00").unwrap();
    let text = "I'll go back at 8.30 pm today";
    let found = super::find(text, now);
    assert_eq!(&text[found[0].range.clone()], "at 8.30 pm today");
    assert_eq!(found[0].value, "2019-12-26T20:30:00");
    let text = "The project should start in the next decade";
    let found = super::find(text, now);
    assert_eq!(&text[found[0].range.clone()], "the next decade");
    let text = "Deepavali in 2019 and lent 2018";
    let found = super::find(text, now);
    assert_eq!(&text[found[0].range.clone()], "Deepavali in 2019");
    assert_eq!(found[0].value, "2019-10-27");
    assert_eq!(&text[found[1].range.clone()], "lent 2018");
    assert_eq!(found[1].value, "2018-02-14/2018-03-31");
}

#[test]
fn phone_like_digit_runs_are_not_ranges() {
    // A dash range glued to another digit group was read as "2014-2015".
    for text in [
        "phone: 2014-2015-3344",
        "call 1-800-555-1234",
        "ref 10-12-555",
    ] {
        assert!(found(text).is_empty(), "{text}: {:?}", found(text));
    }
    assert_eq!(one("from 2014-2015").2, "2014-01-01/2015-12-31");
}

#[test]
fn weekday_words_follow_the_documented_convention() {
    // Tuesday 2013-02-12, Duckling's reference day.
    let now = DateTime::parse_from_rfc3339("2013-02-12T04:30:00-02:00").expect("valid");
    for (text, want) in [
        ("next monday", "2013-02-18"),
        ("next tuesday", "2013-02-19"),
        ("next wednesday", "2013-02-20"),
        ("this monday", "2013-02-18"),
        ("this tuesday", "2013-02-12"),
        ("coming friday", "2013-02-15"),
        ("last sunday", "2013-02-10"),
        ("last tuesday", "2013-02-05"),
        ("Monday two weeks from now", "2013-02-25"),
    ] {
        let all = find(text, now);
        assert_eq!(all.len(), 1, "{text}");
        assert_eq!(all[0].value, want, "{text}");
    }
}

#[test]
fn issue_12_forms_resolve() {
    let now = DateTime::parse_from_rfc3339("2013-02-12T04:30:00-02:00").expect("valid");
    for (text, want) in [
        ("nineteen eighty six", "1986-01-01/1986-12-31"),
        ("April of 87", "1987-04-01/1987-04-30"),
        ("03/18/40", "1940-03-18"),
        ("2020/Sep/23", "2020-09-23"),
        ("2015-12", "2015-12-01/2015-12-31"),
        ("Dec/2018", "2018-12-01/2018-12-31"),
        ("20161016", "2016-10-16"),
        ("in two thousand and twenty", "2020-01-01/2020-12-31"),
        ("today at 9a", "2013-02-12T09:00:00"),
        ("tomorrow at seven twenty-seven", "2013-02-13T07:27:00"),
        ("later this month", "2013-02-16/2013-02-28"),
        ("last week of september 2014", "2014-09-29/2014-10-05"),
    ] {
        let all = find(text, now);
        assert_eq!(all.len(), 1, "{text}: {all:?}");
        assert_eq!(all[0].value, want, "{text}");
    }
}

#[test]
fn clock_phrases_and_days_of_relative_months() {
    let now = DateTime::parse_from_rfc3339("2013-02-12T04:30:00-02:00").expect("valid");
    for (text, want) in [
        ("a quarter to noon", "11:45:00"),
        ("twenty past six pm", "18:20:00"),
        ("8 this evening", "2013-02-12T20:00:00"),
        ("at 7 tonight", "2013-02-12T19:00:00"),
        ("20 of this month", "2013-02-20"),
        ("the 3rd of next month", "2013-03-03"),
        ("march the third", "2013-03-03"),
        ("friday after next", "2013-02-22"),
    ] {
        let all = find(text, now);
        assert_eq!(all.len(), 1, "{text}: {all:?}");
        assert_eq!(all[0].value, want, "{text}");
    }
    assert!(
        find("building 4 this afternoon", now)
            .iter()
            .all(|d| !d.value.starts_with("16:00"))
    );
}
