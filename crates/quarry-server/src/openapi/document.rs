//! The OpenAPI 3.1 document, assembled from the route table ([`Operation`]s) and the JSON
//! Schemas `schemars` derives from the handlers' request and response types. Request schemas
//! describe what the server deserializes and response schemas what it serializes (a field it
//! may leave out is optional only in the second); where one type differs between the two, the
//! request's is named `<Type>Input`.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::operation::{Access, Content, Operation};
use crate::error::ErrorBody;

/// Where schemas live in the document.
const COMPONENTS: &str = "/components/schemas";

/// The document for `operations`.
pub(crate) fn document(operations: &[Operation]) -> Value {
    let mut requests = SchemaSettings::draft2020_12()
        .with(|settings| settings.definitions_path = COMPONENTS.into())
        .for_deserialize()
        .into_generator();
    let mut responses = SchemaSettings::draft2020_12()
        .with(|settings| settings.definitions_path = COMPONENTS.into())
        .for_serialize()
        .into_generator();
    let error = schema_value(responses.subschema_for::<ErrorBody>());

    let mut paths = Map::new();
    let mut error_answers = Map::new();
    let mut request_values: Vec<(&str, &str, &str, Value)> = Vec::new();
    for operation in operations {
        let mut item = json!({
            "operationId": operation.id,
            "tags": [operation.tag],
            "summary": operation.summary,
            "description": describe(operation),
        });
        let mut parameters = path_parameters(operation.path);
        if let Some(query) = operation.query {
            parameters.extend(query_parameters(&mut requests, query));
        }
        if !parameters.is_empty() {
            item["parameters"] = Value::Array(parameters);
        }
        if !operation.body.is_empty() {
            let content: Map<String, Value> = operation
                .body
                .iter()
                .map(|body| (body.content_type.to_owned(), media(&mut requests, body)))
                .collect();
            item["requestBody"] = json!({"required": operation.body_required, "content": content});
        }
        let mut answers = Map::new();
        for answer in &operation.answers {
            let mut value = json!({"description": answer.description});
            if let Some(content) = &answer.content {
                value["content"] = json!({content.content_type: media(&mut responses, content)});
            }
            answers.insert(answer.status.to_string(), value);
        }
        for status in error_statuses(operation) {
            error_answers.insert(status.to_string(), error_answer(status, &error));
            answers
                .entry(status.to_string())
                .or_insert_with(|| json!({"$ref": format!("#/components/responses/{status}")}));
        }
        item["responses"] = Value::Object(answers);
        match operation.access {
            Access::Public => item["security"] = json!([]),
            Access::Session => item["security"] = json!([{"session": []}]),
            Access::AnyKey => item["security"] = json!([{"apiKey": []}]),
            Access::AnyScope(scopes) => {
                item["security"] = Value::Array(
                    scopes
                        .iter()
                        .flat_map(|scope| [json!({"apiKey": [scope]}), json!({"session": [scope]})])
                        .collect(),
                );
                item["x-required-scopes"] = json!({"anyOf": scopes});
            }
        }
        // Request parts are renamed below where their types differ from the responses' ones.
        for key in ["parameters", "requestBody"] {
            if let Some(value) = item.get_mut(key).map(Value::take) {
                request_values.push((operation.path, operation.verb.name(), key, value));
            }
        }
        let path = paths
            .entry(operation.path.to_owned())
            .or_insert_with(|| json!({}));
        path[operation.verb.name()] = item;
    }

    let mut schemas = responses.take_definitions(true);
    let renamed = merge_request_schemas(&mut schemas, requests.take_definitions(true));
    for (path, verb, key, mut value) in request_values {
        rename_refs(&mut value, &renamed);
        paths[path][verb][key] = value;
    }

    let document = OpenApiDocument {
        openapi: "3.1.0",
        info: Info {
            title: "Quarry",
            version: env!("CARGO_PKG_VERSION"),
            description: "Quarry's HTTP API. Every 4xx and 5xx answer is `{\"error\": \"<Code>\", \"message\": \"...\"}`. The `/v1` routes act inside the project of the caller's API key; each operation names the scopes it accepts (any one of them suffices).",
        },
        json_schema_dialect: "https://json-schema.org/draft/2020-12/schema",
        tags: tags(operations),
        paths,
        components: Components {
            security_schemes: json!({
                "apiKey": {"type": "http", "scheme": "bearer", "description": "a qk_… key from `quarry key create --scopes …`"},
                "session": {"type": "apiKey", "in": "cookie", "name": "quarry_session", "description": "the web app's session (POST /v1/session); unsafe methods also need the X-CSRF-Token header"},
            }),
            responses: error_answers,
            schemas,
        },
    };
    let mut document = serde_json::to_value(document).expect("the document is plain JSON");
    tuples([&mut document]);
    document
}

/// What `GET /openapi.json` answers. Its paths, responses and schemas are described by the
/// OpenAPI 3.1 specification's own schema, not restated here.
#[derive(Serialize, JsonSchema)]
pub(crate) struct OpenApiDocument {
    #[schemars(extend("const" = "3.1.0"))]
    openapi: &'static str,
    info: Info,
    #[serde(rename = "jsonSchemaDialect")]
    json_schema_dialect: &'static str,
    tags: Vec<Tag>,
    /// Each path's operations by method.
    paths: Map<String, Value>,
    components: Components,
}

#[derive(Serialize, JsonSchema)]
struct Info {
    title: &'static str,
    version: &'static str,
    description: &'static str,
}

#[derive(Serialize, JsonSchema)]
struct Tag {
    name: &'static str,
}

#[derive(Serialize, JsonSchema)]
struct Components {
    #[serde(rename = "securitySchemes")]
    security_schemes: Value,
    /// The error answers operations refer to, by status.
    responses: Map<String, Value>,
    /// The JSON Schemas of every request and response body, by name.
    schemas: Map<String, Value>,
}

/// The summary's longer form: the description given, then who may call.
fn describe(operation: &Operation) -> String {
    let access = match operation.access {
        Access::Public => "No authentication.".to_owned(),
        Access::Session => "Needs the web app's session cookie.".to_owned(),
        Access::AnyKey => "Needs an API key.".to_owned(),
        Access::AnyScope([scope]) => {
            format!("Needs an API key (or session) with the scope `{scope}`.")
        }
        Access::AnyScope(scopes) => format!(
            "Needs an API key (or session) with one of the scopes {}.",
            scopes
                .iter()
                .map(|scope| format!("`{scope}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    if operation.description.is_empty() {
        access
    } else {
        format!("{}\n\n{access}", operation.description)
    }
}

/// The error statuses every operation of `operation`'s kind can answer, with its own.
fn error_statuses(operation: &Operation) -> Vec<u16> {
    let mut statuses = operation.errors.clone();
    if !operation.body.is_empty() {
        // A body that does not parse, is too large or has another content type.
        statuses.extend([400, 413, 415]);
    }
    if operation.query.is_some() || operation.path.contains('{') {
        // A query or path value of the wrong type.
        statuses.push(400);
    }
    if operation.access != Access::Public {
        statuses.extend([401, 403]);
    }
    // A backend failure, no database or too much work in flight, the request deadline.
    statuses.extend([500, 503, 504]);
    statuses.sort_unstable();
    statuses.dedup();
    statuses
}

fn error_answer(status: u16, error: &Value) -> Value {
    let description = match status {
        400 => "The request is malformed (body, query or path value)",
        401 => "No valid API key or session",
        403 => "The key lacks the scope, or names another project",
        404 => "No such resource in this project",
        409 => "The resource is not in a state that allows this",
        413 => "The body or text is too large",
        415 => "The body's content type is not accepted",
        422 => "The request is well-formed but cannot be processed",
        500 => "The server failed",
        503 => "No database configured, or too much work in flight (Retry-After)",
        504 => "Not answered within the request deadline",
        _ => "An error",
    };
    json!({
        "description": description,
        "content": {"application/json": {"schema": error}},
    })
}

/// One media type object: the schema and the example, if any.
fn media(generator: &mut SchemaGenerator, content: &Content) -> Value {
    let mut media = json!({});
    if let Some(schema) = content.schema {
        media["schema"] = schema_value(schema(generator));
    } else if content.content_type != "application/json" {
        // Raw text or a PDF's bytes; an empty body has no text to store.
        media["schema"] = json!({"type": "string", "minLength": 1});
    }
    if let Some(example) = &content.example {
        media["example"] = example.clone();
    }
    media
}

fn schema_value(schema: schemars::Schema) -> Value {
    schema.to_value()
}

/// `{name}` segments of `path`, each a required string parameter.
fn path_parameters(path: &str) -> Vec<Value> {
    path.split('/')
        .filter_map(|part| part.strip_prefix('{')?.strip_suffix('}'))
        .map(|name| json!({"name": name, "in": "path", "required": true, "schema": {"type": "string"}}))
        .collect()
}

/// The properties of a `Query<T>` type, one parameter each (a query value is never JSON
/// `null`: an optional parameter is left out).
fn query_parameters(
    generator: &mut SchemaGenerator,
    query: super::operation::SchemaFn,
) -> Vec<Value> {
    let schema = schema_value(query(generator));
    let object = match schema.get("$ref").and_then(Value::as_str) {
        Some(reference) => {
            let name = reference.rsplit('/').next().unwrap_or_default().to_owned();
            generator
                .definitions_mut()
                .remove(&name)
                .unwrap_or(Value::Null)
        }
        None => schema,
    };
    let required: Vec<&str> = object["required"]
        .as_array()
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = object["properties"].as_object() else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, schema)| {
            let mut schema = without_null(schema.clone());
            let description = schema
                .as_object_mut()
                .and_then(|schema| schema.remove("description"));
            let mut parameter = json!({
                "name": name,
                "in": "query",
                "required": required.contains(&name.as_str()),
                "schema": schema,
            });
            if let Some(description) = description {
                parameter["description"] = description;
            }
            parameter
        })
        .collect()
}

/// `schema` without its `null` alternative (`["integer", "null"]`, `anyOf: [X, {"type":
/// "null"}]`).
fn without_null(mut schema: Value) -> Value {
    if let Some(object) = schema.as_object_mut()
        && object.get("default") == Some(&Value::Null)
    {
        object.remove("default");
    }
    if let Some(types) = schema.get_mut("type").and_then(Value::as_array_mut) {
        types.retain(|kind| kind != "null");
        if types.len() == 1 {
            schema["type"] = types[0].clone();
        }
        return schema;
    }
    if let Some(options) = schema.get("anyOf").and_then(Value::as_array) {
        let kept: Vec<&Value> = options
            .iter()
            .filter(|option| option.get("type").and_then(Value::as_str) != Some("null"))
            .collect();
        if let [only] = kept.as_slice() {
            let mut merged = (*only).clone();
            if let (Some(merged), Some(outer)) = (merged.as_object_mut(), schema.as_object()) {
                for (key, value) in outer {
                    if key != "anyOf" {
                        merged.entry(key.clone()).or_insert_with(|| value.clone());
                    }
                }
            }
            return merged;
        }
    }
    schema
}

/// Adds the request schemas to `schemas`; one whose name is taken by a different response
/// schema becomes `<Name>Input`. Answers the renames.
fn merge_request_schemas(
    schemas: &mut Map<String, Value>,
    requests: Map<String, Value>,
) -> Vec<(String, String)> {
    let renamed: Vec<(String, String)> = requests
        .iter()
        .filter(|(name, schema)| schemas.get(*name).is_some_and(|taken| taken != *schema))
        .map(|(name, _)| (name.clone(), format!("{name}Input")))
        .collect();
    for (name, mut schema) in requests {
        rename_refs(&mut schema, &renamed);
        let name = renamed
            .iter()
            .find(|(old, _)| *old == name)
            .map_or(name, |(_, new)| new.clone());
        schemas.insert(name, schema);
    }
    renamed
}

/// A tuple (`prefixItems: [A, B]`, or the draft-07 `items: [A, B]`) as an array of `A` or `B`
/// of that length: schemathesis 4.32 turns `prefixItems` into draft-07 `items` arrays and then
/// refuses the document it made. Looser by position only.
fn tuples<'a>(values: impl IntoIterator<Item = &'a mut Value>) {
    for value in values {
        match value {
            Value::Object(object) => {
                let members = match (object.remove("prefixItems"), object.get("items")) {
                    (Some(Value::Array(members)), _) => Some(members),
                    (_, Some(Value::Array(members))) => Some(members.clone()),
                    _ => None,
                };
                if let Some(members) = members {
                    object.insert("items".to_owned(), json!({"anyOf": members}));
                }
                tuples(object.values_mut());
            }
            Value::Array(items) => tuples(items.iter_mut()),
            _ => {}
        }
    }
}

/// Points every `$ref` to a renamed schema at its new name.
fn rename_refs(value: &mut Value, renamed: &[(String, String)]) {
    match value {
        Value::Object(object) => {
            for (key, value) in object.iter_mut() {
                if key == "$ref"
                    && let Value::String(reference) = value
                    && let Some((_, new)) = renamed
                        .iter()
                        .find(|(old, _)| *reference == format!("#{COMPONENTS}/{old}"))
                {
                    *reference = format!("#{COMPONENTS}/{new}");
                } else {
                    rename_refs(value, renamed);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| rename_refs(item, renamed)),
        _ => {}
    }
}

/// The tags in the order operations first name them.
fn tags(operations: &[Operation]) -> Vec<Tag> {
    let mut names: Vec<&'static str> = Vec::new();
    for operation in operations {
        if !names.contains(&operation.tag) {
            names.push(operation.tag);
        }
    }
    names.into_iter().map(|name| Tag { name }).collect()
}
