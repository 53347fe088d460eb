//! The chat template of a GGUF model (`tokenizer.chat_template`, Jinja), rendered with
//! minijinja: the request's messages become the exact prompt text the model was trained on.
//!
//! Tools are described in the system message, and earlier tool calls and results are written as
//! plain text, because small models' templates rarely know tools; what a reply may be is decided
//! by the token mask, not by the template. A GGUF without a template gets ChatML.

use minijinja::{Environment, ErrorKind, context};
use serde::Serialize;

use crate::LlmError;
use crate::types::{ChatRequest, Message, Role};

/// ChatML, for GGUFs that carry no template.
const CHATML: &str = "{% for message in messages %}<|im_start|>{{ message.role }}\n\
    {{ message.content }}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>\
    assistant\n{% endif %}";

/// A compiled chat template.
pub struct ChatTemplate {
    env: Environment<'static>,
    bos: String,
    eos: String,
}

/// One message as templates read it.
#[derive(Serialize)]
struct TemplateMessage {
    role: &'static str,
    content: String,
}

impl ChatTemplate {
    /// Compiles `source` (the GGUF's template, or ChatML when `None`); `bos` and `eos` are the
    /// token names templates may write.
    pub fn new(source: Option<String>, bos: &str, eos: &str) -> Result<ChatTemplate, LlmError> {
        let mut env = Environment::new();
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_function("raise_exception", |message: String| -> Result<(), _> {
            Err(minijinja::Error::new(ErrorKind::InvalidOperation, message))
        });
        env.add_template_owned("chat", source.unwrap_or_else(|| CHATML.to_owned()))
            .map_err(|error| template_error(&error))?;
        Ok(ChatTemplate {
            env,
            bos: bos.to_owned(),
            eos: eos.to_owned(),
        })
    }

    /// The prompt for `request`, ending where the assistant's reply starts.
    pub fn render(&self, request: &ChatRequest) -> Result<String, LlmError> {
        let messages = template_messages(request);
        let template = self
            .env
            .get_template("chat")
            .map_err(|error| template_error(&error))?;
        template
            .render(context! {
                messages => messages,
                add_generation_prompt => true,
                bos_token => self.bos,
                eos_token => self.eos,
            })
            .map_err(|error| template_error(&error))
    }
}

/// The request's messages as plain-text turns: the tools' description joins the system
/// message, an assistant's tool calls are written as the JSON it would emit, a tool's answer is
/// a user turn naming the call (templates of small models know only system, user and assistant,
/// and several refuse two turns of one role in a row, so neighbours of one role are merged).
fn template_messages(request: &ChatRequest) -> Vec<TemplateMessage> {
    let mut messages: Vec<TemplateMessage> = Vec::new();
    let tools = tools_description(request);
    let mut push = |role: &'static str, content: String| match messages.last_mut() {
        Some(last) if last.role == role => {
            last.content.push_str("\n\n");
            last.content.push_str(&content);
        }
        _ => messages.push(TemplateMessage { role, content }),
    };
    if let Some(tools) = &tools
        && !request
            .messages
            .iter()
            .any(|message| message.role == Role::System)
    {
        push("system", tools.clone());
    }
    for message in &request.messages {
        match message.role {
            Role::System => {
                let mut content = message.content.clone().unwrap_or_default();
                if let Some(tools) = &tools {
                    content.push_str("\n\n");
                    content.push_str(tools);
                }
                push("system", content);
            }
            Role::User => push("user", message.content.clone().unwrap_or_default()),
            Role::Assistant => push("assistant", assistant_text(message)),
            Role::Tool => push(
                "user",
                format!(
                    "Result of the tool call: {}",
                    message.content.as_deref().unwrap_or_default()
                ),
            ),
        }
    }
    messages
}

/// What the assistant said, its tool calls written as the JSON the decoder constrains them to.
fn assistant_text(message: &Message) -> String {
    let mut parts: Vec<String> = message.content.iter().cloned().collect();
    for call in &message.tool_calls {
        parts.push(super::grammar::tool_call_text(&call.name, &call.arguments));
    }
    parts.join("\n")
}

/// The offered tools, and how to call one, for the system message.
fn tools_description(request: &ChatRequest) -> Option<String> {
    if request.tools.is_empty() {
        return None;
    }
    let mut text = String::from(
        "Answer with exactly one tool call, a JSON object {\"name\": TOOL, \"arguments\": {...}}. \
         The tools:",
    );
    for tool in &request.tools {
        text.push_str(&format!(
            "\n- {}: {} Arguments: {}",
            tool.name, tool.description, tool.parameters
        ));
    }
    Some(text)
}

fn template_error(error: &minijinja::Error) -> LlmError {
    LlmError::Misconfigured {
        provider: "local".to_owned(),
        reason: format!("the GGUF's chat template cannot be used: {error:#}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{ToolCall, ToolSpec};

    fn request(messages: Vec<Message>) -> ChatRequest {
        ChatRequest {
            model: "m".to_owned(),
            messages,
            ..ChatRequest::default()
        }
    }

    #[test]
    fn chatml_ends_with_the_assistant_turn() {
        let template = ChatTemplate::new(None, "<s>", "</s>").unwrap();
        let prompt = template
            .render(&request(vec![
                Message::system("Be brief."),
                Message::user("Hi"),
            ]))
            .unwrap();
        assert_eq!(
            prompt,
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n\
             <|im_start|>assistant\n"
        );
    }

    #[test]
    fn tools_join_the_system_message_and_calls_become_text() {
        let template = ChatTemplate::new(None, "<s>", "</s>").unwrap();
        let mut asked = request(vec![
            Message::system("Extract."),
            Message::user("Text"),
            Message {
                role: Role::Assistant,
                content: None,
                tool_calls: vec![ToolCall {
                    id: "1".to_owned(),
                    name: "submit".to_owned(),
                    arguments: r#"{"a": 1}"#.to_owned(),
                }],
                tool_call_id: None,
            },
            Message::tool_result("1", "ok"),
        ]);
        asked.tools = vec![ToolSpec {
            name: "submit".to_owned(),
            description: "Submit the values.".to_owned(),
            parameters: serde_json::json!({"type": "object"}),
        }];
        let prompt = template.render(&asked).unwrap();
        assert!(
            prompt.contains("Extract.\n\nAnswer with exactly one tool call"),
            "{prompt}"
        );
        assert!(prompt.contains("- submit: Submit the values."), "{prompt}");
        assert!(
            prompt.contains(r#"{"name":"submit","arguments":{"a": 1}}"#),
            "{prompt}"
        );
        assert!(prompt.contains("Result of the tool call: ok"), "{prompt}");
    }

    #[test]
    fn a_template_that_raises_says_why() {
        let template = ChatTemplate::new(
            Some("{{ raise_exception('roles must alternate') }}".to_owned()),
            "",
            "",
        )
        .unwrap();
        let error = template
            .render(&request(vec![Message::user("x")]))
            .unwrap_err();
        assert!(
            error.to_string().contains("roles must alternate"),
            "{error}"
        );
    }
}
