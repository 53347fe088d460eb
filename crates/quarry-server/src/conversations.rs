//! Where chat conversations live: in the database when the server has one (they survive a
//! restart and any server on the database can continue them, each inside its project), else in
//! memory (bounded: past `capacity` conversations the least recently used is forgotten). Both
//! keep the same record and the same rule — a write names the version it read, so two turns of
//! one conversation can never both be written — and `chat.rs` has one code path over them.

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};
use lru::LruCache;
use quarry_core::ErrorCode;
use quarry_core::store::{ChatConversation, NewConversation, Store, StoreError};

use crate::error::ApiError;

/// A turn is being answered.
pub const RUNNING: &str = "running";
/// The agent asked a question; the person answers in the chat.
pub const NEEDS_CLARIFICATION: &str = "needs_clarification";
pub const COMPLETE: &str = "complete";
/// The model failed; the person may send another message to try again.
pub const FAILED: &str = "failed";

/// How long a running turn holds its conversation without a heartbeat, by default. The process
/// answering a turn writes the conversation every third of this ([`Conversations::heartbeat`]);
/// a `running` conversation not written for this long lost its process (it was killed or
/// stopped mid-turn): it reads as `failed`, and the next message is accepted.
pub const DEFAULT_TURN_LEASE: Duration = Duration::from_secs(30);

/// The conversations of this server, in the database or in memory, and how long a turn's
/// lease lasts.
pub struct Conversations {
    kept: Kept,
    turn_lease: Duration,
}

enum Kept {
    Stored(Arc<dyn Store>),
    Memory(Memory),
}

impl Conversations {
    /// `store`'s table when there is a store, else memory for `capacity` conversations.
    pub fn new(store: Option<Arc<dyn Store>>, capacity: usize, turn_lease: Duration) -> Self {
        let kept = match store {
            Some(store) => Kept::Stored(store),
            None => Kept::Memory(Memory::new(capacity)),
        };
        Conversations {
            kept,
            turn_lease: turn_lease.max(Duration::from_millis(300)),
        }
    }

    /// How often a turn in flight writes its conversation to keep its lease.
    pub fn heartbeat(&self) -> Duration {
        self.turn_lease / 3
    }

    /// Whether `conversation` is `running` but its process stopped writing it a lease ago.
    pub fn lost_turn(&self, conversation: &ChatConversation) -> bool {
        self.lost(&conversation.status, &conversation.updated_at)
    }

    fn lost(&self, status: &str, updated_at: &str) -> bool {
        status == RUNNING && self.silent_for_a_lease(updated_at)
    }

    /// A conversation's status as a reader should see it: a lost turn is `failed` (nothing is
    /// written: the next message ends it for good).
    pub fn seen_status(&self, status: String, updated_at: &str) -> String {
        if self.lost(&status, updated_at) {
            FAILED.to_owned()
        } else {
            status
        }
    }

    /// The conversation as a reader should see it ([`Conversations::seen_status`]).
    pub fn as_seen(&self, mut conversation: ChatConversation) -> ChatConversation {
        conversation.status = self.seen_status(conversation.status, &conversation.updated_at);
        conversation
    }

    fn silent_for_a_lease(&self, updated_at: &str) -> bool {
        let lease = chrono::Duration::from_std(self.turn_lease).unwrap_or(chrono::Duration::MAX);
        DateTime::parse_from_rfc3339(updated_at)
            .map_or(true, |at| Utc::now() - at.with_timezone(&Utc) > lease)
    }

    /// Stores a new conversation (in `project` when stored).
    pub async fn start(
        &self,
        project: &str,
        new: NewConversation,
    ) -> Result<ChatConversation, ApiError> {
        match &self.kept {
            Kept::Stored(store) => Ok(store.create_conversation(project, &new).await?),
            Kept::Memory(memory) => Ok(memory.start(new)),
        }
    }

    pub async fn get(&self, project: &str, id: &str) -> Result<Option<ChatConversation>, ApiError> {
        match &self.kept {
            Kept::Stored(store) => Ok(store.get_conversation(project, id).await?),
            Kept::Memory(memory) => Ok(memory.get(id)),
        }
    }

    /// Writes `conversation` if nobody wrote it since it was read, and updates it to the record
    /// as written (its new version and time).
    pub async fn save(
        &self,
        project: &str,
        conversation: &mut ChatConversation,
    ) -> Result<(), ApiError> {
        let saved = match &self.kept {
            Kept::Stored(store) => store
                .update_conversation(project, conversation)
                .await
                .map(|written| *conversation = written),
            Kept::Memory(memory) => memory.update(conversation),
        };
        saved.map_err(|error| match error {
            StoreError::Conflict(_) => ApiError::new(
                ErrorCode::Conflict,
                format!(
                    "conversation '{}' was answered meanwhile by another request; reload it and \
                     answer again",
                    conversation.id
                ),
            ),
            StoreError::NotFound { .. } => unknown(&conversation.id),
            other => ApiError::from(other),
        })
    }

    /// Adds the person's answer to conversation `id` and marks it `running`: what the next turn
    /// works from. 404 `UnknownConversation` for an unknown id; 409 `Conflict` while another
    /// turn of it runs (and keeps its lease), or when another answer was written first. A turn
    /// whose process was lost is ended as failed first (a note in the messages says so).
    pub async fn answer(
        &self,
        project: &str,
        id: &str,
        answer: &str,
    ) -> Result<ChatConversation, ApiError> {
        let mut conversation = self.get(project, id).await?.ok_or_else(|| unknown(id))?;
        if self.lost_turn(&conversation) {
            conversation.messages.push(quarry_core::store::ChatMessage {
                role: "assistant".into(),
                content: "The last turn failed: the server answering it stopped. Answering \
                          this message instead."
                    .into(),
            });
        } else if conversation.status == RUNNING {
            return Err(ApiError::new(
                ErrorCode::Conflict,
                format!(
                    "conversation '{id}' is still answering the last message; wait for its reply"
                ),
            ));
        }
        conversation.clarifications.push(answer.to_owned());
        conversation.messages.push(quarry_core::store::ChatMessage {
            role: "user".into(),
            content: answer.to_owned(),
        });
        conversation.status = RUNNING.to_owned();
        self.save(project, &mut conversation).await?;
        Ok(conversation)
    }
}

fn unknown(id: &str) -> ApiError {
    ApiError::new(
        ErrorCode::UnknownConversation,
        format!("no conversation '{id}'; start one by posting a message with a schema"),
    )
}

fn timestamp() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Micros, true)
}

/// Conversations of a server without a database, least recently used first out.
#[derive(Debug)]
pub struct Memory {
    entries: Mutex<LruCache<String, ChatConversation>>,
    /// Counts conversations started, for unique ids.
    started: AtomicU64,
}

impl Memory {
    pub fn new(capacity: usize) -> Self {
        Memory {
            entries: Mutex::new(LruCache::new(
                NonZeroUsize::new(capacity).unwrap_or(NonZeroUsize::MIN),
            )),
            started: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, LruCache<String, ChatConversation>> {
        // Every change under the lock is one call on the map, so a panic elsewhere while it
        // was held cannot have left a conversation half-written.
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn start(&self, new: NewConversation) -> ChatConversation {
        let tick = self.started.fetch_add(1, Ordering::Relaxed);
        let now = timestamp();
        let conversation = ChatConversation {
            id: format!("conv_{}", uuid_like(tick)),
            project_id: String::new(),
            title: new.title,
            schema: new.schema,
            document: new.document,
            clarifications: Vec::new(),
            messages: new.messages,
            result: None,
            status: new.status,
            version: 0,
            created_at: now.clone(),
            updated_at: now,
        };
        self.lock()
            .put(conversation.id.clone(), conversation.clone());
        conversation
    }

    fn get(&self, id: &str) -> Option<ChatConversation> {
        self.lock().get(id).cloned()
    }

    /// Writes `conversation` over the stored one if that is still the version it was read at,
    /// and gives `conversation` the new version and time.
    fn update(&self, conversation: &mut ChatConversation) -> Result<(), StoreError> {
        let mut entries = self.lock();
        let stored = entries
            .get_mut(&conversation.id)
            .ok_or_else(|| StoreError::NotFound {
                what: "conversation",
                id: conversation.id.clone(),
            })?;
        if stored.version != conversation.version {
            return Err(StoreError::Conflict(format!(
                "conversation '{}' changed meanwhile",
                conversation.id
            )));
        }
        conversation.version += 1;
        conversation.updated_at = timestamp();
        stored.clone_from(conversation);
        Ok(())
    }
}

/// A conversation id that is unique within this process and hard to guess across restarts.
fn uuid_like(tick: u64) -> String {
    let nanos = Utc::now().timestamp_nanos_opt().unwrap_or_default();
    let random = crate::keys::random_hex(8).unwrap_or_default();
    format!("{nanos:x}{tick:x}{random}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn new(document: &str) -> NewConversation {
        NewConversation {
            title: document.into(),
            schema: json!({"type": "object"}),
            document: document.into(),
            messages: Vec::new(),
            status: NEEDS_CLARIFICATION.into(),
        }
    }

    #[tokio::test]
    async fn answers_accumulate_and_the_least_recent_is_evicted() {
        let conversations = Conversations::new(None, 2, DEFAULT_TURN_LEASE);
        let first = conversations.start("", new("doc 1")).await.unwrap().id;
        let second = conversations.start("", new("doc 2")).await.unwrap().id;
        let answered = conversations.answer("", &first, "a is x").await.unwrap();
        assert_eq!(answered.clarifications, vec!["a is x".to_owned()]);
        assert_eq!((answered.status.as_str(), answered.version), (RUNNING, 1));
        conversations.start("", new("doc 3")).await.unwrap();
        let evicted = conversations.answer("", &second, "late").await.unwrap_err();
        assert_eq!(evicted.code, ErrorCode::UnknownConversation);
        // A running turn refuses a second answer until it is written.
        let busy = conversations.answer("", &first, "more").await.unwrap_err();
        assert_eq!(busy.code, ErrorCode::Conflict);
        let mut done = ChatConversation {
            status: NEEDS_CLARIFICATION.into(),
            ..answered.clone()
        };
        conversations.save("", &mut done).await.unwrap();
        assert_eq!(done.version, answered.version + 1);
        let again = conversations.answer("", &first, "more").await.unwrap();
        assert_eq!(again.clarifications.len(), 2);
        // A write of a version read before another write is refused.
        let stale_write = conversations
            .save("", &mut answered.clone())
            .await
            .unwrap_err();
        assert_eq!(stale_write.code, ErrorCode::Conflict);
    }

    #[tokio::test]
    async fn a_turn_whose_process_stopped_writing_reads_failed_and_takes_the_next_message() {
        let conversations = Conversations::new(None, 4, Duration::from_millis(300));
        let id = conversations.start("", new("doc")).await.unwrap().id;
        let running = conversations.answer("", &id, "a is x").await.unwrap();
        assert_eq!(conversations.as_seen(running.clone()).status, RUNNING);
        let busy = conversations.answer("", &id, "more").await.unwrap_err();
        assert_eq!(busy.code, ErrorCode::Conflict);
        // Nobody heartbeats the turn: once a lease has passed it is lost.
        let lost = loop {
            let read = conversations.get("", &id).await.unwrap().unwrap();
            if conversations.lost_turn(&read) {
                break read;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        assert_eq!(conversations.as_seen(lost).status, FAILED);
        let next = conversations.answer("", &id, "more").await.unwrap();
        assert_eq!(next.status, RUNNING);
        assert!(
            next.messages
                .iter()
                .any(|m| m.content.contains("server answering it stopped"))
        );
    }
}
