//! End to end: documents in, fused hits out, each hit citable by document id and code points.

use quarry_index::{ChunkConfig, Filter, HashingEmbedder, HybridIndex};

const CONTRACT: &str = "# Supply contract\n\
    Acme Corp agrees to deliver 500 widgets to Globex by 1 March.\n\n\
    ## Payment\n\
    Payment is due within thirty days of the invoice. Late payment incurs a fee of 2.5 %.\n\n\
    ## Termination\n\
    Either party may terminate with ninety days' written notice.";

const TRIP: &str = "Notes from Zürich: the café near the station serves great coffee ☕. \
    We met Dr. Müller, who works on search engines at ETH.";

fn index() -> HybridIndex {
    let mut index = HybridIndex::in_memory(Box::new(HashingEmbedder::default()))
        .unwrap()
        .with_chunking(ChunkConfig {
            target_chars: 120,
            max_chars: 200,
        });
    let acme = ["acme".to_owned()];
    index
        .add_document("p1", "contract", CONTRACT, &acme)
        .unwrap();
    index.add_document("p1", "trip", TRIP, &[]).unwrap();
    index
        .add_document(
            "p2",
            "other",
            "Payment of the invoice is due in thirty days.",
            &acme,
        )
        .unwrap();
    index.commit().unwrap();
    index
}

fn cited(text: &str, hit: &quarry_index::Hit) -> String {
    text.chars()
        .skip(hit.code_points.start)
        .take(hit.code_points.len())
        .collect()
}

#[test]
fn hybrid_search_finds_and_cites_the_right_chunk() {
    let index = index();
    let hits = index
        .search(
            "when is the invoice payment due?",
            &Filter::project("p1"),
            3,
        )
        .unwrap();
    assert_eq!(hits[0].document_id, "contract");
    let text = cited(CONTRACT, &hits[0]);
    assert!(text.starts_with("## Payment\nPayment is due"), "{text:?}");
    assert_eq!(text, &CONTRACT[hits[0].bytes.clone()]);
    assert!(hits.iter().all(|hit| hit.document_id != "other"));

    // Multi-byte text: code points and bytes differ, both cite the same words.
    let hits = index
        .search("coffee in Zurich cafe", &Filter::project("p1"), 1)
        .unwrap();
    assert_eq!(hits[0].document_id, "trip");
    assert_eq!(cited(TRIP, &hits[0]), &TRIP[hits[0].bytes.clone()]);
    assert!(hits[0].bytes.end > hits[0].code_points.end);
}

#[test]
fn vectors_find_what_words_miss() {
    let index = index();
    // "invoices" and "terminating" are not indexed words; character n-grams still match.
    let filter = Filter::project("p1");
    assert!(
        index
            .search_words("terminating", &filter, 5)
            .unwrap()
            .is_empty()
    );
    let hits = index.search("terminating", &filter, 1).unwrap();
    assert!(cited(CONTRACT, &hits[0]).contains("terminate"), "{hits:?}");
}

#[test]
fn entity_links_filter_and_can_be_added_later() {
    let mut index = index();
    let muller = Filter::project("p1").with_entities(["muller"]);
    assert!(
        index
            .search("search engines", &muller, 5)
            .unwrap()
            .is_empty()
    );
    assert!(index.link("trip", "muller").unwrap());
    assert!(!index.link("missing", "muller").unwrap());
    index.commit().unwrap();
    let hits = index.search("search engines", &muller, 5).unwrap();
    assert!(!hits.is_empty());
    assert!(hits.iter().all(|hit| hit.document_id == "trip"));
    assert!(
        !index
            .search_words("search engines", &muller, 5)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn replacing_a_document_drops_its_old_chunks() {
    let mut index = index();
    let before = index.len();
    index
        .add_document("p1", "trip", "A short replacement about tea.", &[])
        .unwrap();
    index.commit().unwrap();
    assert_eq!(index.len(), before, "one chunk replaced by one chunk");
    let filter = Filter::project("p1").with_documents(["trip"]);
    assert!(index.search_words("coffee", &filter, 5).unwrap().is_empty());
    assert_eq!(index.search("tea", &filter, 5).unwrap().len(), 1);
}

#[test]
fn hostile_queries_do_not_error() {
    let index = index();
    for query in ["\"AND (foo:", "payment:[* TO *]", "((((", "", "🌞"] {
        assert!(
            index.search(query, &Filter::project("p1"), 5).is_ok(),
            "{query:?}"
        );
    }
}
