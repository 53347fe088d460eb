//! Splits libphonenumber's metadata (`data/phone/PhoneNumberMetadata.xml`, the same file the
//! `phonenumber` crate ships) by country calling code, so the phone detector loads only the
//! codes a text uses. The crate's own database parses every pattern of every region on first
//! use (about 0.1 s of CPU); one calling code costs a fraction of a millisecond.
//!
//! Every `\d` in the patterns becomes `[0-9]`: the detector hands the crate ASCII digits only,
//! and the `regex` crate compiles a Unicode `\d` into automata many times larger (tens of
//! milliseconds per territory instead of well under one).
//!
//! Parts the detector never reads (formatting rules, and the emergency, short-code, carrier and
//! similar descriptors that neither parsing nor validation consult) are dropped, since the crate
//! parses every pattern of a territory when it loads it.
//!
//! Files written to `OUT_DIR`:
//! - `phone_metadata.json`: one JSON object (`phonenumber::metadata::loader::Metadata`) per
//!   territory, concatenated.
//! - `phone_metadata_index.rs`: `TERRITORIES` (id, calling code, byte range in the JSON),
//!   `GROUPS` (calling code, its territories in `TERRITORIES`; sorted by code) and `REGIONS`
//!   (region id, calling code; sorted by id).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::io::BufReader;
use std::path::Path;

use phonenumber::metadata::loader;

pub fn write(out: &Path) {
    let xml = fs::File::open("data/phone/PhoneNumberMetadata.xml").expect("opening phone metadata");
    let territories = loader::load(BufReader::new(xml)).expect("phone metadata parses");
    let mut by_code: BTreeMap<u16, Vec<loader::Metadata>> = BTreeMap::new();
    let mut regions: BTreeMap<String, u16> = BTreeMap::new();
    for mut territory in territories {
        drop_unused_parts(&mut territory);
        let code = territory
            .country_code
            .expect("every territory has a calling code");
        if let Some(id) = territory
            .id
            .as_deref()
            .filter(|id| id.chars().all(char::is_alphabetic))
        {
            regions.insert(id.to_owned(), code);
        }
        by_code.entry(code).or_default().push(territory);
    }
    let mut json = String::new();
    let mut index = String::from(
        "/// Per territory, grouped by calling code (codes ascending, the crate's order within a\n\
         /// code): region id, calling code, byte range of its JSON object.\n\
         pub(super) static TERRITORIES: &[(&str, u16, usize, usize)] = &[\n",
    );
    let mut groups = String::from(
        "/// Calling code, index of its first territory, how many; by code.\n\
         pub(super) static GROUPS: &[(u16, usize, usize)] = &[\n",
    );
    let mut territory_index = 0;
    for (code, group) in &by_code {
        writeln!(groups, "    ({code}, {territory_index}, {}),", group.len()).expect("a String");
        for territory in group {
            let start = json.len();
            json.push_str(&ascii_digit_classes(
                &serde_json::to_string(territory).expect("metadata serialises"),
            ));
            let id = territory.id.as_deref().unwrap_or_default();
            writeln!(index, "    ({id:?}, {code}, {start}, {}),", json.len()).expect("a String");
            territory_index += 1;
        }
    }
    index.push_str("];\n\n");
    index.push_str(&groups);
    index.push_str(
        "];\n\n/// Region id and its calling code, by id.\n\
         pub(super) static REGIONS: &[(&str, u16)] = &[\n",
    );
    for (id, code) in &regions {
        writeln!(index, "    ({id:?}, {code}),").expect("writing to a String");
    }
    index.push_str("];\n");
    fs::write(out.join("phone_metadata.json"), json).expect("writing phone metadata");
    fs::write(out.join("phone_metadata_index.rs"), index).expect("writing phone metadata index");
}

/// `json` (serialised metadata) with the regex class `\d` (written `\\d` in JSON) replaced by
/// `[0-9]`. The metadata has no literal backslashes, which would make the replacement ambiguous.
fn ascii_digit_classes(json: &str) -> String {
    assert!(
        !json.contains(r"\\\\"),
        "phone metadata with a literal backslash"
    );
    json.replace(r"\\d", "[0-9]")
}

/// Clears what neither `phonenumber::parse_with` nor validation reads; the detector writes E.164
/// itself, so the formats go too.
fn drop_unused_parts(territory: &mut loader::Metadata) {
    territory.formats.clear();
    territory.international_formats.clear();
    territory.emergency = None;
    territory.short_code = None;
    territory.standard_rate = None;
    territory.carrier = None;
    territory.no_international = None;
    for descriptor in [
        &mut territory.general,
        &mut territory.fixed_line,
        &mut territory.mobile,
        &mut territory.toll_free,
        &mut territory.premium_rate,
        &mut territory.shared_cost,
        &mut territory.personal_number,
        &mut territory.voip,
        &mut territory.pager,
        &mut territory.uan,
        &mut territory.voicemail,
    ]
    .into_iter()
    .flatten()
    {
        descriptor.example = None;
    }
}
