//! The serving engine of one loaded model: a thread that owns the weights and decodes every
//! reply asked of the model together (continuous batching).
//!
//! Between forward passes the engine admits waiting replies (up to `parallel` at once), each
//! starting from the longest prefix of its prompt the [`PrefixCache`] holds — or, when a reply
//! being decoded shares a longer prefix with it (the same system prompt and schema, sent at
//! once), from a copy of that reply's keys and values once it has read the shared part. One pass then reads,
//! for every active reply, either its next chunk of prompt (at most [`EngineSettings::
//! prompt_chunk`] prompt tokens per pass in all, so replies already running keep flowing) or the
//! tokens it chose at the last step. Each reply masks, steers and samples its own logits with its
//! own grammar and settings, streams its text, and retires on its own: finished, failed, or
//! cancelled (its receiver dropped). A retired reply's key-value state goes back to the cache.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender, TryRecvError};
use std::time::Instant;

use tokio::sync::mpsc::UnboundedSender;

use super::batch::SequenceStep;
use super::cache::{PrefixCache, Reuse, SequenceCache, common_prefix};
use super::generate::{DecodeStats, Decoding, Progress};
use super::model::Model;
use super::vocab::Lexicon;
use crate::LlmError;
use crate::types::ChatResponse;

/// What the engine tells the caller of one reply.
pub enum Event {
    /// Text decoded, in order.
    Text(String),
    /// The reply, or why there is none.
    Done(Result<(ChatResponse, DecodeStats), LlmError>),
}

/// How many replies the engine decodes at once and how much it keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineSettings {
    /// Replies decoded together at most; more wait for a place.
    pub parallel: usize,
    /// Memory for key-value state: of replies being decoded and of the prefixes kept.
    pub cache_bytes: usize,
    /// Prompt tokens read in one forward pass, over all replies.
    pub prompt_chunk: usize,
}

/// A reply for the engine: its decoding state and where its events go.
struct Job {
    decoding: Decoding,
    events: UnboundedSender<Event>,
}

/// What the prefix cache holds after the last reply retired.
#[derive(Debug, Default)]
pub struct CacheReport {
    sequences: AtomicUsize,
    bytes: AtomicUsize,
}

impl CacheReport {
    /// Sequences kept for reuse.
    pub fn sequences(&self) -> usize {
        self.sequences.load(Ordering::Relaxed)
    }

    /// Bytes of key-value state they hold.
    pub fn bytes(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }

    fn record(&self, cache: &PrefixCache) {
        self.sequences.store(cache.len(), Ordering::Relaxed);
        self.bytes.store(cache.bytes(), Ordering::Relaxed);
    }
}

/// The handle of a model's engine thread.
pub struct Engine {
    jobs: Sender<Job>,
    report: Arc<CacheReport>,
}

impl Engine {
    /// Starts the engine thread that owns `model`.
    pub fn start(
        model: Model,
        lexicon: Arc<Lexicon>,
        settings: EngineSettings,
    ) -> Result<Engine, LlmError> {
        let (jobs, queue) = std::sync::mpsc::channel();
        let report = Arc::new(CacheReport::default());
        let reporter = report.clone();
        std::thread::Builder::new()
            .name("quarry-local-model".to_owned())
            .spawn(move || run(model, &lexicon, settings, &queue, &reporter))
            .map_err(|error| LlmError::Misconfigured {
                provider: "local".to_owned(),
                reason: format!("cannot start the model's decoding thread: {error}"),
            })?;
        Ok(Engine { jobs, report })
    }

    /// What the prefix cache holds.
    pub fn cache_report(&self) -> &CacheReport {
        &self.report
    }

    /// Queues `decoding`; its text and result come as [`Event`]s on `events`. Dropping the
    /// receiver of `events` cancels the reply.
    pub fn submit(
        &self,
        decoding: Decoding,
        events: UnboundedSender<Event>,
    ) -> Result<(), LlmError> {
        self.jobs
            .send(Job { decoding, events })
            .map_err(|_| LlmError::BadReply {
                provider: "local".to_owned(),
                url: "in-process".to_owned(),
                reason: "the model's decoding thread has stopped".to_owned(),
            })
    }
}

/// A reply being decoded: its state, its key-value cache and its caller.
struct Active {
    id: u64,
    decoding: Decoding,
    cache: SequenceCache,
    events: UnboundedSender<Event>,
    /// The reply whose keys and values this one will copy, and how many positions of them:
    /// until that reply has read them, this one waits.
    follows: Option<(u64, usize)>,
}

/// A reply copies another's prefix rather than the cache's when that saves at least this many
/// positions.
const FOLLOW_GAIN: usize = 16;

/// The engine's loop: admit, read one batch, advance every reply, retire the finished ones.
fn run(
    mut model: Model,
    lexicon: &Lexicon,
    settings: EngineSettings,
    queue: &Receiver<Job>,
    report: &CacheReport,
) {
    let reuse = model.reuse();
    let parallel = match reuse {
        Reuse::Prefix => settings.parallel.max(1),
        // candle's models hold one sequence.
        Reuse::Continuation => 1,
    };
    let mut cache = PrefixCache::new(settings.cache_bytes, reuse);
    let mut active: Vec<Active> = Vec::new();
    let mut next_id = 0u64;
    loop {
        // Idle, the engine waits for a reply; busy, it takes those already queued.
        while active.len() < parallel {
            let job = match active.is_empty() {
                true => match queue.recv() {
                    Ok(job) => job,
                    Err(_) => return,
                },
                false => match queue.try_recv() {
                    Ok(job) => job,
                    Err(TryRecvError::Empty | TryRecvError::Disconnected) => break,
                },
            };
            next_id += 1;
            let admitted = admit(job, next_id, &mut cache, &active);
            active.push(admitted);
        }
        // Replies whose callers went away stop here.
        let (cancelled, running): (Vec<Active>, Vec<Active>) = active
            .into_iter()
            .partition(|reply| reply.events.is_closed());
        active = running;
        for reply in cancelled {
            retire(reply.cache, &active, &mut cache);
            report.record(&cache);
        }
        if active.is_empty() {
            continue;
        }
        start_followers(&mut active, &mut cache);
        active = step(
            &mut model,
            lexicon,
            settings.prompt_chunk,
            active,
            &mut cache,
        );
        report.record(&cache);
    }
}

/// A queued reply made active: it starts after the prefix of its prompt the cache holds, or
/// follows the active reply that shares a longer one.
fn admit(job: Job, id: u64, cache: &mut PrefixCache, active: &[Active]) -> Active {
    let Job {
        mut decoding,
        events,
    } = job;
    let prompt = decoding.prompt();
    let usable = prompt.len().saturating_sub(1);
    let leader = active
        .iter()
        .filter(|reply| reply.follows.is_none())
        .map(|reply| {
            let shared = common_prefix(reply.decoding.prompt(), prompt).min(usable);
            (reply.id, shared)
        })
        .max_by_key(|&(_, shared)| shared)
        .filter(|&(_, shared)| shared >= cache.shared_with(prompt) + FOLLOW_GAIN);
    if leader.is_some() {
        return Active {
            id,
            decoding,
            cache: SequenceCache::default(),
            events,
            follows: leader,
        };
    }
    let (sequence, cached) = cache.take(prompt);
    decoding.start_after(cached);
    Active {
        id,
        decoding,
        cache: sequence,
        events,
        follows: None,
    }
}

/// Replies whose leader has read the shared prefix start from a copy of it; those whose leader
/// is gone (its state now in the cache) start from the cache.
fn start_followers(active: &mut [Active], cache: &mut PrefixCache) {
    for index in 0..active.len() {
        let Some((leader, shared)) = active[index].follows else {
            continue;
        };
        let copied = match active.iter().find(|reply| reply.id == leader) {
            Some(leader) if leader.cache.len() < shared => continue,
            Some(leader) => leader
                .cache
                .prefix_copy(shared)
                .ok()
                .map(|copy| (copy, shared)),
            None => None,
        };
        let follower = &mut active[index];
        let (sequence, cached) = copied.unwrap_or_else(|| cache.take(follower.decoding.prompt()));
        follower.cache = sequence;
        follower.decoding.start_after(cached);
        follower.follows = None;
    }
}

/// Keeps a retired reply's key-value state for later prompts, within the budget the active
/// replies leave.
fn retire(sequence: SequenceCache, active: &[Active], cache: &mut PrefixCache) {
    let active_bytes = active.iter().map(|reply| reply.cache.bytes()).sum();
    cache.put_back(sequence, active_bytes);
}

/// One forward pass over every active reply; answers the replies still running.
fn step(
    model: &mut Model,
    lexicon: &Lexicon,
    prompt_chunk: usize,
    mut active: Vec<Active>,
    cache: &mut PrefixCache,
) -> Vec<Active> {
    // Replies already generating go first; prompts share what is left of the chunk in turn.
    let mut prompt_left = prompt_chunk.max(1);
    let counts: Vec<usize> = active
        .iter()
        .map(|reply| {
            if reply.follows.is_some() {
                return 0;
            }
            if !reply.decoding.reading_prompt() {
                return reply.decoding.input(0).len();
            }
            let count = reply.decoding.input(prompt_left).len();
            prompt_left -= count;
            count
        })
        .collect();
    let started = Instant::now();
    let answers = {
        let mut steps: Vec<SequenceStep<'_>> = active
            .iter_mut()
            .zip(&counts)
            .map(|(reply, &count)| SequenceStep {
                tokens: &reply.decoding.input(count)[..count],
                logits: count > 0 && reply.decoding.wants_logits(count),
                cache: &mut reply.cache,
            })
            .collect();
        model.forward_batch(&mut steps)
    };
    let forward_ms = started.elapsed().as_secs_f64() * 1e3;
    let answers = match answers {
        Ok(answers) => answers,
        Err(error) => {
            // The caches may hold half a pass: they are dropped, not kept.
            for reply in active {
                let reason = error.to_string();
                let _ = reply
                    .events
                    .send(Event::Done(Err(lexicon.failure(&reason))));
            }
            return Vec::new();
        }
    };
    let mut running = Vec::with_capacity(active.len());
    let mut retired = Vec::new();
    for ((mut reply, count), logits) in active.into_iter().zip(counts).zip(answers) {
        if count == 0 {
            running.push(reply);
            continue;
        }
        reply.decoding.account(forward_ms);
        let events = reply.events.clone();
        let mut on_text = |text: &str| {
            let _ = events.send(Event::Text(text.to_owned()));
        };
        match reply.decoding.advance(count, logits, lexicon, &mut on_text) {
            Ok(Progress::Running) => running.push(reply),
            Ok(Progress::Finished) => {
                let (response, stats) = reply.decoding.finish(lexicon, &mut on_text);
                let _ = reply.events.send(Event::Done(Ok((response, stats))));
                retired.push(reply.cache);
            }
            Err(error) => {
                let _ = reply.events.send(Event::Done(Err(error)));
                retired.push(reply.cache);
            }
        }
    }
    for sequence in retired {
        retire(sequence, &running, cache);
    }
    running
}
