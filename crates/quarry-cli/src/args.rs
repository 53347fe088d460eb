//! Command-line arguments.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Quarry turns unstructured text into structured, validated, grounded data.
#[derive(Debug, Parser)]
#[command(name = "quarry", version = crate::version::VERSION, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Extract from text: emails, URLs, dates, phones, IPs, names or entities with no model
    /// (--target), or the fields of a JSON Schema with a model, grounded to their spans (--schema).
    Extract(ExtractArgs),
    /// Check a model's (or any extractor's) output for the skill against the guardrails: valid
    /// JSON, the target field, value types and formats, and every value grounded in the text.
    Check(CheckArgs),
    /// Serve Quarry over HTTP: the web app at /, the REST API under /v1 (described at
    /// /openapi.json), the extract skill (/skill/extract, /skill/check), MCP at /mcp, /metrics,
    /// /healthz and /readyz; with --db it also works the durable queues.
    Serve(ServeArgs),
    /// Serve Quarry's tools to an agent over the Model Context Protocol on stdin/stdout, as the
    /// local user (every scope) on the database and project (the same tools as /mcp of serve).
    Mcp(McpArgs),
    /// Measure detector throughput (MB/s) and peak memory on a generated corpus.
    Bench(BenchArgs),
    /// Entity types: load them from quarry.yaml (or JSON), list them.
    #[command(subcommand)]
    Type(TypeCommand),
    /// Entities: add, show, list.
    #[command(subcommand)]
    Entity(EntityCommand),
    /// Documents the field agents search: add text, Markdown or PDF files.
    #[command(subcommand)]
    Doc(DocCommand),
    /// Run the extraction pipeline for an entity (all fields, or --fields a,b): queue the run,
    /// work it here and wait (--no-wait only queues it and prints the run id).
    Run(RunArgs),
    /// Queue the failed or blocked fields of an entity again (all, or --fields a,b).
    Retry(RetryArgs),
    /// Work the durable queues (workflow field tasks and conversation episodes) without HTTP,
    /// beside any number of other workers and servers on the same database.
    Worker(WorkerArgs),
    /// The latest result per field of an entity.
    Results(EntityArg),
    /// Approve a pending result: its value is promoted into the entity.
    Approve(ReviewArgs),
    /// Reject a result; with --reason the field is extracted again with that feedback.
    Reject(RejectArgs),
    /// Every result of one field of an entity, superseded ones included.
    History(HistoryArgs),
    /// API keys for the REST API.
    #[command(subcommand)]
    Key(KeyCommand),
    /// Project corrections: short rules ("revenue is always in USD") that every matching
    /// extraction prompt carries, for the project, an entity type or one field.
    #[command(subcommand)]
    Correction(CorrectionCommand),
    /// Conversation episodes: store one (its graph is extracted on the durable queue), or work
    /// the queue.
    #[command(subcommand)]
    Episode(EpisodeCommand),
    /// The conversation graph: find entities, show one with its episodes, its neighbours.
    #[command(subcommand)]
    Graph(GraphCommand),
    /// Print a completion script for a shell, e.g. `quarry completions bash >
    /// ~/.local/share/bash-completion/completions/quarry`.
    Completions(CompletionsArgs),
    /// GGUF models for `--model local:NAME`, kept in the model directory ($QUARRY_MODELS_DIR,
    /// default ~/.local/share/quarry/models): list, pull, rm, path. A command with no model
    /// chosen uses the one named `default`, or the only one installed.
    #[command(subcommand)]
    Model(ModelCommand),
    /// Print quarry's man page (roff) on stdout, e.g. `quarry man | man -l -`, or write one page
    /// per command into --dir.
    Man(ManArgs),
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell the script is for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Subcommand)]
pub enum ModelCommand {
    /// The installed models: name, architecture, quantization, size and path.
    List {
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Download a GGUF model into the model directory: resumable (run it again after an
    /// interruption), its size and SHA-256 checked before it is kept.
    Pull(PullArgs),
    /// Remove an installed model.
    Rm {
        /// The model's name (see `quarry model list`).
        name: String,
    },
    /// Print an installed model's file path.
    Path {
        /// The model's name (see `quarry model list`).
        name: String,
    },
}

#[derive(Debug, Args)]
pub struct PullArgs {
    /// A Hugging Face repository OWNER/REPO (with --file), a URL, or a local .gguf file.
    pub source: String,
    /// The GGUF file in the repository, e.g. SmolLM2-135M-Instruct-Q4_K_M.gguf.
    #[arg(long)]
    pub file: Option<String>,
    /// The repository's branch, tag or commit.
    #[arg(long, default_value = "main")]
    pub revision: String,
    /// The name to install it as (default: the file's name without .gguf); `default` makes it
    /// the model commands use when none is chosen.
    #[arg(long)]
    pub name: Option<String>,
    /// The SHA-256 the file must have (default: the one the hub announces, if any).
    #[arg(long, value_name = "HEX")]
    pub sha256: Option<String>,
    /// Replace a model of the same name.
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write quarry.1 and a page per subcommand (quarry-entity-add.1, …) into this directory
    /// instead of printing quarry.1.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum EpisodeCommand {
    /// Store a conversation turn as an episode and queue its graph extraction; then work the
    /// queue until it is empty (unless --no-wait, which leaves it to `quarry serve`).
    Add {
        /// What the user said.
        #[arg(long)]
        user: String,
        /// What the assistant answered.
        #[arg(long)]
        assistant: String,
        /// Skip the model: a JSON file (or - for stdin) with {"entities": [...],
        /// "relationships": [...]} in the extraction prompt's shape.
        #[arg(long)]
        graph: Option<PathBuf>,
        /// Only store and queue; `quarry serve` or `quarry episode process` extracts later.
        #[arg(long)]
        no_wait: bool,
        #[command(flatten)]
        graph_args: GraphArgs,
        #[command(flatten)]
        model: ModelArgs,
        #[command(flatten)]
        queue: QueueArgs,
        #[command(flatten)]
        store: StoreArgs,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Show an episode and the state of its extraction.
    Show {
        /// The episode's id (printed by `episode add`).
        id: String,
        #[command(flatten)]
        store: StoreArgs,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Work the queue until no episode is pending (episodes whose worker died are taken over
    /// once their lease expires; transient failures are retried with a backoff).
    Process {
        #[command(flatten)]
        graph_args: GraphArgs,
        #[command(flatten)]
        model: ModelArgs,
        #[command(flatten)]
        queue: QueueArgs,
        #[command(flatten)]
        store: StoreArgs,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Queue failed episodes again (attempts from zero), the named ones or with --failed every
    /// failed one of the project; then work the queue as `episode add` does (unless --no-wait).
    Retry {
        /// Episodes to retry (each must be failed).
        #[arg(required_unless_present = "failed", conflicts_with = "failed")]
        ids: Vec<String>,
        /// Retry every failed episode of the project.
        #[arg(long)]
        failed: bool,
        /// Only queue them; `quarry serve` or `quarry episode process` extracts later.
        #[arg(long)]
        no_wait: bool,
        #[command(flatten)]
        graph_args: GraphArgs,
        #[command(flatten)]
        model: ModelArgs,
        #[command(flatten)]
        queue: QueueArgs,
        #[command(flatten)]
        store: StoreArgs,
        #[command(flatten)]
        output: OutputArgs,
    },
}

#[derive(Debug, Subcommand)]
pub enum GraphCommand {
    /// Entities whose names contain QUERY, then entities close in meaning.
    Entities {
        /// Words of a name or a description (all entities when omitted).
        query: Option<String>,
        /// Only entities of this graph type, e.g. person.
        #[arg(long = "type")]
        entity_type: Option<String>,
        /// At most this many entities.
        #[arg(long, default_value_t = 20)]
        limit: usize,
        #[command(flatten)]
        store: StoreArgs,
        #[command(flatten)]
        output: OutputArgs,
        #[command(flatten)]
        embedder: EmbedderArgs,
    },
    /// One entity with its relations (both directions) and the episodes that mention it.
    Show {
        /// The graph entity's id.
        id: String,
        #[command(flatten)]
        store: StoreArgs,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Entities within --depth hops, relations followed in both directions.
    Neighbors {
        /// The graph entity's id.
        id: String,
        /// Hops to follow from the entity.
        #[arg(long, default_value_t = 2)]
        depth: usize,
        #[command(flatten)]
        store: StoreArgs,
        #[command(flatten)]
        output: OutputArgs,
    },
}

/// The database and project every team command acts on.
#[derive(Debug, Args)]
pub struct StoreArgs {
    /// SQLite path or postgres:// URL (default: `db` in quarry.toml, else quarry.db).
    #[arg(long, env = "QUARRY_DB")]
    pub db: Option<String>,
    /// Project name (default: `project` in quarry.toml, else "default").
    #[arg(long, env = "QUARRY_PROJECT")]
    pub project: Option<String>,
}

/// How a command that prints what it found or did writes it.
#[derive(Debug, Args)]
pub struct OutputArgs {
    /// Print JSON instead of tables.
    #[arg(long)]
    pub json: bool,
}

/// The embedder of a command that searches by meaning or indexes what it stores.
#[derive(Debug, Args)]
pub struct EmbedderArgs {
    /// How documents and entities are embedded for search by meaning: auto (MiniLM when its
    /// files are found, else hashing), hashing, minilm, or provider:model (default:
    /// `embedder` in quarry.toml, else auto).
    #[arg(long, env = "QUARRY_EMBEDDER")]
    pub embedder: Option<String>,
    /// Base URL of the embeddings server for a provider:model embedder, e.g. with
    /// --embedder openai-compatible:NAME (include /v1; default: `embedder-base-url` in
    /// quarry.toml, else --base-url when the command also takes a model).
    #[arg(long, env = "QUARRY_EMBEDDER_BASE_URL")]
    pub embedder_base_url: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum TypeCommand {
    /// Load entity types from a YAML or JSON file (`entity_types: [...]` or one type).
    Load {
        /// The YAML or JSON file, e.g. quarry.yaml (see examples/quarry.yaml).
        file: PathBuf,
        #[command(flatten)]
        store: StoreArgs,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// List the project's entity types with their fields.
    List {
        #[command(flatten)]
        store: StoreArgs,
        #[command(flatten)]
        output: OutputArgs,
    },
}

#[derive(Debug, Subcommand)]
pub enum EntityCommand {
    /// Add an entity of a type and print its id.
    Add {
        /// Entity type slug.
        #[arg(long = "type")]
        entity_type: String,
        /// The entity's title, e.g. "Acme Corp".
        #[arg(long)]
        title: String,
        /// The id of a parent entity.
        #[arg(long)]
        parent: Option<String>,
        /// Initial field values as a JSON object.
        #[arg(long)]
        fields: Option<String>,
        /// Fields extraction must never overwrite, comma-separated.
        #[arg(long)]
        lock: Option<String>,
        #[command(flatten)]
        store: StoreArgs,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Show an entity with its field values, as JSON.
    Show {
        /// The entity's id (printed by `entity add`).
        id: String,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// List the project's entities.
    List {
        /// Only entities of this type slug.
        #[arg(long = "type")]
        entity_type: Option<String>,
        #[command(flatten)]
        store: StoreArgs,
        #[command(flatten)]
        output: OutputArgs,
    },
}

#[derive(Debug, Subcommand)]
pub enum DocCommand {
    /// Add documents to the project (idempotent per title and text) and index them.
    Add {
        /// Text, Markdown or PDF (text layer) files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Link the documents to this entity.
        #[arg(long)]
        entity: Option<String>,
        #[command(flatten)]
        store: StoreArgs,
        #[command(flatten)]
        output: OutputArgs,
        #[command(flatten)]
        embedder: EmbedderArgs,
    },
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The entity's id.
    pub entity: String,
    /// Only these fields, comma-separated.
    #[arg(long)]
    pub fields: Option<String>,
    /// Only queue the run and print its id; `quarry worker` or `quarry serve` works it.
    #[arg(long)]
    pub no_wait: bool,
    /// Additional instructions for every field of this run (recorded on the run).
    #[arg(long, value_name = "TEXT")]
    pub instructions: Option<String>,
    /// Additional instructions for one field, as FIELD=TEXT (repeatable; after --instructions).
    #[arg(long, value_name = "FIELD=TEXT", value_parser = parse_field_instructions)]
    pub field_instructions: Vec<(String, String)>,
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub embedder: EmbedderArgs,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub queue: QueueArgs,
}

/// `--field-instructions FIELD=TEXT`.
fn parse_field_instructions(value: &str) -> Result<(String, String), String> {
    match value.split_once('=') {
        Some((field, text)) if !field.trim().is_empty() && !text.trim().is_empty() => {
            Ok((field.trim().to_owned(), text.trim().to_owned()))
        }
        _ => Err(format!(
            "'{value}' is not FIELD=TEXT; give e.g. revenue=\"in USD\""
        )),
    }
}

#[derive(Debug, Args)]
pub struct RetryArgs {
    /// The entity's id.
    pub entity: String,
    /// Only these fields, comma-separated (default: every failed or blocked field).
    #[arg(long)]
    pub fields: Option<String>,
    /// Only queue them again; a worker picks them up.
    #[arg(long)]
    pub no_wait: bool,
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub embedder: EmbedderArgs,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub queue: QueueArgs,
}

#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// Seconds a claim lasts without a heartbeat (another worker takes it over after that).
    #[arg(long, default_value_t = 30)]
    pub lease_secs: u64,
    /// Seconds the tasks in flight get to finish after SIGTERM or Ctrl-C before they are
    /// abandoned (their leases expire and another worker takes them over) and the process exits.
    #[arg(long, default_value_t = 5)]
    pub shutdown_grace_secs: u64,
    #[command(flatten)]
    pub graph: GraphArgs,
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub embedder: EmbedderArgs,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub queue: QueueArgs,
}

#[derive(Debug, Args)]
pub struct EntityArg {
    /// The entity's id.
    pub entity: String,
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// What approving and rejecting share. An approval can let a run that waited for the field go
/// on, and a rejection with a reason queues the field's feedback rerun: either is worked here
/// with the model unless --no-wait.
#[derive(Debug, Args)]
pub struct ReviewArgs {
    /// The result's id (see `quarry results`).
    pub result: String,
    /// Only queue the run the review starts or resumes; do not work it here.
    #[arg(long)]
    pub no_wait: bool,
    /// Who reviews (default: $USER).
    #[arg(long)]
    pub reviewer: Option<String>,
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub embedder: EmbedderArgs,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub queue: QueueArgs,
}

#[derive(Debug, Args)]
pub struct RejectArgs {
    /// Why the value is wrong; the field is extracted again with it as feedback (without a
    /// reason the result is only marked rejected).
    #[arg(long)]
    pub reason: Option<String>,
    #[command(flatten)]
    pub review: ReviewArgs,
}

#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// The entity's id.
    pub entity: String,
    /// The field's name, as in its entity type.
    pub field: String,
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Subcommand)]
pub enum KeyCommand {
    /// Create a key; it is printed once and only its hash is stored.
    #[command(after_help = scopes_help())]
    Create {
        /// What the key may do, comma-separated (see the scopes below), e.g.
        /// extraction:submit,extraction:trigger,entities:read.
        #[arg(long)]
        scopes: String,
        /// Who holds the key (the reviewer recorded for its reviews).
        #[arg(long, default_value = "cli")]
        name: String,
        #[command(flatten)]
        store: StoreArgs,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Revoke a key of the project: requests with it, and web app sessions signed in with it,
    /// are refused from then on.
    Revoke {
        /// The key's prefix (qk_ and 8 hex digits, the start of the key) or the whole key.
        key: String,
        #[command(flatten)]
        store: StoreArgs,
    },
}

#[derive(Debug, Subcommand)]
pub enum CorrectionCommand {
    /// Add a correction: for the whole project, an entity type (--type), or one field of it
    /// (--type and --field). Prints its id.
    Add {
        /// The rule, 1 to 500 characters, e.g. "Revenue is always in USD."
        text: String,
        /// Only for this entity type.
        #[arg(long = "type", value_name = "SLUG")]
        entity_type: Option<String>,
        /// Only for this field of --type.
        #[arg(long, requires = "entity_type")]
        field: Option<String>,
        #[command(flatten)]
        store: StoreArgs,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// The project's corrections, oldest first.
    List {
        #[command(flatten)]
        store: StoreArgs,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Remove a correction by its id.
    Rm {
        /// The correction's id.
        id: String,
        #[command(flatten)]
        store: StoreArgs,
    },
}

#[derive(Debug, Args)]
pub struct ExtractArgs {
    /// What to extract: email, url, date, entity, name, phone or ip.
    #[arg(long, conflicts_with = "schema")]
    pub target: Option<String>,
    /// Extract the fields of this schema (JSON Schema or Quarry YAML) with a model instead.
    #[arg(long)]
    pub schema: Option<PathBuf>,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub agent: AgentArgs,
    #[command(flatten)]
    pub input: InputArgs,
    /// Batch mode (no --text or --file): read one JSON object per line on stdin ({"text", "now"?,
    /// "target"?, "region"?}; with --schema just {"text"}) and write one result per line on
    /// stdout, in order; a failed line gets {"error", "message", "line"} in its place. With
    /// --schema, --concurrency documents are extracted at once.
    #[arg(long, conflicts_with_all = ["text", "file"])]
    pub jsonl: bool,
    /// Reference time for relative dates, RFC 3339 (default: now); with --schema, what a date
    /// field's candidates ("next Friday") are read against.
    #[arg(long)]
    pub now: Option<String>,
    /// Default region for phone numbers without a country code (ISO 3166 alpha-2).
    #[arg(long, default_value = "US")]
    pub region: String,
    /// Add every match with code-point offsets, normalised value and type.
    #[arg(long)]
    pub detail: bool,
    /// With --schema: when fields stay unresolved, ask in the terminal and try again with the
    /// answer.
    #[arg(long, requires = "schema")]
    pub interactive: bool,
    /// With --schema: print per field its value, spans, grounding, confidence and attempts, and
    /// the tokens used.
    #[arg(long, requires = "schema")]
    pub explain: bool,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The target the output answers: email, url, date, entity, name, phone or ip.
    #[arg(long)]
    pub target: String,
    /// The output to check, e.g. '{"email": "contact@example.com"}'.
    #[arg(long)]
    pub output: String,
    #[command(flatten)]
    pub input: InputArgs,
}

/// Which model answers, and how the schema agent may use it.
#[derive(Debug, Args)]
pub struct ModelArgs {
    /// provider:model, e.g. openai:gpt-4o-mini, ollama:qwen2.5:3b (native API),
    /// anthropic:claude-sonnet-4-5, gemini:gemini-2.5-flash, azure:DEPLOYMENT, vllm:M,
    /// llamacpp:, lmstudio:M, openai-compatible:M with --base-url, or local:PATH.gguf (a GGUF
    /// model run inside this process; local:NAME is NAME.gguf in $QUARRY_MODELS_DIR, default
    /// ~/.local/share/quarry/models) (default: `model` in quarry.toml).
    #[arg(long, env = "QUARRY_MODEL")]
    pub model: Option<String>,
    /// Base URL of the model's server: an OpenAI-compatible one with /v1
    /// (http://localhost:8000/v1), Anthropic's API, an Ollama host or an Azure OpenAI resource
    /// (https://RESOURCE.openai.azure.com) (default: `base-url` in quarry.toml).
    #[arg(long)]
    pub base_url: Option<String>,
    /// An extra HTTP header for every request to the model's provider, as 'Name: value'
    /// (repeatable), e.g. for a gateway; added to those of `[headers]` in quarry.toml and of
    /// $QUARRY_HEADERS (one per line).
    #[arg(long = "header", value_name = "NAME: VALUE", value_parser = header_flag)]
    pub headers: Vec<String>,
    /// Transport retries per model call (5xx, 429 and connection errors, with backoff).
    #[arg(long, default_value_t = 3)]
    pub retries: u32,
    /// Model calls in flight at once (for `worker` and `serve`, also the field tasks worked at
    /// once; for `extract --schema --jsonl`, the documents extracted at once).
    #[arg(long, default_value_t = 8)]
    pub concurrency: usize,
    /// For a local: model, replies decoded together at most; more wait for a place (default:
    /// `parallel` in quarry.toml's [local.models.NAME] or [local], else twice the CPUs, 2 to 8).
    #[arg(long)]
    pub parallel: Option<usize>,
    /// For a local: model, its context window in tokens, at most the model's own (default:
    /// quarry.toml's [local], else the model's).
    #[arg(long)]
    pub context: Option<usize>,
    /// For a local: model, MiB of key-value state: of replies being decoded and of prompts kept
    /// to start later replies from (default: quarry.toml's [local], else 512).
    #[arg(long)]
    pub cache_mib: Option<usize>,
}

impl ModelArgs {
    /// The serving settings the flags give (unset ones come from quarry.toml, then defaults).
    pub fn local_flags(&self) -> quarry_llm::LocalSettings {
        quarry_llm::LocalSettings {
            parallel: self.parallel,
            cache_mib: self.cache_mib,
            context: self.context,
        }
    }
}

/// How the schema agent uses the model (`extract --schema`, and the chat of `serve` and `mcp`).
#[derive(Debug, Args)]
pub struct AgentArgs {
    /// Model turns before unresolved fields are escalated to a person.
    #[arg(long, default_value_t = 3)]
    pub max_attempts: u32,
    /// Stop before a model call that could take the run past this many tokens.
    #[arg(long)]
    pub max_tokens_budget: Option<u64>,
}

/// How often a unit of queued work (a workflow field task, an episode) may be claimed.
#[derive(Debug, Args)]
pub struct QueueArgs {
    /// Claims of a workflow field task or an episode before it fails for good: a transient
    /// model failure and a worker that died mid-task each use one.
    #[arg(long, default_value_t = 5)]
    pub task_attempts: u32,
}

/// The scopes `key create --scopes` takes, each with what it allows.
fn scopes_help() -> String {
    let width = quarry_server::keys::SCOPE_DESCRIPTIONS
        .iter()
        .map(|(scope, _)| scope.len())
        .max()
        .unwrap_or(0);
    let mut help = String::from("Scopes:\n");
    for (scope, allows) in quarry_server::keys::SCOPE_DESCRIPTIONS {
        help.push_str(&format!("  {scope:<width$}  {allows}\n"));
    }
    help
}

/// `--header` values must read `Name: value`.
fn header_flag(value: &str) -> Result<String, String> {
    match quarry_llm::parse_header(value) {
        Some(_) => Ok(value.to_owned()),
        None => Err(format!("expected 'Name: value', got '{value}'")),
    }
}

/// Where the source text comes from: `--text`, `--file`, or stdin.
#[derive(Debug, Args)]
pub struct InputArgs {
    /// The text to read.
    #[arg(long, conflicts_with = "file")]
    pub text: Option<String>,
    /// Read the text from this file (UTF-8).
    #[arg(long)]
    pub file: Option<PathBuf>,
    /// Refuse texts larger than this many bytes.
    #[arg(long, default_value_t = quarry_detect::skill::DEFAULT_MAX_INPUT_BYTES)]
    pub max_bytes: usize,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on; port 0 picks a free port (printed on stderr).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub addr: SocketAddr,
    /// Largest request body accepted, in bytes.
    #[arg(long, default_value_t = quarry_server::DEFAULT_BODY_LIMIT)]
    pub max_body_bytes: usize,
    #[command(flatten)]
    pub host: HostArgs,
    /// Mark the web app's session cookie Secure (served over TLS by a proxy that does not send
    /// X-Forwarded-Proto: https).
    #[arg(long)]
    pub secure_cookies: bool,
    /// A Host name (or host:port) /mcp accepts besides localhost, 127.0.0.1 and ::1, e.g. the
    /// server's public name behind a proxy; repeat for several.
    #[arg(long = "mcp-allowed-host", value_name = "HOST")]
    pub mcp_allowed_hosts: Vec<String>,
    /// How log lines on stderr are written: text for people, json for log collectors (one
    /// JSON object per line; every request logs one with request_id, method, route, status,
    /// latency_ms and project).
    #[arg(long, env = "QUARRY_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    #[command(flatten)]
    pub limits: ServeLimitArgs,
}

/// How `quarry serve` writes its log lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// How `quarry serve` bounds connections, requests and extraction work.
#[derive(Debug, Args)]
#[command(next_help_heading = "Limits")]
pub struct ServeLimitArgs {
    /// Seconds a client may take to send a request head, from its first byte.
    #[arg(long, default_value_t = 10)]
    pub header_timeout_secs: u64,
    /// Seconds a connection may stay open with no request in flight (kept alive or silent).
    #[arg(long, default_value_t = 60)]
    pub idle_timeout_secs: u64,
    /// Connections open at once; at the cap a new connection closes the oldest one with no
    /// request in flight. Lowered to fit the process's open-file limit.
    #[arg(long, default_value_t = quarry_server::DEFAULT_MAX_CONNECTIONS)]
    pub max_connections: usize,
    /// Longest request line (method, URI and version), in bytes; longer ones get 414.
    #[arg(long, default_value_t = 8192)]
    pub max_uri_bytes: usize,
    /// Seconds a request may take to be answered (body upload included) before 504
    /// DeadlineExceeded; its queued extraction is dropped.
    #[arg(long, default_value_t = 60)]
    pub request_timeout_secs: u64,
    /// Extractions (/skill/extract, /skill/check) running at once (default: one per CPU).
    #[arg(long)]
    pub max_extractions: Option<usize>,
    /// Bytes of input admitted for extraction at once across requests; a request that does not
    /// fit within --overload-wait-ms gets 503 Overloaded with Retry-After.
    #[arg(long, default_value_t = quarry_server::DEFAULT_BUDGET_BYTES)]
    pub extraction_budget_bytes: usize,
    /// Milliseconds a request waits for extraction budget before 503 Overloaded.
    #[arg(long, default_value_t = 1000)]
    pub overload_wait_ms: u64,
    /// Seconds requests and workflow tasks in flight get to finish after SIGTERM or Ctrl-C
    /// before they are abandoned and the process exits.
    #[arg(long, default_value_t = 5)]
    pub shutdown_grace_secs: u64,
    /// Seconds a chat turn in flight holds its conversation between heartbeats (written every
    /// third of it): a turn whose server died is shown failed after this, and the conversation
    /// takes the next message.
    #[arg(long, default_value_t = 30)]
    pub turn_lease_secs: u64,
}

/// What a long-running host (`serve`, `mcp`) works with: the model, the database, the embedder,
/// the graph's settings and the in-process workers.
#[derive(Debug, Args)]
pub struct HostArgs {
    /// The model behind POST /v1/chat and the default pipeline agent (optional).
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub agent: AgentArgs,
    #[command(flatten)]
    pub queue: QueueArgs,
    /// Database (SQLite path or postgres:// URL; default: `db` in quarry.toml; for serve, none
    /// serves the skill endpoints only; for mcp, quarry.db).
    #[arg(long, env = "QUARRY_DB")]
    pub db: Option<String>,
    #[command(flatten)]
    pub embedder: EmbedderArgs,
    #[command(flatten)]
    pub graph: GraphArgs,
    /// Do not work the queues in this process (leave them to `quarry worker` processes).
    #[arg(long)]
    pub no_worker: bool,
}

#[derive(Debug, Args)]
pub struct McpArgs {
    #[command(flatten)]
    pub host: HostArgs,
    /// Project name (default: `project` in quarry.toml, else "default").
    #[arg(long, env = "QUARRY_PROJECT")]
    pub project: Option<String>,
}

/// How conversation episodes become graph entities.
#[derive(Debug, Args)]
pub struct GraphArgs {
    /// Entity types the graph keeps, comma-separated
    /// (default: person,place,project,technology,concept,organization).
    #[arg(long)]
    pub graph_types: Option<String>,
    /// Names never stored as entities, comma-separated
    /// (default: good morning,good night,hello,goodbye,thanks,thank you).
    #[arg(long)]
    pub stoplist: Option<String>,
    /// The conversation graph's own model, as provider:model (default: --model), served at the
    /// same --base-url.
    #[arg(long, env = "QUARRY_GRAPH_MODEL")]
    pub graph_model: Option<String>,
    /// The graph model's sampling temperature (default 0.1).
    #[arg(long)]
    pub graph_temperature: Option<f32>,
    /// The graph model's output budget per episode, in tokens (default 1500).
    #[arg(long)]
    pub graph_max_tokens: Option<u32>,
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Size of the generated corpus in MiB.
    #[arg(long, default_value_t = 8)]
    pub size_mib: usize,
    /// Share of sentences (0.0–1.0) that carry a value; the rest is filler prose.
    #[arg(long, default_value_t = 0.25)]
    pub value_share: f64,
    /// Passes over the corpus per target (the best pass is reported).
    #[arg(long, default_value_t = 3)]
    pub passes: usize,
    /// Print the figures as JSON.
    #[arg(long)]
    pub json: bool,
    /// Write the generated corpus (of --size-mib and --value-share) to this file and exit, to
    /// measure another host (e.g. the browser package's benchmark) on the same text.
    #[arg(long, value_name = "PATH")]
    pub write_corpus: Option<String>,
    /// Internal: measure one target in this fresh process (first-call time, or with
    /// `--probe-mib` the peak memory of one text of that size) and print it; `quarry bench`
    /// runs itself with this for every target.
    #[arg(long, hide = true)]
    pub probe: Option<String>,
    #[arg(long, hide = true)]
    pub probe_mib: Option<usize>,
    /// Measure the embedded model in this GGUF instead: prompt and generated tokens per second,
    /// time to first token, the token mask's cost, peak memory and `extract --schema`'s wall
    /// time (scripts/local_model_bench.py puts llama.cpp beside them).
    #[arg(long, value_name = "PATH.gguf")]
    pub local_model: Option<std::path::PathBuf>,
    /// With --local-model: the prompt to measure (default: a 4 KB invoice text).
    #[arg(long, value_name = "FILE", requires = "local_model")]
    pub prompt_file: Option<std::path::PathBuf>,
    /// With --local-model: tokens to generate past the prompt.
    #[arg(long, default_value_t = 128, requires = "local_model")]
    pub generate: usize,
}
