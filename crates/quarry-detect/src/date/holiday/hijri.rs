//! The Islamic calendar: the tabular (arithmetical) calendar finds the month, and the month
//! then starts as Umm al-Qura reckons it — the day after the conjunction when that falls
//! before sunset in Mecca, else a day later. Observance by sighting may differ by a day.

use chrono::{Datelike, Days, NaiveDate};

use super::lunar::new_moon_near;

/// Rata Die of 1 Muharram AH 1 (16 July 622, Julian).
const EPOCH: i64 = 227_015;

fn fixed(year: i64, month: u8, day: u8) -> i64 {
    let month = i64::from(month);
    i64::from(day)
        + 29 * (month - 1)
        + (6 * month - 1).div_euclid(11)
        + (year - 1) * 354
        + (3 + 11 * year).div_euclid(30)
        + EPOCH
        - 1
}

/// The first Gregorian date in `year` of Islamic `day` `month` (1 = Muharram … 12 =
/// Dhu al-Hijjah); a Gregorian year can hold the same Islamic date twice.
pub(crate) fn in_year(year: i32, month: u8, day: u8) -> Option<NaiveDate> {
    let approx = (i64::from(year) - 622) * 33 / 32;
    for hijri_year in approx - 1..=approx + 2 {
        let rd = i32::try_from(fixed(hijri_year, month, day)).ok()?;
        let tabular_start = NaiveDate::from_num_days_from_ce_opt(rd - i32::from(day) + 1)?;
        let (conjunction, hour) = new_moon_near(tabular_start, 3.0)?;
        let start = conjunction.checked_add_days(Days::new(if hour < 18.5 { 1 } else { 2 }))?;
        let date = start.checked_add_days(Days::new(u64::from(day) - 1))?;
        if date.year() == year {
            return Some(date);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_islamic_dates() {
        // Eid al-Fitr 1445 (1 Shawwal) was observed on 2024-04-10; the tabular date may be a
        // day off.
        let eid = in_year(2024, 10, 1).unwrap();
        let observed = NaiveDate::from_ymd_opt(2024, 4, 10).unwrap();
        assert!((eid - observed).num_days().abs() <= 1, "{eid}");
        // Islamic New Year 1440.
        let new_year = in_year(2018, 1, 1).unwrap();
        let observed = NaiveDate::from_ymd_opt(2018, 9, 11).unwrap();
        assert!((new_year - observed).num_days().abs() <= 1, "{new_year}");
    }
}
