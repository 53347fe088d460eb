//! Search conformance: the in-process index (SQLite) and the database's own search (PostgreSQL
//! with pgvector) answer the same queries with the same top document, on a generated corpus.
//! Each document carries a rare two-word signature among shared filler; a query names one
//! signature, in a few forms (both words, one word, the words among filler), and both backends
//! must rank its document first. Needs `QUARRY_TEST_PGVECTOR_URL` (skipped otherwise).

use crate::common;

use std::collections::HashMap;

use common::{Sandbox, Server, quarry_on};
use quarry_testkit::postgres::TestDatabase;
use serde_json::json;

const DOCUMENTS: usize = 40;

/// A deterministic generator (no clock, no randomness crate): xorshift.
struct Words(u64);

impl Words {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// An invented word of 6–9 letters, unlike any English one.
    fn word(&mut self) -> String {
        const SYLLABLES: [&str; 12] = [
            "zor", "vek", "tal", "mup", "qin", "dra", "lox", "fep", "wun", "gri", "sab", "yth",
        ];
        let count = 2 + (self.next() % 2) as usize;
        (0..count)
            .map(|_| SYLLABLES[(self.next() % SYLLABLES.len() as u64) as usize])
            .collect()
    }
}

const FILLER: &str = "The quarterly logistics report covers shipments, pallets, warehouse \
    staffing and the usual delivery schedule for the northern region.";

fn corpus() -> Vec<(String, String, [String; 2])> {
    let mut words = Words(0x9E37_79B9_7F4A_7C15);
    let mut seen = std::collections::HashSet::new();
    let mut documents = Vec::new();
    while documents.len() < DOCUMENTS {
        let signature = [words.word(), words.word()];
        if !seen.insert(signature[0].clone()) || !seen.insert(signature[1].clone()) {
            continue;
        }
        let n = documents.len();
        let text = format!(
            "{FILLER} Site {n} handles the {} contract with {} partners. {FILLER}",
            signature[0], signature[1]
        );
        documents.push((format!("report {n}"), text, signature));
    }
    documents
}

/// A server over one copy of the corpus, its key, and its document titles by id.
struct Served {
    server: Server,
    key: String,
    titles: HashMap<String, String>,
}

impl Served {
    /// The titles of the documents of the top passages for `query`, best first.
    fn top_titles(&self, query: &str) -> Vec<String> {
        let path = format!(
            "/v1/documents/search?q={}&limit=5",
            query.replace(' ', "%20")
        );
        let (status, hits) = self.server.call(&self.key, "GET", &path, None);
        assert_eq!(status, 200, "{hits}");
        hits.as_array()
            .expect("a list of passages")
            .iter()
            .filter_map(|hit| hit["document_id"].as_str())
            .map(|id| self.titles[id].clone())
            .collect()
    }
}

fn serve_corpus(db: &str, documents: &[(String, String, [String; 2])]) -> Served {
    let key = quarry_on(
        db,
        &["key", "create", "--scopes", "entities:read,documents:write"],
    )
    .trim()
    .to_owned();
    let server = Server::start(&["--db", db, "--no-worker"]);
    let mut titles = HashMap::new();
    for (title, text, _) in documents {
        let (status, added) = server.call(
            &key,
            "POST",
            "/v1/documents",
            Some(json!({"title": title, "text": text})),
        );
        assert_eq!(status, 201, "{added}");
        let id = added["id"].as_str().expect("the document's id").to_owned();
        titles.insert(id, title.clone());
    }
    Served {
        server,
        key,
        titles,
    }
}

#[test]
fn sqlite_and_postgres_rank_the_same_document_first() {
    let Ok(base) = std::env::var("QUARRY_TEST_PGVECTOR_URL") else {
        eprintln!("NOTICE: search conformance SKIPPED: QUARRY_TEST_PGVECTOR_URL is unset");
        return;
    };
    let documents = corpus();
    let sandbox = Sandbox::new("search-conformance");
    let database = TestDatabase::create(&base, "search");
    let sqlite = serve_corpus(&sandbox.db(), &documents);
    let postgres = serve_corpus(database.url(), &documents);
    let mut compared = 0;
    for (title, _, [first, second]) in &documents {
        for query in [
            format!("{first} {second}"),
            first.clone(),
            second.clone(),
            format!("which site handles {first} for {second} partners"),
        ] {
            let in_process = sqlite.top_titles(&query);
            let in_database = postgres.top_titles(&query);
            assert_eq!(
                in_process.first(),
                Some(title),
                "SQLite, query {query:?}: {in_process:?}"
            );
            assert_eq!(
                in_database.first(),
                Some(title),
                "PostgreSQL, query {query:?}: {in_database:?}"
            );
            compared += 1;
        }
    }
    eprintln!("search conformance: {compared} generated queries, the same first document on both");
}
