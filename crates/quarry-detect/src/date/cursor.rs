//! Read access to the token stream for the grammar: typed peeks that return `None`/`false` past
//! the end, so rules never index out of bounds.

use std::cell::Cell;

use chrono::{NaiveDate, NaiveDateTime};

use super::lexicon::{Lex, Rel, Unit};
use super::model::Moment;
use super::token::{Gap, Kind, Token};

/// A number token's parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Num {
    pub value: u32,
    pub digits: u8,
    pub ordinal: bool,
}

/// A parse found at a start token: its end and value.
pub(crate) type Found = Option<(usize, Moment)>;

/// The rules that read a whole expression, for the rules that embed one ("3 days after <date>",
/// "the last Friday of <period>", "every <day> at <time>"). `compose` defines them
/// (`compose::ENTRIES`) and [`find`](super::find) hands them to the cursor: the grammar is
/// recursive, and recurses through the cursor ([`Cursor::moment`], …) rather than through its
/// files.
#[derive(Clone, Copy)]
pub(crate) struct Entries {
    pub moment: fn(&Cursor, usize) -> Found,
    pub date_at: fn(&Cursor, usize) -> Found,
    pub date_or_time: fn(&Cursor, usize) -> Found,
    pub then_time: fn(&Cursor, usize, NaiveDate) -> Found,
}

pub(crate) struct Cursor<'a> {
    pub text: &'a str,
    pub toks: &'a [Token],
    pub now: NaiveDateTime,
    /// The last answers of `compose::date_at` and `compose::moment`, by start token: the
    /// grammar asks for the same start several times (alone, as a range's first end, before
    /// a time range), and each answer is a pure function of the start.
    pub date_memo: Cell<Option<(usize, Found)>>,
    pub moment_memo: Cell<Option<(usize, Found)>>,
    /// The last answer of `compose::date_or_time` (a moment's reading and an interval's start).
    pub date_or_time_memo: Cell<Option<(usize, Found)>>,
    /// The rules that read a whole expression.
    pub entries: Entries,
}

impl<'a> Cursor<'a> {
    pub fn new(
        text: &'a str,
        toks: &'a [Token],
        now: NaiveDateTime,
        entries: Entries,
    ) -> Cursor<'a> {
        Cursor {
            text,
            toks,
            now,
            date_memo: Cell::new(None),
            moment_memo: Cell::new(None),
            date_or_time_memo: Cell::new(None),
            entries,
        }
    }

    /// The longest single expression starting at token `i` (`compose::moment`).
    pub fn moment(&self, i: usize) -> Found {
        (self.entries.moment)(self, i)
    }

    /// A date alone at token `i` (`compose::date_at`).
    pub fn date_at(&self, i: usize) -> Found {
        (self.entries.date_at)(self, i)
    }

    /// A date with its time, or a time with its date, at token `i` (`compose::date_or_time`).
    pub fn date_or_time(&self, i: usize) -> Found {
        (self.entries.date_or_time)(self, i)
    }

    /// The day `date` written up to token `end`, with the time written after it
    /// (`compose::then_time`).
    pub fn then_time(&self, end: usize, date: NaiveDate) -> Found {
        (self.entries.then_time)(self, end, date)
    }

    /// `parse(i)`, answered from `memo` when it last ran at `i`.
    pub fn memoized(
        &self,
        memo: &Cell<Option<(usize, Found)>>,
        i: usize,
        parse: impl FnOnce() -> Found,
    ) -> Found {
        if let Some((at, found)) = memo.get()
            && at == i
        {
            return found;
        }
        let found = parse();
        memo.set(Some((i, found)));
        found
    }
}

impl Cursor<'_> {
    pub fn today(&self) -> NaiveDate {
        self.now.date()
    }

    pub fn len(&self) -> usize {
        self.toks.len()
    }

    pub fn lex(&self, i: usize) -> Lex {
        match self.toks.get(i).map(|t| t.kind) {
            Some(Kind::Word { lex, .. }) => lex,
            _ => Lex::Other,
        }
    }

    pub fn rel(&self, i: usize, rel: Rel) -> bool {
        self.lex(i) == Lex::Rel(rel)
    }

    pub fn unit(&self, i: usize) -> Option<Unit> {
        match self.lex(i) {
            Lex::Unit(unit) => Some(unit),
            _ => None,
        }
    }

    pub fn num(&self, i: usize) -> Option<Num> {
        match self.toks.get(i).map(|t| t.kind) {
            Some(Kind::Num {
                value,
                digits,
                ordinal,
            }) => Some(Num {
                value,
                digits,
                ordinal,
            }),
            _ => None,
        }
    }

    /// A plain number (not `15th`) of at most `max_digits` digits.
    pub fn plain(&self, i: usize, max_digits: u8) -> Option<u32> {
        self.num(i)
            .filter(|n| !n.ordinal && n.digits <= max_digits)
            .map(|n| n.value)
    }

    pub fn punct(&self, i: usize, c: u8) -> bool {
        matches!(self.toks.get(i).map(|t| t.kind), Some(Kind::Punct(p)) if p == c)
    }

    pub fn is_punct(&self, i: usize) -> bool {
        matches!(self.toks.get(i).map(|t| t.kind), Some(Kind::Punct(_)))
    }

    pub fn is_word(&self, i: usize) -> bool {
        matches!(self.toks.get(i).map(|t| t.kind), Some(Kind::Word { .. }))
    }

    pub fn capital(&self, i: usize) -> bool {
        matches!(
            self.toks.get(i).map(|t| t.kind),
            Some(Kind::Word { capital: true, .. })
        )
    }

    /// Token `i` exists and touches the token before it.
    pub fn tight(&self, i: usize) -> bool {
        self.toks.get(i).is_some_and(|t| t.gap == Gap::None)
    }

    /// Token `i` is a word or number glued to the token before it (as in `2000abc`).
    pub fn glued(&self, i: usize) -> bool {
        self.tight(i) && !self.is_punct(i)
    }

    /// Token `i` exists and is on the same line as the token before it.
    pub fn joined(&self, i: usize) -> bool {
        self.toks.get(i).is_some_and(|t| t.gap != Gap::Break)
    }

    /// The text of token `i` (empty past the end).
    pub fn word(&self, i: usize) -> &str {
        self.toks.get(i).map_or("", |t| &self.text[t.start..t.end])
    }

    /// Token `i` is the word `w` (ASCII, case-insensitive).
    pub fn is(&self, i: usize, w: &str) -> bool {
        self.is_word(i) && self.word(i).eq_ignore_ascii_case(w)
    }
}
