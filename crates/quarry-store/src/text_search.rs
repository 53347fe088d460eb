//! Full-text search of chunks inside PostgreSQL: each chunk's words as a `tsvector` (English
//! stemming, stop words dropped) in `chunks.tsv` under a GIN index (migration 0010), written by
//! `put_chunks` in its transaction ([`index_chunk_text`]), searched with
//! `websearch_to_tsquery` and ranked by `ts_rank_cd` ([`text_search`]). A chunk is searchable by
//! every process as soon as its transaction commits.

use quarry_core::store::{ChunkMatch, StoreError};
use sqlx::postgres::{PgConnection, PgPool};

use crate::error::backend;

/// The document's chunks' words, from the document's text at their code-point offsets
/// (PostgreSQL's `substr` counts characters, 1-based).
const INDEX_CHUNK_TEXT: &str = "UPDATE chunks c SET tsv = to_tsvector('english', \
     substr(d.text, (c.start_cp + 1)::int, (c.end_cp - c.start_cp)::int)) \
     FROM documents d WHERE c.project_id = $1 AND c.document_id = $2 AND d.id = c.document_id";

/// Chunks matching any word of the query, those matching more (and closer together) first.
const SEARCH: &str = "SELECT c.document_id, c.ordinal, c.start_cp, c.end_cp, \
     ts_rank_cd(c.tsv, q)::real AS score \
     FROM chunks c, websearch_to_tsquery('english', $2) AS q \
     WHERE c.project_id = $1 AND c.tsv @@ q AND ($4::text[] IS NULL OR c.document_id = ANY($4)) \
     ORDER BY score DESC, c.document_id, c.ordinal LIMIT $3";

/// `put_chunks`'s hook: indexes the words of the document's chunks just written.
pub(crate) async fn index_chunk_text(
    tx: &mut PgConnection,
    project: &str,
    document_id: &str,
) -> Result<(), StoreError> {
    sqlx::query(INDEX_CHUNK_TEXT)
        .bind(project)
        .bind(document_id)
        .execute(tx)
        .await
        .map_err(backend)?;
    Ok(())
}

/// [`quarry_core::store::Store::text_search`] on PostgreSQL.
pub(crate) async fn text_search(
    pool: &PgPool,
    project: &str,
    query: &str,
    k: usize,
    document_ids: Option<&[String]>,
) -> Result<Vec<ChunkMatch>, StoreError> {
    let query = any_word(query);
    if k == 0 || query.is_empty() || document_ids.is_some_and(<[String]>::is_empty) {
        return Ok(Vec::new());
    }
    let rows: Vec<(String, i64, i64, i64, f32)> = sqlx::query_as(SEARCH)
        .bind(project)
        .bind(&query)
        .bind(i64::try_from(k).unwrap_or(i64::MAX))
        .bind(document_ids)
        .fetch_all(pool)
        .await
        .map_err(backend)?;
    Ok(rows
        .into_iter()
        .map(|(document_id, ordinal, start, end, score)| ChunkMatch {
            document_id,
            ordinal,
            start: usize::try_from(start).unwrap_or(0),
            end: usize::try_from(end).unwrap_or(0),
            score,
        })
        .collect())
}

/// The query's words as a `websearch_to_tsquery` disjunction (`w1 or w2`): only letters and
/// digits reach it, so no query text is read as an operator (a leading `-`, quotes) and a search
/// for several words finds chunks with some of them, as BM25 does.
fn any_word(query: &str) -> String {
    query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty() && !word.eq_ignore_ascii_case("or"))
        .collect::<Vec<_>>()
        .join(" or ")
}

#[cfg(test)]
mod tests {
    use super::any_word;

    #[test]
    fn queries_become_a_disjunction_of_their_words() {
        assert_eq!(
            any_word("warehouse pallets, Rotterdam"),
            "warehouse or pallets or Rotterdam"
        );
        assert_eq!(any_word("-\"salt\" OR pepper"), "salt or pepper");
        assert_eq!(any_word("  ,,; "), "");
        assert_eq!(any_word("Zürich 東京"), "Zürich or 東京");
    }
}
