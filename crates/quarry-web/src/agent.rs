//! How Quarry names itself on the web: the user agent it asks with and the product token
//! `robots.txt` rules are matched against.

/// The user agent pages and `robots.txt` are asked with; `robots.txt` rules for `QuarryBot`
/// (or `*`) apply.
pub const USER_AGENT: &str = concat!("QuarryBot/", env!("CARGO_PKG_VERSION"));
/// The product token `robots.txt` groups are matched against.
pub const ROBOTS_AGENT: &str = "QuarryBot";
