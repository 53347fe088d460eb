//! The `web` source for field agents: search through the configured provider, read a page,
//! store it as a document (kind `web`, with its URL and fetch time) and index it, so a value
//! taken from it is grounded and cited like a value from any document.

use quarry_core::model::{Document, WebPage};
use quarry_web::{Web, WebHit};

use crate::documents::Documents;

/// Pages the engine reads itself for a field in retrieve-then-extract mode.
pub(crate) const PAGES_READ_FOR_RETRIEVAL: usize = 3;

/// The web, and where pages read from it are kept.
#[derive(Clone)]
pub struct WebAccess {
    web: Web,
    documents: Documents,
}

/// A page read and stored.
pub(crate) struct ReadPage {
    pub document: Document,
    /// The body was cut at the size limit.
    pub truncated: bool,
}

impl WebAccess {
    pub fn new(web: Web, documents: Documents) -> WebAccess {
        WebAccess { web, documents }
    }

    pub(crate) async fn search(&self, query: &str, limit: usize) -> Result<Vec<WebHit>, String> {
        self.web
            .search
            .search(query, limit)
            .await
            .map_err(|error| error.to_string())
    }

    /// Reads `url` within the fetcher's limits and stores the page in `project`. The error is a
    /// sentence for the model (a refused or unreadable page is a tool result, not a failure).
    pub(crate) async fn read(&self, project: &str, url: &str) -> Result<ReadPage, String> {
        let page = self
            .web
            .fetcher
            .fetch(url)
            .await
            .map_err(|error| error.to_string())?;
        if page.text.trim().is_empty() {
            return Err(format!("'{}' has no readable text", page.url));
        }
        let record = WebPage {
            url: page.url,
            title: page.title,
            text: page.text,
            fetched_at: page.fetched_at,
        };
        let added = self
            .documents
            .add_web_page(project, &record)
            .await
            .map_err(|error| format!("the page was read but could not be stored: {error}"))?;
        for warning in &added.warnings {
            tracing::warn!("{warning}");
        }
        Ok(ReadPage {
            document: added.document,
            truncated: page.truncated,
        })
    }
}

/// Up to `count` passages of `text` (its paragraphs, in code points, end exclusive) sharing the
/// most words with `query`, in text order; the first paragraphs when none shares a word.
pub(crate) fn best_passages(text: &str, query: &str, count: usize) -> Vec<(usize, usize, String)> {
    let words: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| word.chars().count() > 2)
        .map(str::to_lowercase)
        .collect();
    let mut paragraphs = Vec::new();
    let mut start = 0;
    for (index, block) in text.split("\n\n").enumerate() {
        if index > 0 {
            start += 2;
        }
        let length = block.chars().count();
        let trimmed = block.trim();
        if !trimmed.is_empty() {
            let lower = trimmed.to_lowercase();
            let score = words.iter().filter(|w| lower.contains(w.as_str())).count();
            paragraphs.push((score, start, start + length, block.to_owned()));
        }
        start += length;
    }
    let mut ranked: Vec<usize> = (0..paragraphs.len()).collect();
    ranked.sort_by_key(|&i| (std::cmp::Reverse(paragraphs[i].0), i));
    let mut chosen: Vec<usize> = ranked.into_iter().take(count).collect();
    chosen.sort_unstable();
    chosen
        .into_iter()
        .map(|i| {
            let (_, start, end, ref block) = paragraphs[i];
            (start, end, block.clone())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passages_are_the_paragraphs_sharing_most_words_with_their_offsets() {
        let text = "Acme builds robots.\n\nRevenue was 48 million euros in 2025.\n\nIt is in Lyon.";
        let passages = best_passages(text, "revenue 2025", 1);
        assert_eq!(passages.len(), 1);
        let (start, end, passage) = &passages[0];
        assert_eq!(passage, "Revenue was 48 million euros in 2025.");
        let by_offsets: String = text.chars().skip(*start).take(end - start).collect();
        assert_eq!(&by_offsets, passage);
        let all = best_passages(text, "nothing matches", 2);
        assert_eq!(all[0].2, "Acme builds robots.");
        assert_eq!(all.len(), 2);
    }
}
