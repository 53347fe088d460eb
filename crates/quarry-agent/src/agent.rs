//! The agent loop for one document (or one chunk of a long one): prompt → model → submissions
//! (tool calls, or plain content when the model answered in prose) → check → feedback, up to
//! `max_attempts` model turns.
//!
//! Field results accumulate across turns: a field that passed stays passed (a later `null` does
//! not erase a found value), so turns that each fix different fields add up. The loop ends as
//! soon as every field has passed; what is still unresolved after the last turn is escalated by
//! the caller.

use quarry_llm::{
    ChatRequest, ChatResponse, LlmClient, LlmError, Message, ResponseFormat, Role, TokenSink,
    ToolChoice, ToolSpec, Usage, output_budget,
};
use serde_json::Value;

use crate::budget::{Budget, estimate};
use crate::candidates::{Decoding, Offer, offer};
use crate::check::{CheckContext, Checked, FieldCheck, Problem, ProblemKind, check};
use crate::config::ExtractorConfig;
use crate::error::EngineError;
use crate::ground::{Evidence, FieldGrounding, GroundingStatus};
use crate::prompt::{self, SUBMIT, VALIDATE};
use crate::schema::Schema;
use crate::span::Span;

/// Where one field stands after the loop.
#[derive(Debug, Clone)]
pub(crate) struct FieldState {
    /// The accepted value, or the last rejected one while `passed` is false.
    pub value: Value,
    pub grounding: FieldGrounding,
    /// The model turn (1-based) that supplied the accepted value, or the last rejected one; 0
    /// when the field never appeared.
    pub attempt: u32,
    pub repairs: Vec<String>,
    pub passed: bool,
    /// The latest problems while not passed.
    pub problems: Vec<Problem>,
    /// How the model's value was decoded.
    pub decoding: Decoding,
}

impl FieldState {
    fn unseen() -> Self {
        FieldState {
            value: Value::Null,
            grounding: FieldGrounding {
                status: GroundingStatus::Empty,
                spans: Vec::new(),
                strength: 0.0,
                problems: Vec::new(),
            },
            attempt: 0,
            repairs: Vec::new(),
            passed: false,
            problems: Vec::new(),
            decoding: Decoding::Free,
        }
    }

    /// A field of a chunk the model never read (`span`: where the chunk is in the document).
    pub(crate) fn unread(field: &str, span: Span) -> Self {
        FieldState {
            problems: vec![Problem {
                path: field.to_owned(),
                kind: ProblemKind::Unread,
                message: format!(
                    "field '{field}': the document's characters {}..{} were not read (they did \
                     not fit the model's context window), and the rest does not state it",
                    span.start, span.end
                ),
            }],
            ..FieldState::unseen()
        }
    }

    pub(crate) fn is_unread(&self) -> bool {
        self.problems
            .iter()
            .any(|problem| problem.kind == ProblemKind::Unread)
    }

    fn update(&mut self, field: &FieldCheck, attempt: u32, repairs: &[String]) {
        if field.problems.is_empty() {
            let erases_found_value = self.passed && !self.value.is_null() && field.value.is_null();
            let unchanged = self.passed && self.value == field.value;
            if erases_found_value || unchanged {
                return;
            }
            *self = FieldState {
                value: field.value.clone(),
                grounding: field.grounding.clone(),
                attempt,
                repairs: repairs.to_vec(),
                passed: true,
                problems: Vec::new(),
                decoding: self.decoding,
            };
        } else if !self.passed {
            self.value = field.value.clone();
            self.attempt = attempt;
            self.problems = field.problems.clone();
        }
    }
}

/// The result of one loop.
#[derive(Debug, Clone)]
pub(crate) struct RunOutcome {
    /// One per schema field, in schema order.
    pub fields: Vec<FieldState>,
    pub usage: Usage,
    /// Model turns taken.
    pub calls: u32,
}

impl RunOutcome {
    /// The outcome of a chunk whose first model call did not fit the context window: every
    /// field unresolved, nothing spent.
    pub(crate) fn unread(schema: &Schema, span: Span) -> Self {
        RunOutcome {
            fields: schema
                .fields
                .iter()
                .map(|field| FieldState::unread(&field.name, span))
                .collect(),
            usage: Usage::default(),
            calls: 0,
        }
    }
}

/// What a loop shares with the rest of the extraction.
pub(crate) struct RunContext<'a> {
    pub client: &'a dyn LlmClient,
    pub model: &'a str,
    pub config: &'a ExtractorConfig,
    pub schema: &'a Schema,
    pub clarifications: &'a [String],
    pub clarification_evidence: &'a [Evidence<'a>],
    pub budget: &'a Budget,
    pub on_token: Option<TokenSink<'a>>,
    pub enforce_required: bool,
}

pub(crate) async fn run(
    context: &RunContext<'_>,
    document: &str,
) -> Result<RunOutcome, EngineError> {
    let schema = context.schema;
    let offer = offer(schema, document, context.config.now);
    let evidence = Evidence::new(document).with_detected(offer.found.clone());
    let check_context = CheckContext {
        schema,
        document: &evidence,
        clarifications: context.clarification_evidence,
        enforce_required: context.enforce_required,
    };
    let mut messages = prompt::opening_messages(schema, document, context.clarifications);
    let tools = prompt::tools(schema);
    let mut fields: Vec<FieldState> = schema
        .fields
        .iter()
        .zip(&offer.fields)
        .map(|(field, offered)| FieldState {
            decoding: decoding(context.client, field, *offered),
            ..FieldState::unseen()
        })
        .collect();
    let mut usage = Usage::default();
    let mut calls = 0;

    for attempt in 1..=context.config.max_attempts.max(1) {
        let request = turn_request(context, &messages, &tools, document, &offer);
        let response = match call(context, &request).await {
            Ok(response) => response,
            // The conversation outgrew the context window with the feedback of earlier turns:
            // keep what they found and stop (the unresolved fields are escalated as usual).
            Err(EngineError::Llm(LlmError::ContextOverflow { .. })) if calls > 0 => break,
            Err(EngineError::Llm(error @ LlmError::ContextOverflow { .. })) => {
                return Err(EngineError::ContextOverflow {
                    error,
                    usage: context.budget.usage(),
                });
            }
            Err(error) => return Err(error),
        };
        usage.add(response.usage);
        calls += 1;

        let mut complete = false;
        let mut absorb = |checked: &Checked, fields: &mut [FieldState]| {
            for (state, field) in fields.iter_mut().zip(&checked.fields) {
                state.update(field, attempt, &checked.repairs);
            }
            complete |= checked.passed();
        };
        messages.push(Message {
            role: Role::Assistant,
            content: response.content.clone(),
            tool_calls: response.tool_calls.clone(),
            tool_call_id: None,
        });
        if response.tool_calls.is_empty() {
            let content = response.content.as_deref().unwrap_or("");
            let checked = check(content, &check_context);
            if checked.unreadable.is_some() && !content.contains(['{', '[']) {
                messages.push(Message::user(prompt::no_extraction_nudge()));
            } else {
                messages.push(Message::user(prompt::feedback(&checked, None)));
            }
            absorb(&checked, &mut fields);
        } else {
            for tool_call in &response.tool_calls {
                let reply = if tool_call.name == SUBMIT || tool_call.name == VALIDATE {
                    let checked = check(&tool_call.arguments, &check_context);
                    absorb(&checked, &mut fields);
                    prompt::feedback(&checked, Some(&tool_call.name))
                } else {
                    format!(
                        "Unknown tool '{}'. The tools are `{VALIDATE}` and `{SUBMIT}`.",
                        tool_call.name
                    )
                };
                messages.push(Message::tool_result(tool_call.id.clone(), reply));
            }
        }
        if complete || fields.iter().all(|field| field.passed) {
            break;
        }
    }
    Ok(RunOutcome {
        fields,
        usage,
        calls,
    })
}

/// The request for one model turn. The one place the agent chooses how it asks for the
/// extraction: when the client has native structured output
/// ([`LlmClient::structured_output`]: OpenAI's strict mode, Ollama's `format`, Anthropic's forced
/// tool, …) the schema goes as the response format and the reply's content is the extraction;
/// otherwise the model gets the `validate`/`submit` tools and whatever it answers is parsed
/// leniently. Asked every turn: a server that refuses the schema turns it off for its client.
/// The document goes along as the grounding source: a client that decodes under a token mask
/// (a local model) lets plain strings be only text the document contains.
///
/// Either way the schema the model decodes under is the [`Offer`]'s: fields a detector knows
/// offer the values found in the document as an `enum` (see [`crate::candidates`]).
fn turn_request(
    context: &RunContext<'_>,
    messages: &[Message],
    tools: &[ToolSpec],
    document: &str,
    offer: &Offer,
) -> ChatRequest {
    let native = context.client.structured_output().is_native();
    let tools = tools
        .iter()
        .map(|tool| ToolSpec {
            parameters: offer.schema.clone(),
            ..tool.clone()
        })
        .collect();
    ChatRequest {
        model: context.model.to_owned(),
        messages: messages.to_vec(),
        tools: if native { Vec::new() } else { tools },
        tool_choice: (!native).then_some(ToolChoice::Auto),
        response_format: native.then(|| ResponseFormat::JsonSchema {
            name: context.schema.name.clone(),
            schema: offer.schema.clone(),
            strict: true,
        }),
        temperature: context.config.temperature,
        // Sized to the schema (a tool call adds its name and wrapper), never above the cap.
        max_tokens: Some(
            context
                .config
                .max_completion_tokens
                .min(output_budget(&context.schema.json_schema) + 32),
        ),
        extra: context.config.extra.clone(),
        grounding: Some(document.to_owned()),
    }
}

/// How `field`'s value is decoded by `client`, given what the detectors offer for it.
fn decoding(
    client: &dyn LlmClient,
    field: &crate::schema::FieldSpec,
    offered: Option<(crate::candidates::Detector, usize)>,
) -> Decoding {
    if let Some((detector, offered)) = offered {
        return Decoding::Candidates { detector, offered };
    }
    let plain_text = field.spec.is_plain_text();
    if client.decodes_grounded() && plain_text {
        Decoding::GroundedSpan
    } else if (client.decodes_grounded() || client.structured_output().is_native()) && !plain_text {
        Decoding::Constrained
    } else {
        Decoding::Free
    }
}

async fn call(
    context: &RunContext<'_>,
    request: &ChatRequest,
) -> Result<ChatResponse, EngineError> {
    let reservation = context.budget.reserve(|| estimate(request))?;
    let result = match context.on_token {
        Some(sink) => context.client.chat_stream(request, sink).await,
        None => context.client.chat(request).await,
    };
    match result {
        Ok(response) => {
            context.budget.settle(reservation, response.usage);
            Ok(response)
        }
        Err(error) => {
            context.budget.release(reservation);
            Err(error.into())
        }
    }
}
