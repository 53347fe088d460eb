//! Idempotent document adds and the "changed since" reads other processes follow the store by.
//! Part of the conformance suite (both backends).

use std::sync::Arc;

use quarry_core::model::GraphWrite;
use quarry_core::store::Store;

use super::{chunk, new_entity, node};

/// Adding the same title and text twice returns the first document (one row); another title,
/// text or project is another document; episode documents never collide with files.
pub async fn adding_a_document_twice_returns_the_first(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let q = store.ensure_project("q").await.unwrap();
    let first = store
        .store_document(&p, "report", "Acme's CEO is Ann.")
        .await
        .unwrap();
    assert!(first.created);
    let again = store
        .store_document(&p, "report", "Acme's CEO is Ann.")
        .await
        .unwrap();
    assert!(!again.created);
    assert_eq!(again.document, first.document);
    let via_add = store
        .add_document(&p, "report", "Acme's CEO is Ann.")
        .await
        .unwrap();
    assert_eq!(via_add.id, first.document.id);
    assert_eq!(store.documents(&p, None).await.unwrap().len(), 1);

    // The title is part of the content; so is every byte of the text; projects are apart.
    let renamed = store
        .store_document(&p, "report v2", "Acme's CEO is Ann.")
        .await
        .unwrap();
    let edited = store
        .store_document(&p, "report", "Acme's CEO is Ann. ")
        .await
        .unwrap();
    // "ab" + "c" and "a" + "bc" are different documents.
    let split_a = store.store_document(&p, "ab", "c").await.unwrap();
    let split_b = store.store_document(&p, "a", "bc").await.unwrap();
    let elsewhere = store
        .store_document(&q, "report", "Acme's CEO is Ann.")
        .await
        .unwrap();
    for stored in [&renamed, &edited, &split_a, &split_b, &elsewhere] {
        assert!(stored.created, "{stored:?}");
        assert_ne!(stored.document.id, first.document.id);
    }
    assert_eq!(store.documents(&p, None).await.unwrap().len(), 5);

    // Concurrent adds of one content: one row, every caller gets its id.
    let adds = (0..8).map(|_| {
        let store = store.clone();
        let p = p.clone();
        tokio::spawn(async move { store.store_document(&p, "race", "same text").await })
    });
    let mut ids = Vec::new();
    let mut created = 0;
    for add in adds {
        let stored = add.await.unwrap().unwrap();
        created += usize::from(stored.created);
        ids.push(stored.document.id);
    }
    ids.dedup();
    assert_eq!((ids.len(), created), (1, 1), "{ids:?}");
}

/// Documents, links and entities written since a time, across projects, oldest first; a
/// document's links and chunks read back one document at a time.
pub async fn changes_since_list_what_was_written(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let q = store.ensure_project("q").await.unwrap();
    let old = store.add_document(&p, "old", "before").await.unwrap();
    let entity = store
        .create_entity(&p, &new_entity("company", "Acme"))
        .await
        .unwrap();
    let a = store.add_document(&p, "a", "text a").await.unwrap();
    let b = store.add_document(&q, "b", "text b").await.unwrap();
    store.link_document(&p, &a.id, &entity.id).await.unwrap();

    let since = a.created_at.clone();
    let documents = store.documents_created_since(&since, 10).await.unwrap();
    assert_eq!(documents, [a.clone(), b.clone()]);
    assert_eq!(
        store.documents_created_since(&since, 1).await.unwrap(),
        std::slice::from_ref(&a)
    );
    assert_eq!(store.documents_created_since("", 10).await.unwrap()[0], old);

    let links = store.document_links_since(&since, 10).await.unwrap();
    assert_eq!(links.len(), 1);
    assert_eq!(
        (links[0].project_id.as_str(), links[0].document_id.as_str()),
        (p.as_str(), a.id.as_str())
    );
    assert_eq!(links[0].entity_id, entity.id);
    assert_eq!(
        store.document_entity_ids(&p, &a.id).await.unwrap(),
        std::slice::from_ref(&entity.id)
    );
    assert!(
        store
            .document_entity_ids(&q, &a.id)
            .await
            .unwrap()
            .is_empty()
    );

    store
        .put_chunks(
            &p,
            &a.id,
            &[chunk(&a.id, 1, vec![0.5]), chunk(&a.id, 0, vec![1.0])],
        )
        .await
        .unwrap();
    let chunks = store.document_chunks(&p, &a.id).await.unwrap();
    assert_eq!(chunks.iter().map(|c| c.ordinal).collect::<Vec<_>>(), [0, 1]);
    assert!(store.document_chunks(&q, &a.id).await.unwrap().is_empty());

    // A graph write creates one entity and mentions the old one: both changed since.
    let before_graph = b.created_at.clone();
    let write = GraphWrite {
        entities: vec![
            node(Some(&entity.id), "Acme", "company", Some("makes anvils")),
            node(None, "Globex", "company", None),
        ],
        relationships: vec![],
    };
    let applied = store.apply_graph(&q, None, &write).await;
    assert!(applied.is_err(), "the entity belongs to project p");
    let applied = store.apply_graph(&p, None, &write).await.unwrap();
    let changed = store
        .entities_changed_since(&before_graph, 10)
        .await
        .unwrap();
    let titles: Vec<&str> = changed.iter().map(|e| e.title.as_str()).collect();
    assert_eq!(titles, ["Acme", "Globex"]);
    assert_eq!(changed[0].notes.as_deref(), Some("makes anvils"));

    // One project and type, by creation time.
    let globex = &applied.entities[1];
    let created = store
        .entities_created_since(&p, "company", &entity.created_at, 10)
        .await
        .unwrap();
    assert_eq!(
        created.iter().map(|e| e.id.as_str()).collect::<Vec<_>>(),
        [entity.id.as_str(), globex.id.as_str()]
    );
    let after = store
        .entities_created_since(&p, "company", &globex.created_at, 10)
        .await
        .unwrap();
    assert_eq!(after.len(), 1);
    assert!(
        store
            .entities_created_since(&p, "person", "", 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .entities_created_since(&q, "company", "", 10)
            .await
            .unwrap()
            .is_empty()
    );
}
