//! The database layer under the store: the backend difference behind enums, so every operation
//! is ordinary code written once.
//!
//! sqlx types its pools, transactions, connections, arguments and rows per database. Here a
//! [`Pool`] and a [`Tx`] are one of SQLite's or PostgreSQL's, a statement's arguments are owned
//! [`Arg`]s, and [`query`], [`query_as`] and [`query_scalar`] build a statement the way sqlx
//! does (`query_as::<EntityRow>(sql::ENTITY_BY_ID).bind(project).bind(id)`). Running it on an
//! [`Exec`] (`&Pool`: on a connection taken for it, as sqlx does; or `&mut Tx`) matches on the
//! backend once, binds each argument as the sqlx type it came from (text, BIGINT, boolean, bytes,
//! `Json`: jsonb on PostgreSQL, text on SQLite), runs sqlx's own `execute` / `fetch_*`, and maps
//! a failure with [`crate::error::backend`]. A row type is any [`Record`] (`FromRow` for both
//! databases), a scalar any [`Scalar`]; neither needs a `where` clause at the call site.

use std::marker::PhantomData;

use quarry_core::store::StoreError;
use serde::Serialize;
use serde_json::value::RawValue;
use sqlx::error::BoxDynError;
use sqlx::pool::PoolConnection;
use sqlx::postgres::{PgConnection, PgPool, PgRow};
use sqlx::sqlite::{SqliteConnection, SqlitePool, SqliteRow};
use sqlx::types::Json;
use sqlx::{
    Arguments, Database, Decode, Encode, FromRow, Postgres, SqlSafeStr, SqlStr, Sqlite, Type,
};

use crate::error::backend;

/// Which SQL dialect a pool or transaction speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    /// This dialect's one of two twins (statements, migrators, ...).
    pub(crate) fn pick<T>(self, sqlite: T, postgres: T) -> T {
        match self {
            Dialect::Sqlite => sqlite,
            Dialect::Postgres => postgres,
        }
    }
}

/// A connection pool of either backend.
pub(crate) enum Pool {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

impl Pool {
    pub(crate) fn dialect(&self) -> Dialect {
        match self {
            Pool::Sqlite(_) => Dialect::Sqlite,
            Pool::Postgres(_) => Dialect::Postgres,
        }
    }

    /// Starts a transaction. Dropping the [`Tx`] without [`Tx::commit`] rolls it back.
    pub(crate) async fn begin(&self) -> Result<Tx, StoreError> {
        match self {
            Pool::Sqlite(pool) => pool.begin().await.map(Tx::Sqlite),
            Pool::Postgres(pool) => pool.begin().await.map(Tx::Postgres),
        }
        .map_err(backend)
    }
}

/// A transaction of either backend.
pub(crate) enum Tx {
    Sqlite(sqlx::Transaction<'static, Sqlite>),
    Postgres(sqlx::Transaction<'static, Postgres>),
}

impl Tx {
    pub(crate) fn dialect(&self) -> Dialect {
        match self {
            Tx::Sqlite(_) => Dialect::Sqlite,
            Tx::Postgres(_) => Dialect::Postgres,
        }
    }

    pub(crate) async fn commit(self) -> Result<(), StoreError> {
        match self {
            Tx::Sqlite(tx) => tx.commit().await,
            Tx::Postgres(tx) => tx.commit().await,
        }
        .map_err(backend)
    }

    pub(crate) async fn rollback(self) -> Result<(), StoreError> {
        match self {
            Tx::Sqlite(tx) => tx.rollback().await,
            Tx::Postgres(tx) => tx.rollback().await,
        }
        .map_err(backend)
    }
}

/// Where a statement runs: on a connection of a pool, or on a transaction's.
pub(crate) enum Exec<'c> {
    Pool(&'c Pool),
    Tx(&'c mut Tx),
}

impl<'c> From<&'c Pool> for Exec<'c> {
    fn from(pool: &'c Pool) -> Self {
        Exec::Pool(pool)
    }
}

impl<'c> From<&'c mut Tx> for Exec<'c> {
    fn from(tx: &'c mut Tx) -> Self {
        Exec::Tx(tx)
    }
}

/// A connection taken from a [`Pool`] for one statement (back to the pool when dropped), as
/// sqlx does when a statement runs on a pool.
enum Pooled {
    Sqlite(PoolConnection<Sqlite>),
    Postgres(PoolConnection<Postgres>),
}

/// The connection a statement runs on.
enum Conn<'c> {
    Sqlite(&'c mut SqliteConnection),
    Postgres(&'c mut PgConnection),
}

impl Pool {
    async fn acquire(&self) -> Result<Pooled, StoreError> {
        match self {
            Pool::Sqlite(pool) => pool.acquire().await.map(Pooled::Sqlite),
            Pool::Postgres(pool) => pool.acquire().await.map(Pooled::Postgres),
        }
        .map_err(backend)
    }
}

impl Exec<'_> {
    /// The transaction's connection, or one taken from the pool into `pooled`.
    async fn conn<'a>(
        &'a mut self,
        pooled: &'a mut Option<Pooled>,
    ) -> Result<Conn<'a>, StoreError> {
        match self {
            Exec::Pool(pool) => Ok(pooled.insert(pool.acquire().await?).conn()),
            Exec::Tx(tx) => Ok(tx.conn()),
        }
    }
}

impl Pooled {
    fn conn(&mut self) -> Conn<'_> {
        match self {
            Pooled::Sqlite(conn) => Conn::Sqlite(conn),
            Pooled::Postgres(conn) => Conn::Postgres(conn),
        }
    }
}

impl Tx {
    fn conn(&mut self) -> Conn<'_> {
        match self {
            Tx::Sqlite(tx) => Conn::Sqlite(tx),
            Tx::Postgres(tx) => Conn::Postgres(tx),
        }
    }
}

/// A row type both backends decode.
pub(crate) trait Record:
    for<'r> FromRow<'r, SqliteRow> + for<'r> FromRow<'r, PgRow> + Send + Unpin
{
}

impl<T> Record for T where
    T: for<'r> FromRow<'r, SqliteRow> + for<'r> FromRow<'r, PgRow> + Send + Unpin
{
}

/// A single-column value both backends decode.
pub(crate) trait Scalar:
    for<'r> Decode<'r, Sqlite>
    + Type<Sqlite>
    + for<'r> Decode<'r, Postgres>
    + Type<Postgres>
    + Send
    + Unpin
{
}

impl<T> Scalar for T where
    T: for<'r> Decode<'r, Sqlite>
        + Type<Sqlite>
        + for<'r> Decode<'r, Postgres>
        + Type<Postgres>
        + Send
        + Unpin
{
}

/// One bound value, owned. Each variant binds as the sqlx type it was made from, so the
/// database sees the same parameter types as with sqlx's own `bind` (NULLs included).
pub(crate) enum Arg {
    /// `String` / `&str`: TEXT.
    Text(Option<String>),
    /// `i64`: BIGINT (INTEGER on SQLite).
    Int(Option<i64>),
    Bool(Option<bool>),
    /// `Vec<u8>`: BYTEA / BLOB.
    Bytes(Option<Vec<u8>>),
    /// `sqlx::types::Json<T>`, serialised already (the same text sqlx writes): jsonb on
    /// PostgreSQL, text on SQLite.
    Json(Option<Box<RawValue>>),
    /// A `Json` value that did not serialise: the statement fails with sqlx's encode error,
    /// as a failed `bind` does in sqlx.
    Unencodable(String),
}

/// A type `bind` takes, and its NULL (what `None` of it binds).
pub(crate) trait Bind: Into<Arg> {
    fn null() -> Arg;
}

impl From<String> for Arg {
    fn from(value: String) -> Self {
        Arg::Text(Some(value))
    }
}

impl Bind for String {
    fn null() -> Arg {
        Arg::Text(None)
    }
}

impl From<&str> for Arg {
    fn from(value: &str) -> Self {
        Arg::Text(Some(value.to_owned()))
    }
}

impl Bind for &str {
    fn null() -> Arg {
        Arg::Text(None)
    }
}

impl From<&String> for Arg {
    fn from(value: &String) -> Self {
        Arg::Text(Some(value.clone()))
    }
}

impl Bind for &String {
    fn null() -> Arg {
        Arg::Text(None)
    }
}

impl From<i64> for Arg {
    fn from(value: i64) -> Self {
        Arg::Int(Some(value))
    }
}

impl Bind for i64 {
    fn null() -> Arg {
        Arg::Int(None)
    }
}

impl From<bool> for Arg {
    fn from(value: bool) -> Self {
        Arg::Bool(Some(value))
    }
}

impl Bind for bool {
    fn null() -> Arg {
        Arg::Bool(None)
    }
}

impl From<Vec<u8>> for Arg {
    fn from(value: Vec<u8>) -> Self {
        Arg::Bytes(Some(value))
    }
}

impl Bind for Vec<u8> {
    fn null() -> Arg {
        Arg::Bytes(None)
    }
}

impl<T: Serialize> From<Json<T>> for Arg {
    fn from(value: Json<T>) -> Self {
        match serde_json::value::to_raw_value(&value.0) {
            Ok(raw) => Arg::Json(Some(raw)),
            Err(error) => Arg::Unencodable(error.to_string()),
        }
    }
}

impl<T: Serialize> Bind for Json<T> {
    fn null() -> Arg {
        Arg::Json(None)
    }
}

impl<T: Bind> From<Option<T>> for Arg {
    fn from(value: Option<T>) -> Self {
        value.map_or_else(T::null, Into::into)
    }
}

impl<'a, T> From<&'a Option<T>> for Arg
where
    &'a T: Bind,
{
    fn from(value: &'a Option<T>) -> Self {
        value.as_ref().map_or_else(<&T>::null, Into::into)
    }
}

/// `args` as database `DB`'s arguments; a value that cannot be encoded fails as sqlx's `bind`
/// fails (`sqlx::Error::Encode`).
fn arguments<DB: Database>(args: Vec<Arg>) -> Result<DB::Arguments, StoreError>
where
    Option<String>: for<'q> Encode<'q, DB> + Type<DB>,
    Option<i64>: for<'q> Encode<'q, DB> + Type<DB>,
    Option<bool>: for<'q> Encode<'q, DB> + Type<DB>,
    Option<Vec<u8>>: for<'q> Encode<'q, DB> + Type<DB>,
    Option<Json<Box<RawValue>>>: for<'q> Encode<'q, DB> + Type<DB>,
{
    let mut arguments = DB::Arguments::default();
    for arg in args {
        match arg {
            Arg::Text(value) => arguments.add(value),
            Arg::Int(value) => arguments.add(value),
            Arg::Bool(value) => arguments.add(value),
            Arg::Bytes(value) => arguments.add(value),
            Arg::Json(value) => arguments.add(value.map(Json)),
            Arg::Unencodable(error) => Err(BoxDynError::from(error)),
        }
        .map_err(|error| backend(sqlx::Error::Encode(error)))?;
    }
    Ok(arguments)
}

/// A statement and its arguments (see [`query`]).
pub(crate) struct Query {
    sql: SqlStr,
    args: Vec<Arg>,
}

/// A statement, as `sqlx::query`: `sql` is a `&'static str`, or `AssertSqlSafe(text)` for text
/// built at run time.
pub(crate) fn query(sql: impl SqlSafeStr) -> Query {
    Query {
        sql: sql.into_sql_str(),
        args: Vec::new(),
    }
}

/// A statement returning rows of `R`, as `sqlx::query_as`.
pub(crate) fn query_as<R: Record>(sql: impl SqlSafeStr) -> QueryAs<R> {
    QueryAs {
        query: query(sql),
        row: PhantomData,
    }
}

/// A statement returning one column of `T`, as `sqlx::query_scalar`.
pub(crate) fn query_scalar<T: Scalar>(sql: impl SqlSafeStr) -> QueryScalar<T> {
    QueryScalar {
        query: query(sql),
        value: PhantomData,
    }
}

impl Query {
    /// Binds the next parameter (`$1`, `$2`, ... in order).
    pub(crate) fn bind(mut self, value: impl Into<Arg>) -> Self {
        self.args.push(value.into());
        self
    }

    /// Runs the statement; returns the number of rows it affected.
    pub(crate) async fn execute<'c>(self, exec: impl Into<Exec<'c>>) -> Result<u64, StoreError> {
        let Query { sql, args } = self;
        let (mut exec, mut pooled) = (exec.into(), None);
        let conn = exec.conn(&mut pooled).await?;
        let done = match conn {
            Conn::Sqlite(conn) => sqlx::query_with(sql, arguments::<Sqlite>(args)?)
                .execute(conn)
                .await
                .map(|done| done.rows_affected()),
            Conn::Postgres(conn) => sqlx::query_with(sql, arguments::<Postgres>(args)?)
                .execute(conn)
                .await
                .map(|done| done.rows_affected()),
        };
        done.map_err(backend)
    }

    /// Every row, as `R`.
    pub(crate) async fn fetch_all<'c, R: Record>(
        self,
        exec: impl Into<Exec<'c>>,
    ) -> Result<Vec<R>, StoreError> {
        let Query { sql, args } = self;
        let (mut exec, mut pooled) = (exec.into(), None);
        let conn = exec.conn(&mut pooled).await?;
        let rows = match conn {
            Conn::Sqlite(conn) => {
                let query = sqlx::query_as_with(sql, arguments::<Sqlite>(args)?);
                query.fetch_all(conn).await
            }
            Conn::Postgres(conn) => {
                let query = sqlx::query_as_with(sql, arguments::<Postgres>(args)?);
                query.fetch_all(conn).await
            }
        };
        rows.map_err(backend)
    }

    /// The first row, if any, as `R`.
    pub(crate) async fn fetch_optional<'c, R: Record>(
        self,
        exec: impl Into<Exec<'c>>,
    ) -> Result<Option<R>, StoreError> {
        let Query { sql, args } = self;
        let (mut exec, mut pooled) = (exec.into(), None);
        let conn = exec.conn(&mut pooled).await?;
        let row = match conn {
            Conn::Sqlite(conn) => {
                let query = sqlx::query_as_with(sql, arguments::<Sqlite>(args)?);
                query.fetch_optional(conn).await
            }
            Conn::Postgres(conn) => {
                let query = sqlx::query_as_with(sql, arguments::<Postgres>(args)?);
                query.fetch_optional(conn).await
            }
        };
        row.map_err(backend)
    }

    /// The first row, as `R`; no row is sqlx's `RowNotFound` (as sqlx's own `fetch_one` does).
    pub(crate) async fn fetch_one<'c, R: Record>(
        self,
        exec: impl Into<Exec<'c>>,
    ) -> Result<R, StoreError> {
        self.fetch_optional(exec)
            .await?
            .ok_or_else(|| backend(sqlx::Error::RowNotFound))
    }
}

/// A statement returning rows of `R` (see [`query_as`]).
pub(crate) struct QueryAs<R> {
    query: Query,
    row: PhantomData<fn() -> R>,
}

impl<R: Record> QueryAs<R> {
    pub(crate) fn bind(mut self, value: impl Into<Arg>) -> Self {
        self.query = self.query.bind(value);
        self
    }

    pub(crate) async fn fetch_all<'c>(
        self,
        exec: impl Into<Exec<'c>>,
    ) -> Result<Vec<R>, StoreError> {
        self.query.fetch_all(exec).await
    }

    pub(crate) async fn fetch_optional<'c>(
        self,
        exec: impl Into<Exec<'c>>,
    ) -> Result<Option<R>, StoreError> {
        self.query.fetch_optional(exec).await
    }

    pub(crate) async fn fetch_one<'c>(self, exec: impl Into<Exec<'c>>) -> Result<R, StoreError> {
        self.query.fetch_one(exec).await
    }
}

/// A statement returning one column of `T` (see [`query_scalar`]): a one-column row, as sqlx's
/// `query_scalar` reads it.
pub(crate) struct QueryScalar<T> {
    query: Query,
    value: PhantomData<fn() -> T>,
}

impl<T: Scalar> QueryScalar<T> {
    pub(crate) fn bind(mut self, value: impl Into<Arg>) -> Self {
        self.query = self.query.bind(value);
        self
    }

    pub(crate) async fn fetch_all<'c>(
        self,
        exec: impl Into<Exec<'c>>,
    ) -> Result<Vec<T>, StoreError> {
        let rows: Vec<(T,)> = self.query.fetch_all(exec).await?;
        Ok(rows.into_iter().map(|(value,)| value).collect())
    }

    pub(crate) async fn fetch_optional<'c>(
        self,
        exec: impl Into<Exec<'c>>,
    ) -> Result<Option<T>, StoreError> {
        let row: Option<(T,)> = self.query.fetch_optional(exec).await?;
        Ok(row.map(|(value,)| value))
    }

    pub(crate) async fn fetch_one<'c>(self, exec: impl Into<Exec<'c>>) -> Result<T, StoreError> {
        let (value,): (T,) = self.query.fetch_one(exec).await?;
        Ok(value)
    }
}
