//! The repairing JSON reader: one pass of recursive descent over chars that turns the broken JSON
//! models write into a `serde_json::Value` and a list of the repairs it made.
//!
//! The behaviour follows what users of `jsonrepair` (JavaScript) and `json_repair` (Python) expect;
//! where the two disagree the choice is noted at the decision. The hard part is deciding whether a
//! quote inside a string ends it: that is settled by looking at what follows the quote (see
//! [`Reader::quote_decision`]).

use serde_json::{Map, Number, Value};

use crate::flags::Flag;
use crate::scan::{closes, is_ident, is_quote, is_space, starts_with};

/// How forgiving [`repair`] is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RepairOptions {
    /// Refuse input that needs a guess (a missing value, a missing colon, several top-level
    /// values, truncation) instead of repairing it.
    pub strict: bool,
}

/// The single best reading of a text as JSON, and what had to be repaired to get it.
#[derive(Debug, Clone, PartialEq)]
pub struct Repaired {
    pub value: Value,
    pub flags: Vec<Flag>,
}

/// Why a text could not be read as JSON at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("no JSON value found in the text")]
    Empty,
    #[error(
        "unexpected character {found:?} at char {at}: text before a JSON value is not JSON; use parse_candidates to extract values from prose"
    )]
    UnexpectedCharacter { found: char, at: usize },
    #[error("invalid unicode escape {escape:?} at char {at}: expected four hex digits after \\u")]
    InvalidUnicode { escape: String, at: usize },
    #[error("nesting deeper than {MAX_DEPTH} levels at char {at}; flatten the structure")]
    TooDeep { at: usize },
    #[error("strict mode refuses a repair ({flag:?}); parse without strict to accept it")]
    Refused { flag: Flag },
}

/// Reads `raw` as one JSON document, repairing what models typically break.
///
/// Prose with a fenced block reads the fence; several fences or several concatenated values
/// become an array. In strict mode any repair that needs a guess is refused.
pub fn repair(raw: &str, options: RepairOptions) -> Result<Repaired, ParseError> {
    if let Some(inner) = fence_inside_brackets(raw) {
        let mut repaired = repair(inner, options)?;
        repaired.flags.push(Flag::ExtractedFromFence);
        return Ok(repaired);
    }
    let chars: Vec<char> = raw.chars().collect();
    let repaired = if starts_like_json(&chars) {
        read_document(&chars)?
    } else {
        let fences = crate::scan::fenced_blocks(raw);
        if fences.is_empty() {
            read_document(&chars)?
        } else {
            read_fences(raw, &fences)?
        }
    };
    if options.strict
        && let Some(flag) = repaired
            .flags
            .iter()
            .copied()
            .find(|flag| flag.refused_in_strict_mode())
    {
        return Err(ParseError::Refused { flag });
    }
    Ok(repaired)
}

/// `[```json\n{…}\n```]`: a fenced block a model wrapped in brackets (jsonrepair strips both);
/// the text between the fences, when that is what `raw` is.
fn fence_inside_brackets(raw: &str) -> Option<&str> {
    let trimmed = raw.trim();
    let (open, close) = match trimmed.chars().next()? {
        '[' => ('[', ']'),
        '{' => ('{', '}'),
        _ => return None,
    };
    let body = trimmed[open.len_utf8()..].trim_start();
    let body = body.strip_prefix("```")?;
    let body = body.trim_start_matches(|c: char| c.is_ascii_alphanumeric());
    let body = body
        .trim_end()
        .strip_suffix(close)
        .unwrap_or(body)
        .trim_end();
    body.strip_suffix("```")
}

/// Whether the first visible character can start a JSON value (so a fence later in the text is
/// more likely content, e.g. a string holding "```json").
fn starts_like_json(chars: &[char]) -> bool {
    chars
        .iter()
        .find(|c| !is_space(**c))
        .is_some_and(|c| matches!(c, '{' | '[' | '"' | '\'' | '-' | '0'..='9'))
}

fn read_fences(raw: &str, fences: &[crate::scan::Fence]) -> Result<Repaired, ParseError> {
    let mut values = Vec::new();
    let mut flags = vec![Flag::ExtractedFromFence];
    for fence in fences {
        let chars: Vec<char> = raw[fence.content.clone()].chars().collect();
        if let Ok(read) = read_document(&chars) {
            flags.extend(read.flags);
            values.push(read.value);
        }
    }
    match values.len() {
        0 => Err(ParseError::Empty),
        1 => Ok(Repaired {
            value: values.remove(0),
            flags,
        }),
        _ => {
            flags.push(Flag::MultipleValues);
            Ok(Repaired {
                value: Value::Array(values),
                flags,
            })
        }
    }
}

/// Reads a whole text as one document (after trimming a surrounding code fence).
pub(crate) fn read_document(all: &[char]) -> Result<Repaired, ParseError> {
    let mut flags = Vec::new();
    let chars = strip_fence(all, &mut flags);
    let mut reader = Reader::new(chars);
    reader.flags = flags;
    let value = reader.top_level()?;
    Ok(Repaired {
        value,
        flags: reader.flags,
    })
}

/// Drops a code fence around the document: a leading "```lang" and a trailing "```".
fn strip_fence<'a>(chars: &'a [char], flags: &mut Vec<Flag>) -> &'a [char] {
    let mut start = 0;
    while start < chars.len() && is_space(chars[start]) {
        start += 1;
    }
    let mut end = chars.len();
    while end > start && is_space(chars[end - 1]) {
        end -= 1;
    }
    let mut fenced = false;
    if starts_with(chars, start, "```") {
        fenced = true;
        while start < end && chars[start] == '`' {
            start += 1;
        }
        while start < end && (chars[start].is_ascii_alphanumeric() || chars[start] == '-') {
            start += 1;
        }
    }
    if end >= start + 3 && chars[end - 3..end] == ['`', '`', '`'] {
        fenced = true;
        while end > start && chars[end - 1] == '`' {
            end -= 1;
        }
    }
    if fenced {
        flags.push(Flag::ExtractedFromFence);
    }
    &chars[start..end]
}

/// Where a value is being read; it decides which characters end strings and bare words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ctx {
    Top,
    Key,
    Value,
    Array,
    Tuple,
}

/// What a quote inside a string turned out to be.
enum QuoteDecision {
    /// It closes the string; reading continues at this char index.
    End(usize),
    /// It is part of the text.
    Literal,
    /// The string really ended before the comma at this index (its closing quote is missing).
    CutAt(usize),
}

/// Far enough to find the end of any sensible string, short enough that heavy quoting stays
/// linear in practice.
const LOOKAHEAD: usize = 4096;

/// Deeper nesting is refused rather than risking the stack on adversarial input.
pub const MAX_DEPTH: usize = 256;

struct Reader<'a> {
    chars: &'a [char],
    pos: usize,
    flags: Vec<Flag>,
    /// Closing characters of the containers open around the current position.
    closers: Vec<char>,
    /// Whether the last value read was a bare (unquoted) word.
    last_was_bare: bool,
    /// Whether the last whitespace skipped held a line break (NDJSON separates values so).
    last_skip_newline: bool,
}

impl<'a> Reader<'a> {
    fn new(chars: &'a [char]) -> Self {
        Reader {
            chars,
            pos: 0,
            flags: Vec::new(),
            closers: Vec::new(),
            last_was_bare: false,
            last_skip_newline: false,
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn at(&self, i: usize) -> Option<char> {
        self.chars.get(i).copied()
    }

    fn flag(&mut self, flag: Flag) {
        self.flags.push(flag);
    }

    /// Skips whitespace and comments (`//`, `/* */`, and `#` as Python and YAML writers use).
    fn skip_ws(&mut self) -> bool {
        let mut newline = false;
        while let Some(c) = self.peek() {
            if is_space(c) {
                newline |= c == '\n';
                self.pos += 1;
            } else if let Some(end) = self.comment_end(self.pos) {
                self.flag(Flag::Comment);
                newline = true;
                self.pos = end;
            } else {
                break;
            }
        }
        self.last_skip_newline = newline;
        newline
    }

    /// The index after the comment starting at `i`, if one starts there.
    fn comment_end(&self, i: usize) -> Option<usize> {
        match (self.at(i), self.at(i + 1)) {
            (Some('/'), Some('/')) | (Some('#'), _) => {
                // Inside a container a line comment also ends at its closer, as json_repair
                // reads it: `{"a": 1 // note }, "b": 2}` keeps `b`.
                let closer = self.closers.last().copied();
                let mut j = i;
                while j < self.chars.len() && self.chars[j] != '\n' && Some(self.chars[j]) != closer
                {
                    j += 1;
                }
                Some(j)
            }
            (Some('/'), Some('*')) => {
                let mut j = i + 2;
                while j < self.chars.len() && !starts_with(self.chars, j, "*/") {
                    j += 1;
                }
                Some((j + 2).min(self.chars.len()))
            }
            _ => None,
        }
    }

    /// The index of the next char that is neither whitespace nor inside a comment, and whether a
    /// newline was crossed on the way.
    fn next_significant(&self, mut i: usize) -> (usize, bool) {
        let mut newline = false;
        while i < self.chars.len() {
            let c = self.chars[i];
            if is_space(c) {
                newline |= c == '\n';
                i += 1;
            } else if (c != '#' || self.at(i + 1).is_some_and(is_space))
                && let Some(end) = self.comment_end(i)
            {
                i = end;
            } else {
                break;
            }
        }
        (i, newline)
    }

    fn top_level(&mut self) -> Result<Value, ParseError> {
        // (value, whether a comma or newline separated it from the one before)
        let mut values: Vec<(Value, bool)> = Vec::new();
        let mut separated = true;
        let mut comma = false;
        loop {
            separated |= self.skip_ws();
            let Some(c) = self.peek() else { break };
            if matches!(c, '}' | ']' | ')' | ';') || starts_with(self.chars, self.pos, "```") {
                // Stray closers and statement ends after (or before) the document.
                self.flag(Flag::StrayCloser);
                self.pos += 1;
                continue;
            }
            if c == ',' {
                self.pos += 1;
                separated = true;
                comma = true;
                continue;
            }
            if let Some((Value::Object(last), _)) = values.last_mut()
                && comma
                && self.looks_like_member(self.pos)
            {
                // `{"a": 1}, "b": 2}`: the object was closed too early (json_repair merges).
                self.flag(Flag::MergedMembers);
                let mut members = std::mem::take(last);
                self.closers.push('}');
                self.object_members(&mut members, false)?;
                self.closers.pop();
                if let Some((Value::Object(last), _)) = values.last_mut() {
                    *last = members;
                }
                continue;
            }
            if !values.is_empty() && !separated {
                if !matches!(c, '{' | '[') {
                    // Prose after a complete value: keep the value, drop the words.
                    self.flag(Flag::SkippedText);
                    self.pos += 1;
                    continue;
                }
                if self.last_was_bare {
                    // `callback {}` / `foo [`: a bare word glued to a structure is prose, not a
                    // value (jsonrepair refuses; parse_candidates still extracts the structure).
                    return Err(ParseError::UnexpectedCharacter {
                        found: c,
                        at: self.pos,
                    });
                }
            }
            let before = self.pos;
            match self.value(Ctx::Top)? {
                Some(value) => values.push((value, separated)),
                None => {
                    self.pos = before + 1;
                    self.flag(Flag::SkippedText);
                }
            }
            separated = self.last_skip_newline;
            comma = false;
        }
        combine_top_level(values, &mut self.flags)
    }

    /// Whether `i` starts `"key":` or `key:`, i.e. an object member rather than a value.
    fn looks_like_member(&self, i: usize) -> bool {
        match self.at(i) {
            // A key cut off by the end of the text counts: `{"a": "b", "ke`.
            Some(c) if is_quote(c) => self
                .find_closing(i)
                .is_none_or(|q| self.at(self.next_significant(q + 1).0) == Some(':')),
            Some(c) if is_ident(c) => {
                let mut j = i;
                while self.at(j).is_some_and(is_ident) {
                    j += 1;
                }
                self.at(self.next_significant(j).0) == Some(':')
            }
            _ => false,
        }
    }

    fn value(&mut self, ctx: Ctx) -> Result<Option<Value>, ParseError> {
        self.skip_ws();
        self.last_was_bare = false;
        let Some(c) = self.peek() else {
            return Ok(None);
        };
        if self.closers.len() >= MAX_DEPTH {
            return Err(ParseError::TooDeep { at: self.pos });
        }
        let value = match c {
            '{' => Some(self.object()?),
            '[' => Some(self.array(']', Ctx::Array)?),
            '(' => {
                self.flag(Flag::PythonLiteral);
                Some(self.array(')', Ctx::Tuple)?)
            }
            '\\' if self.at(self.pos + 1).is_some_and(is_quote) => Some(self.string_value(ctx)?),
            c if is_quote(c) => Some(self.string_value(ctx)?),
            '/' if self.regex_end().is_some() => {
                // `/[a-z]_/`: a regular expression literal, kept as its text.
                let end = self.regex_end().unwrap_or(self.pos);
                let text: String = self.chars[self.pos..end].iter().collect();
                self.pos = end;
                self.flag(Flag::UnquotedString);
                Some(Value::String(text))
            }
            '-' | '0'..='9' | '.' => match self.number() {
                Some(number) => Some(number),
                None => self.bare(ctx)?,
            },
            _ => self.bare(ctx)?,
        };
        self.skip_ws();
        Ok(value)
    }

    /// A string value, with `"a" + "b"` concatenation.
    fn string_value(&mut self, ctx: Ctx) -> Result<Value, ParseError> {
        let (mut text, _) = self.string(ctx)?;
        loop {
            let (i, _) = self.next_significant(self.pos);
            if self.at(i) != Some('+') {
                break;
            }
            let (j, _) = self.next_significant(i + 1);
            if !self.at(j).is_some_and(is_quote) {
                // A dangling `+`: drop it.
                self.pos = j;
                self.flag(Flag::ConcatenatedStrings);
                break;
            }
            self.pos = j;
            self.flag(Flag::ConcatenatedStrings);
            let (more, _) = self.string(ctx)?;
            text.push_str(&more);
        }
        Ok(Value::String(text))
    }

    /// Reads a quoted string starting at `self.pos`; returns its text and whether it was closed.
    fn string(&mut self, ctx: Ctx) -> Result<(String, bool), ParseError> {
        let start = self.pos;
        self.string_until(ctx, start, None)
    }

    fn string_until(
        &mut self,
        ctx: Ctx,
        start: usize,
        stop_at: Option<usize>,
    ) -> Result<(String, bool), ParseError> {
        self.pos = start;
        let escaped_quotes = self.peek() == Some('\\');
        if escaped_quotes {
            // `{\"key\": \"value\"}`: a JSON document that was itself string-escaped.
            self.flag(Flag::EscapedJson);
            self.pos += 1;
        }
        let open = self.chars[self.pos];
        if open != '"' {
            self.flag(Flag::SingleQuotes);
        }
        self.pos += 1;
        let mut doubled = false;
        if !escaped_quotes && self.peek().is_some_and(|c| closes(open, c)) {
            // `""value""`: a doubled opening quote, unless the empty string is really empty.
            let (next, _) = self.next_significant(self.pos + 1);
            if let Some(c) = self.at(next)
                && !self.is_terminator(ctx, c, next)
                && !is_quote(c)
            {
                doubled = true;
                self.pos += 1;
                self.flag(Flag::UnescapedQuote);
            }
        }
        let content_start = self.pos;
        let mut text = String::new();
        let mut flagged_control = false;
        loop {
            if Some(self.pos) == stop_at {
                let trimmed = text.trim_end().len();
                text.truncate(trimmed);
                self.flag(Flag::UnclosedString);
                return Ok((text, false));
            }
            let Some(c) = self.peek() else {
                if stop_at.is_none()
                    && let Some(cut) = self.unclosed_cut(ctx, content_start)
                {
                    return self.string_until(ctx, start, Some(cut));
                }
                let trimmed = text.trim_end().len();
                text.truncate(trimmed);
                self.flag(Flag::UnclosedString);
                return Ok((text, false));
            };
            let quote_at = if escaped_quotes {
                (c == '\\' && self.at(self.pos + 1).is_some_and(|q| closes(open, q)))
                    .then_some(self.pos + 1)
            } else {
                closes(open, c).then_some(self.pos)
            };
            if let Some(q) = quote_at {
                match self.quote_decision(ctx, q, open, doubled) {
                    QuoteDecision::End(next) => {
                        self.pos = next;
                        return Ok((text, true));
                    }
                    QuoteDecision::CutAt(comma) if stop_at.is_none() => {
                        return self.string_until(ctx, start, Some(comma));
                    }
                    _ => {
                        self.flag(Flag::UnescapedQuote);
                        text.push(self.chars[q]);
                        self.pos = q + 1;
                        continue;
                    }
                }
            }
            if c == '\\' {
                self.escape(&mut text)?;
                continue;
            }
            if c.is_control() && !flagged_control {
                flagged_control = true;
                self.flag(Flag::ControlCharacter);
            }
            text.push(c);
            self.pos += 1;
        }
    }

    /// Where an unclosed string should end when the text runs out: before the closing brackets,
    /// commas and `+` that belong to the structure around it (`{"a":"b}` → `"b"`), and for a key,
    /// before its colon (`{"key:value}`).
    fn unclosed_cut(&self, ctx: Ctx, content_start: usize) -> Option<usize> {
        let mut end = self.chars.len();
        while end > content_start {
            let c = self.chars[end - 1];
            let belongs_outside = is_space(c)
                || c == '+'
                || c == ','
                || (matches!(c, '}' | ']' | ')') && !self.closers.is_empty());
            if !belongs_outside {
                break;
            }
            end -= 1;
        }
        if ctx == Ctx::Key
            && let Some(colon) = (content_start..end).find(|&i| self.chars[i] == ':')
        {
            return Some(colon);
        }
        (end < self.chars.len()).then_some(end)
    }

    /// Characters that, right after a quote, show the quote closed the string.
    fn is_terminator(&self, ctx: Ctx, c: char, at: usize) -> bool {
        if starts_with(self.chars, at, "```") {
            return true;
        }
        if c == '+' {
            // `"a" + "b"`: concatenation follows.
            let (next, _) = self.next_significant(at + 1);
            return self.at(next).is_none_or(is_quote);
        }
        match ctx {
            Ctx::Key => matches!(c, ':' | ',' | '}' | ']' | '{' | '[') || c.is_ascii_digit(),
            Ctx::Value | Ctx::Array | Ctx::Top => matches!(c, ',' | '}' | ']' | ':'),
            Ctx::Tuple => matches!(c, ',' | ')'),
        }
    }

    /// Decides whether the quote at `q` closes the string being read.
    fn quote_decision(&self, ctx: Ctx, q: usize, open: char, doubled: bool) -> QuoteDecision {
        let mut after = q + 1;
        if doubled && self.at(after).is_some_and(|c| closes(open, c)) {
            after += 1;
        }
        let (n, newline) = self.next_significant(after);
        let Some(next) = self.at(n) else {
            return QuoteDecision::End(after);
        };
        if self.is_terminator(ctx, next, n) {
            if next == ',' && ctx == Ctx::Value && !self.member_follows_comma(n) {
                return QuoteDecision::Literal;
            }
            return QuoteDecision::End(after);
        }
        if newline && ctx != Ctx::Top {
            // Strings rarely run on past a line break right after a quote.
            return QuoteDecision::End(after);
        }
        if is_quote(next) {
            // Either `next` opens the following string (a comma is missing) or it closes this
            // one and the quote at `q` is text. Prefer the reading that leaves clean JSON after.
            if let Some(close) = self.find_closing(n) {
                let (k, _) = self.next_significant(close + 1);
                if self.at(k).is_none_or(|c| self.is_terminator(ctx, c, k)) {
                    return QuoteDecision::End(after);
                }
            }
            let (k, _) = self.next_significant(n + 1);
            if self.at(k).is_none_or(|c| self.is_terminator(ctx, c, k)) {
                return QuoteDecision::Literal;
            }
            return QuoteDecision::End(after);
        }
        if self.find_closing_from(q + 1, open).is_none() && self.single_word_then_close(n) {
            // No quote later could close the string and only a stray word follows before the
            // object or list closes (`"b" true}`): this quote ends the string.
            return QuoteDecision::End(after);
        }
        let (prev, prev_char) = self.prev_significant(q);
        if ctx == Ctx::Key && prev_char == Some(':') {
            // `{"key:"value"}`: the key's closing quote is missing before the colon.
            return QuoteDecision::CutAt(prev);
        }
        if prev_char == Some(',')
            && matches!(ctx, Ctx::Value | Ctx::Array)
            && let Some(close) = self.find_closing(q)
        {
            // `"New York, "gender": …` / `["hello,"world"]`: the quote opens the next item and
            // this string's closing quote is missing before the comma.
            let (k, _) = self.next_significant(close + 1);
            let next_item = matches!(
                (ctx, self.at(k)),
                (Ctx::Value, Some(':')) | (Ctx::Array, None | Some(',' | ']'))
            );
            if next_item {
                return QuoteDecision::CutAt(prev);
            }
        }
        QuoteDecision::Literal
    }

    /// Whether `i` starts one bare word followed only by a closer, a comma or the end.
    fn single_word_then_close(&self, i: usize) -> bool {
        let mut j = i;
        while self.at(j).is_some_and(is_ident) {
            j += 1;
        }
        let (k, _) = self.next_significant(j);
        j > i && self.at(k).is_none_or(|c| matches!(c, '}' | ']' | ','))
    }

    /// After a quote and a comma inside an object value: does a member (or the end) follow?
    fn member_follows_comma(&self, comma: usize) -> bool {
        self.member_follows_comma_within(comma, 8)
    }

    fn member_follows_comma_within(&self, comma: usize, budget: usize) -> bool {
        if budget == 0 {
            return true;
        }
        let (j, _) = self.next_significant(comma + 1);
        match self.at(j) {
            None | Some('}' | ']') => return true,
            Some(_) if self.looks_like_member(j) => return true,
            Some(_) => {}
        }
        // Otherwise the comma is text (`"lorem "ipsum", sic." }`) only if the next quote on the
        // line closes the value: it is followed by the end of the object or by another member.
        let mut k = comma + 1;
        while let Some(c) = self.at(k) {
            if matches!(c, '\n' | '{' | '[' | '}') {
                return true;
            }
            if is_quote(c) {
                let (after, _) = self.next_significant(k + 1);
                return match self.at(after) {
                    None | Some('}') => false,
                    Some(',') => !self.member_follows_comma_within(after, budget - 1),
                    Some(_) => true,
                };
            }
            k += 1;
        }
        true
    }

    fn prev_significant(&self, i: usize) -> (usize, Option<char>) {
        let mut j = i;
        while j > 0 {
            j -= 1;
            if !is_space(self.chars[j]) {
                return (j, Some(self.chars[j]));
            }
        }
        (0, None)
    }

    /// The index of the quote closing the string that opens at `open_at`, ignoring escapes.
    fn find_closing(&self, open_at: usize) -> Option<usize> {
        self.find_closing_from(open_at + 1, self.at(open_at)?)
    }

    /// The first quote from `from` on that may close a string opened with `open`.
    fn find_closing_from(&self, from: usize, open: char) -> Option<usize> {
        let mut j = from;
        let limit = (from + LOOKAHEAD).min(self.chars.len());
        while j < limit {
            let c = self.chars[j];
            if c == '\\' {
                j += 2;
                continue;
            }
            if closes(open, c) {
                return Some(j);
            }
            j += 1;
        }
        None
    }

    /// Reads one backslash escape at `self.pos` into `text`.
    fn escape(&mut self, text: &mut String) -> Result<(), ParseError> {
        let Some(kind) = self.at(self.pos + 1) else {
            self.pos += 1;
            return Ok(());
        };
        self.pos += 2;
        let decoded = match kind {
            '"' | '\\' | '/' => kind,
            'b' => '\u{8}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'u' => return self.unicode_escape(text),
            '\'' => '\'',
            other => {
                // An invalid escape such as `\l` or `\a`: both peers (jsonrepair, json_repair)
                // drop the backslash and keep the character.
                self.flag(Flag::InvalidEscape);
                other
            }
        };
        text.push(decoded);
        Ok(())
    }

    fn unicode_escape(&mut self, text: &mut String) -> Result<(), ParseError> {
        let Some(high) = self.hex4(self.pos)? else {
            // Cut off at the end of the text: drop the partial escape.
            self.pos = self.chars.len();
            return Ok(());
        };
        self.pos += 4;
        if (0xD800..0xDC00).contains(&high) {
            if self.at(self.pos) == Some('\\')
                && self.at(self.pos + 1) == Some('u')
                && let Ok(Some(low)) = self.hex4(self.pos + 2)
                && (0xDC00..0xE000).contains(&low)
            {
                self.pos += 6;
                let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                text.push(char::from_u32(code).unwrap_or('\u{FFFD}'));
                return Ok(());
            }
            self.flag(Flag::InvalidEscape);
            text.push('\u{FFFD}');
            return Ok(());
        }
        match char::from_u32(high) {
            Some(c) => text.push(c),
            None => {
                self.flag(Flag::InvalidEscape);
                text.push('\u{FFFD}');
            }
        }
        Ok(())
    }

    /// Four hex digits at `i`: `Ok(None)` if the text ends first, an error if a non-hex char
    /// comes first (jsonrepair refuses these too: guessing the character would invent data).
    fn hex4(&self, i: usize) -> Result<Option<u32>, ParseError> {
        let mut code = 0;
        for k in 0..4 {
            match self.at(i + k) {
                None => return Ok(None),
                Some(c) => match c.to_digit(16) {
                    Some(d) => code = code * 16 + d,
                    None => {
                        let end = (i + 4).min(self.chars.len());
                        let escape: String = self.chars[i.saturating_sub(2)..end].iter().collect();
                        return Err(ParseError::InvalidUnicode { escape, at: i - 2 });
                    }
                },
            }
        }
        Ok(Some(code))
    }

    fn at_end_of_number(&self, i: usize) -> bool {
        match self.at(i) {
            None => true,
            Some(c) => {
                is_space(c)
                    || matches!(c, ',' | ':' | '[' | ']' | '{' | '}' | '(' | ')' | '+' | ';')
                    || (c == '/' && self.comment_end(i).is_some())
                    || starts_with(self.chars, i, "```")
                    || (c == '"' && self.stray_quote_after(i))
            }
        }
    }

    /// `12345",`: a quote after a number that only closes nothing.
    fn stray_quote_after(&self, i: usize) -> bool {
        let (n, _) = self.next_significant(i + 1);
        self.at(n).is_none_or(|c| matches!(c, ',' | '}' | ']'))
    }

    /// The index after a `/…/` regular expression starting at `self.pos` (same line).
    fn regex_end(&self) -> Option<usize> {
        let mut j = self.pos + 1;
        while let Some(c) = self.at(j) {
            match c {
                '\\' => j += 2,
                '/' if j > self.pos + 1 => return Some(j + 1),
                '\n' => return None,
                _ => j += 1,
            }
        }
        None
    }

    /// Reads a number; `None` (position unchanged) when the text is not one, e.g. `1.1.1`.
    fn number(&mut self) -> Option<Value> {
        let start = self.pos;
        let mut i = start;
        let mut cut_off = false;
        if self.at(i) == Some('-') {
            i += 1;
        }
        // Digits, with Python's `_` separators between them (`82_461_110`).
        let digits = |i: &mut usize, reader: &Self| {
            let from = *i;
            while reader.at(*i).is_some_and(|c| c.is_ascii_digit())
                || (*i > from
                    && reader.at(*i) == Some('_')
                    && reader.at(*i + 1).is_some_and(|c| c.is_ascii_digit()))
            {
                *i += 1;
            }
            *i > from
        };
        let mut valid = digits(&mut i, self);
        // `.25`: a fraction written without its leading zero (JavaScript, Python).
        let bare_fraction =
            !valid && self.at(i) == Some('.') && self.at(i + 1).is_some_and(|c| c.is_ascii_digit());
        if bare_fraction {
            valid = true;
        }
        if !valid && self.at_end_of_number(i) && i > start {
            cut_off = true; // a lone `-`
        }
        if valid && self.at(i) == Some('.') {
            i += 1;
            if !digits(&mut i, self) {
                if self.at_end_of_number(i) {
                    cut_off = true;
                } else {
                    return None;
                }
            }
        }
        if valid && !cut_off && matches!(self.at(i), Some('e' | 'E')) {
            i += 1;
            if matches!(self.at(i), Some('+' | '-')) {
                i += 1;
            }
            if !digits(&mut i, self) {
                if self.at_end_of_number(i) {
                    cut_off = true;
                } else {
                    return None;
                }
            }
        }
        valid |= cut_off;
        if !valid || !self.at_end_of_number(i) {
            return None;
        }
        let mut raw: String = self.chars[start..i].iter().filter(|&&c| c != '_').collect();
        if raw.len() != i - start {
            self.flag(Flag::NumberRepaired);
        }
        if bare_fraction {
            raw.insert(usize::from(raw.starts_with('-')), '0');
            self.flag(Flag::NumberRepaired);
        }
        self.pos = i;
        if self.at(i) == Some('"') {
            self.pos += 1;
            self.flag(Flag::UnescapedQuote);
        }
        let unsigned = raw.strip_prefix('-').unwrap_or(&raw);
        if unsigned.len() > 1
            && unsigned.starts_with('0')
            && unsigned.as_bytes()[1].is_ascii_digit()
        {
            // `007`, `002e3`: leading zeros carry meaning (codes, ids), so keep the text.
            self.flag(Flag::NumberRepaired);
            return Some(Value::String(raw));
        }
        let text = if cut_off {
            self.flag(Flag::NumberRepaired);
            format!("{raw}0")
        } else {
            raw
        };
        Some(number_value(&text))
    }

    /// Keywords, function-call wrappers and bare words.
    fn bare(&mut self, ctx: Ctx) -> Result<Option<Value>, ParseError> {
        let start = self.pos;
        let mut word_end = start;
        while self.at(word_end).is_some_and(|c| is_ident(c) || c == '.') {
            word_end += 1;
        }
        if word_end > start {
            let word: String = self.chars[start..word_end].iter().collect();
            let (paren, _) = self.next_significant(word_end);
            if self.at(paren) == Some('(') && !word.contains("..") {
                // `callback({...});`, `NumberLong("2")`: keep what the call wraps.
                self.flag(Flag::FunctionCall);
                self.pos = paren + 1;
                self.closers.push(')');
                let inner = self.value(Ctx::Tuple)?;
                self.closers.pop();
                self.skip_ws();
                if self.peek() == Some(')') {
                    self.pos += 1;
                }
                if self.peek() == Some(';') {
                    self.pos += 1;
                }
                return Ok(Some(inner.unwrap_or(Value::Null)));
            }
            if let Some(value) = keyword(&word) {
                if !matches!(word.as_str(), "true" | "false" | "null") {
                    self.flag(Flag::PythonLiteral);
                }
                self.pos = word_end;
                return Ok(Some(value));
            }
        }
        let mut end = start;
        while let Some(c) = self.at(end) {
            if self.ends_bare_word(ctx, c, end) {
                break;
            }
            end += 1;
        }
        if end < self.chars.len() && self.chars[end] == ',' && matches!(ctx, Ctx::Value) {
            // `{"lorem": ipsum, sic, datum.",}`: a missing opening quote; the closing one shows
            // where the text ends.
            let mut k = end;
            while let Some(c) = self.at(k) {
                if matches!(c, '\n' | '}' | ']' | '{' | '[' | ':') || is_quote(c) {
                    break;
                }
                k += 1;
            }
            if self.at(k) == Some('"') && self.stray_quote_after(k) {
                end = k;
            }
        }
        let mut trimmed = end;
        while trimmed > start && is_space(self.chars[trimmed - 1]) {
            trimmed -= 1;
        }
        if trimmed == start {
            return Ok(None);
        }
        self.pos = end;
        if self.peek() == Some('"') && self.stray_quote_after(end) {
            self.pos += 1;
        }
        self.last_was_bare = true;
        self.flag(if ctx == Ctx::Key {
            Flag::UnquotedKey
        } else {
            Flag::UnquotedString
        });
        Ok(Some(Value::String(
            self.chars[start..trimmed].iter().collect(),
        )))
    }

    fn ends_bare_word(&self, ctx: Ctx, c: char, i: usize) -> bool {
        if is_quote(c) && c != '\'' && c != '’' || c == '"' {
            return true;
        }
        if matches!(c, ',' | '}' | ']' | '{' | '[' | '\n') || starts_with(self.chars, i, "```") {
            return true;
        }
        if c == '/' && self.comment_end(i).is_some() {
            // `https://…` is a URL, not a comment.
            return !(i > 0 && self.chars[i - 1] == ':');
        }
        match ctx {
            Ctx::Key => c == ':' || is_quote(c),
            Ctx::Tuple => c == ')',
            _ => false,
        }
    }

    fn object(&mut self) -> Result<Value, ParseError> {
        if self.is_set_literal() {
            // `{'a', 'b'}`: a Python set.
            self.flag(Flag::PythonLiteral);
            return self.array('}', Ctx::Array);
        }
        self.pos += 1;
        self.closers.push('}');
        let mut members = Map::new();
        self.object_members(&mut members, true)?;
        self.closers.pop();
        self.last_was_bare = false;
        Ok(Value::Object(members))
    }

    fn is_set_literal(&self) -> bool {
        let (i, _) = self.next_significant(self.pos + 1);
        if !self.at(i).is_some_and(is_quote) {
            return false;
        }
        let Some(close) = self.find_closing(i) else {
            return false;
        };
        let (k, _) = self.next_significant(close + 1);
        self.at(k) == Some(',') && !self.looks_like_member(self.next_significant(k + 1).0)
    }

    /// Whether a closer belongs to an enclosing container (so this one ends unclosed).
    fn closes_outer(&self, c: char) -> bool {
        let n = self.closers.len();
        n > 1 && self.closers[..n - 1].contains(&c)
    }

    /// Reads `key: value` members until the object closes; `members` may already hold some.
    fn object_members(
        &mut self,
        members: &mut Map<String, Value>,
        mut first: bool,
    ) -> Result<(), ParseError> {
        let mut comma = false;
        loop {
            self.skip_ws();
            let Some(c) = self.peek() else {
                self.flag(Flag::Truncated);
                return Ok(());
            };
            match c {
                '}' => {
                    self.pos += 1;
                    if comma {
                        self.flag(Flag::TrailingComma);
                    }
                    return Ok(());
                }
                ']' | ')' => {
                    if self.closes_outer(c) {
                        self.flag(Flag::Truncated);
                        return Ok(());
                    }
                    self.flag(Flag::StrayCloser);
                    self.pos += 1;
                    continue;
                }
                ',' => {
                    if first || comma {
                        self.flag(Flag::TrailingComma);
                    }
                    comma = true;
                    self.pos += 1;
                    continue;
                }
                _ => {}
            }
            if starts_with(self.chars, self.pos, "...") {
                self.flag(Flag::Ellipsis);
                self.pos += 3;
                continue;
            }
            if c == '['
                && let Some((_, Value::Array(last))) = members.iter_mut().last()
            {
                // `"key": ["a"], ["b"]`: the list went on after a stray `]`.
                self.flag(Flag::StrayCloser);
                let mut last = std::mem::take(last);
                if let Value::Array(more) = self.array(']', Ctx::Array)? {
                    last.extend(more);
                }
                if let Some((_, slot)) = members.iter_mut().last() {
                    *slot = Value::Array(last);
                }
                comma = false;
                continue;
            }
            if matches!(c, '{' | '[') {
                // A value where a key should be: this object was never closed.
                self.flag(Flag::Truncated);
                return Ok(());
            }
            if !first && !comma {
                self.flag(Flag::MissingComma);
            }
            comma = false;
            let quoted = is_quote(c) || (c == '\\' && self.at(self.pos + 1).is_some_and(is_quote));
            let key = if quoted {
                let (key, closed) = self.string(Ctx::Key)?;
                if !closed && key.is_empty() {
                    self.flag(Flag::Truncated);
                    continue;
                }
                key.trim_end_matches(['\n', '\r']).to_string()
            } else {
                match self.bare(Ctx::Key)? {
                    Some(Value::String(key)) => key,
                    _ => {
                        self.flag(Flag::SkippedText);
                        self.pos += 1;
                        continue;
                    }
                }
            };
            self.skip_ws();
            match self.peek() {
                Some(':') => self.pos += 1,
                None => {
                    // A key cut off by the end of the text must not erase an earlier value.
                    self.flag(Flag::MissingValue);
                    members.entry(key).or_insert(Value::Null);
                    continue;
                }
                Some('}' | ',') if !quoted => {
                    // `SHOULD_NOT_EXIST }`: a stray word, not a key.
                    self.flag(Flag::SkippedText);
                    continue;
                }
                Some('}' | ',') => {
                    self.flag(Flag::MissingValue);
                    members.insert(key, Value::Null);
                    first = false;
                    continue;
                }
                Some(c) if !quoted && is_quote(c) && self.looks_like_member(self.pos) => {
                    // `COMMENT "key": 1`: a stray word before the real key.
                    self.flag(Flag::SkippedText);
                    comma = true;
                    continue;
                }
                Some(_) => self.flag(Flag::MissingColon),
            }
            let value = match self.value(Ctx::Value)? {
                Some(value) => value,
                None => {
                    self.flag(Flag::MissingValue);
                    if self.peek().is_some_and(|c| !matches!(c, ',' | '}' | ']')) {
                        self.flag(Flag::SkippedText);
                        self.pos += 1;
                    }
                    Value::Null
                }
            };
            if members.contains_key(&key) {
                self.flag(Flag::DuplicateKey);
                members.shift_remove(&key);
            }
            members.insert(key, value);
            first = false;
        }
    }

    /// Reads an array (or a tuple or set, by `closer`).
    fn array(&mut self, closer: char, ctx: Ctx) -> Result<Value, ParseError> {
        self.pos += 1;
        self.closers.push(closer);
        let mut items = Vec::new();
        let mut first = true;
        let mut comma = false;
        loop {
            self.skip_ws();
            let Some(c) = self.peek() else {
                self.flag(Flag::Truncated);
                break;
            };
            if c == closer {
                self.pos += 1;
                if comma {
                    self.flag(Flag::TrailingComma);
                }
                break;
            }
            if matches!(c, ']' | '}' | ')') {
                if self.closes_outer(c) {
                    self.flag(Flag::Truncated);
                    break;
                }
                self.flag(Flag::StrayCloser);
                self.pos += 1;
                continue;
            }
            if c == ',' {
                if first || comma {
                    self.flag(Flag::TrailingComma);
                }
                comma = true;
                self.pos += 1;
                continue;
            }
            if starts_with(self.chars, self.pos, "...") {
                self.flag(Flag::Ellipsis);
                self.pos += 3;
                continue;
            }
            if !first && !comma {
                self.flag(Flag::MissingComma);
            }
            comma = false;
            let before = self.pos;
            let Some(item) = self.value(ctx)? else {
                self.flag(Flag::SkippedText);
                self.pos = before + 1;
                continue;
            };
            first = false;
            if item == Value::String(String::new()) && self.pos >= self.chars.len() {
                // `["`: an empty string cut off by the end of the text carries nothing.
                continue;
            }
            if let Value::String(key) = &item
                && closer == ']'
                && self.peek() == Some(':')
            {
                // `['a': {...}]`: a key inside a list means the model meant an object there.
                self.flag(Flag::MissingComma);
                self.pos += 1;
                let value = self.value(Ctx::Value)?.unwrap_or(Value::Null);
                let mut object = Map::new();
                object.insert(key.clone(), value);
                items.push(Value::Object(object));
                continue;
            }
            items.push(item);
        }
        self.closers.pop();
        self.last_was_bare = false;
        Ok(Value::Array(items))
    }
}

fn keyword(word: &str) -> Option<Value> {
    Some(match word {
        "true" | "True" | "TRUE" => Value::Bool(true),
        "false" | "False" | "FALSE" => Value::Bool(false),
        "null" | "Null" | "NULL" | "None" | "undefined" => Value::Null,
        _ => return None,
    })
}

/// A JSON number from repaired number text: integers stay integers, the rest become floats.
fn number_value(text: &str) -> Value {
    let is_float = text.contains(['.', 'e', 'E']);
    if !is_float {
        if let Ok(n) = text.parse::<i64>() {
            return Value::Number(n.into());
        }
        if let Ok(n) = text.parse::<u64>() {
            return Value::Number(n.into());
        }
    }
    match text.parse::<f64>().ok().and_then(Number::from_f64) {
        Some(n) => Value::Number(n),
        None => Value::String(text.to_string()),
    }
}

/// Several top-level values: drop empty ones, let a same-shaped value glued to the previous one
/// replace it (a model re-emitting an updated object), and wrap the rest in an array.
fn combine_top_level(
    values: Vec<(Value, bool)>,
    flags: &mut Vec<Flag>,
) -> Result<Value, ParseError> {
    if values.is_empty() {
        return Err(ParseError::Empty);
    }
    if values.len() == 1 {
        return Ok(values
            .into_iter()
            .next()
            .map(|(v, _)| v)
            .unwrap_or(Value::Null));
    }
    flags.push(Flag::MultipleValues);
    let mut kept: Vec<Value> = Vec::new();
    for (value, separated) in values {
        if !separated
            && let Some(last) = kept.last_mut()
            && same_shape(last, &value)
        {
            *last = value;
            continue;
        }
        kept.push(value);
    }
    if kept.iter().any(|v| !is_empty(v)) {
        kept.retain(|v| !is_empty(v));
    } else {
        kept.truncate(1);
    }
    if kept.len() == 1 {
        return Ok(kept.remove(0));
    }
    Ok(Value::Array(kept))
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Array(items) => items.is_empty(),
        Value::Object(members) => members.is_empty(),
        _ => false,
    }
}

fn same_shape(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len() && a.keys().all(|k| b.contains_key(k)) && !a.is_empty()
        }
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && !a.is_empty() && a.iter().zip(b).all(|(x, y)| same_shape(x, y))
        }
        (Value::String(_), Value::String(_))
        | (Value::Number(_), Value::Number(_))
        | (Value::Bool(_), Value::Bool(_))
        | (Value::Null, Value::Null) => true,
        _ => false,
    }
}
