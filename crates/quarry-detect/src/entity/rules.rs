//! Closed word classes the entity rules key on: titles, organization and location head words,
//! name connectors and context cues. Short, general lists; open-ended vocabularies (first names,
//! places, companies) live in `data/` and are loaded by the gazetteer.

/// Words whose trailing period is part of the token rather than a sentence end.
pub(crate) const ABBREVIATIONS: &[&str] = &[
    "Mr", "Mrs", "Ms", "Dr", "Prof", "Sr", "Jr", "St", "Mt", "Ft", "Inc", "Ltd", "Corp", "Co",
    "Bros", "Gen", "Col", "Capt", "Lt", "Sgt", "Cpl", "Rev", "Gov", "Sen", "Rep", "Hon", "Pres",
    "Adm", "Maj", "Messrs", "Mme", "Mlle", "vs", "etc", "No", "Jan", "Feb", "Mar", "Apr", "Jun",
    "Jul", "Aug", "Sep", "Sept", "Oct", "Nov", "Dec", "Ave", "Blvd", "Rd",
];

/// Honorifics a `name` span includes (`Dr. Jane Smith`) and an entity `person` span leaves out.
pub(crate) const HONORIFICS: &[&str] = &[
    "Mr", "Mrs", "Ms", "Miss", "Mx", "Dr", "Prof", "Professor", "Sir", "Dame", "Madam", "Madame",
    "Mme", "Mlle", "Monsieur", "Messrs", "Fr", "Herr", "Frau", "Señor", "Señora",
];

/// Titles and ranks that announce a person's name after them.
pub(crate) const PERSON_TITLES: &[&str] = &[
    "President", "Vice-President", "King", "Queen", "Prince", "Princess", "Emperor", "Empress",
    "Pope", "Saint", "Lord", "Lady", "Duke", "Duchess", "Count", "Countess", "Baron", "Baroness",
    "Earl", "Sheikh", "Sultan", "General", "Gen", "Brigadier", "Lieutenant-General",
    "Major-General", "Lieutenant-Colonel", "Colonel", "Col", "Captain", "Capt",
    "Lieutenant", "Lt", "Sergeant", "Sgt", "Corporal", "Cpl", "Major", "Maj", "Admiral", "Adm",
    "Commander", "Marshal", "Senator", "Sen", "Governor", "Gov", "Mayor", "Judge", "Justice",
    "Bishop", "Archbishop", "Cardinal", "Father", "Brother", "Sister", "Rev", "Reverend",
    "Rabbi", "Imam", "Coach", "Chancellor", "Minister", "Premier", "Ambassador", "Congressman",
    "Congresswoman", "Representative", "Rep", "Hon", "Chairman", "Director", "Inspector",
    "Detective", "Officer", "Private", "Uncle", "Aunt", "CEO",
];

/// Last words that make a name an organization: `Acme Inc.`, `Leeds University`, `FC Basel`.
pub(crate) const ORG_HEADS: &[&str] = &[
    "Inc", "Incorporated", "Corp", "Works", "Recordings", "Design", "Designs", "Mall", "Center",
    "Centre", "Casino", "Lounge", "Pub", "Cafe", "Café", "Brotherhood", "Sisterhood",
    "Fellowship", "Corporation", "Co", "Company", "Companies", "Ltd", "Limited",
    "LLC", "LLP", "PLC", "plc", "GmbH", "AG", "SA", "NV", "BV", "AB", "ASA", "Oy", "SpA", "KK",
    "Group", "Holdings", "Partners", "Associates", "Brothers", "Bros", "Enterprises",
    "Industries", "Technologies", "Technology", "Systems", "Solutions", "Software", "Labs",
    "Laboratories", "Motors", "Airlines", "Airways", "Railways",
    "Records", "Studios", "Pictures", "Films", "Productions", "Entertainment", "Media",
    "Publishing", "Publications", "Press", "Communications", "Networks", "Network",
    "Broadcasting", "Television", "Radio", "Times", "News", "Post", "Herald", "Tribune",
    "Gazette", "Journal", "Magazine", "Chronicle", "Telegraph", "Guardian", "Observer",
    "University", "College", "School", "Academy", "Institute", "Institution", "Conservatory",
    "Seminary", "Society", "Association", "Federation", "Confederation", "League", "Union",
    "Club", "FC", "AFC", "CF", "SC", "Party", "Council", "Committee", "Commission", "Department",
    "Ministry", "Agency", "Bureau", "Authority", "Board", "Administration", "Service",
    "Services", "Office", "Bank", "Foundation", "Trust", "Fund", "Hospital", "Clinic",
    "Organisation", "Organization", "Corps", "Army", "Navy", "Force", "Forces", "Fleet",
    "Command", "Squadron", "Regiment", "Brigade", "Battalion", "Guard", "Police", "Parliament",
    "Congress", "Senate", "Assembly", "Government", "Cabinet", "Court", "Tribunal", "Band",
    "Orchestra", "Philharmonic", "Choir", "Ensemble", "Quartet", "Trio", "Team", "Exchange",
    "Conference", "Cooperative", "Consortium", "Alliance", "Coalition", "Movement", "Church",
    "Museum", "Library", "Gallery", "Theatre", "Theater", "Zoo", "Ballet", "Opera",
    "Symphony", "Brewery", "Hotel", "Restaurant", "Store", "Stores",
];

/// Words that start an organization name before `of`/`for`: `University of Leeds`.
pub(crate) const ORG_LEADS: &[&str] = &[
    "University", "College", "School", "Academy", "Institute", "Bank", "Department", "Ministry",
    "Office", "Bureau", "Board", "Church", "Society", "Association", "Federation", "League",
    "Council", "Committee", "Commission", "Museum", "Library", "House", "Order", "Court",
    "Chamber", "Corps", "Army", "Navy", "Union", "Organization", "Organisation", "Federal",
    "Centre", "Center", "Hall", "Friends", "Sisters", "Brothers", "Knights", "Daughters",
    "Sons", "Party", "Congress", "Parliament", "Government", "Agency", "Authority", "Fund",
    "Foundation", "Trust", "Guild", "Hospital", "FC",
];

/// Last words that make a name a location: `Barrack Street`, `Sandy River`, `Kent County`.
pub(crate) const LOCATION_HEADS: &[&str] = &[
    "Street", "St", "Road", "Rd", "Avenue", "Ave", "Boulevard", "Blvd", "Lane", "Drive",
    "Highway", "Motorway", "Freeway", "Parkway", "Way", "Square", "Plaza", "Bridge", "Tunnel",
    "River", "Creek", "Brook", "Lake", "Lakes", "Pond", "Reservoir", "Falls", "Canal", "Sea",
    "Ocean", "Bay", "Gulf", "Strait", "Straits", "Channel", "Sound", "Harbor", "Harbour", "Port",
    "Beach", "Coast", "Island", "Islands", "Isle", "Isles", "Peninsula", "Cape", "Mountain",
    "Mountains", "Mount", "Mt", "Hill", "Hills", "Peak", "Ridge", "Range", "Valley", "Canyon",
    "Desert", "Forest", "Woods", "Park", "Glacier", "Plateau", "Plains", "County", "Province",
    "District", "Region", "Territory", "Township", "Parish", "Borough", "Municipality",
    "Prefecture", "Oblast", "Voivodeship", "Canton", "City", "Town", "Village",
    "Heights", "Springs", "Airport", "Station", "Stadium", "Arena", "Castle", "Palace",
    "Cathedral", "Abbey", "Tower", "Fort", "Railroad", "Railway", "Dock", "Docks", "Wharf",
    "Pier", "Quay", "Field", "Gym", "Gymnasium", "Prison", "Penitentiary", "Jail", "Corner",
];

/// Words that start a location name, alone (`Mount Everest`) or before `of` (`Isle of Man`).
pub(crate) const LOCATION_LEADS: &[&str] = &[
    "Mount", "Mt", "Lake", "Cape", "Fort", "Ft", "Port", "Isle", "Gulf", "Bay", "Strait",
    "Republic", "Kingdom", "Commonwealth", "Duchy", "Grand", "Principality", "Empire", "City",
    "County", "Province", "State", "Sea", "Straits", "Islands", "Isles", "Sultanate", "Emirate",
    "Bishopric", "Diocese", "Town", "Borough", "Municipality", "District", "Valley",
];

/// Words that make the name they start a location: `Mount Everest`, `Lake Tarnwell`.
pub(crate) const LOCATION_PREFIXES: &[&str] = &["Mount", "Mt", "Lake", "Cape", "Fort", "Ft", "Port"];

/// Lower-case particles that may sit inside a name between capitalised words.
pub(crate) const NAME_PARTICLES: &[&str] = &[
    "de", "da", "do", "dos", "das", "del", "della", "degli", "di", "du", "des", "van", "von",
    "der", "den", "ter", "la", "le", "y", "bin", "ibn", "al", "el", "zu", "af",
];

/// Prepositions after which an unknown capitalised name is most often a place.
pub(crate) const LOCATION_CUES: &[&str] = &[
    "in", "near", "at", "to", "from", "into", "across", "throughout", "outside", "inside",
    "towards", "toward", "around", "via", "within", "between", "entering", "visited",
];

/// Words before a name that say it names a person: `by`, `said`, `told`.
pub(crate) const PERSON_CUES: &[&str] = &["by", "said", "told", "married", "son", "daughter", "wife", "husband"];

/// Words after an organization that turn `Org word` into a location: `Google headquarters`.
pub(crate) const SITE_WORDS: &[&str] = &["headquarters", "HQ", "campus", "offices"];

/// Capitalised words that are never part of a name: dates and the pronoun `I`.
pub(crate) const NOT_NAMES: &[&str] = &[
    "I", "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday",
    "Saturday", "Sunday", "Jan", "Feb", "Mar", "Apr", "Jun", "Jul", "Aug", "Sep", "Sept", "Oct",
    "Nov", "Dec",
];

/// Upper-case words that may end a name (`Glenn Profitt II`) but never start one.
pub(crate) const NOT_NAME_STARTS: &[&str] = &[
    "OK", "AM", "PM", "TV", "CD", "DVD", "II", "III", "IV", "VI", "VII", "VIII", "IX", "XI",
    "XII", "A",
];

/// Tokens after a person's name that belong to it: `John Scheidt Jr.`, `Glenn Profitt II`.
pub(crate) const NAME_SUFFIXES: &[&str] = &["Jr", "Jr.", "Sr", "Sr.", "II", "III", "IV"];
