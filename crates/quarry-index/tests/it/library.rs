//! `Library` against the real SQLite store: documents indexed and persisted, searched with
//! code-point offsets, filtered by entity and project, rebuilt from the store without
//! re-embedding, and graph entities searched by meaning.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use quarry_core::model::{Document, Entity, GraphEntityWrite, GraphWrite};
use quarry_core::retrieval::{PassageHit, Retriever};
use quarry_core::store::Store;
use quarry_index::{
    ChunkConfig, Embedder, HASHING_EMBEDDER_NAME, HashingEmbedder, IndexError, Library,
};

/// Counts every text it is asked to embed.
struct Counting {
    inner: HashingEmbedder,
    texts: Arc<AtomicUsize>,
}

impl Embedder for Counting {
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, IndexError> {
        self.texts.fetch_add(texts.len(), Ordering::SeqCst);
        self.inner.embed(texts)
    }

    fn dimensions(&self) -> usize {
        self.inner.dimensions()
    }
}

fn counting(name: &str) -> (Library, Arc<AtomicUsize>) {
    let texts = Arc::new(AtomicUsize::new(0));
    let embedder = Counting {
        inner: HashingEmbedder::default(),
        texts: texts.clone(),
    };
    let library = Library::new(Box::new(embedder), name.to_owned())
        .unwrap()
        .with_chunking(SMALL);
    (library, texts)
}

const SMALL: ChunkConfig = ChunkConfig {
    target_chars: 120,
    max_chars: 200,
};

const TRIP: &str = "Grüße aus München! Wir waren im Café „Zum Löwen“ 🦁.\n\n\
    Notes from Zürich: the café near the station serves great coffee ☕. \
    We met Dr. Müller, who works on search engines at ETH.\n\n\
    Später: Rückfahrt nach München über Lindau.";

const CONTRACT: &str = "# Supply contract\n\
    Acme Corp agrees to deliver 500 widgets to Globex by 1 March.\n\n\
    ## Payment\n\
    Payment is due within thirty days of the invoice. Late payment incurs a fee of 2.5 %.\n\n\
    ## Termination\n\
    Either party may terminate with ninety days' written notice.";

const OTHER: &str = "Payment of the invoice is due in thirty days. Coffee in Zürich is great.";

struct World {
    _dir: tempfile::TempDir,
    store: Arc<dyn Store>,
    p1: String,
    p2: String,
    acme: Entity,
    muller: Entity,
    contract: Document,
    trip: Document,
    other: Document,
}

async fn graph_entity(
    store: &dyn Store,
    project: &str,
    name: &str,
    kind: &str,
    notes: &str,
) -> Entity {
    let write = GraphWrite {
        entities: vec![GraphEntityWrite {
            existing_id: None,
            name: name.to_owned(),
            entity_type: kind.to_owned(),
            notes: Some(notes.to_owned()),
            source: "ingest".to_owned(),
        }],
        relationships: Vec::new(),
    };
    store
        .apply_graph(project, None, &write)
        .await
        .unwrap()
        .entities
        .remove(0)
}

/// Adds a document the way `Documents::add` does: store, links, index, persisted chunks.
async fn add(
    store: &dyn Store,
    library: &Library,
    project: &str,
    title: &str,
    text: &str,
    entity_ids: &[String],
) -> Document {
    let document = store.add_document(project, title, text).await.unwrap();
    for entity_id in entity_ids {
        store
            .link_document(project, &document.id, entity_id)
            .await
            .unwrap();
    }
    let chunks = library.index_document(&document, entity_ids).unwrap();
    assert!(!chunks.is_empty());
    assert!(chunks.iter().all(|c| c.embedder == library.embedder_name()));
    store
        .put_chunks(project, &document.id, &chunks)
        .await
        .unwrap();
    document
}

async fn world(library: &Library) -> World {
    let dir = tempfile::tempdir().unwrap();
    let store = quarry_store::open(dir.path().join("quarry.db").to_str().unwrap())
        .await
        .unwrap();
    let p1 = store.ensure_project("p1").await.unwrap();
    let p2 = store.ensure_project("p2").await.unwrap();
    let acme = graph_entity(
        store.as_ref(),
        &p1,
        "Acme Corp",
        "organization",
        "widget maker that supplies Globex",
    )
    .await;
    let muller = graph_entity(
        store.as_ref(),
        &p1,
        "Dr. Müller",
        "person",
        "researcher working on search engines at ETH Zürich",
    )
    .await;
    let acme2 = graph_entity(store.as_ref(), &p2, "Acme Corp", "organization", "").await;
    let contract = add(
        store.as_ref(),
        library,
        &p1,
        "contract",
        CONTRACT,
        std::slice::from_ref(&acme.id),
    )
    .await;
    let trip = add(store.as_ref(), library, &p1, "trip", TRIP, &[]).await;
    let other = add(store.as_ref(), library, &p2, "other", OTHER, &[acme2.id]).await;
    World {
        _dir: dir,
        store,
        p1,
        p2,
        acme,
        muller,
        contract,
        trip,
        other,
    }
}

fn cited(text: &str, hit: &PassageHit) -> String {
    text.chars()
        .skip(hit.start)
        .take(hit.end - hit.start)
        .collect()
}

#[tokio::test]
async fn indexed_documents_are_found_at_once_with_code_point_offsets() {
    let (library, _) = counting(HASHING_EMBEDDER_NAME);
    let w = world(&library).await;

    let hits = library
        .search_documents(&w.p1, "great coffee near the station in Zurich", None, 3)
        .unwrap();
    assert_eq!(hits[0].document_id, w.trip.id);
    let passage = cited(TRIP, &hits[0]);
    assert!(
        passage.starts_with("Notes from Zürich") && passage.ends_with("at ETH."),
        "{passage:?}"
    );
    // The first paragraph holds multi-byte characters: code points, not bytes.
    let byte_start = TRIP.find("Notes from").unwrap();
    assert!(hits[0].start < byte_start);
    assert_eq!(hits[0].start, TRIP[..byte_start].chars().count());

    let hits = library
        .search_documents(&w.p1, "when is the invoice payment due?", None, 3)
        .unwrap();
    assert_eq!(hits[0].document_id, w.contract.id);
    assert!(cited(CONTRACT, &hits[0]).starts_with("## Payment\nPayment is due"));

    // Project isolation: p2's document says the same and is never shown in p1, nor p1's in p2.
    for query in ["invoice payment thirty days", "coffee Zürich"] {
        let p1_hits = library.search_documents(&w.p1, query, None, 10).unwrap();
        assert!(p1_hits.iter().all(|hit| hit.document_id != w.other.id));
        let p2_hits = library.search_documents(&w.p2, query, None, 10).unwrap();
        assert!(!p2_hits.is_empty());
        assert!(p2_hits.iter().all(|hit| hit.document_id == w.other.id));
    }
    assert!(
        library
            .search_documents("no-such-project", "payment", None, 5)
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn entity_filters_and_later_links() {
    let (library, _) = counting(HASHING_EMBEDDER_NAME);
    let w = world(&library).await;
    let acme = [w.acme.id.clone()];
    let hits = library
        .search_documents(&w.p1, "payment coffee", Some(&acme), 10)
        .unwrap();
    assert!(!hits.is_empty());
    assert!(hits.iter().all(|hit| hit.document_id == w.contract.id));
    assert!(
        library
            .search_documents(&w.p1, "payment", Some(&[]), 10)
            .unwrap()
            .is_empty()
    );

    let muller = [w.muller.id.clone()];
    assert!(
        library
            .search_documents(&w.p1, "search engines", Some(&muller), 5)
            .unwrap()
            .is_empty()
    );
    library.link(&w.trip.id, &w.muller.id).unwrap();
    let hits = library
        .search_documents(&w.p1, "search engines", Some(&muller), 5)
        .unwrap();
    assert!(!hits.is_empty());
    assert!(hits.iter().all(|hit| hit.document_id == w.trip.id));
    assert!(library.link("missing", &w.muller.id).is_err());
}

const QUERIES: &[&str] = &[
    "great coffee near the station in Zurich",
    "when is the invoice payment due?",
    "terminating the contract",
    "Rückfahrt München",
    "widgets Globex",
];

fn top_hits(library: &Library, project: &str) -> Vec<Vec<(String, usize, usize)>> {
    QUERIES
        .iter()
        .map(|query| {
            library
                .search_documents(project, query, None, 3)
                .unwrap()
                .into_iter()
                .map(|hit| (hit.document_id, hit.start, hit.end))
                .collect()
        })
        .collect()
}

#[tokio::test]
async fn rebuild_reuses_stored_embeddings_and_gives_the_same_hits() {
    let (library, _) = counting(HASHING_EMBEDDER_NAME);
    let w = world(&library).await;
    library.link(&w.trip.id, &w.muller.id).unwrap();
    w.store
        .link_document(&w.p1, &w.trip.id, &w.muller.id)
        .await
        .unwrap();
    let before = top_hits(&library, &w.p1);

    let (rebuilt, embedded) = counting(HASHING_EMBEDDER_NAME);
    let report = rebuilt.rebuild(w.store.as_ref()).await.unwrap();
    assert_eq!(report.documents, 3);
    assert_eq!(report.chunks_reused, library.chunk_count());
    assert_eq!(report.chunks_embedded, 0);
    assert!(report.reembedded.is_empty());
    assert_eq!(report.entities, 3);
    // Only the three entities were embedded; no chunk was.
    assert_eq!(embedded.load(Ordering::SeqCst), 3);
    assert_eq!(rebuilt.chunk_count(), library.chunk_count());

    assert_eq!(top_hits(&rebuilt, &w.p1), before);
    assert_eq!(top_hits(&rebuilt, &w.p2), top_hits(&library, &w.p2));
    // Links came back from the store.
    let muller = [w.muller.id.clone()];
    let hits = rebuilt
        .search_documents(&w.p1, "search engines", Some(&muller), 5)
        .unwrap();
    assert!(!hits.is_empty() && hits.iter().all(|hit| hit.document_id == w.trip.id));
    // Queries embed one text each.
    assert_eq!(embedded.load(Ordering::SeqCst), 3 + QUERIES.len() * 2 + 1);
}

#[tokio::test]
async fn rebuild_re_embeds_vectors_of_another_embedder() {
    let (library, _) = counting(HASHING_EMBEDDER_NAME);
    let w = world(&library).await;
    let chunks = library.chunk_count();

    let (renamed, embedded) = counting("minilm-l6-v2");
    let report = renamed.rebuild(w.store.as_ref()).await.unwrap();
    assert_eq!(report.chunks_reused, 0);
    assert_eq!(report.chunks_embedded, chunks);
    assert_eq!(embedded.load(Ordering::SeqCst), chunks + 3);
    assert_eq!(report.reembedded.len(), 3);
    assert!(
        report
            .reembedded
            .iter()
            .flat_map(|d| &d.chunks)
            .all(|c| c.embedder == "minilm-l6-v2")
    );
    assert_eq!(top_hits(&renamed, &w.p1), top_hits(&library, &w.p1));

    // Persisted, the next start under that name reuses them.
    assert_eq!(report.persist(w.store.as_ref()).await.unwrap(), 3);
    let (again, embedded) = counting("minilm-l6-v2");
    let report = again.rebuild(w.store.as_ref()).await.unwrap();
    assert_eq!((report.chunks_reused, report.chunks_embedded), (chunks, 0));
    assert_eq!(embedded.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn a_document_without_stored_chunks_is_embedded_on_rebuild() {
    let (library, _) = counting(HASHING_EMBEDDER_NAME);
    let w = world(&library).await;
    let bare = w
        .store
        .add_document(
            &w.p1,
            "bare",
            "Quarterly revenue grew by ten percent in Asia.",
        )
        .await
        .unwrap();
    let (rebuilt, _) = counting(HASHING_EMBEDDER_NAME);
    let report = rebuilt.rebuild(w.store.as_ref()).await.unwrap();
    assert_eq!(report.reembedded.len(), 1);
    assert_eq!(report.reembedded[0].document_id, bare.id);
    let hits = rebuilt
        .search_documents(&w.p1, "revenue growth Asia", None, 1)
        .unwrap();
    assert_eq!(hits[0].document_id, bare.id);
}

#[tokio::test]
async fn entities_are_found_by_meaning_within_project_and_type() {
    let (library, _) = counting(HASHING_EMBEDDER_NAME);
    let w = world(&library).await;
    library.rebuild(w.store.as_ref()).await.unwrap();
    assert_eq!(library.entity_count(), 3);

    let hits = library
        .search_entities(&w.p1, "who researches search engines in Zurich?", None, 5)
        .unwrap();
    assert_eq!(hits[0].entity_id, w.muller.id);
    let hits = library
        .search_entities(&w.p1, "widget supplier", None, 5)
        .unwrap();
    assert_eq!(hits[0].entity_id, w.acme.id);
    // Type filter: the organization query restricted to people finds only people.
    let people = library
        .search_entities(&w.p1, "widget supplier", Some("person"), 5)
        .unwrap();
    assert!(people.iter().all(|hit| hit.entity_id == w.muller.id));
    let organizations = library
        .search_entities(&w.p1, "search engines", Some("organization"), 5)
        .unwrap();
    assert!(organizations.iter().all(|hit| hit.entity_id == w.acme.id));
    // Project isolation: p2's Acme is found only in p2.
    let p2 = library
        .search_entities(&w.p2, "Acme Corp", None, 5)
        .unwrap();
    assert_eq!(p2.len(), 1);
    assert_ne!(p2[0].entity_id, w.acme.id);

    // index_entity refreshes an entity whose notes changed.
    let mut renamed = w.acme.clone();
    renamed.notes = Some("maker of espresso machines".to_owned());
    library.index_entity(&renamed).unwrap();
    let hits = library
        .search_entities(&w.p1, "espresso machines", None, 1)
        .unwrap();
    assert_eq!(hits[0].entity_id, w.acme.id);
    assert_eq!(library.entity_count(), 3);
}
