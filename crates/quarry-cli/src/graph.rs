//! `quarry episode …` and `quarry graph …`: conversation episodes on the durable queue, and the
//! knowledge graph built from them.

use std::io::Read;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use quarry_core::ErrorCode;
use quarry_core::model::{Episode, EpisodeStatus, GraphExtraction, NewEpisode};
use quarry_core::store::Store;
use quarry_graph::{
    EntityMatch, GraphConfig, GraphExtractor, GraphWorker, WorkerStats, find_entities, neighbors,
};

use crate::args::{EpisodeCommand, GraphArgs, GraphCommand, ModelArgs, QueueArgs};
use crate::document_file::read_file;
use crate::failure::{Failure, storage};
use crate::model::model_failure;
use crate::owner::worker_owner;
use crate::table::{print_json, print_table};
use crate::workspace::Workspace;
use quarry_llm::ModelRegistry;

const MAX_GRAPH_BYTES: usize = 16 * 1024 * 1024;

/// The pre-structured graph of `--graph FILE` (or `-` for stdin).
fn read_graph(path: &Path) -> Result<GraphExtraction, Failure> {
    let text = if path == Path::new("-") {
        let mut text = String::new();
        std::io::stdin()
            .take(MAX_GRAPH_BYTES as u64 + 1)
            .read_to_string(&mut text)
            .map_err(|error| {
                Failure::coded(ErrorCode::UnreadableInput, format!("stdin: {error}"))
            })?;
        text
    } else {
        read_file(path, MAX_GRAPH_BYTES)?
    };
    serde_json::from_str(&text).map_err(|error| {
        Failure::coded(
            ErrorCode::InvalidGraph,
            format!(
                "{}: {error}; expected {{\"entities\": [{{\"name\", \"type\", \"notes\"?}}], \
                 \"relationships\": [{{\"from\", \"fromType\", \"to\", \"toType\", \"label\"}}]}}",
                path.display()
            ),
        )
    })
}

fn comma_list(raw: &str) -> Vec<String> {
    raw.split(',')
        .map(|item| item.trim().to_lowercase())
        .filter(|item| !item.is_empty())
        .collect()
}

/// The graph extractor for `quarry serve` and the episode commands: `--graph-model`, else the
/// chosen model (none: only pre-structured episodes are processed), its temperature and output
/// budget, types and stoplist from the flags.
pub fn graph_extractor(
    store: Arc<dyn Store>,
    models: &ModelRegistry,
    queue: &QueueArgs,
    graph: &GraphArgs,
    lease: Option<std::time::Duration>,
) -> Result<GraphExtractor, Failure> {
    let chosen = graph
        .graph_model
        .clone()
        .filter(|spec| !spec.trim().is_empty())
        .or_else(|| models.default_model().map(str::to_owned));
    let (client, model_name) = match chosen {
        Some(chosen) => {
            let (client, spec) = models.client(&chosen).map_err(model_failure)?;
            (Some(client), spec.model)
        }
        None => (None, String::new()),
    };
    let mut config = GraphConfig {
        model: model_name,
        concurrency: models.settings().concurrency.max(1),
        owner: worker_owner(),
        max_attempts: queue.task_attempts.max(1),
        ..GraphConfig::default()
    };
    if let Some(lease) = lease {
        config.lease = lease;
    }
    if let Some(temperature) = graph.graph_temperature {
        if !(0.0..=2.0).contains(&temperature) {
            return Err(Failure::coded(
                ErrorCode::Usage,
                format!("--graph-temperature {temperature} is out of range; give 0.0 to 2.0"),
            ));
        }
        config.temperature = temperature;
    }
    if let Some(max_tokens) = graph.graph_max_tokens {
        if max_tokens == 0 {
            return Err(Failure::coded(
                ErrorCode::Usage,
                "--graph-max-tokens 0 leaves no room for an answer; give e.g. 1500",
            ));
        }
        config.max_tokens = max_tokens;
    }
    if let Some(types) = &graph.graph_types {
        config.types = comma_list(types);
        if config.types.is_empty() {
            return Err(Failure::coded(
                ErrorCode::InvalidGraphTypes,
                "--graph-types names no type; give e.g. person,organization",
            ));
        }
    }
    if let Some(stoplist) = &graph.stoplist {
        config.stoplist = comma_list(stoplist);
    }
    Ok(GraphExtractor::new(store, client, config))
}

/// Works the queue in this process until nothing it can take is pending: with a model every
/// episode, without one only those carrying a pre-structured graph.
fn work_queue(
    ws: &Workspace,
    model: &ModelArgs,
    file: &crate::config::Config,
    queue: &QueueArgs,
    graph: &GraphArgs,
) -> Result<WorkerStats, Failure> {
    let extractor = Arc::new(graph_extractor(
        ws.store.clone(),
        &crate::model::registry(model, file),
        queue,
        graph,
        None,
    )?);
    let progress = crate::progress::spinner("extracting episode graphs");
    let stats = ws.runtime.block_on(async {
        let worker = GraphWorker::start(extractor);
        worker.wait_idle().await;
        let stats = worker.stats();
        worker.shutdown().await;
        stats
    });
    progress.finish_and_clear();
    Ok(stats)
}

fn describe(episode: &Episode) -> String {
    match episode.status {
        EpisodeStatus::Done => format!(
            "episode {}: done, {} entities and {} relationships stored ({} entities and {} relationships skipped)",
            episode.id,
            episode.entities_stored,
            episode.relationships_stored,
            episode.entities_skipped,
            episode.relationships_skipped
        ),
        EpisodeStatus::Failed => format!(
            "episode {}: stored; graph extraction failed: {}",
            episode.id,
            episode.error.as_deref().unwrap_or("unknown error")
        ),
        EpisodeStatus::Pending if episode.error.is_some() => format!(
            "episode {}: queued for another attempt after a transient failure ({})",
            episode.id,
            episode.error.as_deref().unwrap_or_default()
        ),
        EpisodeStatus::Pending => format!(
            "episode {}: stored and queued (no model: pass --model or set QUARRY_MODEL, or send \
             --graph; quarry serve and quarry episode process work the queue)",
            episode.id
        ),
        EpisodeStatus::Running => format!("episode {}: extraction in progress", episode.id),
    }
}

/// What a worker did, for `--json`.
fn stats_json(stats: WorkerStats) -> serde_json::Value {
    serde_json::json!({
        "finished": stats.finished(),
        "failed": stats.failed,
        "released": stats.retried,
        "lease_lost": stats.lease_lost,
    })
}

/// Success, unless an episode's extraction failed: then `ExtractionFailed` with the reasons (the
/// episodes are kept and were printed already).
fn extraction_failures(episodes: &[Episode]) -> Result<ExitCode, Failure> {
    let reasons: Vec<String> = episodes
        .iter()
        .filter(|episode| episode.status == EpisodeStatus::Failed)
        .map(|episode| match episodes.len() {
            1 => episode.error.clone().unwrap_or_default(),
            _ => format!(
                "episode {}: {}",
                episode.id,
                episode.error.as_deref().unwrap_or_default()
            ),
        })
        .collect();
    if reasons.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    Err(Failure::coded(
        ErrorCode::ExtractionFailed,
        reasons.join("; "),
    ))
}

fn fetch_episode(ws: &Workspace, id: &str) -> Result<Episode, Failure> {
    ws.runtime
        .block_on(ws.store.get_episode(&ws.project, id))
        .map_err(storage)?
        .ok_or_else(|| {
            Failure::coded(
                ErrorCode::NotFound,
                format!("no episode '{id}' in this project"),
            )
        })
}

pub fn episodes(
    command: EpisodeCommand,
    file: &crate::config::Config,
) -> Result<ExitCode, Failure> {
    match command {
        EpisodeCommand::Add {
            user,
            assistant,
            graph,
            no_wait,
            graph_args,
            model,
            queue,
            store,
            output,
        } => {
            if user.trim().is_empty() && assistant.trim().is_empty() {
                return Err(Failure::coded(
                    ErrorCode::EmptyInput,
                    "--user and --assistant are both empty; give the conversation turn",
                ));
            }
            let ingest = graph.as_deref().map(read_graph).transpose()?;
            let ws = Workspace::open_printing(&store, &output)?;
            let episode = ws
                .runtime
                .block_on(ws.store.add_episode(
                    &ws.project,
                    &NewEpisode {
                        user_message: user,
                        assistant_response: assistant,
                        ingest,
                    },
                ))
                .map_err(storage)?;
            if !no_wait {
                work_queue(&ws, &model, file, &queue, &graph_args)?;
            }
            let episode = fetch_episode(&ws, &episode.id)?;
            if ws.json {
                print_json(&episode)?;
            } else {
                println!("{}", describe(&episode));
            }
            // The episode is kept (and printed); the command still fails with the reason.
            extraction_failures(std::slice::from_ref(&episode))
        }
        EpisodeCommand::Retry {
            ids,
            failed: _,
            no_wait,
            graph_args,
            model,
            queue,
            store,
            output,
        } => {
            let ws = Workspace::open_printing(&store, &output)?;
            let chosen = (!ids.is_empty()).then_some(ids.as_slice());
            let retried = ws
                .runtime
                .block_on(ws.store.retry_episodes(&ws.project, chosen))
                .map_err(storage)?;
            let stats = if no_wait || retried.is_empty() {
                None
            } else {
                Some(work_queue(&ws, &model, file, &queue, &graph_args)?)
            };
            let episodes = retried
                .iter()
                .map(|episode| fetch_episode(&ws, &episode.id))
                .collect::<Result<Vec<_>, _>>()?;
            if ws.json {
                print_json(&serde_json::json!({
                    "retried": episodes.len(),
                    "episodes": episodes,
                    "worked": stats.map(stats_json),
                }))?;
            } else {
                println!("{} failed episode(s) queued again", episodes.len());
                for episode in &episodes {
                    println!("{}", describe(episode));
                }
            }
            extraction_failures(&episodes)
        }
        EpisodeCommand::Show { id, store, output } => {
            let ws = Workspace::open_printing(&store, &output)?;
            let episode = fetch_episode(&ws, &id)?;
            if ws.json {
                return print_json(&episode);
            }
            println!("{}", describe(&episode));
            println!("User: {}", episode.user_message);
            println!("Assistant: {}", episode.assistant_response);
            Ok(ExitCode::SUCCESS)
        }
        EpisodeCommand::Process {
            graph_args,
            model,
            queue,
            store,
            output,
        } => {
            let ws = Workspace::open_printing(&store, &output)?;
            let stats = work_queue(&ws, &model, file, &queue, &graph_args)?;
            if ws.json {
                return print_json(&stats_json(stats));
            }
            println!(
                "{} episode(s) processed, {} of them failed (see quarry episode show ID; quarry \
                 episode retry --failed tries them again); {} attempt(s) failed transiently and \
                 were retried",
                stats.finished(),
                stats.failed,
                stats.retried
            );
            Ok(ExitCode::SUCCESS)
        }
    }
}

pub fn graph(command: GraphCommand) -> Result<ExitCode, Failure> {
    match command {
        GraphCommand::Entities {
            query,
            entity_type,
            limit,
            store,
            output,
            embedder,
        } => {
            if limit == 0 {
                return Err(Failure::coded(
                    ErrorCode::InvalidLimit,
                    "--limit must be at least 1",
                ));
            }
            let ws = Workspace::open_printing(&store, &output)?;
            let retriever = ws.retriever(&embedder, true)?;
            let found = ws
                .runtime
                .block_on(find_entities(
                    ws.store.as_ref(),
                    Some(retriever.as_ref()),
                    &ws.project,
                    query.as_deref().unwrap_or(""),
                    entity_type.as_deref(),
                    limit,
                ))
                .map_err(storage)?;
            if ws.json {
                return print_json(&found);
            }
            let rows = found
                .iter()
                .map(|item| {
                    vec![
                        item.entity.id.clone(),
                        item.entity.entity_type.clone(),
                        item.entity.title.clone(),
                        item.entity.mention_count.to_string(),
                        match item.matched {
                            EntityMatch::Name => "name".to_owned(),
                            EntityMatch::Meaning => {
                                format!("meaning {:.2}", item.score.unwrap_or(0.0))
                            }
                        },
                    ]
                })
                .collect();
            print_table(&["id", "type", "name", "mentions", "match"], rows);
            Ok(ExitCode::SUCCESS)
        }
        GraphCommand::Show { id, store, output } => {
            let ws = Workspace::open_printing(&store, &output)?;
            let (entity, episodes, (relations, titles)) = ws
                .runtime
                .block_on(async {
                    let entity = ws.store.get_entity(&ws.project, &id).await?;
                    let episodes = ws.store.entity_episodes(&ws.project, &id, 500).await?;
                    let relations = ws
                        .store
                        .relations_touching(&ws.project, std::slice::from_ref(&id))
                        .await?;
                    // The other end of each relation, by title, for the table.
                    let mut titles = std::collections::HashMap::new();
                    for relation in &relations {
                        let other = if relation.from_id == id {
                            &relation.to_id
                        } else {
                            &relation.from_id
                        };
                        if !titles.contains_key(other)
                            && let Some(found) = ws.store.get_entity(&ws.project, other).await?
                        {
                            titles.insert(other.clone(), found.title);
                        }
                    }
                    Ok::<_, quarry_core::store::StoreError>((entity, episodes, (relations, titles)))
                })
                .map_err(storage)?;
            let entity = entity.ok_or_else(|| {
                Failure::coded(
                    ErrorCode::NotFound,
                    format!("no entity '{id}' in this project"),
                )
            })?;
            if ws.json {
                return print_json(&serde_json::json!({
                    "entity": entity,
                    "episodes": episodes,
                    "relations": relations,
                }));
            }
            println!(
                "{} ({}), mentioned {} time(s){}",
                entity.title,
                entity.entity_type,
                entity.mention_count,
                entity
                    .notes
                    .as_deref()
                    .map(|notes| format!(": {notes}"))
                    .unwrap_or_default()
            );
            let rows = relations
                .iter()
                .map(|relation| {
                    let (direction, other) = if relation.from_id == id {
                        ("→", &relation.to_id)
                    } else {
                        ("←", &relation.from_id)
                    };
                    vec![
                        direction.to_owned(),
                        relation.label.clone(),
                        titles.get(other).cloned().unwrap_or_else(|| other.clone()),
                        relation.mention_count.to_string(),
                    ]
                })
                .collect();
            print_table(&["", "relation", "entity", "mentions"], rows);
            let rows = episodes
                .iter()
                .map(|episode| {
                    vec![
                        episode.id.clone(),
                        episode.created_at.clone(),
                        episode.user_message.clone(),
                    ]
                })
                .collect();
            print_table(&["episode", "at", "user"], rows);
            Ok(ExitCode::SUCCESS)
        }
        GraphCommand::Neighbors {
            id,
            depth,
            store,
            output,
        } => {
            if !(1..=3).contains(&depth) {
                return Err(Failure::coded(
                    ErrorCode::InvalidDepth,
                    "--depth must be between 1 and 3",
                ));
            }
            let ws = Workspace::open_printing(&store, &output)?;
            let neighborhood = ws
                .runtime
                .block_on(neighbors(ws.store.as_ref(), &ws.project, &id, depth, 500))
                .map_err(|error| match error {
                    quarry_core::store::StoreError::NotFound { .. } => {
                        Failure::coded(ErrorCode::NotFound, error)
                    }
                    other => storage(other),
                })?;
            if ws.json {
                return print_json(&neighborhood);
            }
            print_neighborhood(&neighborhood);
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn print_neighborhood(neighborhood: &quarry_graph::Neighborhood) {
    let name_of = |id: &str| -> String {
        std::iter::once(&neighborhood.root)
            .chain(neighborhood.entities.iter().map(|n| &n.entity))
            .find(|entity| entity.id == id)
            .map_or_else(|| id.to_owned(), |entity| entity.title.clone())
    };
    println!(
        "{} ({}): {} entities within reach",
        neighborhood.root.title,
        neighborhood.root.entity_type,
        neighborhood.entities.len()
    );
    let rows = neighborhood
        .entities
        .iter()
        .map(|neighbor| {
            vec![
                neighbor.depth.to_string(),
                neighbor.entity.id.clone(),
                neighbor.entity.entity_type.clone(),
                neighbor.entity.title.clone(),
            ]
        })
        .collect();
    print_table(&["hops", "id", "type", "name"], rows);
    println!();
    let rows = neighborhood
        .relations
        .iter()
        .map(|relation| {
            vec![
                name_of(&relation.from_id),
                relation.label.clone(),
                name_of(&relation.to_id),
                relation.mention_count.to_string(),
            ]
        })
        .collect();
    print_table(&["from", "relation", "to", "mentions"], rows);
}
