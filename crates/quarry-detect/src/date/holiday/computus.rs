//! Easter Sunday by the computus: Western (Gregorian) and Orthodox (Julian, shown on the
//! Gregorian calendar).

use chrono::NaiveDate;

/// Western Easter Sunday (anonymous Gregorian computus).
pub(crate) fn easter(year: i32) -> Option<NaiveDate> {
    let a = year % 19;
    let b = year / 100;
    let c = year % 100;
    let d = b / 4;
    let e = b % 4;
    let f = (b + 8) / 25;
    let g = (b - f + 1) / 3;
    let h = (19 * a + b - d - g + 15) % 30;
    let i = c / 4;
    let k = c % 4;
    let l = (32 + 2 * e + 2 * i - h - k) % 7;
    let m = (a + 11 * h + 22 * l) / 451;
    let month = (h + l - 7 * m + 114) / 31;
    let day = (h + l - 7 * m + 114) % 31 + 1;
    NaiveDate::from_ymd_opt(year, month as u32, day as u32)
}

/// Orthodox Easter Sunday (Meeus' Julian computus, converted to the Gregorian calendar).
pub(crate) fn orthodox_easter(year: i32) -> Option<NaiveDate> {
    let a = year % 4;
    let b = year % 7;
    let c = year % 19;
    let d = (19 * c + 15) % 30;
    let e = (2 * a + 4 * b - d + 34) % 7;
    let month = (d + e + 114) / 31;
    let day = (d + e + 114) % 31 + 1;
    let julian = NaiveDate::from_ymd_opt(year, month as u32, day as u32)?;
    // Julian-to-Gregorian gap: 13 days in 1900–2099, growing by 3 days every 400 years.
    let century = year / 100;
    let gap = century - century / 4 - 2;
    julian.checked_add_days(chrono::Days::new(u64::try_from(gap).ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn computes_easter() {
        assert_eq!(easter(2018), NaiveDate::from_ymd_opt(2018, 4, 1));
        assert_eq!(easter(2013), NaiveDate::from_ymd_opt(2013, 3, 31));
        assert_eq!(easter(2020), NaiveDate::from_ymd_opt(2020, 4, 12));
        assert_eq!(easter(2024), NaiveDate::from_ymd_opt(2024, 3, 31));
    }

    #[test]
    fn computes_orthodox_easter() {
        assert_eq!(orthodox_easter(2018), NaiveDate::from_ymd_opt(2018, 4, 8));
        assert_eq!(orthodox_easter(2024), NaiveDate::from_ymd_opt(2024, 5, 5));
        assert_eq!(orthodox_easter(2021), NaiveDate::from_ymd_opt(2021, 5, 2));
    }
}
