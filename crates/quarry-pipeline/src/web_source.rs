//! The `web` source for field agents: search through the configured provider, read a page,
//! store it as a document (kind `web`, with its URL and fetch time) and index it, so a value
//! taken from it is grounded and cited like a value from any document.

use quarry_core::model::{Document, WebPage};
use quarry_web::{PageFetcher, Web, WebHit};
use serde_json::{Value, json};

use crate::documents::Documents;

/// Pages the engine reads itself for a field in retrieve-then-extract mode.
pub(crate) const PAGES_READ_FOR_RETRIEVAL: usize = 3;

/// The web, and where pages read from it are kept.
#[derive(Clone)]
pub struct WebAccess {
    web: Web,
    documents: Documents,
}

/// A page an agent (or the engine, in retrieve-then-extract) could not read, and why. The
/// field's outcome keeps them: a result's `metadata.pages_not_read`, or the failure's reason
/// (the task's attempt log and the run's report), so a run shows what it could not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UnreadPage {
    /// Without credentials.
    pub url: String,
    pub reason: String,
}

impl UnreadPage {
    pub(crate) fn new(url: &str, reason: &str) -> UnreadPage {
        let page = UnreadPage {
            url: PageFetcher::shown_url(url),
            reason: reason.to_owned(),
        };
        tracing::info!(url = %page.url, reason = %page.reason, "web page not read");
        page
    }

    /// `pages` as a result's `metadata.pages_not_read`.
    pub(crate) fn metadata(pages: &[UnreadPage]) -> Value {
        pages
            .iter()
            .map(|page| json!({"url": page.url, "reason": page.reason}))
            .collect()
    }

    /// `pages` as the end of a failure's reason (empty without any).
    pub(crate) fn note(pages: &[UnreadPage]) -> String {
        if pages.is_empty() {
            return String::new();
        }
        let listed: Vec<String> = pages
            .iter()
            .map(|page| format!("{} ({})", page.url, page.reason))
            .collect();
        format!("; web pages not read: {}", listed.join("; "))
    }
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

    use std::sync::Arc;
    use std::time::Duration;

    use quarry_core::model::NewEntity;
    use quarry_core::retrieval::Retriever;
    use quarry_core::store::Store;
    use quarry_llm::{Endpoint, OpenAiClient, TransportConfig};
    use quarry_testkit::{FakePage, FakeWeb, Reply, ScriptedServer, TempDb, WebResult};
    use quarry_web::{FetchLimits, HostPolicy, SearxngSearch};

    use crate::{AgentRegistry, FieldOutcome, Pipeline, PipelineConfig, ResolvedAgent};

    struct Agents(String);

    impl AgentRegistry for Agents {
        fn resolve(&self, agent: &str) -> Option<ResolvedAgent> {
            let endpoint = Endpoint {
                provider: "openai".to_owned(),
                base_url: self.0.clone(),
                model: agent.to_owned(),
                api_key: Some("sk-test".to_owned()),
            };
            let transport = TransportConfig {
                max_attempts: 1,
                ..TransportConfig::default()
            };
            let client = OpenAiClient::new(endpoint, transport, 8).ok()?;
            Some(ResolvedAgent {
                client: Arc::new(client),
                model: agent.to_owned(),
            })
        }
    }

    const PAGE: &str = "<html><head><title>Acme Robotics leadership</title></head><body>\
        <main><article><h1>Leadership</h1><p>Acme Robotics was founded in 2011 in Lyon. Claire \
        Martin has been its chief executive since 2019, after eight years leading the \
        navigation software team.</p><p>The board is chaired by Paul Girard, who co-founded \
        the company and still owns a fifth of its shares.</p></article></main></body></html>";

    /// In retrieve mode the engine skipped the pages it could not read and said so nowhere in
    /// the run: each is kept, with why, in the result's `metadata.pages_not_read`, or in the
    /// failure's reason when nothing could be read.
    #[tokio::test(flavor = "multi_thread")]
    async fn pages_retrieve_mode_could_not_read_are_kept_with_the_outcome() {
        let db = TempDb::new("web-source");
        let store: Arc<dyn Store> = quarry_store::open(db.url()).await.unwrap();
        let project = store.ensure_project("test").await.unwrap();
        let types = "entity_types:\n  - slug: company\n    fields:\n      - {name: ceo, \
                     instructions: \"The chief executive\", agent: m-web, sources: [web], \
                     mode: retrieve, max_steps: 1}\n";
        for entity_type in crate::load_entity_types(types).unwrap() {
            store.put_entity_type(&project, &entity_type).await.unwrap();
        }
        let mut entities = Vec::new();
        for title in ["Acme Robotics", "Acme Mirror"] {
            let new = NewEntity {
                entity_type: "company".into(),
                title: title.into(),
                ..NewEntity::default()
            };
            entities.push(store.create_entity(&project, &new).await.unwrap().id);
        }
        let web = FakeWeb::start();
        let port = web.url("").rsplit(':').next().unwrap().to_owned();
        // A name that resolves to a private address (only 127.0.0.1 is allowed), with a
        // password that must not be kept.
        let mirror = format!("http://reader:secret@localhost:{port}/acme/leadership");
        let result = |url: String| WebResult {
            url,
            title: "Acme Robotics leadership".to_owned(),
            snippet: "Claire Martin has been its chief executive".to_owned(),
        };
        web.page("/acme/leadership", FakePage::Html(PAGE.to_owned()))
            .results(vec![
                result(mirror.clone()),
                result(web.url("/acme/leadership")),
            ]);
        let search = SearxngSearch::new(&web.searxng_base_url(), Duration::from_secs(5)).unwrap();
        let fetcher = quarry_web::PageFetcher::new(
            FetchLimits::default(),
            HostPolicy::allowing(["127.0.0.1"]),
        )
        .unwrap();
        let model = ScriptedServer::start();
        model.push_for_model(
            "m-web",
            Reply::content(r#"{"ceo": "Claire Martin", "confidence": "high"}"#),
        );
        let retriever: Arc<dyn Retriever> = Arc::new(quarry_index::Library::hashing().unwrap());
        let pipeline = Pipeline::new(
            store.clone(),
            retriever,
            Arc::new(Agents(model.base_url())),
            PipelineConfig::default(),
        )
        .with_web(quarry_web::Web {
            search: Arc::new(search),
            fetcher,
        });
        let refused = format!("http://localhost:{port}/acme/leadership");
        let reason = "'localhost' is a private or local address";

        // One page read, one refused: the value, and the refused page in its metadata.
        let report = pipeline
            .run(&project, &entities[0], None, "test")
            .await
            .unwrap();
        let Some(FieldOutcome::Extracted { result_id, .. }) = report.outcome("ceo") else {
            panic!("{report:#?}");
        };
        let stored = store
            .get_result(&project, result_id)
            .await
            .unwrap()
            .unwrap();
        let unread = stored.metadata["pages_not_read"].as_array().unwrap();
        assert_eq!(unread.len(), 1, "{unread:?}");
        assert_eq!(unread[0]["url"], refused.as_str());
        assert!(
            unread[0]["reason"].as_str().unwrap().contains(reason),
            "{unread:?}"
        );

        // Nothing readable: the failure says which pages were not read and why.
        web.results(vec![result(mirror)]);
        let report = pipeline
            .run(&project, &entities[1], None, "test")
            .await
            .unwrap();
        let Some(FieldOutcome::Failed {
            reason: failure, ..
        }) = report.outcome("ceo")
        else {
            panic!("{report:#?}");
        };
        assert!(
            failure.contains(&format!("web pages not read: {refused} ({reason}")),
            "{failure}"
        );
        assert!(!format!("{report:?}{stored:?}").contains("secret"));
    }

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
