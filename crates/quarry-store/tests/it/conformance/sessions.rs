//! Web app sessions and stored chat conversations. Part of the conformance suite (both
//! backends).

use std::sync::Arc;
use std::time::Duration;

use quarry_core::store::{ChatMessage, NewConversation, Store, StoreError};
use serde_json::json;

/// A session is found by its token's hash until it expires or is deleted; creating one sweeps
/// the expired ones.
pub async fn web_sessions_live_until_they_expire_or_end(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let hour = Duration::from_secs(3600);
    let session = store
        .create_web_session(&p, "hash-1", "qk_00000001", "csrf-1", hour)
        .await
        .unwrap();
    assert_eq!(
        (
            session.project_id.as_str(),
            session.key_prefix.as_str(),
            session.csrf_token.as_str()
        ),
        (p.as_str(), "qk_00000001", "csrf-1")
    );
    assert!(session.expires_at > session.created_at);
    assert_eq!(store.web_session("hash-1").await.unwrap(), Some(session));
    assert_eq!(store.web_session("hash-unknown").await.unwrap(), None);

    // An expired session is not found, and the next sign-in sweeps it away.
    store
        .create_web_session(&p, "hash-2", "qk_00000001", "csrf-2", Duration::ZERO)
        .await
        .unwrap();
    assert_eq!(store.web_session("hash-2").await.unwrap(), None);
    store
        .create_web_session(&p, "hash-3", "qk_00000001", "csrf-3", hour)
        .await
        .unwrap();
    assert!(!store.delete_web_session("hash-2").await.unwrap(), "swept");

    assert!(store.delete_web_session("hash-1").await.unwrap());
    assert_eq!(store.web_session("hash-1").await.unwrap(), None);
    assert!(!store.delete_web_session("hash-1").await.unwrap());
    assert!(store.web_session("hash-3").await.unwrap().is_some());
    // The same token twice is a conflict, never two sessions.
    let again = store
        .create_web_session(&p, "hash-3", "qk_00000001", "csrf-x", hour)
        .await
        .unwrap_err();
    assert!(matches!(again, StoreError::Conflict(_)), "{again:?}");
}

/// Revoking a key marks it revoked and deletes its sessions; another project cannot revoke it.
pub async fn revoking_a_key_ends_its_sessions(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let q = store.ensure_project("q").await.unwrap();
    let key = quarry_core::model::ApiKey {
        id: "k1".into(),
        project_id: p.clone(),
        name: "ann".into(),
        prefix: "qk_0000abcd".into(),
        secret_hash: "ab".repeat(32),
        scopes: vec!["entities:read".into()],
        created_at: "2025-01-01T00:00:00.000000Z".into(),
        revoked: false,
    };
    store.create_api_key(&key).await.unwrap();
    let hour = Duration::from_secs(3600);
    store
        .create_web_session(&p, "hash-k1", "qk_0000abcd", "csrf", hour)
        .await
        .unwrap();
    store
        .create_web_session(&p, "hash-other", "qk_0000ffff", "csrf", hour)
        .await
        .unwrap();
    assert!(!store.revoke_api_key(&q, "qk_0000abcd").await.unwrap());
    assert!(
        !store
            .find_api_key("qk_0000abcd")
            .await
            .unwrap()
            .unwrap()
            .revoked
    );
    assert!(store.revoke_api_key(&p, "qk_0000abcd").await.unwrap());
    assert!(
        store
            .find_api_key("qk_0000abcd")
            .await
            .unwrap()
            .unwrap()
            .revoked
    );
    assert_eq!(store.web_session("hash-k1").await.unwrap(), None);
    assert!(store.web_session("hash-other").await.unwrap().is_some());
    assert!(!store.revoke_api_key(&p, "qk_missing0").await.unwrap());
}

/// A conversation round-trips (the schema's key order kept), is updated only from the version
/// it was read at, is listed most recent first and is invisible to other projects.
pub async fn chat_conversations_are_versioned_and_scoped(store: Arc<dyn Store>) {
    let p = store.ensure_project("p").await.unwrap();
    let q = store.ensure_project("q").await.unwrap();
    let schema = json!({"type": "object", "properties": {
        "zeta": {"type": "string"}, "alpha": {"type": "number"}}});
    let user = |content: &str| ChatMessage {
        role: "user".into(),
        content: content.into(),
    };
    let first = store
        .create_conversation(
            &p,
            &NewConversation {
                title: "Invoice".into(),
                schema: schema.clone(),
                document: "Invoice from Acme — 総額 1200".into(),
                messages: vec![user("Invoice from Acme — 総額 1200")],
                status: "running".into(),
            },
        )
        .await
        .unwrap();
    assert_eq!(first.version, 0);
    assert_eq!(first.project_id, p);
    assert!(first.clarifications.is_empty() && first.result.is_none());
    let read = store
        .get_conversation(&p, &first.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(read, first);
    let keys: Vec<&String> = read.schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(keys, ["zeta", "alpha"], "the schema's field order is kept");
    assert_eq!(store.get_conversation(&q, &first.id).await.unwrap(), None);

    let mut turn = read.clone();
    turn.messages.push(ChatMessage {
        role: "assistant".into(),
        content: "What is the total?".into(),
    });
    turn.result = Some(json!({"status": "needs_clarification", "value": {"zeta": "Acme"}}));
    turn.status = "needs_clarification".into();
    let written = store.update_conversation(&p, &turn).await.unwrap();
    assert_eq!(written.version, 1);
    assert!(written.updated_at > first.updated_at);
    assert_eq!(written.messages.len(), 2);
    assert_eq!(written.result, turn.result);
    assert_eq!(
        store.get_conversation(&p, &first.id).await.unwrap(),
        Some(written.clone())
    );

    // A write from the version read before is refused and changes nothing.
    let mut late = read.clone();
    late.clarifications.push("late".into());
    let refused = store.update_conversation(&p, &late).await.unwrap_err();
    assert!(matches!(refused, StoreError::Conflict(_)), "{refused:?}");
    // So is a write in another project or of an unknown id.
    assert!(matches!(
        store.update_conversation(&q, &written).await.unwrap_err(),
        StoreError::NotFound { .. }
    ));

    // Two writers from the same version: exactly one wins.
    let (a, b) = tokio::join!(
        store.update_conversation(&p, &written),
        store.update_conversation(&p, &written)
    );
    assert_eq!(u8::from(a.is_ok()) + u8::from(b.is_ok()), 1, "{a:?} {b:?}");

    let second = store
        .create_conversation(
            &p,
            &NewConversation {
                title: "Second".into(),
                schema: json!("name: invoice\nfields: [total]"),
                document: "doc".into(),
                messages: vec![],
                status: "running".into(),
            },
        )
        .await
        .unwrap();
    assert_eq!(second.schema, json!("name: invoice\nfields: [total]"));
    let listed = store.list_conversations(&p, 10).await.unwrap();
    let ids: Vec<&str> = listed.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, [second.id.as_str(), first.id.as_str()]);
    assert_eq!(listed[1].title, "Invoice");
    assert_eq!(listed[1].status, "needs_clarification");
    assert_eq!(store.list_conversations(&p, 1).await.unwrap().len(), 1);
    assert!(store.list_conversations(&q, 10).await.unwrap().is_empty());
}
