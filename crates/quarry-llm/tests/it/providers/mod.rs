//! The providers against a local server speaking their wire protocols (real HTTP, real client
//! code, scripted replies). One test binary keeps link time down.

mod anthropic;
mod headers;
mod ollama;
mod openai;
mod structured;
mod transport;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use quarry_llm::{
    ChatRequest, LlmClient, Message, ModelSpec, ProviderSettings, ToolSpec, TransportConfig,
    build_client,
};
use quarry_testkit::ScriptedServer;
use serde_json::{Value, json};

/// Retries without waiting, so failure paths run in milliseconds.
pub fn fast_transport() -> TransportConfig {
    TransportConfig {
        connect_timeout: Duration::from_secs(2),
        request_timeout: Duration::from_secs(10),
        read_timeout: Duration::from_secs(10),
        max_attempts: 4,
        backoff_base: Duration::from_millis(1),
        backoff_max: Duration::from_millis(5),
        retry_after_max: Duration::from_secs(5),
    }
}

pub fn settings(base_url: String) -> ProviderSettings {
    ProviderSettings {
        base_url: Some(base_url),
        transport: fast_transport(),
        ..ProviderSettings::default()
    }
}

pub fn openai_client(server: &ScriptedServer) -> Arc<dyn LlmClient> {
    let spec = ModelSpec::parse("openai-compatible:test-model").unwrap();
    build_client(&spec, settings(server.base_url())).unwrap()
}

pub fn anthropic_client(server: &ScriptedServer) -> Arc<dyn LlmClient> {
    let spec = ModelSpec::parse("anthropic:claude-test").unwrap();
    let settings = ProviderSettings {
        api_key: Some("sk-ant-test".into()),
        ..settings(server.anthropic_base_url())
    };
    build_client(&spec, settings).unwrap()
}

/// A user schema with the kinds of keys a client must not touch.
pub fn person_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "name": {"type": "string", "x-grounding": "exact"},
            "born": {"type": ["string", "null"], "format": "date"},
            "role": {"enum": ["engineer", "mathematician"]}
        },
        "required": ["name", "born", "role"],
        "additionalProperties": false
    })
}

pub fn extraction_request() -> ChatRequest {
    ChatRequest {
        messages: vec![
            Message::system("Extract a person. Call submit."),
            Message::user("Ada Lovelace, born 1815-12-10, mathematician."),
        ],
        tools: vec![ToolSpec {
            name: "submit".into(),
            description: "Submit the extracted person.".into(),
            parameters: person_schema(),
        }],
        ..ChatRequest::default()
    }
}

/// Collects streamed tokens.
#[derive(Default)]
pub struct Tokens(Mutex<Vec<String>>);

impl Tokens {
    pub fn sink(&self) -> impl Fn(&str) + Send + Sync + '_ {
        |token: &str| self.0.lock().unwrap().push(token.to_string())
    }

    pub fn all(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}
