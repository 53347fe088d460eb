//! Coordinated names share a kind: in `Google, Zorvex and Microsoft` or `Paris, Vrathel and
//! Berlin`, members no rule typed, or typed only weakly, take the kind of the list's confidently
//! typed members when at least two of them agree and none disagrees. A list is names joined by
//! `,` and then `and`/`or` (`, and`, `, or`), and ends at its `and`/`or` member. Only
//! organizations and places spread this way: unknown multi-word names already read as people,
//! and bands or books listed among people (`Vertical Horizon, Carlos Santana`) are not people.

use quarry_core::MatchKind;

use super::classify::{Classified, Confidence, is_demonym};
use super::tokens::Token;

/// Retypes the members of each coordinated list in `classified` (in text order).
pub(crate) fn type_lists(tokens: &[Token<'_>], classified: &mut [Classified]) {
    let mut start = 0;
    while start < classified.len() {
        let mut end = start + 1;
        while end < classified.len() {
            match joiner(
                tokens,
                classified[end - 1].tokens.end,
                classified[end].tokens.start,
            ) {
                Some(Joiner::Comma) => end += 1,
                Some(Joiner::Last) => {
                    end += 1;
                    break;
                }
                None => break,
            }
        }
        if end - start > 1 {
            retype(tokens, &mut classified[start..end]);
        }
        start = end;
    }
}

enum Joiner {
    /// `,`: more members may follow.
    Comma,
    /// `and`, `or`, `, and`, `, or`: the list's last member follows.
    Last,
}

/// How the tokens from `from` to `to` join two list members, if they do.
fn joiner(tokens: &[Token<'_>], from: usize, to: usize) -> Option<Joiner> {
    let between: Vec<&str> = tokens[from..to].iter().map(|t| t.text).collect();
    match between.as_slice() {
        [","] => Some(Joiner::Comma),
        ["and"] | ["or"] | [",", "and"] | [",", "or"] => Some(Joiner::Last),
        _ => None,
    }
}

fn retype(tokens: &[Token<'_>], list: &mut [Classified]) {
    let mut agreed: Option<MatchKind> = None;
    let mut sure = 0;
    for member in list.iter() {
        if let Some((kind, Confidence::Strong)) = member.kind {
            match agreed {
                None => agreed = Some(kind),
                Some(other) if other != kind => return,
                Some(_) => {}
            }
            sure += 1;
        }
    }
    let Some(kind) = agreed.filter(|&kind| kind != MatchKind::Person && sure >= 2) else {
        return;
    };
    for member in list.iter_mut() {
        // `English, Portuguese and Chinese products`: nationality words list like places.
        let demonym = member.tokens.len() == 1 && is_demonym(tokens[member.tokens.start].text);
        if !matches!(member.kind, Some((_, Confidence::Strong))) && !demonym {
            member.kind = Some((kind, Confidence::Weak));
        }
    }
}
