//! Quarry as a Model Context Protocol server (`rmcp`): the same operations as the REST API,
//! offered as tools to agents. `quarry mcp` serves them on stdio as the local user (every scope,
//! the configured project); `quarry serve` serves them at `/mcp` (streamable HTTP, `http.rs`)
//! to API keys with the scopes and project isolation of `/v1`.
//!
//! Every tool calls the function its REST route calls (`crate::skill::run_extract`,
//! `crate::api::workflows::trigger_workflow`, …), so validation, errors and scopes are one code
//! path. A tool the caller may not use is left out of `tools/list` and refused when called; a
//! failure is a tool result with `isError` and the API's error shape as structured content
//! (`{"error": "<Code>", "message": "..."}`), never a protocol error.

mod documents;
mod graph;
mod http;
mod registry;
mod resources;
mod results;
mod schema_agent;
mod skill;
mod workflows;

use std::sync::LazyLock;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ServerCapabilities, ServerConfig as McpServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

use crate::auth::Caller;
use crate::{AppState, ServerConfig};

pub use http::routes;
use registry::{Ctx, ToolDef};

/// Every tool, in the order `tools/list` shows them.
static TOOLS: LazyLock<Vec<ToolDef>> = LazyLock::new(|| {
    [
        skill::tools(),
        schema_agent::tools(),
        documents::tools(),
        workflows::tools(),
        results::tools(),
        graph::tools(),
    ]
    .into_iter()
    .flatten()
    .collect()
});

const INSTRUCTIONS: &str = "Quarry extracts structured, grounded data from text. `extract` finds \
emails, URLs, dates, phones, IPs, names and entities without a model; `check` verifies an \
extractor's output; `extract_with_schema` fills a JSON Schema with the model and may answer with \
a question (answer it with the same conversation_id). The team tools add documents and episodes, \
run and follow extraction workflows, and review their results.";

/// The MCP server over one server state, acting for one caller per request.
#[derive(Clone)]
pub struct QuarryMcp {
    state: AppState,
    /// The caller of every request on stdio; over HTTP each request brings its own (put in the
    /// request's extensions by `http.rs` after checking its key).
    local: Option<Caller>,
}

impl QuarryMcp {
    fn ctx(&self, context: &RequestContext<RoleServer>) -> Ctx {
        let caller = self.local.clone().or_else(|| {
            context
                .extensions
                .get::<axum::http::request::Parts>()
                .and_then(|parts| parts.extensions.get::<Caller>())
                .cloned()
        });
        Ctx {
            state: self.state.clone(),
            caller,
        }
    }
}

impl ServerHandler for QuarryMcp {
    fn get_info(&self) -> McpServerConfig {
        McpServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("quarry", env!("CARGO_PKG_VERSION")))
        .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let ctx = self.ctx(&context);
        Ok(ListToolsResult::with_all_items(
            TOOLS
                .iter()
                .filter(|tool| tool.access.check(&ctx).is_ok())
                .map(|tool| tool.tool.clone())
                .collect(),
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(tool) = TOOLS.iter().find(|tool| tool.tool.name == request.name) else {
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown tool '{}'; tools/list names the tools this key may use",
                    request.name
                ),
                None,
            ));
        };
        let ctx = self.ctx(&context);
        Ok(tool
            .call(ctx, request.arguments.unwrap_or_default())
            .await
            .into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(
            resources::list(&self.ctx(&context)).await?,
        ))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(
            resources::templates(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        Ok(resources::read(&self.ctx(&context), &request.uri)
            .await?
            .into())
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        TOOLS
            .iter()
            .find(|tool| tool.tool.name == name)
            .map(|tool| tool.tool.clone())
    }
}

/// Serves the tools on stdin/stdout until the client closes them, as the local user `user`
/// (every scope) in project `project_id` of `config`'s database.
pub async fn serve_stdio(
    config: &ServerConfig,
    project_id: &str,
    user: &str,
) -> std::io::Result<()> {
    let server = QuarryMcp {
        state: AppState::new(config),
        local: Some(Caller::local(project_id, user)),
    };
    let running = server
        .serve(rmcp::transport::stdio_pipes())
        .await
        .map_err(std::io::Error::other)?;
    running.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}

/// The tools' definitions, for tests and documentation.
pub fn tool_list() -> Vec<Tool> {
    TOOLS.iter().map(|tool| tool.tool.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_an_object_input_schema_and_an_output_schema() {
        let tools = tool_list();
        assert_eq!(tools.len(), 15);
        for tool in &tools {
            assert_eq!(
                tool.input_schema.get("type").and_then(|t| t.as_str()),
                Some("object"),
                "{}",
                tool.name
            );
            let output = tool.output_schema.as_ref().expect("output schema");
            assert_eq!(
                output.get("type").and_then(|t| t.as_str()),
                Some("object"),
                "{}",
                tool.name
            );
        }
        let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), tools.len(), "tool names are unique");
    }
}
