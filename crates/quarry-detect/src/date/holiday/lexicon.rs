//! Holiday names and their aliases (after Duckling's EN holiday rules), each with the rule
//! that dates it. Aliases are lower-case words; in text, words may also be joined by `-`, `'`
//! or `.`, and any word may carry a possessive `'s` ("king's day", "prophet's ascension").

use super::hebrew::{AV, IYYAR, KISLEV, LAST_ADAR, NISAN, SHEVAT, SIVAN, TISHRI};
use super::lunar::{ASHVIN, BHADRAPADA, CHAITRA, KARTIKA, MAGHA, Observed, PHALGUNA, SHRAVANA};

/// How a holiday's (first) day is found in a given Gregorian year.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rule {
    /// Month, day.
    Fixed(u8, u8),
    /// Month, weekday (0 = Monday), nth (0 = last), then a shift in days.
    Nth(u8, u8, u8, i8),
    /// Days from Western Easter Sunday.
    Easter(i16),
    /// Days from Orthodox Easter Sunday.
    Orthodox(i16),
    /// Hebrew month and day; rendered from the eve, as Duckling does.
    Hebrew(u8, u8),
    /// Islamic month and day (tabular calendar).
    Hijri(u8, u8),
    /// Amanta lunar month and tithi (1–30).
    Tithi(u8, u8, Observed),
    /// The day after a tithi's observance: Holi (Dhulandi) is the day after Holika Dahan.
    DayAfterTithi(u8, u8, Observed),
    /// The Sun entering a sidereal sign (0 = Mesha), then a shift in days.
    Sankranti(u8, i8),
    /// The last Friday of Ramadan.
    JamatUlVida,
    /// Parsi (Shahenshahi) new year: a 365-day year with no leap day.
    ParsiNewYear,
    /// 27 April, or the 26th when that is a Sunday.
    KingsDay,
    /// Thiruvonam in the solar month of Chingam.
    Onam,
    /// The new moon (China time) on or after 21 January.
    ChineseNewYear,
    /// The Sunday four weeks before Christmas.
    Advent,
}

use Observed::{Afternoon, Dusk, Sunrise};
use Rule::*;

/// Alias, rule, length in days (1 for single days).
pub(crate) const HOLIDAYS: &[(&str, Rule, u8)] = &[
    // Christian and Western civic
    ("christmas", Fixed(12, 25), 1),
    ("xmas", Fixed(12, 25), 1),
    ("christmas eve", Fixed(12, 24), 1),
    ("xmas eve", Fixed(12, 24), 1),
    ("new year", Fixed(1, 1), 1),
    ("new years", Fixed(1, 1), 1),
    ("new year eve", Fixed(12, 31), 1),
    ("new years eve", Fixed(12, 31), 1),
    ("halloween", Fixed(10, 31), 1),
    ("all hallows eve", Fixed(10, 31), 1),
    ("kwanzaa", Fixed(12, 26), 7),
    ("valentine", Fixed(2, 14), 1),
    ("valentines", Fixed(2, 14), 1),
    ("st valentine", Fixed(2, 14), 1),
    ("boxing day", Fixed(12, 26), 1),
    ("epiphany", Fixed(1, 6), 1),
    ("all saints day", Fixed(11, 1), 1),
    ("all souls day", Fixed(11, 2), 1),
    ("assumption of mary", Fixed(8, 15), 1),
    ("immaculate conception", Fixed(12, 8), 1),
    ("st patrick", Fixed(3, 17), 1),
    ("st patricks", Fixed(3, 17), 1),
    ("saint patrick", Fixed(3, 17), 1),
    ("st paddy", Fixed(3, 17), 1),
    ("st george", Fixed(4, 23), 1),
    ("saint george", Fixed(4, 23), 1),
    ("st andrew", Fixed(11, 30), 1),
    ("st david", Fixed(3, 1), 1),
    ("st stephen", Fixed(12, 26), 1),
    ("groundhog day", Fixed(2, 2), 1),
    ("earth day", Fixed(4, 22), 1),
    ("april fools", Fixed(4, 1), 1),
    ("april fool", Fixed(4, 1), 1),
    ("may day", Fixed(5, 1), 1),
    ("international workers day", Fixed(5, 1), 1),
    ("international women day", Fixed(3, 8), 1),
    ("international womens day", Fixed(3, 8), 1),
    ("womens day", Fixed(3, 8), 1),
    ("world aids day", Fixed(12, 1), 1),
    ("world health day", Fixed(4, 7), 1),
    ("world environment day", Fixed(6, 5), 1),
    ("human rights day", Fixed(12, 10), 1),
    ("international yoga day", Fixed(6, 21), 1),
    ("yoga day", Fixed(6, 21), 1),
    ("independence day", Fixed(7, 4), 1),
    ("veterans day", Fixed(11, 11), 1),
    ("veteran day", Fixed(11, 11), 1),
    ("remembrance day", Fixed(11, 11), 1),
    ("armistice day", Fixed(11, 11), 1),
    ("flag day", Fixed(6, 14), 1),
    ("juneteenth", Fixed(6, 19), 1),
    ("patriot day", Fixed(9, 11), 1),
    ("tax day", Fixed(4, 15), 1),
    ("bastille day", Fixed(7, 14), 1),
    ("canada day", Fixed(7, 1), 1),
    ("australia day", Fixed(1, 26), 1),
    ("anzac day", Fixed(4, 25), 1),
    ("guy fawkes day", Fixed(11, 5), 1),
    ("guy fawkes night", Fixed(11, 5), 1),
    ("bonfire night", Fixed(11, 5), 1),
    ("burns night", Fixed(1, 25), 1),
    ("gandhi jayanti", Fixed(10, 2), 1),
    ("republic day", Fixed(1, 26), 1),
    ("rabindra jayanti", Fixed(5, 9), 1),
    ("rabindranath tagore jayanti", Fixed(5, 9), 1),
    ("nowruz", Fixed(3, 21), 1),
    ("norouz", Fixed(3, 21), 1),
    ("persian new year", Fixed(3, 21), 1),
    ("king day", KingsDay, 1),
    ("kings day", KingsDay, 1),
    ("koningsdag", KingsDay, 1),
    ("thanksgiving", Nth(11, 3, 4, 0), 1),
    ("thanksgiving day", Nth(11, 3, 4, 0), 1),
    ("black friday", Nth(11, 3, 4, 1), 1),
    ("cyber monday", Nth(11, 3, 4, 4), 1),
    ("labor day", Nth(9, 0, 1, 0), 1),
    ("labour day", Nth(9, 0, 1, 0), 1),
    ("memorial day", Nth(5, 0, 0, 0), 1),
    ("mlk", Nth(1, 0, 3, 0), 1),
    ("mlk day", Nth(1, 0, 3, 0), 1),
    ("martin luther king", Nth(1, 0, 3, 0), 1),
    ("martin luther king jr", Nth(1, 0, 3, 0), 1),
    ("martin luther kings", Nth(1, 0, 3, 0), 1),
    ("civil rights day", Nth(1, 0, 3, 0), 1),
    ("presidents day", Nth(2, 0, 3, 0), 1),
    ("president day", Nth(2, 0, 3, 0), 1),
    ("washington birthday", Nth(2, 0, 3, 0), 1),
    ("columbus day", Nth(10, 0, 2, 0), 1),
    ("indigenous peoples day", Nth(10, 0, 2, 0), 1),
    ("mother day", Nth(5, 6, 2, 0), 1),
    ("mothers day", Nth(5, 6, 2, 0), 1),
    ("father day", Nth(6, 6, 3, 0), 1),
    ("fathers day", Nth(6, 6, 3, 0), 1),
    ("global youth service day", Nth(4, 4, 0, 0), 3),
    ("gysd", Nth(4, 4, 0, 0), 3),
    ("easter", Easter(0), 1),
    ("easter sunday", Easter(0), 1),
    ("easter monday", Easter(1), 1),
    ("good friday", Easter(-2), 1),
    ("great friday", Easter(-2), 1),
    ("holy saturday", Easter(-1), 1),
    ("maundy thursday", Easter(-3), 1),
    ("holy thursday", Easter(-3), 1),
    ("palm sunday", Easter(-7), 1),
    ("ash wednesday", Easter(-46), 1),
    ("shrove tuesday", Easter(-47), 1),
    ("pancake day", Easter(-47), 1),
    ("pancake tuesday", Easter(-47), 1),
    ("mardi gras", Easter(-47), 1),
    ("fat tuesday", Easter(-47), 1),
    ("lent", Easter(-46), 46),
    ("ascension day", Easter(39), 1),
    ("feast of the ascension", Easter(39), 1),
    ("pentecost", Easter(49), 1),
    ("whit sunday", Easter(49), 1),
    ("whitsunday", Easter(49), 1),
    ("whit monday", Easter(50), 1),
    ("trinity sunday", Easter(56), 1),
    ("corpus christi", Easter(60), 1),
    ("advent", Advent, 1),
    ("orthodox easter", Orthodox(0), 1),
    ("orthodox easter sunday", Orthodox(0), 1),
    ("pascha", Orthodox(0), 1),
    ("orthodox good friday", Orthodox(-2), 1),
    ("orthodox holy saturday", Orthodox(-1), 1),
    ("orthodox palm sunday", Orthodox(-7), 1),
    ("lazarus saturday", Orthodox(-8), 1),
    ("clean monday", Orthodox(-48), 1),
    ("pure monday", Orthodox(-48), 1),
    ("ash monday", Orthodox(-48), 1),
    ("orthodox shrove monday", Orthodox(-48), 1),
    ("great lent", Orthodox(-48), 40),
    ("great fast", Orthodox(-48), 40),
    // Jewish
    ("rosh hashanah", Hebrew(TISHRI, 1), 1),
    ("rosh hashana", Hebrew(TISHRI, 1), 1),
    ("rosh ha shanah", Hebrew(TISHRI, 1), 1),
    ("jewish new year", Hebrew(TISHRI, 1), 1),
    ("yom kippur", Hebrew(TISHRI, 10), 1),
    ("sukkot", Hebrew(TISHRI, 15), 7),
    ("succot", Hebrew(TISHRI, 15), 7),
    ("sukkoth", Hebrew(TISHRI, 15), 7),
    ("feast of tabernacles", Hebrew(TISHRI, 15), 7),
    ("feast of booths", Hebrew(TISHRI, 15), 7),
    ("shemini atzeret", Hebrew(TISHRI, 22), 1),
    ("simchat torah", Hebrew(TISHRI, 23), 1),
    ("simhat torah", Hebrew(TISHRI, 23), 1),
    ("hanukkah", Hebrew(KISLEV, 25), 8),
    ("hanukah", Hebrew(KISLEV, 25), 8),
    ("hannukah", Hebrew(KISLEV, 25), 8),
    ("chanukah", Hebrew(KISLEV, 25), 8),
    ("chanukkah", Hebrew(KISLEV, 25), 8),
    ("tu bishvat", Hebrew(SHEVAT, 15), 1),
    ("tu bshevat", Hebrew(SHEVAT, 15), 1),
    ("tu b shvat", Hebrew(SHEVAT, 15), 1),
    ("tu b shevat", Hebrew(SHEVAT, 15), 1),
    ("purim", Hebrew(LAST_ADAR, 14), 1),
    ("shushan purim", Hebrew(LAST_ADAR, 15), 1),
    ("passover", Hebrew(NISAN, 15), 8),
    ("pesach", Hebrew(NISAN, 15), 8),
    ("yom hashoah", Hebrew(NISAN, 27), 1),
    ("yom ha shoah", Hebrew(NISAN, 27), 1),
    ("holocaust remembrance day", Hebrew(NISAN, 27), 1),
    ("yom hazikaron", Hebrew(IYYAR, 4), 1),
    ("yom haatzmaut", Hebrew(IYYAR, 5), 1),
    ("yom ha atzmaut", Hebrew(IYYAR, 5), 1),
    ("lag baomer", Hebrew(IYYAR, 18), 1),
    ("lag ba omer", Hebrew(IYYAR, 18), 1),
    ("lag b omer", Hebrew(IYYAR, 18), 1),
    ("yom yerushalayim", Hebrew(IYYAR, 28), 1),
    ("jerusalem day", Hebrew(IYYAR, 28), 1),
    ("shavuot", Hebrew(SIVAN, 6), 1),
    ("shavuos", Hebrew(SIVAN, 6), 1),
    ("tisha b av", Hebrew(AV, 9), 1),
    ("tisha bav", Hebrew(AV, 9), 1),
    ("tisha beav", Hebrew(AV, 9), 1),
    // Islamic
    ("ramadan", Hijri(9, 1), 30),
    ("ramadhan", Hijri(9, 1), 30),
    ("ramzan", Hijri(9, 1), 30),
    ("eid al fitr", Hijri(10, 1), 1),
    ("eid ul fitr", Hijri(10, 1), 1),
    ("eid el fitr", Hijri(10, 1), 1),
    ("id ul fitr", Hijri(10, 1), 1),
    ("eid al adha", Hijri(12, 10), 1),
    ("eid ul adha", Hijri(12, 10), 1),
    ("eid el adha", Hijri(12, 10), 1),
    ("id ul adha", Hijri(12, 10), 1),
    ("bakr id", Hijri(12, 10), 1),
    ("bakrid", Hijri(12, 10), 1),
    ("bakra id", Hijri(12, 10), 1),
    ("bakra eid", Hijri(12, 10), 1),
    ("feast of the sacrifice", Hijri(12, 10), 1),
    ("day of arafah", Hijri(12, 9), 1),
    ("arafat day", Hijri(12, 9), 1),
    ("islamic new year", Hijri(1, 1), 1),
    ("hijri new year", Hijri(1, 1), 1),
    ("arabic new year", Hijri(1, 1), 1),
    ("amun jadid", Hijri(1, 1), 1),
    ("ashura", Hijri(1, 10), 1),
    ("day of ashura", Hijri(1, 10), 1),
    ("mawlid", Hijri(3, 12), 1),
    ("mawlid al nabi", Hijri(3, 12), 1),
    ("mawlid an nabi", Hijri(3, 12), 1),
    ("milad un nabi", Hijri(3, 12), 1),
    ("eid e milad", Hijri(3, 12), 1),
    ("prophet birthday", Hijri(3, 12), 1),
    ("the prophet birthday", Hijri(3, 12), 1),
    ("isra and miraj", Hijri(7, 27), 1),
    ("isra and mi raj", Hijri(7, 27), 1),
    ("isra miraj", Hijri(7, 27), 1),
    ("lailat al miraj", Hijri(7, 27), 1),
    ("shab e miraj", Hijri(7, 27), 1),
    ("prophet ascension", Hijri(7, 27), 1),
    ("the prophet ascension", Hijri(7, 27), 1),
    ("laylat al baraat", Hijri(8, 15), 1),
    ("shab e barat", Hijri(8, 15), 1),
    ("laylat al qadr", Hijri(9, 27), 1),
    ("lailat al qadr", Hijri(9, 27), 1),
    ("laylat al kadr", Hijri(9, 27), 1),
    ("night of power", Hijri(9, 27), 1),
    ("night of destiny", Hijri(9, 27), 1),
    ("shab e qadr", Hijri(9, 27), 1),
    ("jamat ul vida", JamatUlVida, 1),
    ("jamat ul wida", JamatUlVida, 1),
    ("jamatul vida", JamatUlVida, 1),
    ("jumu atul wida", JamatUlVida, 1),
    ("jumuatul wida", JamatUlVida, 1),
    ("jumu atul vida", JamatUlVida, 1),
    // Hindu, Sikh, Jain, Parsi
    ("diwali", Tithi(ASHVIN, 30, Dusk), 1),
    ("deepavali", Tithi(ASHVIN, 30, Dusk), 1),
    ("divali", Tithi(ASHVIN, 30, Dusk), 1),
    ("deepawali", Tithi(ASHVIN, 30, Dusk), 1),
    ("dhanteras", Tithi(ASHVIN, 28, Dusk), 1),
    ("naraka chaturdashi", Tithi(ASHVIN, 29, Sunrise), 1),
    ("choti diwali", Tithi(ASHVIN, 29, Sunrise), 1),
    ("chhoti diwali", Tithi(ASHVIN, 29, Sunrise), 1),
    ("govardhan puja", Tithi(KARTIKA, 1, Sunrise), 1),
    ("bhai dooj", Tithi(KARTIKA, 2, Sunrise), 1),
    ("bhaiya dooj", Tithi(KARTIKA, 2, Sunrise), 1),
    ("bhau beej", Tithi(KARTIKA, 2, Sunrise), 1),
    ("chhath", Tithi(KARTIKA, 6, Sunrise), 1),
    ("chhath puja", Tithi(KARTIKA, 6, Sunrise), 1),
    ("dala chhath", Tithi(KARTIKA, 6, Sunrise), 1),
    ("surya shashthi", Tithi(KARTIKA, 6, Sunrise), 1),
    ("surya sashti", Tithi(KARTIKA, 6, Sunrise), 1),
    ("guru nanak jayanti", Tithi(KARTIKA, 15, Sunrise), 1),
    ("gurpurab", Tithi(KARTIKA, 15, Sunrise), 1),
    ("guru purab", Tithi(KARTIKA, 15, Sunrise), 1),
    ("karva chauth", Tithi(ASHVIN, 19, Dusk), 1),
    ("karwa chauth", Tithi(ASHVIN, 19, Dusk), 1),
    ("karaka chaturthi", Tithi(ASHVIN, 19, Dusk), 1),
    ("navaratri", Tithi(ASHVIN, 1, Sunrise), 9),
    ("navratri", Tithi(ASHVIN, 1, Sunrise), 9),
    ("sharad navratri", Tithi(ASHVIN, 1, Sunrise), 9),
    ("durga puja", Tithi(ASHVIN, 6, Sunrise), 5),
    ("dussehra", Tithi(ASHVIN, 10, Afternoon), 1),
    ("dasara", Tithi(ASHVIN, 10, Afternoon), 1),
    ("dussera", Tithi(ASHVIN, 10, Afternoon), 1),
    ("vijayadashami", Tithi(ASHVIN, 10, Afternoon), 1),
    ("vijaya dashami", Tithi(ASHVIN, 10, Afternoon), 1),
    ("valmiki jayanti", Tithi(ASHVIN, 15, Sunrise), 1),
    ("pargat diwas", Tithi(ASHVIN, 15, Sunrise), 1),
    ("raksha bandhan", Tithi(SHRAVANA, 15, Sunrise), 1),
    ("rakhi", Tithi(SHRAVANA, 15, Sunrise), 1),
    ("janmashtami", Tithi(SHRAVANA, 23, Sunrise), 1),
    ("krishna janmashtami", Tithi(SHRAVANA, 23, Sunrise), 1),
    ("gokulashtami", Tithi(SHRAVANA, 23, Sunrise), 1),
    ("ganesh chaturthi", Tithi(BHADRAPADA, 4, Sunrise), 1),
    ("vinayaka chaturthi", Tithi(BHADRAPADA, 4, Sunrise), 1),
    ("vinayaka chavithi", Tithi(BHADRAPADA, 4, Sunrise), 1),
    ("ugadi", Tithi(CHAITRA, 1, Sunrise), 1),
    ("yugadi", Tithi(CHAITRA, 1, Sunrise), 1),
    ("gudi padwa", Tithi(CHAITRA, 1, Sunrise), 1),
    ("ram navami", Tithi(CHAITRA, 9, Sunrise), 1),
    ("rama navami", Tithi(CHAITRA, 9, Sunrise), 1),
    ("mahavir jayanti", Tithi(CHAITRA, 13, Sunrise), 1),
    ("mahavir janma kalyanak", Tithi(CHAITRA, 13, Sunrise), 1),
    ("hanuman jayanti", Tithi(CHAITRA, 15, Sunrise), 1),
    ("buddha purnima", Tithi(1, 15, Sunrise), 1),
    ("buddha jayanti", Tithi(1, 15, Sunrise), 1),
    ("vesak", Tithi(1, 15, Sunrise), 1),
    ("guru purnima", Tithi(3, 15, Sunrise), 1),
    ("vasant panchami", Tithi(MAGHA, 5, Sunrise), 1),
    ("basant panchami", Tithi(MAGHA, 5, Sunrise), 1),
    ("saraswati puja", Tithi(MAGHA, 5, Sunrise), 1),
    ("guru ravidas jayanti", Tithi(MAGHA, 15, Sunrise), 1),
    ("guru ravidass jayanti", Tithi(MAGHA, 15, Sunrise), 1),
    ("ravidas jayanti", Tithi(MAGHA, 15, Sunrise), 1),
    ("maha shivaratri", Tithi(MAGHA, 29, Sunrise), 1),
    ("maha shivratri", Tithi(MAGHA, 29, Sunrise), 1),
    ("mahashivratri", Tithi(MAGHA, 29, Sunrise), 1),
    ("mahashivaratri", Tithi(MAGHA, 29, Sunrise), 1),
    ("holika dahan", Tithi(PHALGUNA, 15, Dusk), 1),
    ("chhoti holi", Tithi(PHALGUNA, 15, Dusk), 1),
    ("choti holi", Tithi(PHALGUNA, 15, Dusk), 1),
    ("holi", DayAfterTithi(PHALGUNA, 15, Dusk), 1),
    ("dhulandi", DayAfterTithi(PHALGUNA, 15, Dusk), 1),
    ("rangwali holi", DayAfterTithi(PHALGUNA, 15, Dusk), 1),
    ("onam", Onam, 1),
    ("thiru onam", Onam, 1),
    ("thiruvonam", Onam, 1),
    ("makar sankranti", Sankranti(9, 0), 1),
    ("makara sankranti", Sankranti(9, 0), 1),
    ("maghi", Sankranti(9, 0), 1),
    ("pongal", Sankranti(9, 0), 1),
    ("thai pongal", Sankranti(9, 0), 1),
    ("uttarayan", Sankranti(9, 0), 1),
    ("lohri", Sankranti(9, -1), 1),
    ("vaisakhi", Sankranti(0, 0), 1),
    ("baisakhi", Sankranti(0, 0), 1),
    ("vaishakhi", Sankranti(0, 0), 1),
    ("parsi new year", ParsiNewYear, 1),
    ("jamshedi navroz", ParsiNewYear, 1),
    ("pateti", ParsiNewYear, 1),
    ("chinese new year", ChineseNewYear, 1),
    ("lunar new year", ChineseNewYear, 1),
    ("spring festival", ChineseNewYear, 1),
];

/// Whether a lower-case word begins some alias, for the tokenizer's [`Named`] class
/// (`day`, `night`, `the` and month names are classed otherwise and tried anyway).
///
/// [`Named`]: crate::date::lexicon::Lex::Named
pub(crate) fn starts_name(w: &[u8]) -> bool {
    matches!(
        w,
        b"christmas"
            | b"xmas"
            | b"new"
            | b"halloween"
            | b"kwanzaa"
            | b"valentine"
            | b"valentines"
            | b"st"
            | b"saint"
            | b"boxing"
            | b"epiphany"
            | b"all"
            | b"assumption"
            | b"immaculate"
            | b"groundhog"
            | b"earth"
            | b"international"
            | b"womens"
            | b"world"
            | b"human"
            | b"yoga"
            | b"independence"
            | b"veterans"
            | b"veteran"
            | b"remembrance"
            | b"armistice"
            | b"flag"
            | b"juneteenth"
            | b"patriot"
            | b"tax"
            | b"bastille"
            | b"canada"
            | b"australia"
            | b"anzac"
            | b"guy"
            | b"bonfire"
            | b"burns"
            | b"gandhi"
            | b"republic"
            | b"rabindra"
            | b"rabindranath"
            | b"nowruz"
            | b"norouz"
            | b"persian"
            | b"king"
            | b"kings"
            | b"koningsdag"
            | b"thanksgiving"
            | b"black"
            | b"cyber"
            | b"labor"
            | b"labour"
            | b"memorial"
            | b"mlk"
            | b"martin"
            | b"civil"
            | b"presidents"
            | b"president"
            | b"washington"
            | b"columbus"
            | b"indigenous"
            | b"mother"
            | b"mothers"
            | b"father"
            | b"fathers"
            | b"global"
            | b"gysd"
            | b"easter"
            | b"good"
            | b"great"
            | b"holy"
            | b"maundy"
            | b"palm"
            | b"ash"
            | b"shrove"
            | b"pancake"
            | b"mardi"
            | b"fat"
            | b"lent"
            | b"ascension"
            | b"feast"
            | b"pentecost"
            | b"whit"
            | b"whitsunday"
            | b"trinity"
            | b"corpus"
            | b"advent"
            | b"orthodox"
            | b"pascha"
            | b"lazarus"
            | b"clean"
            | b"pure"
            | b"rosh"
            | b"jewish"
            | b"yom"
            | b"sukkot"
            | b"succot"
            | b"sukkoth"
            | b"shemini"
            | b"simchat"
            | b"simhat"
            | b"hanukkah"
            | b"hanukah"
            | b"hannukah"
            | b"chanukah"
            | b"chanukkah"
            | b"tu"
            | b"purim"
            | b"shushan"
            | b"passover"
            | b"pesach"
            | b"holocaust"
            | b"lag"
            | b"jerusalem"
            | b"shavuot"
            | b"shavuos"
            | b"tisha"
            | b"ramadan"
            | b"ramadhan"
            | b"ramzan"
            | b"eid"
            | b"id"
            | b"bakr"
            | b"bakrid"
            | b"bakra"
            | b"arafat"
            | b"islamic"
            | b"hijri"
            | b"arabic"
            | b"amun"
            | b"ashura"
            | b"mawlid"
            | b"milad"
            | b"prophet"
            | b"isra"
            | b"lailat"
            | b"laylat"
            | b"shab"
            | b"jamat"
            | b"jamatul"
            | b"jumu"
            | b"jumuatul"
            | b"diwali"
            | b"deepavali"
            | b"divali"
            | b"deepawali"
            | b"dhanteras"
            | b"naraka"
            | b"choti"
            | b"chhoti"
            | b"govardhan"
            | b"bhai"
            | b"bhaiya"
            | b"bhau"
            | b"chhath"
            | b"dala"
            | b"surya"
            | b"guru"
            | b"gurpurab"
            | b"karva"
            | b"karwa"
            | b"karaka"
            | b"navaratri"
            | b"navratri"
            | b"sharad"
            | b"durga"
            | b"dussehra"
            | b"dasara"
            | b"dussera"
            | b"vijayadashami"
            | b"vijaya"
            | b"valmiki"
            | b"pargat"
            | b"raksha"
            | b"rakhi"
            | b"janmashtami"
            | b"krishna"
            | b"gokulashtami"
            | b"ganesh"
            | b"vinayaka"
            | b"ugadi"
            | b"yugadi"
            | b"gudi"
            | b"ram"
            | b"rama"
            | b"mahavir"
            | b"hanuman"
            | b"buddha"
            | b"vesak"
            | b"vasant"
            | b"basant"
            | b"saraswati"
            | b"ravidas"
            | b"maha"
            | b"mahashivratri"
            | b"mahashivaratri"
            | b"holika"
            | b"holi"
            | b"dhulandi"
            | b"rangwali"
            | b"onam"
            | b"thiru"
            | b"thiruvonam"
            | b"makar"
            | b"makara"
            | b"maghi"
            | b"pongal"
            | b"thai"
            | b"uttarayan"
            | b"lohri"
            | b"vaisakhi"
            | b"baisakhi"
            | b"vaishakhi"
            | b"parsi"
            | b"jamshedi"
            | b"pateti"
            | b"chinese"
            | b"lunar"
            | b"spring"
    )
}
