//! A scripted, in-memory `LlmClient`: replies are queued in order, requests are recorded.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;

use quarry_llm::{
    BoxFuture, ChatRequest, ChatResponse, LlmClient, LlmError, Role, TokenSink, ToolCall, Usage,
};

#[derive(Default)]
pub struct ScriptedClient {
    replies: Mutex<VecDeque<Result<ChatResponse, LlmError>>>,
    requests: Mutex<Vec<ChatRequest>>,
}

impl ScriptedClient {
    pub fn new(replies: Vec<ChatResponse>) -> Self {
        ScriptedClient {
            replies: Mutex::new(replies.into_iter().map(Ok).collect()),
            requests: Mutex::new(Vec::new()),
        }
    }

    pub fn push_error(&self, error: LlmError) {
        self.replies.lock().unwrap().push_back(Err(error));
    }

    pub fn requests(&self) -> Vec<ChatRequest> {
        self.requests.lock().unwrap().clone()
    }

    fn next(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        self.requests.lock().unwrap().push(request.clone());
        self.replies
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or_else(|| panic!("the script ran out after {} calls", self.requests().len()))
    }
}

impl LlmClient for ScriptedClient {
    fn chat<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move { self.next(request) })
    }

    fn chat_stream<'a>(
        &'a self,
        request: &'a ChatRequest,
        on_token: TokenSink<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            let response = self.next(request)?;
            if let Some(content) = &response.content {
                on_token(content);
            }
            Ok(response)
        })
    }

    fn describe(&self) -> String {
        "scripted:test".to_owned()
    }
}

fn response(content: Option<String>, tool_calls: Vec<ToolCall>) -> ChatResponse {
    ChatResponse {
        content,
        tool_calls,
        finish_reason: Some("stop".to_owned()),
        usage: Usage {
            prompt_tokens: 100,
            completion_tokens: 20,
            ..Usage::default()
        },
        latency: Duration::ZERO,
        attempts: 1,
    }
}

/// The model calls `tool` with `arguments` (raw text).
pub fn tool_call(tool: &str, arguments: &str) -> ChatResponse {
    let id = format!("call_{}", arguments.len());
    response(
        None,
        vec![ToolCall {
            id,
            name: tool.to_owned(),
            arguments: arguments.to_owned(),
        }],
    )
}

/// The model answers in plain content.
pub fn content(text: &str) -> ChatResponse {
    response(Some(text.to_owned()), Vec::new())
}

/// The text of every message with `role` in `request`.
pub fn texts(request: &ChatRequest, role: Role) -> Vec<String> {
    request
        .messages
        .iter()
        .filter(|m| m.role == role)
        .filter_map(|m| m.content.clone())
        .collect()
}

/// A model that answers each request with `respond(request)`: for concurrent chunk extraction,
/// where the order of calls is not the order of the script.
pub struct RespondingClient<F> {
    pub respond: F,
    pub requests: Mutex<Vec<ChatRequest>>,
}

impl<F: Fn(&ChatRequest) -> ChatResponse + Send + Sync> RespondingClient<F> {
    pub fn new(respond: F) -> Self {
        RespondingClient {
            respond,
            requests: Mutex::new(Vec::new()),
        }
    }
}

impl<F: Fn(&ChatRequest) -> ChatResponse + Send + Sync> LlmClient for RespondingClient<F> {
    fn chat<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            self.requests.lock().unwrap().push(request.clone());
            Ok((self.respond)(request))
        })
    }

    fn chat_stream<'a>(
        &'a self,
        request: &'a ChatRequest,
        _on_token: TokenSink<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        self.chat(request)
    }

    fn describe(&self) -> String {
        "responding:test".to_owned()
    }
}
