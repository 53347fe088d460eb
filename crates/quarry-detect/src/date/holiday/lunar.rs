//! Hindu lunisolar festivals from astronomy: new and full moons by Meeus' phase algorithm
//! (*Astronomical Algorithms*, ch. 49), the Sun's sidereal longitude (Lahiri ayanamsa) to name
//! the amanta lunar months, and tithis from Meeus' solar and lunar longitudes, in Indian Standard
//! Time. Accurate to about a day: a tithi boundary close to sunrise can move a festival.

use chrono::{Datelike, NaiveDate};

/// Amanta lunar months, Chaitra = 0 … Phalguna = 11.
pub(crate) const CHAITRA: u8 = 0;
pub(crate) const SHRAVANA: u8 = 4;
pub(crate) const BHADRAPADA: u8 = 5;
pub(crate) const ASHVIN: u8 = 6;
pub(crate) const KARTIKA: u8 = 7;
pub(crate) const MAGHA: u8 = 10;
pub(crate) const PHALGUNA: u8 = 11;

const SYNODIC: f64 = 29.530_588_861;
/// Julian day of 0001-01-01 (proleptic Gregorian) at 00:00 UTC, minus one day.
const JD_RD0: f64 = 1_721_424.5;
const IST: f64 = 5.5 / 24.0;

/// The Julian Ephemeris Day of lunation `k`'s new moon (`full`: its full moon).
fn phase(k: f64, full: bool) -> f64 {
    let k = if full { k + 0.5 } else { k };
    let t = k / 1236.85;
    let jde = 2_451_550.097_66 + SYNODIC * k + 0.000_154_37 * t * t - 0.000_000_150 * t * t * t;
    let e = 1.0 - 0.002_516 * t - 0.000_007_4 * t * t;
    let rad = |d: f64| d.rem_euclid(360.0).to_radians();
    let m = rad(2.5534 + 29.105_356_70 * k - 0.000_001_4 * t * t);
    let mp = rad(201.5643 + 385.816_935_28 * k + 0.010_758_2 * t * t);
    let f = rad(160.7108 + 390.670_502_84 * k - 0.001_611_8 * t * t);
    let om = rad(124.7746 - 1.563_755_88 * k + 0.002_067_2 * t * t);
    let (a, b) = if full {
        (-0.40614, 0.17302)
    } else {
        (-0.40720, 0.17241)
    };
    jde + a * mp.sin()
        + b * e * m.sin()
        + 0.01608 * (2.0 * mp).sin()
        + 0.01039 * (2.0 * f).sin()
        + 0.00739 * e * (mp - m).sin()
        - 0.00514 * e * (mp + m).sin()
        + 0.00208 * e * e * (2.0 * m).sin()
        - 0.00111 * (mp - 2.0 * f).sin()
        - 0.00057 * (mp + 2.0 * f).sin()
        + 0.00056 * e * (2.0 * mp + m).sin()
        - 0.00042 * (3.0 * mp).sin()
        + 0.00042 * e * (m + 2.0 * f).sin()
        + 0.00038 * e * (m - 2.0 * f).sin()
        - 0.00024 * e * (2.0 * mp - m).sin()
        - 0.00017 * om.sin()
}

/// The Sun's tropical longitude in degrees at Julian day `jd` (low-precision solar theory).
fn sun_tropical(jd: f64) -> f64 {
    let t = (jd - 2_451_545.0) / 36_525.0;
    let l0 = 280.46646 + 36_000.769_83 * t;
    let m = (357.52911 + 35_999.050_29 * t).to_radians();
    let c = (1.914_602 - 0.004_817 * t) * m.sin()
        + 0.019_993 * (2.0 * m).sin()
        + 0.000_289 * (3.0 * m).sin();
    (l0 + c).rem_euclid(360.0)
}

/// The Sun's sidereal longitude (Lahiri ayanamsa).
fn sun_sidereal(jd: f64) -> f64 {
    let t = (jd - 2_451_545.0) / 36_525.0;
    (sun_tropical(jd) - 23.853 - 1.396_9 * t).rem_euclid(360.0)
}

/// The Moon's tropical longitude in degrees (the largest periodic terms of Meeus ch. 47).
fn moon_tropical(jd: f64) -> f64 {
    let t = (jd - 2_451_545.0) / 36_525.0;
    let lp = 218.316_447_7 + 481_267.881_234_21 * t;
    let rad = |x: f64| x.rem_euclid(360.0).to_radians();
    let d = rad(297.850_192_1 + 445_267.111_403_4 * t);
    let m = rad(357.529_109_2 + 35_999.050_290_9 * t);
    let mp = rad(134.963_396_4 + 477_198.867_505_5 * t);
    let f = rad(93.272_095 + 483_202.017_523_3 * t);
    let e = 1.0 - 0.002_516 * t;
    let terms = 6_288_774.0 * mp.sin()
        + 1_274_027.0 * (2.0 * d - mp).sin()
        + 658_314.0 * (2.0 * d).sin()
        + 213_618.0 * (2.0 * mp).sin()
        - 185_116.0 * e * m.sin()
        - 114_332.0 * (2.0 * f).sin()
        + 58_793.0 * (2.0 * d - 2.0 * mp).sin()
        + 57_066.0 * e * (2.0 * d - m - mp).sin()
        + 53_322.0 * (2.0 * d + mp).sin()
        + 45_758.0 * e * (2.0 * d - m).sin()
        - 40_923.0 * e * (m - mp).sin()
        - 34_720.0 * d.sin()
        - 30_383.0 * e * (m + mp).sin()
        + 15_327.0 * (2.0 * d - 2.0 * f).sin()
        - 12_528.0 * (mp + 2.0 * f).sin()
        + 10_980.0 * (mp - 2.0 * f).sin()
        + 10_675.0 * (4.0 * d - mp).sin()
        + 10_034.0 * (3.0 * mp).sin()
        + 8_548.0 * (4.0 * d - 2.0 * mp).sin()
        - 7_888.0 * e * (2.0 * d + m - mp).sin()
        - 6_766.0 * e * (2.0 * d + m).sin()
        - 5_163.0 * (d - mp).sin()
        + 4_987.0 * e * (d + m).sin()
        + 4_036.0 * e * (2.0 * d - m + mp).sin();
    (lp + terms / 1_000_000.0).rem_euclid(360.0)
}

/// The tithi (1–30) in force at Julian day `jd`: each spans 12° of Moon–Sun elongation.
fn tithi_at(jd: f64) -> u8 {
    let elongation = (moon_tropical(jd) - sun_tropical(jd)).rem_euclid(360.0);
    (elongation / 12.0).floor() as u8 + 1
}

/// The IST calendar date of Julian day `jd`.
fn ist_date(jd: f64) -> Option<NaiveDate> {
    let rd = (jd + IST - JD_RD0).floor();
    NaiveDate::from_num_days_from_ce_opt(rd as i32)
}

/// The Julian day of `hour` IST on `date`.
fn ist_jd(date: NaiveDate, hour: f64) -> f64 {
    f64::from(date.num_days_from_ce()) + JD_RD0 + hour / 24.0 - IST
}

/// When in the day a festival's tithi must prevail (the panchang's observance rule): at
/// sunrise (most), in the afternoon (Aparahna: Vijayadashami), or at dusk (Pradosh: Diwali,
/// Holika Dahan).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Observed {
    Sunrise,
    Afternoon,
    Dusk,
}

/// The day in Gregorian `year` on which tithi `tithi` (1–30; 15 = purnima, 30 = amavasya)
/// of amanta month `month` is observed.
pub(crate) fn tithi_day(year: i32, month: u8, tithi: u8, observed: Observed) -> Option<NaiveDate> {
    let first = ((f64::from(year) - 2000.1) * 12.3685).floor() as i64;
    for k in first..first + 16 {
        let k = k as f64;
        let (new, next) = (phase(k, false), phase(k + 1.0, false));
        let sign = (sun_sidereal(new) / 30.0).floor() as i32;
        let next_sign = (sun_sidereal(next) / 30.0).floor() as i32;
        if sign == next_sign {
            continue; // an adhika (leap) month: festivals keep to the regular one
        }
        if (sign + 1).rem_euclid(12) != i32::from(month) {
            continue;
        }
        let hour = match observed {
            Observed::Sunrise => 6.0,
            Observed::Afternoon => 14.5,
            Observed::Dusk => 18.5,
        };
        // The first day whose sunrise (or dusk) falls in the tithi; a tithi that spans none
        // is kept on the day it ends.
        let mut day = ist_date(new)?;
        let date = loop {
            let now = tithi_at(ist_jd(day, hour));
            let now = if now == 30 && ist_jd(day, hour) < new + 1.0 {
                0
            } else {
                now
            };
            if now >= tithi || ist_jd(day, hour) > next {
                break day;
            }
            day = day.succ_opt()?;
        };
        if date.year() == year {
            return Some(date);
        }
    }
    None
}

/// The day on which the Sun enters sidereal sign `sign` (0 = Mesha … 9 = Makara) in `year`:
/// the IST date of the transit, or the next day when it happens after dusk.
pub(crate) fn sankranti(year: i32, sign: u8) -> Option<NaiveDate> {
    let target = f64::from(sign) * 30.0;
    let mut day = NaiveDate::from_ymd_opt(year, 1, 1)?.pred_opt()?;
    let mut before = sun_sidereal(ist_jd(day, 18.0));
    loop {
        let next = day.succ_opt()?;
        if next.year() > year {
            return None;
        }
        let after = sun_sidereal(ist_jd(next, 18.0));
        let crossed = (after - target).rem_euclid(360.0) < (before - target).rem_euclid(360.0);
        if crossed {
            return Some(next);
        }
        (day, before) = (next, after);
    }
}

/// The local date (at `offset_hours` east of UTC) of the first new moon on or after `date`.
pub(crate) fn new_moon_on_or_after(date: NaiveDate, offset_hours: f64) -> Option<NaiveDate> {
    let years = f64::from(date.year()) + f64::from(date.ordinal()) / 365.25 - 2000.0;
    let mut k = (years * 12.3685).floor() - 1.0;
    loop {
        let jd = phase(k, false) + offset_hours / 24.0 - JD_RD0;
        let local = NaiveDate::from_num_days_from_ce_opt(jd.floor() as i32)?;
        if local >= date {
            return Some(local);
        }
        k += 1.0;
    }
}

/// The new moon nearest to `date`: its local date and hour at `offset_hours` east of UTC.
pub(crate) fn new_moon_near(date: NaiveDate, offset_hours: f64) -> Option<(NaiveDate, f64)> {
    let jd = f64::from(date.num_days_from_ce()) + JD_RD0;
    let k = ((jd - 2_451_550.097_66) / SYNODIC).round();
    let local = phase(k, false) + offset_hours / 24.0 - JD_RD0;
    let day = NaiveDate::from_num_days_from_ce_opt(local.floor() as i32)?;
    Some((day, local.fract() * 24.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_diwali_and_other_tithis() {
        // Diwali (Ashvin amavasya at dusk): 2019-10-27.
        assert_eq!(
            tithi_day(2019, ASHVIN, 30, Observed::Dusk),
            NaiveDate::from_ymd_opt(2019, 10, 27)
        );
        // Raksha Bandhan (Shravana purnima): 2018-08-26.
        assert_eq!(
            tithi_day(2018, SHRAVANA, 15, Observed::Sunrise),
            NaiveDate::from_ymd_opt(2018, 8, 26)
        );
    }

    #[test]
    fn finds_makar_sankranti() {
        let date = sankranti(2019, 9).unwrap();
        let expected = NaiveDate::from_ymd_opt(2019, 1, 15).unwrap();
        assert!((date - expected).num_days().abs() <= 1, "{date}");
    }
}
