//! A page's main content as text: Readability.js's algorithm (dom_smoothie) keeps the article
//! and drops navigation, footers, ads and scripts; the text keeps paragraph breaks.
//!
//! Readability's cost grows with the number of elements times their nesting (and parsing
//! HTML checks scope up the stack of open elements at each tag), so a page of deeply nested
//! elements holds a core for minutes. Before a page is handed to it, one linear scan measures
//! its nesting ([`nesting_depth`]); a page nested deeper than [`READABILITY_MAX_DEPTH`] is read
//! by [`plain_text`] instead (every text outside scripts and styles, with block breaks), and
//! Readability is given at most [`READABILITY_MAX_BYTES`] of markup.

use std::ops::Range;

use dom_smoothie::{Config, Readability, TextMode};

/// Nesting, as [`nesting_depth`] counts it, above which Readability is not run. Real pages
/// nest 10–40 deep (Lighthouse flags more than 32 as excessive; Blink's parser stops nesting at
/// 512); the count leaves out elements whose end tag may be implied (`p`, `li`, `td`, …), so
/// the parser's own depth may be a small multiple of it.
pub(crate) const READABILITY_MAX_DEPTH: usize = 128;

/// Bytes of markup (scripts' and styles' contents not counted) Readability is given; the rest
/// of a longer page is dropped (the parser closes what the cut leaves open). Measured in a
/// debug build: 1 MiB of flat paragraphs takes 0.8 s, 512 KiB of 128-deep nesting 3.3 s (about
/// 50 times less optimised), while 4,000 nested `div`s alone took 55 s.
pub(crate) const READABILITY_MAX_BYTES: usize = 1024 * 1024;

/// A page as the agent reads it and Quarry stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Readable {
    pub title: String,
    pub text: String,
}

/// The main content of `html` (found at `url`, which resolves relative links). A page without a
/// readable article gives empty text. Takes time linear in the page's length, at most that of
/// Readability over [`READABILITY_MAX_BYTES`] nested at most [`READABILITY_MAX_DEPTH`] deep.
pub fn readable_text(html: &str, url: Option<&str>) -> Readable {
    if nesting_depth(html, READABILITY_MAX_DEPTH) > READABILITY_MAX_DEPTH {
        return plain_text(html);
    }
    let markup = without_raw_text(html, READABILITY_MAX_BYTES);
    let config = Config {
        text_mode: TextMode::Formatted,
        ..Config::default()
    };
    let article = Readability::new(markup, url, Some(config)).and_then(|mut page| page.parse());
    match article {
        Ok(article) => Readable {
            title: article.title.trim().to_owned(),
            text: tidy(&article.text_content),
        },
        Err(_) => Readable {
            title: String::new(),
            text: String::new(),
        },
    }
}

/// Every text of `html` outside scripts, styles, templates and SVG, entities decoded, runs of
/// white space made one, a line break at each block element's start and end; the title is the
/// `<title>`'s. For a page Readability is not given; one pass, linear in the length.
pub(crate) fn plain_text(html: &str) -> Readable {
    let mut title = String::new();
    let mut out = String::with_capacity(html.len() / 2);
    // Inside an element whose text is not the page's (`svg`, `template`): its name and how
    // many of it are open.
    let mut skipping: Option<(&str, usize)> = None;
    for token in Tokens::new(html) {
        if let Some((name, open)) = &mut skipping {
            match token {
                Token::Start {
                    name: other,
                    self_closing: false,
                } if other.eq_ignore_ascii_case(name) => *open += 1,
                Token::End { name: other } if other.eq_ignore_ascii_case(name) => {
                    *open -= 1;
                    if *open == 0 {
                        skipping = None;
                    }
                }
                _ => {}
            }
            continue;
        }
        match token {
            Token::Text(text) => push_collapsed(&mut out, &html_escape::decode_html_entities(text)),
            Token::Raw { name, text } => {
                if name.eq_ignore_ascii_case("title") && title.is_empty() {
                    title = collapse(&html_escape::decode_html_entities(text));
                } else if name.eq_ignore_ascii_case("textarea") {
                    push_collapsed(&mut out, &html_escape::decode_html_entities(text));
                }
            }
            Token::Start { name, self_closing } => {
                if ["svg", "math", "template"]
                    .iter()
                    .any(|skipped| name.eq_ignore_ascii_case(skipped))
                    && !self_closing
                {
                    skipping = Some((name, 1));
                } else {
                    push_break(&mut out, name);
                }
            }
            Token::End { name } => push_break(&mut out, name),
        }
    }
    Readable {
        title,
        text: tidy(&out),
    }
}

/// Elements that start a new paragraph, and those that start a new line.
const PARAGRAPH_ELEMENTS: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "dl",
    "div",
    "fieldset",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "main",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "table",
    "ul",
];
const LINE_ELEMENTS: &[&str] = &[
    "br",
    "caption",
    "dd",
    "details",
    "dt",
    "figcaption",
    "li",
    "option",
    "summary",
    "tr",
];

fn push_break(out: &mut String, element: &str) {
    let is = |names: &[&str]| names.iter().any(|n| element.eq_ignore_ascii_case(n));
    if is(PARAGRAPH_ELEMENTS) {
        out.push_str("\n\n");
    } else if is(LINE_ELEMENTS) {
        out.push('\n');
    } else if matches!(element.to_ascii_lowercase().as_str(), "td" | "th") {
        out.push(' ');
    }
}

/// `text` with each run of white space made one space, after `out`.
fn push_collapsed(out: &mut String, text: &str) {
    let mut space = text.starts_with(char::is_whitespace);
    for word in text.split_whitespace() {
        if space && !out.is_empty() && !out.ends_with(char::is_whitespace) {
            out.push(' ');
        }
        out.push_str(word);
        space = true;
    }
    if text.ends_with(char::is_whitespace) && !out.is_empty() && !out.ends_with(char::is_whitespace)
    {
        out.push(' ');
    }
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// How deep `html`'s elements nest, counting as a parser would open and close them (void
/// elements and those whose end tag may be implied are not counted; an end tag closes up to
/// the nearest open element of its name and is ignored without one). Counting stops above
/// `cap`, so the scan is linear: each end tag looks at most `cap` open elements.
pub(crate) fn nesting_depth(html: &str, cap: usize) -> usize {
    let mut open: Vec<&str> = Vec::new();
    // The outermost open `svg` or `math`: inside it, `<x/>` opens nothing.
    let mut foreign_from: Option<usize> = None;
    let mut deepest = 0;
    for token in Tokens::new(html) {
        match token {
            Token::Start { name, self_closing } => {
                if is_void(name) || has_implied_end(name) {
                    continue;
                }
                if self_closing && foreign_from.is_some() {
                    continue;
                }
                if foreign_from.is_none()
                    && (name.eq_ignore_ascii_case("svg") || name.eq_ignore_ascii_case("math"))
                {
                    foreign_from = Some(open.len());
                }
                open.push(name);
                deepest = deepest.max(open.len());
                if deepest > cap {
                    return deepest;
                }
            }
            Token::End { name } => {
                if let Some(at) = open.iter().rposition(|o| o.eq_ignore_ascii_case(name)) {
                    open.truncate(at);
                    if foreign_from.is_some_and(|from| from >= at) {
                        foreign_from = None;
                    }
                }
            }
            Token::Text(_) | Token::Raw { .. } => {}
        }
    }
    deepest
}

fn is_void(name: &str) -> bool {
    [
        "area", "base", "br", "col", "embed", "hr", "img", "input", "keygen", "link", "meta",
        "param", "source", "track", "wbr",
    ]
    .iter()
    .any(|void| name.eq_ignore_ascii_case(void))
}

/// Elements a parser closes when a sibling starts (`<li>a<li>b`), which do not nest that way.
fn has_implied_end(name: &str) -> bool {
    [
        "body", "caption", "colgroup", "dd", "dt", "head", "html", "li", "optgroup", "option", "p",
        "rb", "rp", "rt", "rtc", "tbody", "td", "tfoot", "th", "thead", "tr",
    ]
    .iter()
    .any(|implied| name.eq_ignore_ascii_case(implied))
}

/// `html` without the contents of its scripts and styles (Readability drops them anyway, and
/// pages carry megabytes of them), cut after about `max` bytes at a character boundary.
fn without_raw_text(html: &str, max: usize) -> String {
    let mut kept = String::with_capacity(html.len().min(max));
    let mut from = 0;
    for (start, end) in raw_text_ranges(html) {
        kept.push_str(&html[from..start]);
        from = end;
        if kept.len() >= max {
            break;
        }
    }
    if kept.len() < max {
        kept.push_str(&html[from..]);
    }
    if kept.len() > max {
        let mut cut = max;
        while !kept.is_char_boundary(cut) {
            cut -= 1;
        }
        kept.truncate(cut);
    }
    kept
}

/// Byte ranges of the contents of `script` and `style` elements.
fn raw_text_ranges(html: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut tokens = Tokens::new(html);
    std::iter::from_fn(move || {
        loop {
            let token = tokens.next()?;
            if let Token::Raw { name, text } = token
                && (name.eq_ignore_ascii_case("script") || name.eq_ignore_ascii_case("style"))
            {
                let start = text.as_ptr() as usize - html.as_ptr() as usize;
                return Some((start, start + text.len()));
            }
        }
    })
}

/// One piece of markup as an HTML tokenizer sees it (simplified: no character references, no
/// foreign-content rules beyond what [`nesting_depth`] needs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token<'a> {
    Text(&'a str),
    Start {
        name: &'a str,
        self_closing: bool,
    },
    End {
        name: &'a str,
    },
    /// The contents of an element whose text is not markup (`script`, `style`, `title`, …).
    Raw {
        name: &'a str,
        text: &'a str,
    },
}

/// Elements whose contents are text up to their end tag.
const RAW_TEXT_ELEMENTS: &[&str] = &[
    "iframe", "noembed", "noframes", "noscript", "script", "style", "textarea", "title", "xmp",
];

/// The tokens of `html`, each byte looked at a bounded number of times.
struct Tokens<'a> {
    html: &'a str,
    at: usize,
    /// A raw text element just started: its contents come next.
    raw: Option<&'a str>,
}

impl<'a> Tokens<'a> {
    fn new(html: &'a str) -> Tokens<'a> {
        Tokens {
            html,
            at: 0,
            raw: None,
        }
    }

    fn slice(&self, range: Range<usize>) -> &'a str {
        // Tokens start and end at ASCII bytes, so at character boundaries.
        &self.html[range]
    }

    /// The end of the tag whose attributes start at `from` (after its `>`), and whether it
    /// ended with `/>`; quoted attribute values may hold `>`.
    fn tag_end(&self, from: usize) -> (usize, bool) {
        let bytes = self.html.as_bytes();
        let mut i = from;
        let mut last = 0u8;
        while i < bytes.len() {
            match bytes[i] {
                b'>' => return (i + 1, last == b'/'),
                b'=' => {
                    i += 1;
                    while i < bytes.len() && bytes[i].is_ascii_whitespace() {
                        i += 1;
                    }
                    if let Some(&quote @ (b'"' | b'\'')) = bytes.get(i) {
                        i = match bytes[i + 1..].iter().position(|&b| b == quote) {
                            Some(offset) => i + 1 + offset + 1,
                            None => bytes.len(),
                        };
                        last = quote;
                    }
                    continue;
                }
                b if b.is_ascii_whitespace() => {}
                b => last = b,
            }
            i += 1;
        }
        (bytes.len(), false)
    }

    /// A tag name starting at `from`: its end.
    fn name_end(&self, from: usize) -> usize {
        let bytes = self.html.as_bytes();
        let mut i = from;
        while i < bytes.len() && !matches!(bytes[i], b'>' | b'/') && !bytes[i].is_ascii_whitespace()
        {
            i += 1;
        }
        i
    }

    /// Where `</name` (any case, then a space, `/` or `>`) starts at or after `from`.
    fn raw_end(&self, from: usize, name: &str) -> Option<usize> {
        let bytes = self.html.as_bytes();
        let mut i = from;
        while let Some(offset) = self.html[i..].find("</") {
            let start = i + offset;
            let after = start + 2 + name.len();
            if after <= bytes.len()
                && bytes[start + 2..after].eq_ignore_ascii_case(name.as_bytes())
                && bytes
                    .get(after)
                    .is_none_or(|b| b.is_ascii_whitespace() || matches!(b, b'/' | b'>'))
            {
                return Some(start);
            }
            i = start + 2;
        }
        None
    }
}

impl<'a> Iterator for Tokens<'a> {
    type Item = Token<'a>;

    fn next(&mut self) -> Option<Token<'a>> {
        let bytes = self.html.as_bytes();
        if let Some(name) = self.raw.take() {
            let end = self.raw_end(self.at, name).unwrap_or(bytes.len());
            let text = self.slice(self.at..end);
            self.at = end;
            return Some(Token::Raw { name, text });
        }
        loop {
            let start = self.at;
            if start >= bytes.len() {
                return None;
            }
            if bytes[start] != b'<' {
                let end = self.html[start..]
                    .find('<')
                    .map_or(bytes.len(), |offset| start + offset);
                self.at = end;
                return Some(Token::Text(self.slice(start..end)));
            }
            let rest = &bytes[start..];
            if rest.starts_with(b"<!--") {
                self.at = match self.html[start + 4..].find("-->") {
                    Some(offset) => start + 4 + offset + 3,
                    None => bytes.len(),
                };
                continue;
            }
            if rest.starts_with(b"<!") || rest.starts_with(b"<?") {
                self.at = match self.html[start..].find('>') {
                    Some(offset) => start + offset + 1,
                    None => bytes.len(),
                };
                continue;
            }
            if rest.len() > 2 && rest[1] == b'/' && rest[2].is_ascii_alphabetic() {
                let name_end = self.name_end(start + 2);
                let name = self.slice(start + 2..name_end);
                (self.at, _) = self.tag_end(name_end);
                return Some(Token::End { name });
            }
            if rest.len() > 1 && rest[1].is_ascii_alphabetic() {
                let name_end = self.name_end(start + 1);
                let name = self.slice(start + 1..name_end);
                let self_closing;
                (self.at, self_closing) = self.tag_end(name_end);
                if name.eq_ignore_ascii_case("plaintext") {
                    let text = self.slice(self.at..bytes.len());
                    self.at = bytes.len();
                    return Some(Token::Raw { name, text });
                }
                // As in a browser, `<script/>` starts a script all the same.
                if RAW_TEXT_ELEMENTS
                    .iter()
                    .any(|raw| name.eq_ignore_ascii_case(raw))
                {
                    self.raw = Some(name);
                }
                return Some(Token::Start { name, self_closing });
            }
            // A `<` that starts no tag is text.
            let end = self.html[start + 1..]
                .find('<')
                .map_or(bytes.len(), |offset| start + 1 + offset);
            self.at = end;
            return Some(Token::Text(self.slice(start..end)));
        }
    }
}

/// Lines trimmed, runs of blank lines made one, no leading or trailing blank lines.
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = false;
    for line in text.lines().map(str::trim) {
        if line.is_empty() {
            blank = !out.is_empty();
            continue;
        }
        if blank {
            out.push('\n');
            blank = false;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_article_is_kept_and_the_page_chrome_dropped() {
        let paragraph = "Acme Robotics was founded in 2011 in Lyon by Claire Martin, who still \
                         leads the company as its chief executive. It builds warehouse robots \
                         and sells them to retailers across Europe and North America.";
        let html = format!(
            "<html><head><title>About Acme</title><script>var tracking = 1;</script></head>\
             <body><nav><a href='/'>Home</a> | <a href='/jobs'>Jobs</a> | Login</nav>\
             <article><h1>About Acme</h1><p>{paragraph}</p><p>{paragraph}</p></article>\
             <footer>Copyright 2026 Acme. All rights reserved. Cookie settings.</footer>\
             </body></html>"
        );
        let page = readable_text(&html, Some("https://acme.example/about"));
        assert_eq!(page.title, "About Acme");
        assert!(
            page.text.contains("founded in 2011 in Lyon"),
            "{}",
            page.text
        );
        for chrome in ["Login", "Cookie settings", "tracking"] {
            assert!(!page.text.contains(chrome), "{chrome} kept: {}", page.text);
        }
    }

    #[test]
    fn tidy_keeps_one_blank_line_between_paragraphs() {
        assert_eq!(tidy("\n  a  \n\n\n b\n\n"), "a\n\nb");
    }

    #[test]
    fn nesting_is_counted_as_a_parser_opens_and_closes_elements() {
        let page = "<!doctype html><html><head><title>t</title><meta charset=utf-8>\
                    <script>if (a<b) { x = '<div><div><div>' }</script></head><body>\
                    <div class=\"a>b\"><ul><li>one<li>two</ul><p>x<p>y<br><img src=x>\
                    <svg><path d='M0'/><path/></svg><div/></div><!-- <div><div> --></body></html>";
        // div > ul, div > svg, div > div (`<div/>` opens a div, which `</div>` closes): 2 deep.
        assert_eq!(nesting_depth(page, 128), 2);
        // An end tag without an open element of its name closes nothing.
        let unmatched = "<div></span><div></span><div></b>".repeat(10);
        assert_eq!(nesting_depth(&unmatched, 128), 30);
        assert_eq!(
            nesting_depth(&"<section>".repeat(1000), 128),
            129,
            "stops above the cap"
        );
    }

    /// A page of nested elements took Readability minutes at 2 MiB (quadratic in the nesting):
    /// such a page is measured in one pass and read as plain text.
    #[test]
    fn a_deeply_nested_page_is_read_in_linear_time() {
        let depth = 200_000; // 1 MB of `<div>`s
        let html = format!(
            "<html><head><title>Deep &amp; nested</title><style>p {{}}</style></head><body>{}\
             Acme Robotics was founded in 2011 in Lyon.<script>var x = 1;</script>{}</body></html>",
            "<div>".repeat(depth),
            "</div>".repeat(depth)
        );
        let (sent, received) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let depth = nesting_depth(&html, READABILITY_MAX_DEPTH);
            let _ = sent.send((depth, plain_text(&html), readable_text(&html, None)));
        });
        // Only a hang fails this: a linear pass over 1 MB takes milliseconds.
        let (depth, plain, readable) = received
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("a nested page is read within a minute");
        assert_eq!(depth, READABILITY_MAX_DEPTH + 1);
        assert_eq!(plain.title, "Deep & nested");
        assert_eq!(plain.text, "Acme Robotics was founded in 2011 in Lyon.");
        assert_eq!(
            readable, plain,
            "too deep for Readability: read as plain text"
        );
    }

    #[test]
    fn plain_text_keeps_block_breaks_and_drops_scripts_styles_and_svg() {
        let html = "<html><head><title> A  page </title><style>body{}</style></head><body>\
                    <h1>Acme</h1><p>Founded   in\n 2011 &mdash; in <b>Lyon</b>.</p>\
                    <script>document.write('<p>no</p>')</script><svg><text>chart</text></svg>\
                    <ul><li>one<li>two</ul><table><tr><td>a<td>b</table>caf&eacute; &lt;3</body>";
        let page = plain_text(html);
        assert_eq!(page.title, "A page");
        assert_eq!(
            page.text,
            "Acme\n\nFounded in 2011 \u{2014} in Lyon.\n\none\ntwo\n\na b\n\ncafé <3"
        );
    }

    #[test]
    fn readability_is_given_the_markup_without_scripts_and_cut() {
        let html = format!(
            "<p>a</p><script>{}</script><STYLE>b{{}}</STYLE><p>{}</p>",
            "x".repeat(100),
            "é".repeat(100)
        );
        assert_eq!(
            without_raw_text(&html, 1_000),
            format!(
                "<p>a</p><script></script><STYLE></STYLE><p>{}</p>",
                "é".repeat(100)
            )
        );
        let cut = without_raw_text(&html, 40);
        assert!(
            cut.len() <= 40 && cut.starts_with("<p>a</p><script></script>"),
            "{cut}"
        );
    }
}
