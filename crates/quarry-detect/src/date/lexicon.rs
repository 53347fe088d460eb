//! The words the date grammar knows: month and weekday names, number words, units and the small
//! function words that glue expressions together. Everything else is [`Lex::Other`].

/// A calendar or clock unit, as in "3 days" or "next month".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Fortnight,
    Weekend,
    Month,
    Quarter,
    Year,
    Decade,
}

/// Function and relative words. Their meaning depends on context, so the grammar decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rel {
    Today,
    Tomorrow,
    Yesterday,
    Tonight,
    Now,
    Next,
    Last,
    This,
    Past,
    Previous,
    Coming,
    Following,
    Current,
    Ago,
    Hence,
    Later,
    In,
    Within,
    From,
    To,
    Till,
    Through,
    Between,
    And,
    Of,
    The,
    On,
    At,
    Since,
    After,
    Before,
    A,
    Half,
    Few,
    Couple,
    Noon,
    Midnight,
    Morning,
    Afternoon,
    Evening,
    Night,
    Oclock,
    End,
    Beginning,
    Middle,
    /// "early", "earlier": the first part of a period.
    Early,
    /// "late": the last part of a period ("later" is [`Rel::Later`]).
    Late,
    Eod,
    Eom,
    Eoy,
    /// "every", "each": a recurrence of what follows.
    Every,
    /// "more (than)", "over", "(at) least": an amount bounding an interval on its far side.
    More,
    /// "less (than)", "fewer", "under", "(at) most": an amount bounding an interval up to now.
    Less,
    /// "by": no later than ("by Friday").
    By,
}

/// What one word means to the date grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lex {
    /// An English month name or abbreviation, 1-based.
    Month(u8),
    /// A month name in another European or Cyrillic-script language; only trusted with a day
    /// and a year beside it.
    ForeignMonth(u8),
    /// A weekday, 0 = Monday.
    Weekday(u8),
    /// "one" … "nineteen".
    Cardinal(u8),
    /// "twenty" … "ninety".
    Tens(u8),
    /// "first" … "thirty-first" spelled as one word ("second" is [`Unit::Second`]).
    Ordinal(u8),
    Unit(Unit),
    Rel(Rel),
    /// `true` for pm.
    Meridiem(bool),
    /// A time-zone abbreviation, as an offset in minutes east of UTC.
    Zone(i16),
    /// A word that can start a holiday name ("christmas", "labor") or a quarter ("Q1").
    Named,
    /// "daily", "weekly", "biweekly", …: a recurrence every one of the unit (biweekly and
    /// fortnightly are [`Unit::Fortnight`]).
    Frequency(Unit),
    Other,
}

/// Words longer than this many bytes are never known words.
pub(crate) const MAX_WORD: usize = 24;

/// Classifies one word (letters only, any case).
pub(crate) fn classify(word: &str) -> Lex {
    let bytes = word.as_bytes();
    if bytes.len() > MAX_WORD {
        return Lex::Other;
    }
    if bytes.is_ascii() {
        let mut buf = [0u8; MAX_WORD];
        let lower = &mut buf[..bytes.len()];
        lower.copy_from_slice(bytes);
        lower.make_ascii_lowercase();
        return classify_ascii(lower);
    }
    let mut buf = [0u8; 96];
    let mut len = 0;
    for c in word.chars().flat_map(char::to_lowercase) {
        let width = c.len_utf8();
        if len + width > buf.len() {
            return Lex::Other;
        }
        c.encode_utf8(&mut buf[len..]);
        len += width;
    }
    std::str::from_utf8(&buf[..len]).map_or(Lex::Other, classify_foreign)
}

/// Classifies one lower-case ASCII word.
pub(crate) fn classify_ascii(w: &[u8]) -> Lex {
    use Lex::*;
    match w {
        b"january" | b"jan" => Month(1),
        b"february" | b"feb" => Month(2),
        b"march" | b"mar" => Month(3),
        b"april" | b"apr" => Month(4),
        b"may" => Month(5),
        b"june" | b"jun" => Month(6),
        b"july" | b"jul" => Month(7),
        b"august" | b"aug" => Month(8),
        b"september" | b"sep" | b"sept" => Month(9),
        b"october" | b"oct" => Month(10),
        b"november" | b"nov" => Month(11),
        b"december" | b"dec" => Month(12),
        b"monday" | b"mon" | b"mondays" => Weekday(0),
        b"tuesday" | b"tue" | b"tues" | b"tuesdays" => Weekday(1),
        b"wednesday" | b"wed" | b"wednesdays" => Weekday(2),
        b"thursday" | b"thu" | b"thur" | b"thurs" | b"thursdays" => Weekday(3),
        b"friday" | b"fri" | b"fridays" => Weekday(4),
        b"saturday" | b"sat" | b"saturdays" => Weekday(5),
        b"sunday" | b"sun" | b"sundays" => Weekday(6),
        b"one" => Cardinal(1),
        b"two" => Cardinal(2),
        b"three" => Cardinal(3),
        b"four" => Cardinal(4),
        b"five" => Cardinal(5),
        b"six" => Cardinal(6),
        b"seven" => Cardinal(7),
        b"eight" => Cardinal(8),
        b"nine" => Cardinal(9),
        b"ten" => Cardinal(10),
        b"eleven" => Cardinal(11),
        b"twelve" => Cardinal(12),
        b"thirteen" => Cardinal(13),
        b"fourteen" => Cardinal(14),
        b"fifteen" => Cardinal(15),
        b"sixteen" => Cardinal(16),
        b"seventeen" => Cardinal(17),
        b"eighteen" => Cardinal(18),
        b"nineteen" => Cardinal(19),
        b"twenty" => Tens(20),
        b"thirty" => Tens(30),
        b"forty" => Tens(40),
        b"fifty" => Tens(50),
        b"sixty" => Tens(60),
        b"seventy" => Tens(70),
        b"eighty" => Tens(80),
        b"ninety" => Tens(90),
        b"first" => Ordinal(1),
        b"third" => Ordinal(3),
        b"fourth" => Ordinal(4),
        b"fifth" => Ordinal(5),
        b"sixth" => Ordinal(6),
        b"seventh" => Ordinal(7),
        b"eighth" => Ordinal(8),
        b"ninth" => Ordinal(9),
        b"tenth" => Ordinal(10),
        b"eleventh" => Ordinal(11),
        b"twelfth" => Ordinal(12),
        b"thirteenth" => Ordinal(13),
        b"fourteenth" => Ordinal(14),
        b"fifteenth" => Ordinal(15),
        b"sixteenth" => Ordinal(16),
        b"seventeenth" => Ordinal(17),
        b"eighteenth" => Ordinal(18),
        b"nineteenth" => Ordinal(19),
        b"twentieth" => Ordinal(20),
        b"thirtieth" => Ordinal(30),
        b"second" | b"seconds" | b"sec" | b"secs" => Unit(self::Unit::Second),
        b"minute" | b"minutes" | b"min" | b"mins" => Unit(self::Unit::Minute),
        b"hour" | b"hours" | b"hr" | b"hrs" => Unit(self::Unit::Hour),
        b"day" | b"days" => Unit(self::Unit::Day),
        b"week" | b"weeks" | b"wk" | b"wks" => Unit(self::Unit::Week),
        b"fortnight" | b"fortnights" => Unit(self::Unit::Fortnight),
        b"weekend" | b"weekends" => Unit(self::Unit::Weekend),
        b"month" | b"months" => Unit(self::Unit::Month),
        b"quarter" | b"quarters" | b"qtr" => Unit(self::Unit::Quarter),
        b"year" | b"years" | b"yr" | b"yrs" => Unit(self::Unit::Year),
        b"decade" | b"decades" => Unit(self::Unit::Decade),
        b"today" => Rel(self::Rel::Today),
        b"tomorrow" | b"tmrw" => Rel(self::Rel::Tomorrow),
        b"yesterday" => Rel(self::Rel::Yesterday),
        b"tonight" => Rel(self::Rel::Tonight),
        b"now" => Rel(self::Rel::Now),
        b"next" => Rel(self::Rel::Next),
        b"last" => Rel(self::Rel::Last),
        b"this" => Rel(self::Rel::This),
        b"past" => Rel(self::Rel::Past),
        b"previous" | b"prior" => Rel(self::Rel::Previous),
        b"coming" | b"upcoming" => Rel(self::Rel::Coming),
        b"following" => Rel(self::Rel::Following),
        b"current" => Rel(self::Rel::Current),
        b"ago" => Rel(self::Rel::Ago),
        b"hence" => Rel(self::Rel::Hence),
        b"later" => Rel(self::Rel::Later),
        b"in" => Rel(self::Rel::In),
        b"within" => Rel(self::Rel::Within),
        b"from" => Rel(self::Rel::From),
        b"to" => Rel(self::Rel::To),
        b"till" | b"until" | b"til" => Rel(self::Rel::Till),
        b"through" | b"thru" => Rel(self::Rel::Through),
        b"between" => Rel(self::Rel::Between),
        b"and" => Rel(self::Rel::And),
        b"of" => Rel(self::Rel::Of),
        b"the" => Rel(self::Rel::The),
        b"on" => Rel(self::Rel::On),
        b"at" => Rel(self::Rel::At),
        b"since" => Rel(self::Rel::Since),
        b"after" => Rel(self::Rel::After),
        b"before" => Rel(self::Rel::Before),
        b"a" | b"an" => Rel(self::Rel::A),
        b"half" => Rel(self::Rel::Half),
        b"few" | b"several" => Rel(self::Rel::Few),
        b"couple" => Rel(self::Rel::Couple),
        b"noon" | b"midday" => Rel(self::Rel::Noon),
        b"midnight" => Rel(self::Rel::Midnight),
        b"morning" => Rel(self::Rel::Morning),
        b"afternoon" => Rel(self::Rel::Afternoon),
        b"evening" => Rel(self::Rel::Evening),
        b"night" => Rel(self::Rel::Night),
        b"oclock" => Rel(self::Rel::Oclock),
        b"end" => Rel(self::Rel::End),
        b"beginning" | b"start" => Rel(self::Rel::Beginning),
        b"middle" | b"mid" => Rel(self::Rel::Middle),
        b"early" | b"earlier" => Rel(self::Rel::Early),
        b"late" => Rel(self::Rel::Late),
        b"every" | b"each" => Rel(self::Rel::Every),
        // Halves and fiscal years ("H1 2021", "FY21", `periods.rs`), "once a week"
        // (`recurrence.rs`), "starting on Monday" (`compose.rs`).
        b"h" | b"fy" | b"fiscal" | b"once" | b"starting" | b"effective" | b"commencing" => Named,
        // Seasons (`periods.rs`); "spring" also starts holiday names.
        b"summer" | b"winter" | b"autumn" | b"fall" | b"summertime" | b"wintertime"
        | b"springtime" => Named,
        b"by" => Rel(self::Rel::By),
        b"more" | b"over" | b"least" => Rel(self::Rel::More),
        b"less" | b"fewer" | b"under" | b"most" => Rel(self::Rel::Less),
        b"hourly" => Frequency(self::Unit::Hour),
        b"daily" | b"nightly" => Frequency(self::Unit::Day),
        b"weekly" => Frequency(self::Unit::Week),
        b"biweekly" | b"fortnightly" => Frequency(self::Unit::Fortnight),
        b"monthly" => Frequency(self::Unit::Month),
        b"quarterly" => Frequency(self::Unit::Quarter),
        b"yearly" | b"annually" => Frequency(self::Unit::Year),
        b"eod" => Rel(self::Rel::Eod),
        b"eom" => Rel(self::Rel::Eom),
        b"eoy" => Rel(self::Rel::Eoy),
        b"am" => Meridiem(false),
        b"pm" => Meridiem(true),
        b"utc" | b"gmt" | b"z" => Zone(0),
        b"est" => Zone(-300),
        b"edt" => Zone(-240),
        b"cst" => Zone(-360),
        b"cdt" => Zone(-300),
        b"mst" => Zone(-420),
        b"mdt" => Zone(-360),
        b"pst" => Zone(-480),
        b"pdt" => Zone(-420),
        b"cet" => Zone(60),
        b"cest" => Zone(120),
        b"bst" => Zone(60),
        b"q" => Named,
        _ if super::holiday::lexicon::starts_name(w) => Named,
        _ => foreign_month_ascii(w),
    }
}

/// Month names of common European languages that are plain ASCII.
fn foreign_month_ascii(w: &[u8]) -> Lex {
    let month = match w {
        b"janvier" | b"enero" | b"januar" | b"januari" | b"janeiro" | b"gennaio" | b"ianuarie" => 1,
        b"fevrier" | b"febrero" | b"februar" | b"februari" | b"fevereiro" | b"febbraio" => 2,
        b"mars" | b"marzo" | b"maart" | b"marz" | b"marts" => 3,
        b"avril" | b"abril" | b"aprile" | b"aprilie" => 4,
        b"mai" | b"mayo" | b"mei" | b"maio" | b"maggio" | b"maj" => 5,
        b"juin" | b"junio" | b"juni" | b"junho" | b"giugno" | b"iunie" => 6,
        b"juillet" | b"julio" | b"juli" | b"julho" | b"luglio" | b"iulie" => 7,
        b"aout" | b"agosto" | b"augustus" | b"augusti" => 8,
        b"septembre" | b"septiembre" | b"setiembre" | b"setembro" | b"settembre"
        | b"septembrie" => 9,
        b"octobre" | b"octubre" | b"oktober" | b"outubro" | b"ottobre" | b"octombrie" => 10,
        b"novembre" | b"noviembre" | b"novembro" | b"noiembrie" => 11,
        b"decembre" | b"diciembre" | b"dezember" | b"dezembro" | b"dicembre" | b"decembrie" => 12,
        _ => return Lex::Other,
    };
    Lex::ForeignMonth(month)
}

/// Lowercased non-ASCII words: accented Latin and Cyrillic month names.
fn classify_foreign(w: &str) -> Lex {
    let month = match w {
        "février" | "fevrier" => 2,
        "märz" | "março" => 3,
        "août" => 8,
        "décembre" => 12,
        "января" | "январь" | "янв" => 1,
        "февраля" | "февраль" | "фев" => 2,
        "марта" | "март" | "мар" => 3,
        "апреля" | "апрель" | "апр" => 4,
        "мая" | "май" => 5,
        "июня" | "июнь" | "июн" => 6,
        "июля" | "июль" | "июл" => 7,
        "августа" | "август" | "авг" => 8,
        "сентября" | "сентябрь" | "сен" | "сент" => 9,
        "октября" | "октябрь" | "окт" => 10,
        "ноября" | "ноябрь" | "ноя" => 11,
        "декабря" | "декабрь" | "дек" => 12,
        _ => return Lex::Other,
    };
    Lex::ForeignMonth(month)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_case_insensitively() {
        assert_eq!(classify("January"), Lex::Month(1));
        assert_eq!(classify("SEPT"), Lex::Month(9));
        assert_eq!(classify("Tuesdays"), Lex::Weekday(1));
        assert_eq!(classify("Décembre"), Lex::ForeignMonth(12));
        assert_eq!(classify("ноября"), Lex::ForeignMonth(11));
        assert_eq!(classify("elephant"), Lex::Other);
    }

    #[test]
    fn every_alias_can_start_a_parse() {
        use super::super::holiday::lexicon::{HOLIDAYS, starts_name};
        for (alias, ..) in HOLIDAYS {
            let first = alias.split(' ').next().unwrap_or_default();
            let known = starts_name(first.as_bytes())
                || matches!(classify(first), Lex::Month(_) | Lex::Named)
                || matches!(first, "day" | "night" | "the");
            assert!(known, "{alias}");
        }
    }
}
