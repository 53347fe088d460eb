//! Retrieve-then-extract: the field agent for models that use tools poorly (small local ones).
//! The engine runs the field's source searches itself, through the same [`ToolBox`] the tool loop
//! uses (the same scopes, the same captured sources and grounding evidence), with the field's
//! label and instructions as the query; then it puts the passages in the prompt and asks once for
//! `{value, sources, confidence}` under the submit schema. The source text goes along as the
//! grounding source, so a client that constrains decoding (a local model) can only produce a
//! string value the passages contain. A rejected answer is asked again with the reason, up to
//! the field's `max_steps`.

use std::fmt::Write;
use std::time::Instant;

use quarry_core::model::{Source, SourceRef};
use quarry_core::retrieval::Retriever;
use quarry_llm::{ChatRequest, Message, ResponseFormat, Role, Usage, output_budget};
use serde_json::json;

use crate::field_agent::{
    AgentSettings, FieldFailure, FieldValue, Verdict, check_submission, compiled_submit_schema,
    context_text, entity_prompt, field_brief, field_tools,
};
use crate::tools::{FieldContext, FieldSources, SEARCH_DOCUMENTS, SEARCH_ENTITIES, ToolBox};
use crate::web_source::UnreadPage;

/// Passages asked for per search.
const PASSAGES: usize = 5;

/// The documents a search found are shown whole, in a fixed order, instead of the passages
/// found in them, when together they are at most this long: every field of an entity then sees
/// the same documents before its own question (a local model reads them once for all the
/// fields), and the model sees each passage in its context.
const WHOLE_DOCUMENTS_BYTES: usize = 12_000;

pub(crate) async fn retrieve_then_extract<S: FieldSources + ?Sized>(
    context: &FieldContext<'_>,
    store: &S,
    retriever: &dyn Retriever,
    project: &str,
    settings: &AgentSettings<'_>,
) -> Result<FieldValue, FieldFailure> {
    let started = Instant::now();
    let field = context.field;
    let mut usage = Usage::default();
    let fail = |reason: String, usage: Usage| settings.failure(reason, usage);
    let (submit_schema_json, submit) =
        compiled_submit_schema(field).map_err(|reason| fail(reason, usage))?;
    let mut tools = field_tools(context, store, retriever, project);

    // The searches the tool loop's model would run, run here.
    let query = search_query(context);
    let arguments = json!({"query": query, "limit": PASSAGES}).to_string();
    let searches = [
        (
            SEARCH_DOCUMENTS,
            [Source::LinkedDocuments, Source::AllDocuments],
        ),
        (
            SEARCH_ENTITIES,
            [Source::ConnectedEntities, Source::AllEntities],
        ),
    ];
    for (tool, sources) in searches {
        if sources.iter().any(|source| field.sources.contains(source)) {
            tools
                .call(tool, &arguments)
                .await
                .map_err(|error| fail(format!("search '{tool}' failed: {error}"), usage))?;
        }
    }
    if field.sources.contains(&Source::Web) {
        tools
            .read_web_results(&query)
            .await
            .map_err(|error| fail(format!("web search failed: {error}"), usage))?;
    }
    // Pages the search found that could not be read: said with the outcome, either way.
    let unread = UnreadPage::note(&tools.unread_pages);
    let (passages, shown) = passages(&tools);
    // What a constrained decoder may copy a value from: the passages shown and the entity
    // context (`check_submission` grounds the value in the whole documents and that context).
    let evidence = format!("{shown}\n\n{}", context_text(context, &tools));
    if tools.retrieved.is_empty() && tools.context_texts.is_empty() {
        return Err(fail(
            format!("no passage matches {query:?} in the field's sources{unread}"),
            usage,
        ));
    }
    // Passages were found: the answer must be a value from them (small models otherwise answer
    // null by habit); a wrong one is caught by validation and grounding, then by review.
    let answer_schema = answer_schema(&submit_schema_json, &field.name);

    // The entity's prompt and the passages come first, the field's question last: the fields
    // of one entity share the start of their prompts, which a local model reads once.
    let mut messages = vec![
        Message::system(entity_prompt(context)),
        Message::user(task_message(context, &passages)),
    ];
    let budget = output_budget(&answer_schema).min(settings.max_tokens);
    for _ in 0..field.max_steps.max(1) {
        let request = ChatRequest {
            model: settings.model.to_owned(),
            messages: messages.clone(),
            response_format: Some(ResponseFormat::JsonSchema {
                name: "submit_value".to_owned(),
                schema: answer_schema.clone(),
                strict: false,
            }),
            temperature: settings.temperature,
            max_tokens: Some(budget),
            grounding: Some(evidence.clone()),
            ..ChatRequest::default()
        };
        let response = settings
            .client
            .chat(&request)
            .await
            .map_err(|error| FieldFailure {
                transient: error.is_transient(),
                ..fail(format!("model call failed: {error}"), usage)
            })?;
        usage.add(response.usage);
        let answer = response
            .content
            .clone()
            .or_else(|| {
                response
                    .tool_calls
                    .first()
                    .map(|call| call.arguments.clone())
            })
            .unwrap_or_default();
        match check_submission(
            &as_submission(&answer, &field.name),
            &submit,
            context,
            &tools,
        ) {
            Verdict::Accepted(value, confidence, sources) => {
                return Ok(FieldValue {
                    unread_pages: tools.unread_pages,
                    ..settings.value((value, confidence, sources), usage, started)
                });
            }
            Verdict::NoValue => {
                return Err(fail(
                    format!("the agent found no value (it answered null){unread}"),
                    usage,
                ));
            }
            Verdict::Rejected(feedback) => {
                messages.push(Message {
                    role: Role::Assistant,
                    content: Some(answer),
                    tool_calls: Vec::new(),
                    tool_call_id: None,
                });
                messages.push(Message::user(feedback));
            }
        }
    }
    Err(fail(
        format!(
            "no accepted value after {} answer(s) to the retrieved passages{unread}",
            field.max_steps.max(1)
        ),
        usage,
    ))
}

/// What the model is asked for: the value under the field's own name (a key a small model reads
/// better than `value`), never null, and the confidence; sources come from the searches.
fn answer_schema(submit: &serde_json::Value, field: &str) -> serde_json::Value {
    let mut value = submit
        .pointer("/properties/value")
        .cloned()
        .unwrap_or(serde_json::Value::Null);
    if let Some(kinds) = value
        .get_mut("type")
        .and_then(serde_json::Value::as_array_mut)
    {
        kinds.retain(|kind| kind != "null");
    }
    let confidence = submit
        .pointer("/properties/confidence")
        .cloned()
        .unwrap_or(serde_json::Value::Null);
    json!({"type": "object", "required": [field, "confidence"],
        "properties": {field: value, "confidence": confidence}})
}

/// The answer (`{FIELD: value, "confidence": …}`) as the submission `check_submission` reads.
fn as_submission(answer: &str, field: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(answer) {
        Ok(serde_json::Value::Object(mut object)) => {
            let value = object.remove(field).unwrap_or(serde_json::Value::Null);
            let confidence = object
                .remove("confidence")
                .unwrap_or(serde_json::Value::Null);
            json!({"value": value, "confidence": confidence}).to_string()
        }
        _ => answer.to_owned(),
    }
}

/// The passages the searches found, numbered with their source ids, and their texts alone.
fn passages<S: ?Sized>(tools: &ToolBox<'_, S>) -> (String, String) {
    let mut listed = String::new();
    let mut texts = Vec::new();
    let whole_bytes: usize = tools
        .retrieved
        .iter()
        .map(|document| document.text.len())
        .sum();
    if whole_bytes <= WHOLE_DOCUMENTS_BYTES {
        let mut documents: Vec<_> = tools.retrieved.iter().collect();
        documents.sort_by(|a, b| a.id.cmp(&b.id));
        for document in documents {
            let _ = writeln!(
                listed,
                "[document {}] ({}):\n{}\n",
                document.id,
                document.title,
                document.text.trim()
            );
            texts.push(document.text.trim().to_owned());
        }
    } else {
        for (number, source) in tools.captured.iter().enumerate() {
            if let SourceRef::Document {
                document_id,
                snippet: Some(snippet),
                ..
            } = source
            {
                let title = tools
                    .retrieved
                    .iter()
                    .find(|document| &document.id == document_id)
                    .map_or("", |document| document.title.as_str());
                let _ = writeln!(
                    listed,
                    "[{}] document {document_id} ({title}):\n{}\n",
                    number + 1,
                    snippet.trim()
                );
                texts.push(snippet.trim().to_owned());
            }
        }
    }
    for text in &tools.context_texts {
        let _ = writeln!(listed, "[entity] {text}\n");
        texts.push(text.clone());
    }
    (listed, texts.join("\n\n"))
}

/// The field's label and instructions, the words its value is searched by.
fn search_query(context: &FieldContext<'_>) -> String {
    let field = context.field;
    let label = field.label.as_deref().unwrap_or(&field.name);
    if field.instructions.is_empty() {
        label.to_owned()
    } else {
        format!("{label}: {}", field.instructions)
    }
}

/// The passages and the task: data in a user message, never in the system prompt.
fn task_message(context: &FieldContext<'_>, passages: &str) -> String {
    let mut out = String::new();
    if passages.trim().is_empty() {
        out.push_str("No source was searched for this field.\n\n");
    } else {
        let _ = write!(out, "Passages from the sources:\n\n{passages}\n");
    }
    out.push_str(&field_brief(context));
    let _ = write!(
        out,
        "\nExtract the field '{name}' from these passages. Answer with one JSON object \
         {{\"{name}\": ..., \"confidence\": \"high\"|\"medium\"|\"low\"}}, the value copied \
         exactly as the passage writes it; low confidence if no passage states it clearly.",
        name = context.field.name
    );
    if let Some(feedback) = context.rerun_feedback {
        out.push(' ');
        out.push_str(feedback);
    }
    out
}
