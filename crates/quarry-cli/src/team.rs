//! The team commands: entity types, entities, documents, keys, pipeline runs and review.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::Duration;

use quarry_core::ErrorCode;
use quarry_core::model::{ApiKey, Entity, ExtractionResult, NewEntity, ReviewDecision, RunStatus};
use quarry_pipeline::documents::Documents;
use quarry_pipeline::{
    FieldOutcome, PipelineError, RunReport, WorkerConfig, check_webhook_targets, load_entity_types,
};
use serde_json::{Map, Value, json};

use crate::agents;
use crate::args::{
    DocCommand, EntityArg, EntityCommand, HistoryArgs, KeyCommand, RetryArgs, ReviewArgs, RunArgs,
    TypeCommand,
};
use crate::document_file::read_document;
use crate::document_file::read_file;
use crate::failure::{Failure, storage};
use crate::owner::worker_owner;
use crate::table::{print_json, print_results, print_table};
use crate::workspace::Workspace;

const MAX_DOCUMENT_BYTES: usize = 64 * 1024 * 1024;

fn pipeline_failure(error: PipelineError) -> Failure {
    Failure::coded(error.code(), error)
}

pub fn types(command: TypeCommand) -> Result<ExitCode, Failure> {
    match command {
        TypeCommand::Load {
            file,
            store,
            output,
        } => {
            let text = read_file(&file, MAX_DOCUMENT_BYTES)?;
            let hosts = crate::outbound::outbound_policy();
            let loaded = load_entity_types(&text)
                .and_then(|types| {
                    for entity_type in &types {
                        check_webhook_targets(entity_type, &hosts)?;
                    }
                    Ok(types)
                })
                .map_err(|error| {
                    Failure::coded(
                        ErrorCode::InvalidEntityType,
                        format!("{}: {error}", file.display()),
                    )
                })?;
            let ws = Workspace::open_printing(&store, &output)?;
            for entity_type in &loaded {
                ws.runtime
                    .block_on(ws.store.put_entity_type(&ws.project, entity_type))
                    .map_err(storage)?;
            }
            if ws.json {
                return print_json(&loaded);
            }
            for entity_type in &loaded {
                println!(
                    "loaded entity type '{}' ({} fields)",
                    entity_type.slug,
                    entity_type.fields.len()
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        TypeCommand::List { store, output } => {
            let ws = Workspace::open_printing(&store, &output)?;
            let listed = ws
                .runtime
                .block_on(ws.store.list_entity_types(&ws.project))
                .map_err(storage)?;
            if ws.json {
                return print_json(&listed);
            }
            let rows = listed
                .iter()
                .map(|t| {
                    let fields: Vec<&str> = t.fields.iter().map(|f| f.name.as_str()).collect();
                    vec![t.slug.clone(), fields.join(", ")]
                })
                .collect();
            print_table(&["type", "fields"], rows);
            Ok(ExitCode::SUCCESS)
        }
    }
}

pub fn entities(command: EntityCommand) -> Result<ExitCode, Failure> {
    match command {
        EntityCommand::Add {
            entity_type,
            title,
            parent,
            fields,
            lock,
            store,
            output,
        } => {
            let fields: Map<String, Value> = match fields {
                Some(raw) => serde_json::from_str(&raw).map_err(|error| {
                    Failure::coded(
                        ErrorCode::InvalidArguments,
                        format!("--fields must be a JSON object: {error}"),
                    )
                })?,
                None => Map::new(),
            };
            let mut metadata = Map::new();
            if let Some(lock) = lock {
                let locked: Vec<Value> = lock
                    .split(',')
                    .map(str::trim)
                    .filter(|f| !f.is_empty())
                    .map(Value::from)
                    .collect();
                metadata.insert("locked_fields".to_owned(), Value::Array(locked));
            }
            let ws = Workspace::open_printing(&store, &output)?;
            let known = ws
                .runtime
                .block_on(ws.store.get_entity_type(&ws.project, &entity_type))
                .map_err(storage)?;
            if known.is_none() {
                return Err(Failure::coded(
                    ErrorCode::UnknownEntityType,
                    format!(
                        "no entity type '{entity_type}'; load it first with quarry type load quarry.yaml"
                    ),
                ));
            }
            let entity = NewEntity {
                entity_type,
                title,
                parent_id: parent,
                fields,
                metadata,
            };
            let (created, run) = ws
                .runtime
                .block_on(quarry_pipeline::on_create::create_entity(
                    ws.store.as_ref(),
                    &ws.project,
                    &entity,
                    quarry_pipeline::PipelineConfig::default().max_attempts,
                ))
                .map_err(pipeline_failure)?;
            if let Some(run) = &run {
                eprintln!(
                    "queued run {} ({} says extract_on_create); `quarry worker` or `quarry serve` \
                     works it",
                    run.id, created.entity_type
                );
            }
            if ws.json {
                return print_json(&created);
            }
            println!("{}", created.id);
            Ok(ExitCode::SUCCESS)
        }
        EntityCommand::Show { id, store } => {
            let ws = Workspace::open(&store)?;
            print_json(&ws.entity(&id)?)
        }
        EntityCommand::List {
            entity_type,
            store,
            output,
        } => {
            let ws = Workspace::open_printing(&store, &output)?;
            if let Some(slug) = &entity_type {
                let known = ws
                    .runtime
                    .block_on(ws.store.get_entity_type(&ws.project, slug))
                    .map_err(storage)?;
                if known.is_none() {
                    return Err(Failure::coded(
                        ErrorCode::NotFound,
                        format!("no entity type '{slug}' in this project"),
                    ));
                }
            }
            let listed = ws
                .runtime
                .block_on(
                    ws.store
                        .list_entities(&ws.project, entity_type.as_deref(), 1000),
                )
                .map_err(storage)?;
            if ws.json {
                return print_json(&listed);
            }
            let rows = listed
                .iter()
                .map(|e| vec![e.id.clone(), e.entity_type.clone(), e.title.clone()])
                .collect();
            print_table(&["id", "type", "title"], rows);
            Ok(ExitCode::SUCCESS)
        }
    }
}

pub fn documents(command: DocCommand) -> Result<ExitCode, Failure> {
    let DocCommand::Add {
        files,
        entity,
        store,
        output,
        embedder,
    } = command;
    // Read every file first: a bad one adds nothing.
    let mut texts = Vec::new();
    for file in &files {
        let text = read_document(file, MAX_DOCUMENT_BYTES)?;
        if text.trim().is_empty() {
            return Err(Failure::coded(
                ErrorCode::EmptyInput,
                format!("{} is empty", file.display()),
            ));
        }
        let title = file.file_name().map_or_else(
            || file.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        texts.push((title, text));
    }
    let ws = Workspace::open_printing(&store, &output)?;
    if let Some(entity) = &entity {
        ws.entity(entity)?;
    }
    // Indexing only computes the new documents' chunks and embeddings for the store: no search
    // runs here, so the index is not rebuilt first.
    let documents = Documents::new(ws.store.clone(), ws.retriever(&embedder, false)?);
    let mut added = Vec::new();
    let progress = crate::progress::bar(texts.len(), "adding documents");
    // Idempotent: a title and text already stored gives back that document (noted on stderr);
    // a step failing after the document was stored is a warning, not an error.
    for (title, text) in &texts {
        let outcome = ws
            .runtime
            .block_on(documents.add(&ws.project, title, text, entity.as_slice()))
            .map_err(storage)?;
        progress.suspend(|| {
            if !outcome.created {
                eprintln!(
                    "note: '{title}' was already stored as {}",
                    outcome.document.id
                );
            }
            for warning in &outcome.warnings {
                eprintln!("warning: {warning}");
            }
        });
        added.push(outcome.document);
        progress.inc(1);
    }
    progress.finish_and_clear();
    if ws.json {
        return print_json(&added);
    }
    for document in &added {
        println!("{}  {}", document.id, document.title);
    }
    Ok(ExitCode::SUCCESS)
}

pub fn keys(command: KeyCommand) -> Result<ExitCode, Failure> {
    let (scopes, name, store, output) = match command {
        KeyCommand::Create {
            scopes,
            name,
            store,
            output,
        } => (scopes, name, store, output),
        KeyCommand::Revoke { key, store } => return revoke_key(&key, &store),
    };
    let scopes = quarry_server::keys::parse_scopes(&scopes)
        .map_err(|error| Failure::coded(ErrorCode::InvalidScopes, error))?;
    let made = quarry_server::keys::generate()
        .map_err(|error| Failure::coded(ErrorCode::KeyError, error))?;
    let ws = Workspace::open_printing(&store, &output)?;
    let key = ApiKey {
        // The prefix is random and unique (the store refuses a duplicate), so it names the key.
        id: made.prefix.clone(),
        project_id: ws.project.clone(),
        name,
        prefix: made.prefix.clone(),
        secret_hash: made.hash,
        scopes,
        created_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
        revoked: false,
    };
    ws.runtime
        .block_on(ws.store.create_api_key(&key))
        .map_err(storage)?;
    if ws.json {
        // The secret beside what the key is (never its hash).
        print_json(&json!({
            "key": made.secret,
            "prefix": key.prefix,
            "name": key.name,
            "scopes": key.scopes,
            "project": key.project_id,
            "created_at": key.created_at,
        }))?;
    } else {
        println!("{}", made.secret);
    }
    if std::io::stderr().is_terminal() {
        eprintln!("Store this key now: it is shown once and only its hash is kept.");
    }
    Ok(ExitCode::SUCCESS)
}

/// `quarry key revoke KEY`: by its prefix (`qk_` and 8 hex digits) or the whole key.
fn revoke_key(key: &str, store: &crate::args::StoreArgs) -> Result<ExitCode, Failure> {
    let key = key.trim();
    let prefix = quarry_server::keys::prefix_of(key)
        .or_else(|| {
            let hex = key.strip_prefix("qk_")?;
            (hex.len() == 8 && hex.bytes().all(|b| b.is_ascii_hexdigit())).then_some(key)
        })
        .ok_or_else(|| {
            Failure::coded(
                ErrorCode::InvalidArguments,
                format!("'{key}' is not a key or a key prefix (qk_ and 8 hex digits)"),
            )
        })?;
    let ws = Workspace::open(store)?;
    let revoked = ws
        .runtime
        .block_on(ws.store.revoke_api_key(&ws.project, prefix))
        .map_err(storage)?;
    if !revoked {
        return Err(Failure::coded(
            ErrorCode::NotFound,
            format!("no key '{prefix}' in this project (--project)"),
        ));
    }
    println!("revoked {prefix}");
    Ok(ExitCode::SUCCESS)
}

pub fn run(args: RunArgs, file: &crate::config::Config) -> Result<ExitCode, Failure> {
    let ws = Workspace::open_printing(&args.store, &args.output)?;
    let retriever = ws.retriever(&args.embedder, true)?;
    let (pipeline, registry) =
        agents::checked_pipeline(ws.store.clone(), retriever, &args.model, file, &args.queue)?;
    let fields = comma_list(args.fields.as_deref());
    if !args.no_wait {
        // Worked here: agents this process cannot use fail the command before anything is
        // queued (with --no-wait a worker, with its own keys, does the work).
        check_agents_here(&ws, &pipeline, &registry, &args.entity, fields.as_deref())?;
    }
    let who = std::env::var("USER").unwrap_or_else(|_| "cli".to_owned());
    let instructions = quarry_core::model::RunInstructions {
        all: args.instructions.clone(),
        fields: args.field_instructions.iter().cloned().collect(),
    };
    let (run, _) = ws
        .runtime
        .block_on(pipeline.start_instructed(
            &ws.project,
            &args.entity,
            fields,
            &format!("cli:{who}"),
            &instructions,
        ))
        .map_err(pipeline_failure)?;
    if args.no_wait {
        if ws.json {
            return print_json(&run);
        }
        println!("{}", run.id);
        return Ok(ExitCode::SUCCESS);
    }
    let report = wait_for(
        &ws,
        &pipeline,
        &run.id,
        &format!("extracting {}", args.entity),
    )?;
    print_report(&ws, &report)
}

/// Fails unless every agent of the entity's `fields` (all when `None`) can be used from this
/// process: called before work this command will do itself is queued.
fn check_agents_here(
    ws: &Workspace,
    pipeline: &quarry_pipeline::Pipeline,
    registry: &quarry_llm::ModelRegistry,
    entity: &str,
    fields: Option<&[String]>,
) -> Result<(), Failure> {
    ws.runtime.block_on(agents::check_agents(
        pipeline,
        registry,
        &ws.project,
        entity,
        fields,
    ))
}

/// Works the run here (beside any other worker) until it settles, with a spinner.
fn wait_for(
    ws: &Workspace,
    pipeline: &quarry_pipeline::Pipeline,
    run_id: &str,
    message: &str,
) -> Result<RunReport, Failure> {
    let progress = crate::progress::spinner(message);
    let worker = WorkerConfig {
        owner: worker_owner(),
        ..WorkerConfig::default()
    };
    let report = ws
        .runtime
        .block_on(async {
            let waiting = pipeline.wait(&ws.project, run_id, &worker);
            tokio::pin!(waiting);
            // Outside a terminal the spinner is hidden: one line says what the run waits for
            // once it has taken a second.
            let announce = tokio::time::sleep(crate::progress::ANNOUNCE_AFTER);
            tokio::pin!(announce);
            let mut announced = !progress.is_hidden();
            loop {
                tokio::select! {
                    report = &mut waiting => break report,
                    () = &mut announce, if !announced => {
                        announced = true;
                        let counts = field_counts(pipeline, &ws.project, run_id)
                            .await
                            .unwrap_or_default();
                        eprintln!("{message}: waiting on the field agents' model calls ({counts}) …");
                    }
                    () = tokio::time::sleep(Duration::from_millis(500)), if !progress.is_hidden() => {
                        if let Ok(counts) = field_counts(pipeline, &ws.project, run_id).await {
                            progress.set_message(format!("{message}: {counts}"));
                        }
                    }
                }
            }
        })
        .map_err(pipeline_failure)?;
    progress.finish_and_clear();
    Ok(report)
}

/// "2/5 fields done, 1 running" for the spinner: the tasks of the run and its cascades.
async fn field_counts(
    pipeline: &quarry_pipeline::Pipeline,
    project: &str,
    run_id: &str,
) -> Result<String, PipelineError> {
    let store = pipeline.store();
    let mut total = 0;
    let mut settled = 0;
    let mut running = 0;
    for run in store.runs_under_root(project, run_id).await? {
        for task in store.run_tasks(project, &run.id).await? {
            total += 1;
            settled += usize::from(task.state.is_terminal());
            running += usize::from(task.state == quarry_core::model::NodeState::Running);
        }
    }
    Ok(format!(
        "{settled}/{total} fields settled, {running} running"
    ))
}

/// Prints a run's report; the exit status says how it ended (see [`run_exit_code`]).
fn print_report(ws: &Workspace, report: &RunReport) -> Result<ExitCode, Failure> {
    if ws.json {
        print_json(report)?;
    } else {
        println!("run {}: {:?}", report.run.id, report.run.status);
        let rows = report
            .fields
            .iter()
            .map(|field| {
                let outcome = serde_json::to_value(&field.outcome).unwrap_or(Value::Null);
                let status = outcome["status"].as_str().unwrap_or("?").to_owned();
                let detail = outcome
                    .get("value")
                    .or_else(|| outcome.get("reason"))
                    .or_else(|| outcome.get("waiting_on"))
                    .map(Value::to_string)
                    .unwrap_or_default();
                vec![field.field.clone(), status, detail]
            })
            .collect();
        print_table(&["field", "outcome", "value / reason"], rows);
    }
    let Some(code) = run_exit_code(report) else {
        return Ok(ExitCode::SUCCESS);
    };
    if !ws.json {
        eprintln!(
            "run {} ended {:?}: {}",
            report.run.id,
            report.run.status,
            report.run.error.as_deref().unwrap_or(code.hint())
        );
    }
    Ok(ExitCode::from(code.exit_status()))
}

/// How a run ended, as the code its exit status comes from (`None`: success). A failure wins
/// over a wait: `ExtractionFailed` (4) when any field of the run or of its cascades failed or
/// the run ended failed or partial, else `NeedsPerson` (3) when something waits for a person,
/// else success.
fn run_exit_code(report: &RunReport) -> Option<ErrorCode> {
    let mut outcomes = Vec::new();
    let mut statuses = Vec::new();
    let mut pending = vec![report];
    while let Some(report) = pending.pop() {
        outcomes.extend(report.fields.iter().map(|field| &field.outcome));
        statuses.push(report.run.status);
        pending.extend(&report.cascaded);
    }
    let failed = outcomes
        .iter()
        .any(|outcome| matches!(outcome, FieldOutcome::Failed { .. }))
        || statuses
            .iter()
            .any(|status| matches!(status, RunStatus::Failed | RunStatus::Partial));
    let waiting = outcomes.iter().any(|outcome| {
        matches!(
            outcome,
            FieldOutcome::WaitingHuman | FieldOutcome::AwaitingApproval { .. }
        )
    }) || statuses.contains(&RunStatus::WaitingHuman);
    if failed {
        Some(ErrorCode::ExtractionFailed)
    } else if waiting {
        Some(ErrorCode::NeedsPerson)
    } else {
        None
    }
}

fn comma_list(raw: Option<&str>) -> Option<Vec<String>> {
    raw.map(|raw| {
        raw.split(',')
            .map(str::trim)
            .filter(|f| !f.is_empty())
            .map(str::to_owned)
            .collect()
    })
}

/// `quarry retry ENTITY [--fields a,b]`: the failed or blocked fields start over.
pub fn retry(args: RetryArgs, file: &crate::config::Config) -> Result<ExitCode, Failure> {
    let ws = Workspace::open_printing(&args.store, &args.output)?;
    let retriever = ws.retriever(&args.embedder, true)?;
    let (pipeline, registry) =
        agents::checked_pipeline(ws.store.clone(), retriever, &args.model, file, &args.queue)?;
    let fields = comma_list(args.fields.as_deref());
    if !args.no_wait {
        // Worked here: agents this process cannot use fail the command before anything is
        // queued (with --no-wait a worker, with its own keys, does the work).
        check_agents_here(&ws, &pipeline, &registry, &args.entity, fields.as_deref())?;
    }
    let tasks = ws
        .runtime
        .block_on(pipeline.retry(&ws.project, &args.entity, fields.as_deref()))
        .map_err(pipeline_failure)?;
    if tasks.is_empty() {
        return Err(Failure::coded(
            ErrorCode::InvalidState,
            format!(
                "entity '{}' has no failed or blocked field to retry",
                args.entity
            ),
        ));
    }
    if args.no_wait {
        if ws.json {
            return print_json(&tasks);
        }
        for task in &tasks {
            println!("{} queued again in run {}", task.field_name, task.run_id);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let mut runs: Vec<&str> = tasks.iter().map(|t| t.root_run_id.as_str()).collect();
    runs.dedup();
    let mut status = ExitCode::SUCCESS;
    for run_id in runs {
        let report = wait_for(&ws, &pipeline, run_id, &format!("retrying {}", args.entity))?;
        let printed = print_report(&ws, &report)?;
        if printed != ExitCode::SUCCESS {
            status = printed;
        }
    }
    Ok(status)
}

pub fn results(args: EntityArg) -> Result<ExitCode, Failure> {
    let ws = Workspace::open_printing(&args.store, &args.output)?;
    ws.entity(&args.entity)?;
    let results: Vec<ExtractionResult> = ws
        .runtime
        .block_on(ws.store.latest_results(&ws.project, &args.entity))
        .map_err(storage)?;
    if ws.json {
        return print_json(&results);
    }
    print_results(&results);
    Ok(ExitCode::SUCCESS)
}

pub fn history(args: HistoryArgs) -> Result<ExitCode, Failure> {
    let ws = Workspace::open_printing(&args.store, &args.output)?;
    let entity = ws.entity(&args.entity)?;
    known_field(&ws, &entity, &args.field)?;
    let results = ws
        .runtime
        .block_on(
            ws.store
                .field_history(&ws.project, &args.entity, &args.field),
        )
        .map_err(storage)?;
    if ws.json {
        return print_json(&results);
    }
    print_results(&results);
    Ok(ExitCode::SUCCESS)
}

/// `UnknownField` unless the entity's type defines `field`.
fn known_field(ws: &Workspace, entity: &Entity, field: &str) -> Result<(), Failure> {
    let entity_type = ws
        .runtime
        .block_on(ws.store.get_entity_type(&ws.project, &entity.entity_type))
        .map_err(storage)?;
    let defined = entity_type.is_none_or(|t| t.fields.iter().any(|f| f.name == field));
    if defined {
        Ok(())
    } else {
        Err(Failure::coded(
            ErrorCode::UnknownField,
            format!(
                "entity type '{}' has no field '{field}'",
                entity.entity_type
            ),
        ))
    }
}

/// `quarry approve` and `quarry reject`: records the decision, then works the run it starts or
/// resumes here unless `--no-wait`.
pub fn review(
    args: ReviewArgs,
    decision: ReviewDecision,
    file: &crate::config::Config,
) -> Result<ExitCode, Failure> {
    let approve = matches!(decision, ReviewDecision::Approve);
    let ws = Workspace::open_printing(&args.store, &args.output)?;
    let retriever = ws.retriever(&args.embedder, true)?;
    let (pipeline, registry) =
        agents::checked_pipeline(ws.store.clone(), retriever, &args.model, file, &args.queue)?;
    let reruns = matches!(&decision, ReviewDecision::Reject { reason: Some(_) });
    if reruns && !args.no_wait {
        // The feedback rerun is worked here: an agent this process cannot use fails the
        // command before the rejection queues it.
        let result = ws
            .runtime
            .block_on(ws.store.get_result(&ws.project, &args.result))
            .map_err(storage)?;
        if let Some(result) = result {
            let field = std::slice::from_ref(&result.field_name);
            check_agents_here(&ws, &pipeline, &registry, &result.entity_id, Some(field))?;
        }
    }
    let reviewer = args
        .reviewer
        .clone()
        .or_else(|| std::env::var("USER").ok())
        .unwrap_or_else(|| "cli".to_owned());
    let outcome = ws
        .runtime
        .block_on(pipeline.review(&ws.project, &args.result, decision, &reviewer))
        .map_err(pipeline_failure)?;
    let rerun = match &outcome.rerun {
        Some(run) if !args.no_wait => Some(wait_for(&ws, &pipeline, &run.id, "re-extracting")?),
        _ => None,
    };
    if ws.json {
        return print_json(&json!({
            "result": outcome.result,
            "entity": outcome.entity,
            "rerun": rerun.as_ref().map(serde_json::to_value).transpose().map_err(anyhow::Error::from)?.or_else(|| outcome.rerun.as_ref().and_then(|r| serde_json::to_value(r).ok())),
        }));
    }
    println!(
        "{} {} ({} = {})",
        if approve { "approved" } else { "rejected" },
        outcome.result.id,
        outcome.result.field_name,
        outcome.result.value
    );
    match (&rerun, &outcome.rerun) {
        (Some(report), _) => {
            println!("run {} followed: {:?}", report.run.id, report.run.status);
            print_report(&ws, report)
        }
        (None, Some(run)) => {
            println!("queued run {}", run.id);
            Ok(ExitCode::SUCCESS)
        }
        (None, None) => Ok(ExitCode::SUCCESS),
    }
}
