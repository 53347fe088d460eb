//! A small date normaliser for coercion to `format: date` / `date-time`: the handful of shapes
//! models write ("January 15, 2024", "15/01/2024", "2024/1/15") rewritten as ISO 8601.
//! Full date understanding (relative dates, other languages) lives in `quarry-detect`.

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];

/// `YYYY-MM-DD` for a date written in a common English or numeric form.
pub fn normalize_date(text: &str) -> Option<String> {
    let text = text.trim();
    let tokens = tokenize(text);
    let (year, month, day) = match tokens.as_slice() {
        // 2024-01-15, 2024/1/15, 2024.01.15
        [Token::Num(y, 4), Token::Num(m, _), Token::Num(d, _)] => (*y, *m, *d),
        // 15/01/2024 or 01/15/2024: day first when it must be, else month first (US style).
        [Token::Num(a, _), Token::Num(b, _), Token::Num(y, 4)] => {
            if *a > 12 || text.contains('.') {
                (*y, *b, *a)
            } else {
                (*y, *a, *b)
            }
        }
        // January 15, 2024 / Jan 15th 2024
        [Token::Month(m), Token::Num(d, _), Token::Num(y, 4)] => (*y, *m, *d),
        // 15 January 2024
        [Token::Num(d, _), Token::Month(m), Token::Num(y, 4)] => (*y, *m, *d),
        // 2024 January 15
        [Token::Num(y, 4), Token::Month(m), Token::Num(d, _)] => (*y, *m, *d),
        _ => return None,
    };
    valid(year, month, day).then(|| format!("{year:04}-{month:02}-{day:02}"))
}

/// `YYYY-MM-DDTHH:MM:SS` (keeping any zone suffix) for a date with an optional time.
pub fn normalize_date_time(text: &str) -> Option<String> {
    let text = text.trim();
    let split = text
        .char_indices()
        .find(|&(i, c)| {
            (c == 'T' || c == ' ')
                && text[i + 1..].starts_with(|d: char| d.is_ascii_digit())
                && text[i + 1..].contains(':')
        })
        .map(|(i, _)| i);
    let (date_part, time_part) = match split {
        Some(i) => (&text[..i], Some(&text[i + 1..])),
        None => (text, None),
    };
    let date = normalize_date(date_part.trim_end_matches(','))?;
    let Some(time) = time_part else {
        return Some(format!("{date}T00:00:00"));
    };
    let zone_at = time[1..]
        .find(['Z', 'z', '+', '-'])
        .map_or(time.len(), |i| i + 1);
    let (clock, zone) = time.split_at(zone_at);
    let parts: Vec<&str> = clock.trim().split(':').collect();
    let number = |s: &str| s.split('.').next().and_then(|n| n.parse::<u32>().ok());
    let hour = number(parts.first()?)?;
    let minute = parts.get(1).map_or(Some(0), |m| number(m))?;
    let second = parts.get(2).map_or(Some(0), |s| number(s))?;
    if hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let zone = if zone.eq_ignore_ascii_case("z") {
        "Z"
    } else {
        zone.trim()
    };
    Some(format!("{date}T{hour:02}:{minute:02}:{second:02}{zone}"))
}

enum Token {
    /// A number and how many digits it was written with.
    Num(u32, usize),
    Month(u32),
}

fn tokenize(text: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let lower = text.to_lowercase();
    for word in lower.split(|c: char| !c.is_alphanumeric()) {
        if word.is_empty() {
            continue;
        }
        let digits: String = word.chars().take_while(char::is_ascii_digit).collect();
        if !digits.is_empty() {
            let suffix = &word[digits.len()..];
            if !matches!(suffix, "" | "st" | "nd" | "rd" | "th") {
                return Vec::new();
            }
            match digits.parse() {
                Ok(n) => tokens.push(Token::Num(n, digits.len())),
                Err(_) => return Vec::new(),
            }
        } else if let Some(m) = MONTHS.iter().position(|m| word.starts_with(m)) {
            tokens.push(Token::Month(m as u32 + 1));
        } else if !matches!(word, "of" | "the" | "on") {
            // Weekday names and other words: ignore weekdays, refuse the rest.
            let weekday = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
                .iter()
                .any(|d| word.starts_with(d));
            if !weekday {
                return Vec::new();
            }
        }
    }
    tokens
}

fn valid(year: u32, month: u32, day: u32) -> bool {
    if !(1..=12).contains(&month) || day == 0 || !(1000..=9999).contains(&year) {
        return false;
    }
    let leap = (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400);
    let days = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    day <= days[month as usize - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_common_date_shapes() {
        assert_eq!(
            normalize_date("January 15, 2024").as_deref(),
            Some("2024-01-15")
        );
        assert_eq!(normalize_date("15/01/2024").as_deref(), Some("2024-01-15"));
        assert_eq!(normalize_date("01/15/2024").as_deref(), Some("2024-01-15"));
        assert_eq!(normalize_date("15 Jan 2024").as_deref(), Some("2024-01-15"));
        assert_eq!(
            normalize_date("Monday, March 4th 2024").as_deref(),
            Some("2024-03-04")
        );
        assert_eq!(normalize_date("2024/1/5").as_deref(), Some("2024-01-05"));
        assert_eq!(normalize_date("31.12.2023").as_deref(), Some("2023-12-31"));
        assert_eq!(normalize_date("February 30, 2024"), None);
        assert_eq!(normalize_date("next week"), None);
    }

    #[test]
    fn normalizes_date_times() {
        assert_eq!(
            normalize_date_time("2024-01-15 10:30").as_deref(),
            Some("2024-01-15T10:30:00")
        );
        assert_eq!(
            normalize_date_time("2024-01-15T10:30:05Z").as_deref(),
            Some("2024-01-15T10:30:05Z")
        );
        assert_eq!(
            normalize_date_time("January 15, 2024").as_deref(),
            Some("2024-01-15T00:00:00")
        );
    }
}
