//! A page's main content as text: Readability.js's algorithm (dom_smoothie) keeps the article
//! and drops navigation, footers, ads and scripts; the text keeps paragraph breaks.

use dom_smoothie::{Config, Readability, TextMode};

/// A page as the agent reads it and Quarry stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Readable {
    pub title: String,
    pub text: String,
}

/// The main content of `html` (found at `url`, which resolves relative links). A page without a
/// readable article gives empty text.
pub fn readable_text(html: &str, url: Option<&str>) -> Readable {
    let config = Config {
        text_mode: TextMode::Formatted,
        ..Config::default()
    };
    let article = Readability::new(html, url, Some(config)).and_then(|mut page| page.parse());
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
}
