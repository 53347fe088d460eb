//! Chat conversations kept in memory: the schema, the document and the person's answers so far.
//! Bounded: past `capacity` conversations the least recently used is forgotten.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use quarry_agent::Schema;

/// One conversation's state, cheap to clone for a turn.
#[derive(Debug, Clone)]
pub struct Conversation {
    pub schema: Arc<Schema>,
    pub document: String,
    pub clarifications: Vec<String>,
    pub complete: bool,
}

impl Conversation {
    pub fn new(schema: Arc<Schema>, document: String) -> Self {
        Conversation {
            schema,
            document,
            clarifications: Vec::new(),
            complete: false,
        }
    }
}

#[derive(Debug)]
pub struct Conversations {
    entries: Mutex<HashMap<String, (u64, Conversation)>>,
    clock: AtomicU64,
    capacity: usize,
}

impl Conversations {
    pub fn new(capacity: usize) -> Self {
        Conversations {
            entries: Mutex::new(HashMap::new()),
            clock: AtomicU64::new(0),
            capacity: capacity.max(1),
        }
    }

    /// Stores a new conversation and returns its id.
    pub fn start(&self, conversation: Conversation) -> String {
        let tick = self.clock.fetch_add(1, Ordering::Relaxed);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_nanos());
        let id = format!("conv_{nanos:x}{tick:x}");
        let mut entries = self
            .entries
            .lock()
            .expect("the conversation lock is never poisoned");
        if entries.len() >= self.capacity {
            let oldest = entries
                .iter()
                .min_by_key(|(_, (used, _))| *used)
                .map(|(id, _)| id.clone());
            if let Some(oldest) = oldest {
                entries.remove(&oldest);
            }
        }
        entries.insert(id.clone(), (tick, conversation));
        id
    }

    /// Adds the person's answer to conversation `id` and returns its state for the next turn.
    pub fn answer(&self, id: &str, answer: String) -> Option<Conversation> {
        let tick = self.clock.fetch_add(1, Ordering::Relaxed);
        let mut entries = self
            .entries
            .lock()
            .expect("the conversation lock is never poisoned");
        let (used, conversation) = entries.get_mut(id)?;
        *used = tick;
        conversation.clarifications.push(answer);
        Some(conversation.clone())
    }

    /// Records whether the last turn completed the extraction.
    pub fn finish_turn(&self, id: &str, complete: bool) {
        let mut entries = self
            .entries
            .lock()
            .expect("the conversation lock is never poisoned");
        if let Some((_, conversation)) = entries.get_mut(id) {
            conversation.complete = complete;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> Arc<Schema> {
        Arc::new(
            Schema::parse(r#"{"type": "object", "properties": {"a": {"type": "string"}}}"#)
                .unwrap(),
        )
    }

    #[test]
    fn answers_accumulate_and_the_least_recent_is_evicted() {
        let conversations = Conversations::new(2);
        let first = conversations.start(Conversation::new(schema(), "doc 1".into()));
        let second = conversations.start(Conversation::new(schema(), "doc 2".into()));
        assert_eq!(
            conversations
                .answer(&first, "a is x".into())
                .unwrap()
                .clarifications,
            vec!["a is x".to_owned()]
        );
        conversations.start(Conversation::new(schema(), "doc 3".into()));
        assert!(conversations.answer(&second, "late".into()).is_none());
        assert_eq!(
            conversations
                .answer(&first, "more".into())
                .unwrap()
                .clarifications
                .len(),
            2
        );
    }
}
