//! A GGUF model's vocabulary, read from its own metadata (`tokenizer.ggml.*`): the tokenizer that
//! turns prompts into token ids and back, each token's bytes for llguidance's token masks, and the
//! tokens that end a turn; and the [`Lexicon`]: what decoding needs of it on the engine's
//! thread.
//!
//! Two vocabulary kinds are read: byte-level BPE (`tokenizer.ggml.model = gpt2`: SmolLM, Llama 3,
//! Qwen), built by candle's `TokenizerFromGguf`, and SentencePiece (`llama`: Llama 2, Gemma),
//! built here as BPE over merges derived from the GGUF's scores, with byte fallback: the pieces
//! of a word are merged pair by pair, the pair whose joined piece scores highest first, as
//! SentencePiece's BPE models and llama.cpp's tokenizer do. (Read as a unigram model, the same
//! scores split words into about twice as many tokens.)

use std::path::PathBuf;
use std::sync::Arc;

use candle_core::quantized::gguf_file::{Content, Value};
use candle_core::quantized::tokenizer::TokenizerFromGguf;
use llguidance::toktrie::{TokEnv, TokRxInfo, TokTrie, TokenId, TokenizerEnv};
use tokenizers::Tokenizer;

use crate::LlmError;

/// `tokenizer.ggml.token_type` values (llama.cpp's `llama_token_type`).
const NORMAL: u32 = 1;
const CONTROL: u32 = 3;
const USER_DEFINED: u32 = 4;
const BYTE: u32 = 6;

/// Token names that end an assistant turn in the chat templates people run small.
const END_OF_TURN_NAMES: &[&str] = &[
    "<|im_end|>",
    "<end_of_turn>",
    "<|eot_id|>",
    "<|end|>",
    "<|endoftext|>",
    "</s>",
];

/// What a model's vocabulary gives the decoder.
pub struct Vocab {
    tokenizer: Tokenizer,
    /// Tokens that end a turn: the end-of-sequence token and the template's end-of-turn tokens.
    end_of_turn: Vec<TokenId>,
    bos: Option<(TokenId, String)>,
    eos_name: String,
    env: TokEnv,
}

impl Vocab {
    pub fn from_gguf(content: &Content) -> Result<Vocab, LlmError> {
        let kind = metadata_str(content, "tokenizer.ggml.model")?;
        let names = string_array(content, "tokenizer.ggml.tokens")?;
        let types = match content.metadata.get("tokenizer.ggml.token_type") {
            Some(value) => number_array(value)?,
            None => vec![NORMAL; names.len()],
        };
        let (tokenizer, bytes_of): (Tokenizer, fn(&str) -> Vec<u8>) = match kind.as_str() {
            "gpt2" => (byte_level_tokenizer(content)?, byte_level_bytes),
            "llama" => (sentencepiece(content, &names)?, sentencepiece_bytes),
            other => {
                return Err(invalid(format!(
                    "tokenizer model '{other}' is not supported (byte-level BPE 'gpt2' and \
                     SentencePiece 'llama' are)"
                )));
            }
        };
        let words: Vec<Vec<u8>> = names
            .iter()
            .zip(types.iter().chain(std::iter::repeat(&NORMAL)))
            .map(|(name, kind)| match *kind {
                CONTROL | USER_DEFINED if is_marked_special(name) => {
                    let mut word = vec![TokTrie::SPECIAL_TOKEN_MARKER];
                    word.extend_from_slice(name.as_bytes());
                    word
                }
                BYTE => sentencepiece_bytes(name),
                _ => bytes_of(name),
            })
            .collect();
        let id = |key: &str| metadata_u32(content, key);
        let eos = id("tokenizer.ggml.eos_token_id")
            .ok_or_else(|| invalid("the GGUF names no end-of-sequence token"))?;
        let mut end_of_turn = vec![eos];
        end_of_turn.extend(id("tokenizer.ggml.eot_token_id"));
        end_of_turn.extend(
            names
                .iter()
                .enumerate()
                .filter(|(_, name)| END_OF_TURN_NAMES.contains(&name.as_str()))
                .map(|(index, _)| index as TokenId),
        );
        end_of_turn.sort_unstable();
        end_of_turn.dedup();
        let mut info = TokRxInfo::new(names.len() as u32, eos);
        info.tok_bos = id("tokenizer.ggml.bos_token_id");
        info.tok_end_of_turn = end_of_turn.iter().copied().find(|&token| token != eos);
        let trie = TokTrie::from(&info, &words).with_eos_tokens(&end_of_turn);
        let bos = info
            .tok_bos
            .and_then(|token| Some((token, names.get(token as usize)?.clone())));
        let eos_name = names.get(eos as usize).cloned().unwrap_or_default();
        let env: TokEnv = Arc::new(VocabEnv {
            trie,
            tokenizer: tokenizer.clone(),
        });
        Ok(Vocab {
            tokenizer,
            end_of_turn,
            bos,
            eos_name,
            env,
        })
    }

    /// The token ids of `text`, special tokens written in it (`<|im_start|>`) included.
    pub fn encode(&self, text: &str) -> Result<Vec<TokenId>, LlmError> {
        let encoding = self.tokenizer.encode(text, false).map_err(invalid)?;
        Ok(encoding.get_ids().to_vec())
    }

    /// The text of `tokens`, special tokens left out.
    pub fn decode(&self, tokens: &[TokenId]) -> String {
        String::from_utf8_lossy(&self.env.tok_trie().decode(tokens)).into_owned()
    }

    pub fn is_end_of_turn(&self, token: TokenId) -> bool {
        self.end_of_turn.contains(&token)
    }

    /// The beginning-of-sequence token's name, for chat templates that write it.
    pub fn bos_name(&self) -> Option<&str> {
        self.bos.as_ref().map(|(_, name)| name.as_str())
    }

    pub fn eos_name(&self) -> &str {
        &self.eos_name
    }

    /// The vocabulary as llguidance sees it.
    pub fn env(&self) -> &TokEnv {
        &self.env
    }
}

/// A special token written in prompts (`<|im_start|>`, `<end_of_turn>`), as opposed to a control
/// token with an empty or byte-like name.
fn is_marked_special(name: &str) -> bool {
    name.starts_with('<') && name.ends_with('>') && name.len() > 2
}

/// llguidance's view of the vocabulary: the trie of token bytes, and the model's own tokenizer
/// for text it must force (so forced text is tokenized as the model would).
struct VocabEnv {
    trie: TokTrie,
    tokenizer: Tokenizer,
}

impl TokenizerEnv for VocabEnv {
    fn tok_trie(&self) -> &TokTrie {
        &self.trie
    }

    fn tokenize_bytes(&self, bytes: &[u8]) -> Vec<TokenId> {
        match std::str::from_utf8(bytes) {
            Ok(text) => match self.tokenizer.encode(text, false) {
                Ok(encoding) => encoding.get_ids().to_vec(),
                Err(_) => self.trie.greedy_tokenize(bytes),
            },
            // A prefix cut inside a character: the trie's greedy split is exact on bytes.
            Err(_) => self.trie.greedy_tokenize(bytes),
        }
    }
}

/// A byte-level BPE tokenizer from the GGUF (candle's), without a space put in front of the
/// text: candle's fallback pre-tokenizer (for `tokenizer.ggml.pre` values it does not know, such
/// as SmolLM's) adds one, which the models were not trained with and which would make a token's
/// text differ from the bytes the token mask forced.
fn byte_level_tokenizer(content: &Content) -> Result<Tokenizer, LlmError> {
    use tokenizers::pre_tokenizers::PreTokenizerWrapper;
    use tokenizers::pre_tokenizers::byte_level::ByteLevel;

    let mut tokenizer = Tokenizer::from_gguf(content).map_err(invalid)?;
    let prefixes_space = matches!(
        tokenizer.get_pre_tokenizer(),
        Some(PreTokenizerWrapper::ByteLevel(level)) if level.add_prefix_space
    );
    if prefixes_space {
        tokenizer.with_pre_tokenizer(Some(ByteLevel::new(false, true, true)));
    }
    Ok(tokenizer)
}

/// The bytes a byte-level BPE token stands for: GPT-2 writes each byte as one printable
/// character (`Ġ` for a space); characters outside that table are taken as UTF-8.
fn byte_level_bytes(name: &str) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(name.len());
    for c in name.chars() {
        match byte_of_char(c) {
            Some(byte) => bytes.push(byte),
            None => {
                let mut buffer = [0; 4];
                bytes.extend_from_slice(c.encode_utf8(&mut buffer).as_bytes());
            }
        }
    }
    bytes
}

/// The inverse of GPT-2's `bytes_to_unicode`: printable Latin-1 bytes are themselves, the other
/// 68 bytes are written as U+0100 onwards, in byte order.
fn byte_of_char(c: char) -> Option<u8> {
    let printable = |b: u32| (0x21..=0x7e).contains(&b) || (0xa1..=0xac).contains(&b) || b >= 0xae;
    let code = u32::from(c);
    if code < 0x100 {
        return printable(code).then_some(code as u8);
    }
    let index = code.checked_sub(0x100)?;
    (0u32..0x100)
        .filter(|&b| !printable(b))
        .nth(index as usize)
        .map(|b| b as u8)
}

/// The bytes a SentencePiece token stands for: `▁` is a space and `<0xNN>` one byte.
fn sentencepiece_bytes(name: &str) -> Vec<u8> {
    if let Some(hex) = name
        .strip_prefix("<0x")
        .and_then(|rest| rest.strip_suffix('>'))
        && let Ok(byte) = u8::from_str_radix(hex, 16)
    {
        return vec![byte];
    }
    name.replace('\u{2581}', " ").into_bytes()
}

/// A SentencePiece vocabulary as a Hugging Face tokenizer: BPE whose merges are the GGUF's
/// pieces split in two ([`sentencepiece_merges`]), with byte fallback; spaces written as `▁`
/// (with one in front unless the GGUF says otherwise).
fn sentencepiece(content: &Content, names: &[String]) -> Result<Tokenizer, LlmError> {
    use tokenizers::decoders::DecoderWrapper;
    use tokenizers::decoders::byte_fallback::ByteFallback;
    use tokenizers::decoders::fuse::Fuse;
    use tokenizers::decoders::sequence::Sequence as DecoderSequence;
    use tokenizers::models::bpe::BPE;
    use tokenizers::normalizers::{NormalizerWrapper, Prepend, Replace, Sequence};

    let scores = match content.metadata.get("tokenizer.ggml.scores") {
        Some(Value::Array(values)) => values
            .iter()
            .map(|value| value.to_f32().map_err(invalid))
            .collect::<Result<Vec<f32>, _>>()?,
        _ => vec![0.0; names.len()],
    };
    let types = match content.metadata.get("tokenizer.ggml.token_type") {
        Some(value) => number_array(value)?,
        None => vec![NORMAL; names.len()],
    };
    let ids: tokenizers::models::bpe::Vocab = names
        .iter()
        .enumerate()
        .map(|(id, name)| (name.clone(), id as u32))
        .collect();
    let merges = sentencepiece_merges(names, &types, &scores, &ids);
    let mut builder = BPE::builder()
        .vocab_and_merges(ids, merges)
        .byte_fallback(true);
    if let Some(unknown) = metadata_u32(content, "tokenizer.ggml.unknown_token_id")
        .and_then(|id| names.get(id as usize))
    {
        builder = builder.unk_token(unknown.clone());
    }
    let model = builder.build().map_err(invalid)?;
    let mut tokenizer = Tokenizer::new(model);
    let add_space_prefix = match content.metadata.get("tokenizer.ggml.add_space_prefix") {
        Some(value) => value.to_bool().map_err(invalid)?,
        None => true,
    };
    let mut normalizers: Vec<NormalizerWrapper> = Vec::new();
    if add_space_prefix {
        normalizers.push(Prepend::new("\u{2581}".to_owned()).into());
    }
    normalizers.push(Replace::new(" ", "\u{2581}").map_err(invalid)?.into());
    tokenizer
        .with_normalizer(Some(Sequence::new(normalizers)))
        .map_err(invalid)?;
    let decoders: Vec<DecoderWrapper> = vec![
        Replace::new("\u{2581}", " ").map_err(invalid)?.into(),
        ByteFallback::new().into(),
        Fuse::new().into(),
    ];
    tokenizer.with_decoder(Some(DecoderSequence::new(decoders)));
    let specials: Vec<tokenizers::AddedToken> = names
        .iter()
        .filter(|name| is_marked_special(name))
        .map(|name| tokenizers::AddedToken::from(name.clone(), true))
        .collect();
    tokenizer.add_special_tokens(specials).map_err(invalid)?;
    // User-defined pieces (Gemma's runs of spaces and tabs, its HTML tags) are matched in the raw
    // text before anything else, longest first, as llama.cpp matches them.
    let user_defined: Vec<tokenizers::AddedToken> = names
        .iter()
        .zip(&types)
        .filter(|&(name, &kind)| kind == USER_DEFINED && !is_marked_special(name))
        .map(|(name, _)| tokenizers::AddedToken::from(name.clone(), false).normalized(false))
        .collect();
    tokenizer.add_tokens(user_defined).map_err(invalid)?;
    Ok(tokenizer)
}

/// The merges of a SentencePiece BPE vocabulary: every normal piece that splits into two pieces
/// of the vocabulary is the merge of those two, ranked by the joined piece's score (highest
/// first; SentencePiece's BPE trainer scores pieces by when they were merged), then its id.
fn sentencepiece_merges(
    names: &[String],
    types: &[u32],
    scores: &[f32],
    ids: &tokenizers::models::bpe::Vocab,
) -> Vec<(String, String)> {
    let normal = |id: usize| types.get(id).is_none_or(|&kind| kind == NORMAL);
    let mut ranked: Vec<(f32, usize, String, String)> = Vec::new();
    for (id, name) in names.iter().enumerate() {
        if !normal(id) {
            continue;
        }
        for (split, _) in name.char_indices().skip(1) {
            let (left, right) = name.split_at(split);
            let known = |piece: &str| ids.get(piece).is_some_and(|&piece| normal(piece as usize));
            if known(left) && known(right) {
                let score = scores.get(id).copied().unwrap_or(0.0);
                ranked.push((score, id, left.to_owned(), right.to_owned()));
            }
        }
    }
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    ranked
        .into_iter()
        .map(|(_, _, left, right)| (left, right))
        .collect()
}

fn invalid(error: impl std::fmt::Display) -> LlmError {
    LlmError::Misconfigured {
        provider: "local".to_owned(),
        reason: format!("the GGUF's vocabulary cannot be read: {error}"),
    }
}

pub(crate) fn metadata_str(content: &Content, key: &str) -> Result<String, LlmError> {
    content
        .metadata
        .get(key)
        .ok_or_else(|| invalid(format!("missing metadata {key}")))?
        .to_string()
        .cloned()
        .map_err(invalid)
}

pub(crate) fn metadata_u32(content: &Content, key: &str) -> Option<u32> {
    let value = content.metadata.get(key)?;
    value
        .to_u32()
        .ok()
        .or_else(|| value.to_i32().ok().and_then(|n| u32::try_from(n).ok()))
        .or_else(|| value.to_u64().ok().and_then(|n| u32::try_from(n).ok()))
}

fn string_array(content: &Content, key: &str) -> Result<Vec<String>, LlmError> {
    let values = content
        .metadata
        .get(key)
        .ok_or_else(|| invalid(format!("missing metadata {key}")))?
        .to_vec()
        .map_err(invalid)?;
    values
        .iter()
        .map(|value| value.to_string().cloned().map_err(invalid))
        .collect()
}

fn number_array(value: &Value) -> Result<Vec<u32>, LlmError> {
    value
        .to_vec()
        .map_err(invalid)?
        .iter()
        .map(|value| {
            value
                .to_i32()
                .map(|n| n as u32)
                .or_else(|_| value.to_u32())
                .map_err(invalid)
        })
        .collect()
}

/// What decoding needs of the vocabulary on the engine's thread.
pub(crate) struct Lexicon {
    pub(super) path: PathBuf,
    pub(super) vocab: Vocab,
    /// The first byte of each token's text (0 for none), for steering ([`steer`](super::steer)).
    pub(super) first_bytes: Vec<u8>,
}

impl Lexicon {
    pub(super) fn failure(&self, reason: &str) -> LlmError {
        LlmError::BadReply {
            provider: "local".to_owned(),
            url: self.path.display().to_string(),
            reason: reason.to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpt2_byte_characters_map_back_to_their_bytes() {
        assert_eq!(byte_level_bytes("Ġthe"), b" the");
        assert_eq!(byte_level_bytes("Ċ"), b"\n");
        assert_eq!(byte_level_bytes("hello"), b"hello");
        // Every byte has exactly one character.
        let mapped: std::collections::HashSet<u8> = (0u32..0x200)
            .filter_map(char::from_u32)
            .filter_map(byte_of_char)
            .collect();
        assert_eq!(mapped.len(), 256);
    }

    #[test]
    fn sentencepiece_spaces_and_byte_tokens() {
        assert_eq!(sentencepiece_bytes("\u{2581}the"), b" the");
        assert_eq!(sentencepiece_bytes("<0x0A>"), b"\n");
        assert_eq!(sentencepiece_bytes("<0xE4>"), vec![0xe4]);
    }
}
