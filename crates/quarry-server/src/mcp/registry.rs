//! What a tool is: its MCP definition (name, description, input schema derived from its argument
//! type, output schema), who may use it, and the call that reads its arguments, runs the shared
//! operation and turns the answer into a tool result.

use std::future::Future;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use quarry_core::ErrorCode;
use rmcp::handler::server::common::schema_for_input;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::AppState;
use crate::auth::Caller;
use crate::error::ApiError;

/// One call's server state and caller. `caller` is `None` only over HTTP on a server without a
/// database, where no key can be checked (as on `/skill/*` and a database-less `/v1/chat`).
#[derive(Clone)]
pub(crate) struct Ctx {
    pub state: AppState,
    pub caller: Option<Caller>,
}

impl Ctx {
    /// The caller, for an operation on the database: without one the server has no database.
    pub fn caller(&self) -> Result<&Caller, ApiError> {
        match &self.caller {
            Some(caller) => Ok(caller),
            None => Err(crate::auth::store(&self.state)
                .err()
                .unwrap_or_else(crate::auth::missing_key)),
        }
    }
}

/// Who may use a tool.
#[derive(Clone, Copy)]
pub(crate) enum Access {
    /// Anyone the server lets in (the skill: no database involved).
    Open,
    /// A caller whose key carries one of these scopes.
    Scoped(&'static [&'static str]),
    /// Like `Scoped` on a server with a database; open on one without (its conversations then
    /// live in memory), as `/v1/chat`.
    ScopedWithDatabase(&'static [&'static str]),
}

impl Access {
    /// `Ok` when `ctx`'s caller may use the tool, else the same refusal the REST route answers.
    pub fn check(&self, ctx: &Ctx) -> Result<(), ApiError> {
        match self {
            Access::Open => Ok(()),
            Access::ScopedWithDatabase(_) if ctx.state.store.is_none() => Ok(()),
            Access::Scoped(scopes) | Access::ScopedWithDatabase(scopes) => {
                ctx.caller()?.require_scopes(scopes)
            }
        }
    }
}

type Handler = Box<dyn Fn(Ctx, JsonObject) -> BoxFuture<'static, ToolOutcome> + Send + Sync>;
type ToolOutcome = Result<Value, ApiError>;

/// A tool: its definition, who may use it, and what it runs.
pub(crate) struct ToolDef {
    pub tool: Tool,
    pub access: Access,
    handler: Handler,
}

impl ToolDef {
    /// Runs the tool for `ctx` on `arguments`: the access check, then the operation. Every
    /// failure is a tool error in the API's error shape.
    pub async fn call(&self, ctx: Ctx, arguments: JsonObject) -> CallToolResult {
        let outcome = match self.access.check(&ctx) {
            Ok(()) => (self.handler)(ctx, arguments).await,
            Err(refused) => Err(refused),
        };
        match outcome {
            Ok(value) => CallToolResult::structured(value),
            Err(error) => tool_error(&error),
        }
    }
}

/// A failure as a tool result: `isError`, the text `Code - message`, and `{"error", "message"}`.
fn tool_error(error: &ApiError) -> CallToolResult {
    let mut result = CallToolResult::structured_error(
        json!({"error": error.code.as_str(), "message": error.message}),
    );
    result.content = vec![ContentBlock::text(format!(
        "{} - {}",
        error.code.as_str(),
        error.message
    ))];
    result
}

/// How a tool behaves, for clients that show or gate tools by it.
#[derive(Clone, Copy)]
pub(crate) enum Effect {
    /// Reads only.
    ReadOnly,
    /// Adds or changes data; calling twice with the same arguments changes nothing more.
    Idempotent,
    /// Adds or changes data each time it is called.
    Writes,
}

/// Defines a tool whose arguments are `A` (its input schema derived from it) and which answers
/// `call(ctx, args)`, an object described by `output_schema`.
pub(crate) fn tool<A, T, F, Fut>(
    name: &'static str,
    description: &'static str,
    access: Access,
    effect: Effect,
    output_schema: Value,
    call: F,
) -> ToolDef
where
    A: DeserializeOwned + JsonSchema + Send + 'static,
    T: Serialize,
    F: Fn(Ctx, A) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<T, ApiError>> + Send + 'static,
{
    let input_schema = schema_for_input::<A>().unwrap_or_else(|error| {
        // A programming error caught by the module's tests, never by user input.
        tracing::error!(tool = name, %error, "input schema is not an object");
        Arc::new(JsonObject::new())
    });
    let output_schema = match output_schema {
        Value::Object(schema) => schema,
        _ => {
            // A programming error caught by the module's tests, never by user input.
            tracing::error!(tool = name, "output schema is not an object");
            JsonObject::new()
        }
    };
    let annotations = match effect {
        Effect::ReadOnly => ToolAnnotations::new().read_only(true),
        Effect::Idempotent => ToolAnnotations::new()
            .read_only(false)
            .destructive(false)
            .idempotent(true),
        Effect::Writes => ToolAnnotations::new()
            .read_only(false)
            .destructive(false)
            .idempotent(false),
    }
    .open_world(false);
    let tool = Tool::new(name, description, input_schema)
        .with_raw_output_schema(Arc::new(output_schema))
        .with_annotations(annotations);
    let call = Arc::new(call);
    let handler: Handler = Box::new(move |ctx, arguments| {
        let call = call.clone();
        Box::pin(async move {
            let args: A = serde_json::from_value(Value::Object(arguments)).map_err(|error| {
                ApiError::new(
                    ErrorCode::InvalidArguments,
                    format!("invalid arguments for {name}: {error}"),
                )
            })?;
            let answer = call(ctx, args).await?;
            serde_json::to_value(answer).map_err(|error| {
                ApiError::new(
                    ErrorCode::Internal,
                    format!("{name} could not write its answer: {error}"),
                )
            })
        })
    });
    ToolDef {
        tool,
        access,
        handler,
    }
}
