//! What one route is: its method and path, the handler that serves it and what the OpenAPI
//! document says about it (operation id, tag, scopes, parameters, body, every status it answers).
//! The router and the document are both built from these values, so neither can name a route
//! the other lacks.

use axum::handler::Handler;
use axum::routing::{MethodFilter, MethodRouter, on};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::Value;

use crate::AppState;

/// The HTTP methods the API uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verb {
    Get,
    Post,
    Put,
    Patch,
    Delete,
}

impl Verb {
    /// The method's name as OpenAPI keys it (`get`, `post`, …).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Verb::Get => "get",
            Verb::Post => "post",
            Verb::Put => "put",
            Verb::Patch => "patch",
            Verb::Delete => "delete",
        }
    }

    fn filter(self) -> MethodFilter {
        match self {
            Verb::Get => MethodFilter::GET,
            Verb::Post => MethodFilter::POST,
            Verb::Put => MethodFilter::PUT,
            Verb::Patch => MethodFilter::PATCH,
            Verb::Delete => MethodFilter::DELETE,
        }
    }
}

/// Who may call an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// Anyone.
    Public,
    /// A bearer API key (or the web app's session) carrying one of these scopes: the same
    /// constant the handler checks, so the document cannot name another.
    AnyScope(&'static [&'static str]),
    /// The web app's session cookie (no scope).
    Session,
    /// Any valid bearer API key (what it may do is decided further in, e.g. per MCP tool).
    AnyKey,
}

/// A schema the document asks the generator for (a `$ref` to a component where the type has
/// a name).
pub(crate) type SchemaFn = fn(&mut SchemaGenerator) -> Schema;

fn schema_of<T: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<T>()
}

/// A request or response body.
#[derive(Clone)]
pub(crate) struct Content {
    pub content_type: &'static str,
    /// `None`: any bytes of that type.
    pub schema: Option<SchemaFn>,
    pub example: Option<Value>,
}

/// One status an operation answers.
#[derive(Clone)]
pub(crate) struct Answer {
    pub status: u16,
    pub description: &'static str,
    pub content: Option<Content>,
}

/// One route: served by `handler`, described by the rest.
pub(crate) struct Operation {
    pub verb: Verb,
    pub path: &'static str,
    pub id: &'static str,
    pub tag: &'static str,
    pub summary: &'static str,
    pub description: &'static str,
    pub access: Access,
    /// The fields of the handler's `Query<T>`, one query parameter each.
    pub query: Option<SchemaFn>,
    pub body: Vec<Content>,
    /// Whether a request without a body is refused.
    pub body_required: bool,
    pub answers: Vec<Answer>,
    /// Error statuses it answers in the one error shape, beside the common ones.
    pub errors: Vec<u16>,
    pub handler: MethodRouter<AppState>,
}

impl Operation {
    /// `verb path` served by `handler`; the rest is set by the builder methods below.
    pub(crate) fn new<H, T>(verb: Verb, path: &'static str, handler: H) -> Operation
    where
        H: Handler<T, AppState>,
        T: 'static,
    {
        Operation {
            verb,
            path,
            id: "",
            tag: "",
            summary: "",
            description: "",
            access: Access::Public,
            query: None,
            body: Vec::new(),
            body_required: true,
            answers: Vec::new(),
            errors: Vec::new(),
            handler: on(verb.filter(), handler),
        }
    }

    /// Its `operationId`, tag and one-line summary.
    pub(crate) fn named(
        mut self,
        id: &'static str,
        tag: &'static str,
        summary: &'static str,
    ) -> Self {
        self.id = id;
        self.tag = tag;
        self.summary = summary;
        self
    }

    /// A longer description (behaviour, limits, what each error means).
    pub(crate) fn describe(mut self, description: &'static str) -> Self {
        self.description = description;
        self
    }

    /// Callable with a key (or session) carrying one of `scopes`.
    pub(crate) fn scopes(mut self, scopes: &'static [&'static str]) -> Self {
        self.access = Access::AnyScope(scopes);
        self
    }

    /// Callable with any valid bearer key.
    pub(crate) fn bearer(mut self) -> Self {
        self.access = Access::AnyKey;
        self
    }

    /// Callable with the web app's session only.
    pub(crate) fn session(mut self) -> Self {
        self.access = Access::Session;
        self
    }

    /// The handler's `Query<T>`.
    pub(crate) fn query<T: JsonSchema>(mut self) -> Self {
        self.query = Some(schema_of::<T>);
        self
    }

    /// A JSON body read as `T`, with an example.
    pub(crate) fn json_body<T: JsonSchema>(mut self, example: Value) -> Self {
        self.body.push(Content {
            content_type: "application/json",
            schema: Some(schema_of::<T>),
            example: Some(example),
        });
        self
    }

    /// A JSON body read as `T` that may be left out, with an example.
    pub(crate) fn optional_json_body<T: JsonSchema>(mut self, example: Value) -> Self {
        self.body_required = false;
        self.json_body::<T>(example)
    }

    /// A raw body of `content_type`.
    pub(crate) fn raw_body(mut self, content_type: &'static str) -> Self {
        self.body.push(Content {
            content_type,
            schema: None,
            example: None,
        });
        self
    }

    /// Answers `status` with JSON of type `T`.
    pub(crate) fn answers<T: JsonSchema>(mut self, status: u16, description: &'static str) -> Self {
        self.answers.push(Answer {
            status,
            description,
            content: Some(Content {
                content_type: "application/json",
                schema: Some(schema_of::<T>),
                example: None,
            }),
        });
        self
    }

    /// Answers `status` with a body of `content_type` (HTML, a script, an event stream…).
    pub(crate) fn answers_raw(
        mut self,
        status: u16,
        content_type: &'static str,
        description: &'static str,
    ) -> Self {
        self.answers.push(Answer {
            status,
            description,
            content: Some(Content {
                content_type,
                schema: None,
                example: None,
            }),
        });
        self
    }

    /// Answers `status` without a body.
    pub(crate) fn answers_empty(mut self, status: u16, description: &'static str) -> Self {
        self.answers.push(Answer {
            status,
            description,
            content: None,
        });
        self
    }

    /// The error statuses (in the one error shape) it can answer beside those every operation
    /// of its kind can (see `document::common_errors`).
    pub(crate) fn errors(mut self, statuses: &[u16]) -> Self {
        self.errors.extend_from_slice(statuses);
        self
    }
}
