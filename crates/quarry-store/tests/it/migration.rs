//! A database created by an older release (here: SQLite at migration 0001, with data) opens,
//! migration 0002 backfills the feedback tallies from the results already there, and migration
//! 0003 gives old entities and documents their graph defaults (no mentions, kind `file`).

use std::path::PathBuf;

use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};

struct TempDb(PathBuf);

impl Drop for TempDb {
    fn drop(&mut self) {
        for suffix in ["", "-wal", "-shm"] {
            let mut path = self.0.clone().into_os_string();
            path.push(suffix);
            let _ = std::fs::remove_file(path);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_0001_database_opens_and_backfills_feedback() {
    let db = TempDb(std::env::temp_dir().join(format!("quarry-0001-{}.db", uuid::Uuid::new_v4())));
    let options = SqliteConnectOptions::new()
        .filename(&db.0)
        .create_if_missing(true);
    let pool = SqlitePoolOptions::new()
        .max_connections(1)
        .connect_with(options)
        .await
        .unwrap();
    sqlx::migrate!("./migrations/sqlite")
        .run_to(1, &pool)
        .await
        .unwrap();
    let t = "2026-01-01T00:00:00.000000Z";
    sqlx::query("INSERT INTO projects (id, name, created_at) VALUES ('p', 'p', $1)")
        .bind(t)
        .execute(&pool)
        .await
        .unwrap();
    for (id, entity_type) in [("a", "company"), ("b", "company"), ("c", "person")] {
        sqlx::query(
            "INSERT INTO entities (id, project_id, entity_type, title, parent_id, fields, \
             metadata, created_at, updated_at) VALUES ($1, 'p', $2, $1, NULL, '{}', '{}', $3, $3)",
        )
        .bind(id)
        .bind(entity_type)
        .bind(t)
        .execute(&pool)
        .await
        .unwrap();
    }
    sqlx::query(
        "INSERT INTO documents (id, project_id, title, text, created_at) \
         VALUES ('d', 'p', 'report', 'text', $1)",
    )
    .bind(t)
    .execute(&pool)
    .await
    .unwrap();
    let results = [
        ("r1", "a", "ceo", "high", "approved", None),
        ("r2", "a", "ceo", "high", "superseded", None),
        ("r3", "a", "ceo", "low", "rejected", Some("outdated")),
        ("r4", "b", "ceo", "low", "rejected", Some("outdated")),
        ("r5", "b", "ceo", "medium", "rejected", Some("wrong person")),
        ("r6", "b", "ceo", "medium", "pending", None),
        ("r7", "b", "hq", "high", "approved", None),
        ("r8", "c", "ceo", "high", "rejected", Some("other type")),
    ];
    for (id, entity, field, confidence, status, reason) in results {
        sqlx::query(
            "INSERT INTO extraction_results (id, run_id, project_id, entity_id, field_name, \
             value, sources, confidence, agent_id, status, rejection_reason, reviewed_by, \
             reviewed_at, created_entity_ids, duration_ms, tokens_used, metadata, created_at) \
             VALUES ($1, NULL, 'p', $2, $3, '\"x\"', '[]', $4, 'm', $5, $6, NULL, NULL, '[]', \
             0, 0, '{}', $7)",
        )
        .bind(id)
        .bind(entity)
        .bind(field)
        .bind(confidence)
        .bind(status)
        .bind(reason)
        .bind(t)
        .execute(&pool)
        .await
        .unwrap();
    }
    pool.close().await;

    let store = quarry_store::open(db.0.to_str().unwrap()).await.unwrap();
    let summary = store.feedback_summary("p", "company", "ceo").await.unwrap();
    assert_eq!(
        (summary.total, summary.approved, summary.rejected),
        (5, 1, 3)
    );
    assert_eq!(
        summary.common_rejection_reasons,
        [("outdated".to_string(), 2), ("wrong person".to_string(), 1)]
    );
    assert_eq!(
        summary.approval_rate_by_confidence.get("high"),
        Some(&serde_json::json!(1.0))
    );
    let hq = store.feedback_summary("p", "company", "hq").await.unwrap();
    assert_eq!((hq.total, hq.approved), (1, 1));

    let old = store.get_entity("p", "a").await.unwrap().unwrap();
    assert_eq!(
        (old.mention_count, old.notes, old.last_seen_at),
        (0, None, None)
    );
    let documents = store.documents("p", None).await.unwrap();
    assert_eq!(documents.len(), 1);
    assert_eq!(documents[0].kind, quarry_core::model::DocumentKind::File);
    // The upgraded database takes graph writes on the old rows.
    let write = quarry_core::model::GraphWrite {
        entities: vec![quarry_core::model::GraphEntityWrite {
            existing_id: None,
            name: "a".into(),
            entity_type: "company".into(),
            notes: Some("found by title".into()),
            source: "ingest".into(),
        }],
        relationships: vec![],
    };
    let applied = store.apply_graph("p", None, &write).await.unwrap();
    assert_eq!(applied.inserted, [false]);
    assert_eq!(applied.entities[0].mention_count, 1);
    assert_eq!(store.all_document_links().await.unwrap().len(), 1);
}

/// `/readyz`'s question: a database missing the newest migration (restored from an older
/// backup under a running server) is not current; one with every migration is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schema_version_notices_a_missing_migration() {
    let db =
        TempDb(std::env::temp_dir().join(format!("quarry-schema-{}.db", uuid::Uuid::new_v4())));
    let store = quarry_store::open(db.0.to_str().unwrap()).await.unwrap();
    let current = store.schema_version().await.unwrap();
    assert!(current.is_current(), "{current:?}");

    let options = SqliteConnectOptions::new().filename(&db.0);
    let pool = SqlitePoolOptions::new()
        .max_connections(1)
        .connect_with(options)
        .await
        .unwrap();
    sqlx::query("DELETE FROM _sqlx_migrations WHERE version = $1")
        .bind(current.latest)
        .execute(&pool)
        .await
        .unwrap();
    let behind = store.schema_version().await.unwrap();
    assert!(!behind.is_current(), "{behind:?}");
    assert_eq!(behind.latest, current.latest);
    assert!(
        behind
            .applied
            .is_some_and(|applied| applied < current.latest)
    );
}
