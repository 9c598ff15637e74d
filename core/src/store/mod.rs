//! The store: one interface over Postgres (cluster) and SQLite (one machine).
//!
//! Both backends share one schema and one SQL dialect through sqlx's `Any`
//! driver; the few statements that differ (row locks) branch on
//! [`Backend`]. Times are unix milliseconds.

mod accounts;
mod blobs;
mod brand;
mod cache;
mod changes;
pub mod crawl;
mod idempotency;
mod keys;
mod ledger;
mod limits;
mod orgs;
mod schedules;
mod usage;
mod webhooks;

pub use accounts::{
    normalize_email, random_token, token_hash, Invitation, Member, Role, Session, User,
    INVITATION_TTL_MS, RESET_TTL_MS, SESSION_TTL_MS,
};
pub use blobs::Blob;
pub use brand::CachedBrand;
pub use cache::CachedScrape;
pub use changes::{ChangeSnapshot, NewSnapshot, SnapshotWrite};
pub use crawl::{
    CrawlEvent, CrawlRow, CrawlStatus, Lease, LeaseAsk, NewUrl, PageCommit, PageWrite, Placement,
    PoolBacklog,
};
pub use idempotency::{IdempotencyBegin, StoredResponse, ABANDONED_AFTER_MS, REPLAY_WINDOW_MS};
pub use schedules::{Claimed, RunRow, ScheduleRow};
pub use usage::{
    AlertSettings, DayUsage, FailureCount, LedgerFilter, LedgerRow, RequestRecord, DAY_MS,
};
pub use webhooks::{AttemptOutcome, Delivery, DeliveryState, NewDelivery, WebhookEndpoint};

/// How long idempotency keys replay (24 hours).
pub fn idempotency_replay_window_ms() -> i64 {
    REPLAY_WINDOW_MS
}
pub use keys::{
    generate_key, hash_key as keys_hash, looks_like_key, ApiKey, KeyKind, NewKey,
    PLAYGROUND_CREDITS,
};
pub use ledger::{Reservation, ReserveError};
pub use limits::{ConcurrencySlot, RateDecision};
pub use orgs::{period_of, rfc3339, with_actor, NewOrganization, OrgUpdate, Organization};

use sqlx::any::{AnyPoolOptions, AnyRow};
use sqlx::{AnyPool, Executor};
use std::time::Duration;

/// Which database the store talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Postgres,
    Sqlite,
}

/// Errors from the store. Callers map them to `internal` unless a variant
/// says otherwise.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Db(#[from] sqlx::Error),
    #[error("migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("unsupported database URL {0:?}: use postgres://… or sqlite://…")]
    BadUrl(String),
    #[error("{0} not found")]
    NotFound(String),
    #[error("{0}")]
    Invalid(String),
    /// The database could not be reached, or dropped the connection, while
    /// the call ran (passed on by a task that ran it for someone else).
    #[error("database unavailable: {0}")]
    Unavailable(String),
}

impl StoreError {
    /// An error of the connection rather than of the data: the server
    /// restarting or shutting down, a refused, reset or dropped
    /// connection, an exhausted pool. Retrying later may succeed.
    pub fn is_transient(&self) -> bool {
        match self {
            StoreError::Unavailable(_) => true,
            StoreError::Db(e) => db_transient(e),
            _ => false,
        }
    }
}

/// [`StoreError::is_transient`] of a driver error: I/O and pool failures,
/// and PostgreSQL's connection exceptions (SQLSTATE class 08), shutdowns
/// (57P01–57P03) and `too_many_connections` (53300).
fn db_transient(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut | sqlx::Error::WorkerCrashed => true,
        sqlx::Error::Database(d) => d.code().is_some_and(|c| {
            c.starts_with("08") || matches!(c.as_ref(), "57P01" | "57P02" | "57P03" | "53300")
        }),
        // A connection that died mid-message.
        sqlx::Error::Protocol(m) => {
            let m = m.to_ascii_lowercase();
            m.contains("connection") || m.contains("unexpected end")
        }
        _ => false,
    }
}

/// Result alias for store calls.
pub type StoreResult<T> = Result<T, StoreError>;

/// A handle to the database; cheap to clone.
#[derive(Clone, Debug)]
pub struct Store {
    pool: AnyPool,
    /// Where write transactions run: on SQLite a one-connection pool, so
    /// writers queue in-process (FIFO, no busy-handler sleeps) while readers
    /// use `pool` concurrently (WAL); on Postgres the same pool.
    writer: AnyPool,
    backend: Backend,
    /// When this process last looked for expired crawl leases (unix ms).
    pub(crate) expired_scan: std::sync::Arc<std::sync::atomic::AtomicI64>,
}

static POSTGRES_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");
static SQLITE_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");

/// Current time in unix milliseconds.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Whether `s` can be an id of ours (`crawl_…`, `llmstxt_…`, …): letters,
/// digits, `_` and `-`, so it is safe inside a URL path as it is.
pub fn is_id_text(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// A new random id with a readable prefix, ordered by creation time.
pub fn new_id(prefix: &str) -> String {
    format!("{prefix}_{}", uuid::Uuid::now_v7().simple())
}

impl Store {
    /// Connects to `url` (`postgres://…` or `sqlite://path`) and runs the
    /// embedded migrations. A SQLite file is created when missing.
    pub async fn connect(url: &str) -> StoreResult<Self> {
        sqlx::any::install_default_drivers();
        let (backend, url) = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            (Backend::Postgres, url.to_string())
        } else if let Some(rest) = url.strip_prefix("sqlite:") {
            let mut u = format!("sqlite:{rest}");
            if !rest.contains("mode=") && !rest.contains(":memory:") {
                u.push_str(if rest.contains('?') {
                    "&mode=rwc"
                } else {
                    "?mode=rwc"
                });
            }
            (Backend::Sqlite, u)
        } else {
            return Err(StoreError::BadUrl(url.to_string()));
        };
        let mut opts = AnyPoolOptions::new()
            .max_connections(if backend == Backend::Sqlite { 8 } else { 16 })
            .acquire_timeout(Duration::from_secs(10));
        if backend == Backend::Sqlite {
            // An embedded connection cannot drop like a socket; sqlx's ping
            // before every acquire was one more hop to its worker thread
            // per transaction.
            opts = opts.test_before_acquire(false);
            opts = opts.after_connect(|conn, _meta| {
                Box::pin(async move {
                    conn.execute("PRAGMA journal_mode = WAL").await?;
                    conn.execute("PRAGMA busy_timeout = 10000").await?;
                    conn.execute("PRAGMA synchronous = NORMAL").await?;
                    conn.execute("PRAGMA foreign_keys = ON").await?;
                    // Pages read through a memory map and a 32 MB page cache
                    // instead of a read() per page.
                    conn.execute("PRAGMA mmap_size = 268435456").await?;
                    conn.execute("PRAGMA cache_size = -32000").await?;
                    // Statement journals (multi-row upserts inside a
                    // transaction) stay in memory instead of a temp file.
                    conn.execute("PRAGMA temp_store = MEMORY").await?;
                    // Checkpoint every ~16 MB of WAL instead of 4 MB: pages
                    // written many times (counters, indexes) are copied once.
                    conn.execute("PRAGMA wal_autocheckpoint = 4000").await?;
                    Ok(())
                })
            });
        }
        let pool = opts.clone().connect(&url).await?;
        let writer = if backend == Backend::Sqlite && !url.contains(":memory:") {
            opts.max_connections(1).connect(&url).await?
        } else {
            pool.clone()
        };
        let store = Store {
            pool,
            writer,
            backend,
            expired_scan: Default::default(),
        };
        match backend {
            Backend::Postgres => POSTGRES_MIGRATIONS.run(&store.pool).await?,
            Backend::Sqlite => SQLITE_MIGRATIONS.run(&store.pool).await?,
        }
        Ok(store)
    }

    /// Which backend this store uses.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The connection pool, for modules that add their own tables.
    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// True when the database answers a trivial query.
    pub async fn ping(&self) -> bool {
        sqlx::query("SELECT 1").execute(&self.pool).await.is_ok()
    }

    /// Starts a transaction that holds the write lock from its first
    /// statement: `BEGIN IMMEDIATE` on SQLite, a plain transaction on
    /// Postgres (callers lock rows with [`Store::lock_suffix`]).
    pub(crate) async fn begin_write(&self) -> StoreResult<sqlx::Transaction<'static, sqlx::Any>> {
        match self.backend {
            Backend::Postgres => Ok(self.writer.begin().await?),
            Backend::Sqlite => match self.writer.begin_with("BEGIN IMMEDIATE").await {
                Err(sqlx::Error::InvalidSavePointStatement) => {
                    // A COMMIT or ROLLBACK that failed (disk full, I/O
                    // error: SQLite rolls back by itself) leaves sqlx's
                    // transaction depth at 1 on the one writer connection,
                    // and it refuses every later BEGIN for ever. Close that
                    // connection; the pool opens a fresh one.
                    tracing::warn!("the SQLite writer connection was left inside a failed transaction; reopening it");
                    if let Ok(conn) = self.writer.acquire().await {
                        let _ = conn.close().await;
                    }
                    Ok(self.writer.begin_with("BEGIN IMMEDIATE").await?)
                }
                other => Ok(other?),
            },
        }
    }

    /// ` FOR UPDATE` on Postgres, nothing on SQLite (whose write
    /// transactions are already serialised).
    pub(crate) fn lock_suffix(&self) -> &'static str {
        match self.backend {
            Backend::Postgres => " FOR UPDATE",
            Backend::Sqlite => "",
        }
    }
}

/// A value bound to a [`Writes`] statement.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Bind<'a> {
    I(i64),
    S(&'a str),
    B(&'a [u8]),
}

/// Write statements of one transaction whose results are not read. On
/// SQLite they go to the connection's thread as one multi-statement query
/// (one hop instead of one per statement: the hops, not SQLite, were most
/// of a crawl commit's time); on Postgres one by one (a prepared statement
/// holds one command). Each statement numbers its placeholders from `$1`.
pub(crate) struct Writes<'a> {
    sqlite: bool,
    stmts: Vec<(String, Vec<Bind<'a>>)>,
}

impl<'a> Writes<'a> {
    pub(crate) fn new(backend: Backend) -> Self {
        Writes {
            sqlite: backend == Backend::Sqlite,
            stmts: Vec::new(),
        }
    }

    /// Adds a statement. Its placeholders are `$1`, `$2`, …; on SQLite they
    /// become bare `?` (see [`anonymise_into`]), so the SQL must not hold a
    /// `$` or `?` inside a string literal: bind such values instead.
    pub(crate) fn push(&mut self, sql: String, binds: Vec<Bind<'a>>) {
        self.stmts.push((sql, binds));
    }

    pub(crate) async fn run(
        self,
        tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    ) -> StoreResult<()> {
        fn bind<'q>(
            q: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>,
            b: &Bind<'q>,
        ) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>> {
            match b {
                Bind::I(v) => q.bind(*v),
                Bind::S(v) => q.bind(*v),
                Bind::B(v) => q.bind(*v),
            }
        }
        if self.stmts.is_empty() {
            return Ok(());
        }
        if !self.sqlite {
            for (sql, binds) in &self.stmts {
                let mut q = sqlx::query(sql);
                for b in binds {
                    q = bind(q, b);
                }
                q.execute(&mut **tx).await?;
            }
            return Ok(());
        }
        let mut sql = String::new();
        let mut values = Vec::new();
        for (text, binds) in &self.stmts {
            anonymise_into(text, binds, &mut sql, &mut values)?;
            sql.push_str(";\n");
        }
        let mut q = sqlx::query(&sql);
        for b in &values {
            q = bind(q, b);
        }
        q.execute(&mut **tx).await?;
        Ok(())
    }
}

/// `sql` with every `$N` placeholder turned into a bare `?`, appending the
/// values to `values` in the order the placeholders appear (a `$N` written
/// twice is bound twice). SQLite looks each named parameter up in a list,
/// one by one, so binding a multi-row statement by `$N` names took time
/// quadratic in their number (1% of a crawl's CPU); bare `?` are numbered
/// in order and need no look-up.
fn anonymise_into<'a>(
    sql: &str,
    binds: &[Bind<'a>],
    out: &mut String,
    values: &mut Vec<Bind<'a>>,
) -> StoreResult<()> {
    let mut rest = sql;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        rest = &rest[i + 1..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        match rest[..digits].parse::<usize>() {
            Ok(n) if (1..=binds.len()).contains(&n) => {
                out.push('?');
                values.push(binds[n - 1]);
            }
            Ok(n) => {
                return Err(StoreError::Invalid(format!(
                    "statement placeholder ${n} has no value ({} given)",
                    binds.len()
                )))
            }
            Err(_) => {
                out.push('$');
                out.push_str(&rest[..digits]);
            }
        }
        rest = &rest[digits..];
    }
    out.push_str(rest);
    Ok(())
}

/// Splits `items` into chunks whose lengths are powers of two, at most
/// `max` (a power of two): a multi-row statement built per chunk then has at
/// most log2(max)+1 shapes, so its prepared form stays in the connection's
/// statement cache. (Chunks of arbitrary length made nearly every batch a
/// new SQL text: preparing was 9% of a crawl's instructions.) Items keep
/// their order.
pub(crate) fn shaped_chunks<T>(items: &[T], max: usize) -> Vec<&[T]> {
    debug_assert!(max.is_power_of_two());
    let mut out = Vec::new();
    let mut rest = items;
    while !rest.is_empty() {
        let n = rest.len().min(max);
        let size = 1usize << (usize::BITS - 1 - n.leading_zeros());
        let (head, tail) = rest.split_at(size);
        out.push(head);
        rest = tail;
    }
    out
}

/// Reads an optional i64 column.
pub(crate) fn opt_i64(row: &AnyRow, col: &str) -> StoreResult<Option<i64>> {
    use sqlx::Row;
    Ok(row.try_get::<Option<i64>, _>(col)?)
}

#[cfg(test)]
mod shaped_chunks_tests {
    use super::shaped_chunks;

    #[test]
    fn chunks_are_powers_of_two_in_order_and_cover_everything() {
        for n in 0..300usize {
            let items: Vec<usize> = (0..n).collect();
            let parts = shaped_chunks(&items, 64);
            let lens: Vec<usize> = parts.iter().map(|p| p.len()).collect();
            assert!(
                lens.iter().all(|l| l.is_power_of_two() && *l <= 64),
                "{n}: {lens:?}"
            );
            assert_eq!(parts.concat(), items, "{n}");
            // Greedy: non-increasing sizes, so at most 7 statements past the full ones.
            assert!(lens.windows(2).all(|w| w[0] >= w[1]), "{n}: {lens:?}");
        }
        assert_eq!(
            shaped_chunks(&[0; 45], 64)
                .iter()
                .map(|p| p.len())
                .collect::<Vec<_>>(),
            vec![32, 8, 4, 1]
        );
    }
}

#[cfg(test)]
mod writes_tests {
    use super::{anonymise_into, Bind, StoreError};

    #[test]
    fn placeholders_become_bare_and_values_follow_their_order() {
        let (mut out, mut values) = (String::new(), Vec::new());
        let binds = [Bind::S("c1"), Bind::I(7), Bind::B(b"z")];
        anonymise_into(
            "UPDATE t SET a = $2, b = $3 WHERE c = $1",
            &binds,
            &mut out,
            &mut values,
        )
        .expect("valid");
        anonymise_into(
            "INSERT INTO u VALUES ($1, $2), ($1, $2)",
            &binds,
            &mut out,
            &mut values,
        )
        .expect("valid");
        assert_eq!(
            out,
            "UPDATE t SET a = ?, b = ? WHERE c = ?INSERT INTO u VALUES (?, ?), (?, ?)"
        );
        assert_eq!(
            values,
            [
                Bind::I(7),
                Bind::B(b"z"),
                Bind::S("c1"),
                Bind::S("c1"),
                Bind::I(7),
                Bind::S("c1"),
                Bind::I(7)
            ]
        );
        let (mut out, mut values) = (String::new(), Vec::new());
        anonymise_into("SELECT $ , $x, $1$1", &binds[..1], &mut out, &mut values).expect("valid");
        assert_eq!(out, "SELECT $ , $x, ??");
        assert_eq!(values.len(), 2);
        let err = anonymise_into("SELECT $4", &binds, &mut String::new(), &mut Vec::new());
        assert!(matches!(err, Err(StoreError::Invalid(_))));
        let err = anonymise_into("SELECT $0", &binds, &mut String::new(), &mut Vec::new());
        assert!(matches!(err, Err(StoreError::Invalid(_))));
    }

    #[test]
    fn connection_failures_are_transient_data_errors_are_not() {
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "reset");
        assert!(StoreError::Db(sqlx::Error::Io(io)).is_transient());
        assert!(StoreError::Db(sqlx::Error::PoolTimedOut).is_transient());
        assert!(StoreError::Unavailable("gone".into()).is_transient());
        assert!(!StoreError::Db(sqlx::Error::RowNotFound).is_transient());
        assert!(!StoreError::Invalid("bad".into()).is_transient());
        assert!(!StoreError::NotFound("crawl".into()).is_transient());
    }
}
