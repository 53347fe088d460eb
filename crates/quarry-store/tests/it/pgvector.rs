//! `Store::vector_search`: answered in the database on PostgreSQL with pgvector (a fresh
//! database per test on the server named by `QUARRY_TEST_PGVECTOR_URL`; `scripts/pgvector.sh`
//! starts one; skipped with a notice when unset), `None` on SQLite and on PostgreSQL without the
//! extension (`QUARRY_TEST_POSTGRES_URL`, when that server lacks it).

use std::io::Write;
use std::sync::Arc;

use quarry_core::model::StoredChunk;
use quarry_core::store::{DocumentStore, ProjectStore, RetrievalStore, Store};
use quarry_testkit::postgres::TestDatabase;

fn notice(message: &str) {
    // Written past the test harness's capture so the skip is visible.
    let _ = writeln!(std::io::stderr(), "NOTICE: {message}");
}

/// A fresh database on the server at `$variable`, dropped with the guard (`None`: the variable
/// is unset).
fn fresh_database(variable: &str) -> Option<TestDatabase> {
    let base = std::env::var(variable).ok()?;
    Some(TestDatabase::create(&base, "vector"))
}

fn chunk(document_id: &str, ordinal: i64, embedder: &str, embedding: Vec<f32>) -> StoredChunk {
    let start = ordinal as usize * 10;
    StoredChunk {
        document_id: document_id.to_owned(),
        ordinal,
        start,
        end: start + 10,
        byte_start: start,
        byte_end: start + 10,
        embedder: embedder.to_owned(),
        embedding,
    }
}

/// A unit vector in 4 dimensions at `degrees` in the first plane.
fn at(degrees: f32) -> Vec<f32> {
    let radians = degrees.to_radians();
    vec![radians.cos(), radians.sin(), 0.0, 0.0]
}

const TEXT: &str = "0123456789abcdefghijABCDEFGHIJ0123456789";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_has_no_vector_search() {
    let store = quarry_store::open(":memory:").await.expect("open sqlite");
    let project = store.ensure_project("p").await.unwrap();
    let document = store.add_document(&project, "d", TEXT).await.unwrap();
    store
        .put_chunks(
            &project,
            &document.id,
            &[chunk(&document.id, 0, "e", at(0.0))],
        )
        .await
        .unwrap();
    let found = store
        .vector_search(&project, "e", &at(0.0), 3, None)
        .await
        .unwrap();
    assert_eq!(found, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_without_pgvector_has_no_vector_search() {
    let Some(database) = fresh_database("QUARRY_TEST_POSTGRES_URL") else {
        notice("plain PostgreSQL vector_search test SKIPPED: QUARRY_TEST_POSTGRES_URL is unset");
        return;
    };
    let pool = sqlx::PgPool::connect(database.url()).await.unwrap();
    let available: bool = sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector')",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    pool.close().await;
    if available {
        notice("plain PostgreSQL vector_search test SKIPPED: that server has pgvector");
        return;
    }
    let store = quarry_store::PostgresStore::connect(database.url())
        .await
        .unwrap();
    assert!(!store.has_pgvector());
    let project = store.ensure_project("p").await.unwrap();
    let document = store.add_document(&project, "d", TEXT).await.unwrap();
    store
        .put_chunks(
            &project,
            &document.id,
            &[chunk(&document.id, 0, "e", at(0.0))],
        )
        .await
        .unwrap();
    let found = store
        .vector_search(&project, "e", &at(0.0), 3, None)
        .await
        .unwrap();
    assert_eq!(found, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pgvector_finds_the_nearest_chunks() {
    let Some(database) = fresh_database("QUARRY_TEST_PGVECTOR_URL") else {
        notice(
            "pgvector tests SKIPPED: QUARRY_TEST_PGVECTOR_URL is unset \
             (export QUARRY_TEST_PGVECTOR_URL=$(scripts/pgvector.sh))",
        );
        return;
    };
    let pg = quarry_store::PostgresStore::connect(database.url())
        .await
        .unwrap();
    assert!(
        pg.has_pgvector(),
        "the server at QUARRY_TEST_PGVECTOR_URL lacks pgvector"
    );
    let store: Arc<dyn Store> = Arc::new(pg);
    let project = store.ensure_project("p").await.unwrap();
    let other = store.ensure_project("other").await.unwrap();
    let first = store.add_document(&project, "first", TEXT).await.unwrap();
    let second = store.add_document(&project, "second", TEXT).await.unwrap();
    let foreign = store.add_document(&other, "foreign", TEXT).await.unwrap();
    store
        .put_chunks(
            &project,
            &first.id,
            &[
                chunk(&first.id, 0, "e", at(0.0)),
                chunk(&first.id, 1, "e", at(50.0)),
                chunk(&first.id, 2, "e", at(120.0)),
            ],
        )
        .await
        .unwrap();
    store
        .put_chunks(
            &project,
            &second.id,
            &[
                chunk(&second.id, 0, "e", at(20.0)),
                // Another embedder's vector and another width: never compared.
                chunk(&second.id, 1, "other", at(10.0)),
                chunk(&second.id, 2, "e", vec![1.0, 0.0, 0.0]),
            ],
        )
        .await
        .unwrap();
    store
        .put_chunks(&other, &foreign.id, &[chunk(&foreign.id, 0, "e", at(10.0))])
        .await
        .unwrap();

    let query = at(8.0);
    let found = store
        .vector_search(&project, "e", &query, 3, None)
        .await
        .unwrap()
        .expect("pgvector answers");
    let order: Vec<(&str, i64)> = found
        .iter()
        .map(|hit| (hit.document_id.as_str(), hit.ordinal))
        .collect();
    assert_eq!(order, [(&*first.id, 0), (&*second.id, 0), (&*first.id, 1)]);
    assert!((found[0].score - 8f32.to_radians().cos()).abs() < 1e-5);
    assert_eq!((found[2].start, found[2].end), (10, 20));

    // Limited to documents; an empty list matches nothing.
    let only_second = store
        .vector_search(
            &project,
            "e",
            &query,
            5,
            Some(std::slice::from_ref(&second.id)),
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(only_second.len(), 1);
    assert_eq!(only_second[0].document_id, second.id);
    let none = store
        .vector_search(&project, "e", &query, 5, Some(&[]))
        .await
        .unwrap()
        .unwrap();
    assert!(none.is_empty());

    // Replacing a document's chunks replaces its vectors.
    store
        .put_chunks(&project, &first.id, &[chunk(&first.id, 0, "e", at(170.0))])
        .await
        .unwrap();
    let found = store
        .vector_search(&project, "e", &query, 10, None)
        .await
        .unwrap()
        .unwrap();
    let order: Vec<(&str, i64)> = found
        .iter()
        .map(|hit| (hit.document_id.as_str(), hit.ordinal))
        .collect();
    assert_eq!(order, [(&*second.id, 0), (&*first.id, 0)]);

    // A database whose chunks have no vectors yet (written before the extension, so without
    // the table) is backfilled when opened.
    let pool = sqlx::PgPool::connect(database.url()).await.unwrap();
    sqlx::query("DROP TABLE chunk_vectors")
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
    let reopened = quarry_store::PostgresStore::connect(database.url())
        .await
        .unwrap();
    let found = reopened
        .vector_search(&project, "e", &query, 10, None)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found.len(), 2);
    assert_eq!(found[0].document_id, second.id);
}

/// Entity vectors live in the database on PostgreSQL with pgvector: the nearest of the project
/// (and of a type when asked) come back best first, a new vector replaces the old one, and
/// entities without a vector of an embedder are listed for the backfill.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pgvector_keeps_and_searches_entity_vectors() {
    let Some(database) = fresh_database("QUARRY_TEST_PGVECTOR_URL") else {
        notice("pgvector entity tests SKIPPED: QUARRY_TEST_PGVECTOR_URL is unset");
        return;
    };
    let store: Arc<dyn Store> = Arc::new(
        quarry_store::PostgresStore::connect(database.url())
            .await
            .unwrap(),
    );
    let project = store.ensure_project("p").await.unwrap();
    let other = store.ensure_project("other").await.unwrap();
    let entity = |project: &str, kind: &str, title: &str| {
        let store = store.clone();
        let (project, kind, title) = (project.to_owned(), kind.to_owned(), title.to_owned());
        async move {
            store
                .create_entity(
                    &project,
                    &quarry_core::model::NewEntity {
                        entity_type: kind,
                        title,
                        ..Default::default()
                    },
                )
                .await
                .unwrap()
        }
    };
    let acme = entity(&project, "company", "Acme").await;
    let globex = entity(&project, "company", "Globex").await;
    let jane = entity(&project, "person", "Jane").await;
    let foreign = entity(&other, "company", "Foreign").await;
    assert_eq!(
        store.entities_without_vectors("e", 10).await.unwrap().len(),
        4
    );
    for (found, degrees) in [(&acme, 0.0), (&globex, 60.0), (&jane, 5.0), (&foreign, 1.0)] {
        assert!(
            store
                .put_entity_vector(found, "e", &found.title, &at(degrees))
                .await
                .unwrap()
        );
    }
    assert!(
        store
            .entities_without_vectors("e", 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store
            .entities_without_vectors("other", 10)
            .await
            .unwrap()
            .len(),
        4
    );

    let ids = |found: Vec<quarry_core::store::EntityMatch>| -> Vec<String> {
        found.into_iter().map(|m| m.entity_id).collect()
    };
    let nearest = store
        .entity_vector_search(&project, "e", &at(2.0), None, 3)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        ids(nearest),
        [acme.id.clone(), jane.id.clone(), globex.id.clone()]
    );
    let companies = store
        .entity_vector_search(&project, "e", &at(2.0), Some("company"), 3)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(ids(companies), [acme.id.clone(), globex.id.clone()]);

    // With the HNSW indexes for the width built, the answers stay the same.
    store.prepare_vector_search(4).await.unwrap();
    let pool = sqlx::PgPool::connect(database.url()).await.unwrap();
    let indexes: Vec<String> = sqlx::query_scalar(
        "SELECT indexname::text FROM pg_indexes WHERE indexname LIKE '%_hnsw_4' ORDER BY 1",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    pool.close().await;
    assert_eq!(indexes, ["chunk_vectors_hnsw_4", "entity_vectors_hnsw_4"]);
    let nearest = store
        .entity_vector_search(&project, "e", &at(2.0), None, 3)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        ids(nearest),
        [acme.id.clone(), jane.id.clone(), globex.id.clone()]
    );

    // A new vector replaces the old one.
    store
        .put_entity_vector(&globex, "e", "Globex", &at(3.0))
        .await
        .unwrap();
    let companies = store
        .entity_vector_search(&project, "e", &at(2.0), Some("company"), 1)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(ids(companies), std::slice::from_ref(&globex.id));
}

/// Full-text search of chunks runs in the database on any PostgreSQL (`QUARRY_TEST_POSTGRES_URL`):
/// chunks with more of the query's words rank first, a document filter holds, a query of
/// punctuation finds nothing and fails nothing; SQLite has none of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_searches_chunk_text() {
    let sqlite = quarry_store::open(":memory:").await.unwrap();
    assert_eq!(
        sqlite.text_search("p", "anything", 3, None).await.unwrap(),
        None
    );
    let Some(database) = fresh_database("QUARRY_TEST_POSTGRES_URL") else {
        notice("PostgreSQL text search test SKIPPED: QUARRY_TEST_POSTGRES_URL is unset");
        return;
    };
    let store = quarry_store::open(database.url()).await.unwrap();
    let project = store.ensure_project("p").await.unwrap();
    let text = "Pallets leave Rotterdam. The warehouse in Rotterdam ships pallets on Tuesday.";
    let document = store.add_document(&project, "note", text).await.unwrap();
    let other = store
        .add_document(&project, "other", "Invoices are paid within thirty days.")
        .await
        .unwrap();
    let split = "Pallets leave Rotterdam. ".chars().count();
    let mut first = chunk(&document.id, 0, "e", at(0.0));
    (first.start, first.end) = (0, split);
    let mut second = chunk(&document.id, 1, "e", at(0.0));
    (second.start, second.end) = (split, text.chars().count());
    store
        .put_chunks(&project, &document.id, &[first, second])
        .await
        .unwrap();
    let mut only = chunk(&other.id, 0, "e", at(0.0));
    (only.start, only.end) = (0, 38);
    store
        .put_chunks(&project, &other.id, &[only])
        .await
        .unwrap();

    let found = store
        .text_search(&project, "warehouse ships pallets", 5, None)
        .await
        .unwrap()
        .unwrap();
    let ordinals: Vec<(String, i64)> = found
        .iter()
        .map(|m| (m.document_id.clone(), m.ordinal))
        .collect();
    assert_eq!(
        ordinals,
        [(document.id.clone(), 1), (document.id.clone(), 0)]
    );
    assert_eq!(
        (found[0].start, found[0].end),
        (split, text.chars().count())
    );
    let invoices = store
        .text_search(
            &project,
            "paid invoices",
            5,
            Some(std::slice::from_ref(&document.id)),
        )
        .await
        .unwrap()
        .unwrap();
    assert!(invoices.is_empty(), "the document filter holds");
    let nothing = store
        .text_search(&project, "-\"' ()&|!", 5, None)
        .await
        .unwrap()
        .unwrap();
    assert!(nothing.is_empty());
    assert_eq!(
        store
            .text_search("elsewhere", "pallets", 5, None)
            .await
            .unwrap(),
        Some(Vec::new()),
        "another project sees nothing"
    );
}
