//! The arithmetic Hebrew calendar (Reingold & Dershowitz, *Calendrical Calculations*):
//! molad, postponement rules and month lengths, mapped to Gregorian dates.

use chrono::{Datelike, NaiveDate};

/// Hebrew months as numbered in *Calendrical Calculations*: Nisan = 1 … Adar = 12,
/// Adar II = 13 (leap years); the year starts at Tishri = 7.
pub(crate) const NISAN: u8 = 1;
pub(crate) const IYYAR: u8 = 2;
pub(crate) const SIVAN: u8 = 3;
pub(crate) const AV: u8 = 5;
pub(crate) const TISHRI: u8 = 7;
pub(crate) const KISLEV: u8 = 9;
pub(crate) const SHEVAT: u8 = 11;
/// Adar in common years, Adar II in leap years (Purim's month).
pub(crate) const LAST_ADAR: u8 = 0;

/// Rata Die of 1 Tishri AM 1.
const EPOCH: i64 = -1_373_427;

fn leap(year: i64) -> bool {
    (7 * year + 1).rem_euclid(19) < 7
}

fn last_month(year: i64) -> u8 {
    if leap(year) { 13 } else { 12 }
}

fn elapsed_days(year: i64) -> i64 {
    let months = (235 * year - 234).div_euclid(19);
    let parts = 12_084 + 13_753 * months;
    let days = 29 * months + parts.div_euclid(25_920);
    if (3 * (days + 1)).rem_euclid(7) < 3 {
        days + 1
    } else {
        days
    }
}

fn year_length_correction(year: i64) -> i64 {
    let (ny0, ny1, ny2) = (
        elapsed_days(year - 1),
        elapsed_days(year),
        elapsed_days(year + 1),
    );
    if ny2 - ny1 == 356 {
        2
    } else if ny1 - ny0 == 382 {
        1
    } else {
        0
    }
}

fn new_year(year: i64) -> i64 {
    EPOCH + elapsed_days(year) + year_length_correction(year)
}

fn days_in_year(year: i64) -> i64 {
    new_year(year + 1) - new_year(year)
}

fn month_length(month: u8, year: i64) -> i64 {
    let len = days_in_year(year);
    let short = matches!(month, 2 | 4 | 6 | 10 | 13)
        || (month == 12 && !leap(year))
        || (month == 8 && len % 10 != 5)
        || (month == 9 && len % 10 == 3);
    if short { 29 } else { 30 }
}

/// Rata Die of `day` `month` of Hebrew year `year`.
fn fixed(year: i64, month: u8, day: u8) -> i64 {
    let mut rd = new_year(year) + i64::from(day) - 1;
    if month < TISHRI {
        for m in TISHRI..=last_month(year) {
            rd += month_length(m, year);
        }
        for m in 1..month {
            rd += month_length(m, year);
        }
    } else {
        for m in TISHRI..month {
            rd += month_length(m, year);
        }
    }
    rd
}

/// The Gregorian date of `day` `month` (see the constants) that falls in Gregorian `year`.
pub(crate) fn in_year(year: i32, month: u8, day: u8) -> Option<NaiveDate> {
    // Gregorian year Y holds the end of Hebrew year Y+3760 and the start of Y+3761.
    for hebrew_year in [i64::from(year) + 3760, i64::from(year) + 3761] {
        let month = if month == LAST_ADAR {
            last_month(hebrew_year)
        } else {
            month
        };
        let rd = i32::try_from(fixed(hebrew_year, month, day)).ok()?;
        let date = NaiveDate::from_num_days_from_ce_opt(rd)?;
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
    fn maps_hebrew_dates() {
        // Yom Kippur 5784 (10 Tishri) and Passover 5784 (15 Nisan).
        assert_eq!(
            in_year(2023, TISHRI, 10),
            NaiveDate::from_ymd_opt(2023, 9, 25)
        );
        assert_eq!(
            in_year(2024, NISAN, 15),
            NaiveDate::from_ymd_opt(2024, 4, 23)
        );
        // First day of Hanukkah 5779 (25 Kislev).
        assert_eq!(
            in_year(2018, KISLEV, 25),
            NaiveDate::from_ymd_opt(2018, 12, 3)
        );
        // Purim 5784 falls in Adar II (a leap year).
        assert_eq!(
            in_year(2024, LAST_ADAR, 14),
            NaiveDate::from_ymd_opt(2024, 3, 24)
        );
    }
}
