//! The values the date grammar builds: partial calendar dates and clock times while parsing,
//! then resolved [`Moment`]s that render to ISO 8601.

use chrono::{NaiveDate, NaiveDateTime, NaiveTime};

/// A calendar date as written, with any part missing ("Jan 15", "the 4th", "March 2014").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct DatePart {
    pub year: Option<i32>,
    pub month: Option<u32>,
    pub day: Option<u32>,
    /// A weekday written beside the date ("Fri, Jul 18"), 0 = Monday; picks the year.
    pub weekday: Option<u8>,
}

/// A clock time as written, already on the 24-hour clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TimePart {
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    /// Offset east of UTC in minutes, when the text names a zone.
    pub offset: Option<i16>,
    /// Whether am/pm (or a part of day) was written; bare `8:30` may mean either.
    pub meridiem: bool,
}

impl TimePart {
    pub fn naive(self) -> Option<NaiveTime> {
        NaiveTime::from_hms_opt(self.hour % 24, self.minute, self.second)
    }
}

/// One end of a resolved expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Point {
    Day(NaiveDate),
    At(NaiveDateTime, Option<i16>),
    Clock(NaiveTime, Option<i16>),
}

/// A signed calendar length: months and days are kept apart because months vary in length.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Dur {
    pub months: i32,
    pub days: i32,
    pub seconds: i64,
}

impl Dur {
    pub fn add(self, other: Dur) -> Dur {
        Dur {
            months: self.months + other.months,
            days: self.days + other.days,
            seconds: self.seconds + other.seconds,
        }
    }

    pub fn negate(self) -> Dur {
        Dur {
            months: -self.months,
            days: -self.days,
            seconds: -self.seconds,
        }
    }

    pub fn has_clock_part(self) -> bool {
        self.seconds != 0
    }
}

/// A resolved expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Moment {
    Point(Point),
    /// Inclusive ends; `None` is open ("since 2014", "before 11 am").
    Range(Option<Point>, Option<Point>),
    Duration(Dur),
    /// A recurrence: every `period`, from `first` when the text anchors it ("every Monday at
    /// 4pm") and unanchored otherwise ("every three weeks").
    Every {
        first: Option<Point>,
        period: Dur,
    },
}

impl Moment {
    pub fn day(date: NaiveDate) -> Moment {
        Moment::Point(Point::Day(date))
    }

    pub fn days(first: NaiveDate, last: NaiveDate) -> Moment {
        Moment::Range(Some(Point::Day(first)), Some(Point::Day(last)))
    }
}
