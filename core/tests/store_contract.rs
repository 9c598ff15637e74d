//! The store contract: every test runs against SQLite and against a real
//! PostgreSQL server (started by `make test`, URL in WEBDATA_TEST_POSTGRES_URL).
//!
//! Long by design: a test suite (every store method, each run on both backends).
//! Each test stands alone; splitting the file would only add test
//! binaries to link.

use webdata_core::store::{
    CrawlStatus, IdempotencyBegin, NewOrganization, NewUrl, OrgUpdate, PageCommit, PageWrite,
    ReserveError, SnapshotWrite, StoredResponse,
};
use webdata_core::Store;

async fn sqlite() -> Store {
    Store::connect(&sqlite_url()).await.expect("sqlite store")
}

/// The URL of a new SQLite file.
fn sqlite_url() -> String {
    let dir = std::env::temp_dir().join(format!("webdata-core-{}", uuid_like()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    format!("sqlite://{}/t.db", dir.display())
}

async fn postgres() -> Store {
    Store::connect(&postgres_url().await)
        .await
        .expect("postgres store")
}

/// The URL of a new, empty PostgreSQL database.
async fn postgres_url() -> String {
    let base = std::env::var("WEBDATA_TEST_POSTGRES_URL").expect(
        "WEBDATA_TEST_POSTGRES_URL is not set: run the tests with `make test`, or start a server with scripts/test-postgres.sh",
    );
    let name = format!("t_{}", uuid_like());
    let admin = Store::connect(&base).await.expect("postgres admin");
    sqlx::query(&format!("CREATE DATABASE {name}"))
        .execute(admin.pool())
        .await
        .expect("create database");
    match base.rfind('/') {
        Some(i) => format!("{}/{name}", &base[..i]),
        None => panic!("bad url"),
    }
}

fn uuid_like() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!(
        "{}_{}_{}",
        std::process::id(),
        t,
        N.fetch_add(1, Ordering::Relaxed)
    )
}

macro_rules! contract {
    ($($name:ident),* $(,)?) => {
        mod on_sqlite { $( #[tokio::test(flavor = "multi_thread", worker_threads = 4)] async fn $name() { super::$name(super::sqlite().await).await } )* }
        mod on_postgres { $( #[tokio::test(flavor = "multi_thread", worker_threads = 4)] async fn $name() { super::$name(super::postgres().await).await } )* }
    };
}

contract!(
    keys_are_stored_hashed_and_found_by_secret,
    rotate_keeps_name_and_revokes_old_key,
    playground_keys_are_hidden_limited_and_one_per_person,
    concurrent_reservations_never_overdraw,
    crawl_charges_and_request_holds_never_deadlock,
    settle_refunds_the_difference_once,
    spend_cap_refuses_past_the_monthly_cap,
    playground_budget_is_enforced_per_key,
    rate_windows_count_across_connections,
    concurrency_slots_are_all_or_nothing_and_released,
    idempotency_replays_conflicts_and_abandons,
    a_charge_and_its_idempotent_answer_commit_together,
    change_snapshots_keep_the_newest_per_tag_and_expire,
    bootstrap_emptiness_and_org_updates,
    scrape_cache_honours_max_age_and_replaces,
    crawl_lifecycle_counts_charges_and_numbers_events,
    concurrent_workers_never_lease_a_url_twice,
    a_lost_lease_is_not_stored_or_charged_twice,
    crawl_stops_charging_when_credits_run_out,
    cancel_drops_queued_urls_and_later_pages,
    blobs_round_trip_expire_and_settings_stick,
    brand_cache_keeps_the_newest_lookup_per_host,
    a_group_commit_stores_in_order_and_charges_what_it_can,
    block_counts_stay_exact_across_folds,
    a_commit_leases_the_links_it_stores,
    a_started_crawl_never_looks_drained,
    documents_are_stored_packed_and_read_back_whole,
);

mod on_upgrade {
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn block_counts_survive_the_short_hash_migration_on_sqlite() {
        super::block_counts_survive_the_short_hash_migration(super::sqlite_url(), "sqlite").await
    }
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn block_counts_survive_the_short_hash_migration_on_postgres() {
        super::block_counts_survive_the_short_hash_migration(
            super::postgres_url().await,
            "postgres",
        )
        .await
    }
}

/// A store created before 0018 (block hashes of 128 bits, 32 hex digits)
/// keeps its crawls' block counts through the upgrade: every stored hash is
/// cut to its first 16 digits, in the counts and in the pages not yet
/// counted, so the readers' answers (which hash documents the new way) do
/// not change.
async fn block_counts_survive_the_short_hash_migration(url: String, dir: &str) {
    use sqlx::migrate::Migrator;
    sqlx::any::install_default_drivers();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("migrations")
        .join(dir);
    let all = Migrator::new(path).await.expect("migrations");
    let before = Migrator {
        migrations: all
            .migrations
            .iter()
            .filter(|m| m.version < 18)
            .cloned()
            .collect::<Vec<_>>()
            .into(),
        ..Migrator::DEFAULT
    };
    let pool = sqlx::any::AnyPoolOptions::new()
        .max_connections(1)
        .connect(&if url.starts_with("sqlite:") {
            format!("{url}?mode=rwc")
        } else {
            url.clone()
        })
        .await
        .expect("connect");
    before.run(&pool).await.expect("migrate to 0017");
    let long = |short: &str, tail: &str| format!("{short}{tail}");
    let nav = "61f0632fb079b54d";
    // Two long hashes of crawl c that agree on their first 16 digits are
    // one block afterwards (3 + 1 pages); crawl d's block of the same
    // digits stays its own.
    for (crawl, hash, pages) in [
        ("c", long(nav, "7386e91040cf00c3"), 3i64),
        ("c", long(nav, "0000000000000001"), 1),
        ("c", long("0123456789abcdef", "0000000000000000"), 1),
        ("c", "own-1".to_string(), 1),
        ("d", long(nav, "7386e91040cf00c3"), 2),
    ] {
        sqlx::query("INSERT INTO crawl_blocks (crawl_id, hash, pages) VALUES ($1, $2, $3)")
            .bind(crawl)
            .bind(hash)
            .bind(pages)
            .execute(&pool)
            .await
            .expect("old count");
    }
    // Pages not yet folded: the nav block (once, though the old row lists
    // two spellings whose first 16 digits agree) and a block of its own;
    // the nav block again; a page with no blocks.
    for (seq, hashes) in [
        (3i64, String::new()),
        (
            1,
            format!(
                "{} {} {}",
                long(nav, "7386e91040cf00c3"),
                long(nav, "ffffffffffffffff"),
                long("fedcba9876543210", "1111111111111111")
            ),
        ),
        (2, long(nav, "7386e91040cf00c3")),
    ] {
        sqlx::query("INSERT INTO crawl_page_blocks (crawl_id, seq, hashes) VALUES ('c', $1, $2)")
            .bind(seq)
            .bind(hashes)
            .execute(&pool)
            .await
            .expect("old page row");
    }
    pool.close().await;
    let store = Store::connect(&url).await.expect("upgrade");
    let empty: String =
        sqlx::query_scalar("SELECT hashes FROM crawl_page_blocks WHERE crawl_id = 'c' AND seq = 3")
            .fetch_one(store.pool())
            .await
            .expect("empty page row");
    assert_eq!(empty, "");
    let blocks = &store;
    let at = |crawl: &'static str, n: i64| async move {
        blocks.frequent_blocks(crawl, n).await.expect("blocks")
    };
    assert_eq!(at("d", 1).await, vec![nav.to_string()]);
    assert!(at("d", 3).await.is_empty());
    // nav: 4 counted + 2 unfolded pages.
    assert_eq!(at("c", 6).await, vec![nav.to_string()]);
    assert!(at("c", 7).await.is_empty());
    let mut everything = at("c", 1).await;
    everything.sort();
    assert_eq!(
        everything,
        vec!["0123456789abcdef", nav, "fedcba9876543210", "own-1"]
    );
    assert_eq!(
        store
            .frequent_blocks_among("c", 6, &[nav.to_string(), "own-1".to_string()])
            .await
            .expect("among"),
        vec![nav.to_string()]
    );
}

/// A stored document is an LZ4 block (migration 0019) and reads back byte
/// for byte; rows written before it (JSON in `document`) still read; a
/// packed row that does not unpack is an error, not a panic or a wrong page.
async fn documents_are_stored_packed_and_read_back_whole(store: Store) {
    let (_, id) = running_crawl(&store, 100, 10).await;
    store.enqueue_urls(&id, &urls(2, 0)).await.expect("enqueue");
    let leases = store.lease_urls("w", None, 2, 60_000).await.expect("lease");
    assert_eq!(leases.len(), 2);
    let json = serde_json::json!({
        "markdown": "# Grüße aus 日本\n\n".repeat(400),
        "metadata": {"sourceURL": leases[0].url, "title": "Ünïcode \u{1F600}"},
    })
    .to_string();
    let results = store
        .commit_pages(&[PageWrite {
            document_json: json.clone(),
            ..billable_page(&leases[0], Vec::new())
        }])
        .await
        .expect("commit");
    assert_eq!(results, vec![PageCommit::Stored { seq: 1, charged: 1 }]);
    let docs = store.crawl_documents(&id, 0, 10).await.expect("docs");
    assert_eq!(docs, vec![(1, leases[0].url.clone(), json.clone())]);
    let (text, packed): (String, Vec<u8>) = {
        use sqlx::Row;
        let r = sqlx::query(
            "SELECT document, document_lz4 FROM crawl_documents WHERE crawl_id = $1 AND seq = 1",
        )
        .bind(&id)
        .fetch_one(store.pool())
        .await
        .expect("row");
        (
            r.try_get("document").expect("document"),
            r.try_get("document_lz4").expect("packed"),
        )
    };
    assert_eq!(text, "");
    assert!(
        packed.len() * 4 < json.len(),
        "{} bytes for {}",
        packed.len(),
        json.len()
    );
    // A row from before the migration, then damaged ones: a block that does
    // not decode, a length no block of that size can hold (not allocated),
    // and a good block whose recorded length is longer than what it holds.
    let mut longer = lz4_flex::block::compress_prepend_size(b"{\"markdown\":\"cut\"}");
    longer[0] += 5;
    for (seq, document, packed) in [
        (2i64, r#"{"markdown":"old"}"#, None),
        (3, "", Some(vec![200u8, 0, 0, 0, 1, 2, 3])),
        (4, "", Some(vec![255u8, 255, 255, 255, 0x10, b'x'])),
        (5, "", Some(longer)),
    ] {
        sqlx::query("INSERT INTO crawl_documents (crawl_id, seq, url, document, document_lz4, created_at) VALUES ($1, $2, 'http://old/', $3, $4, 0)")
            .bind(&id)
            .bind(seq)
            .bind(document)
            .bind(packed)
            .execute(store.pool())
            .await
            .expect("insert");
    }
    let docs = store.crawl_documents(&id, 1, 1).await.expect("old row");
    assert_eq!(
        docs,
        vec![(
            2,
            "http://old/".to_string(),
            r#"{"markdown":"old"}"#.to_string()
        )]
    );
    for after in [2, 3, 4] {
        assert!(
            matches!(
                store.crawl_documents(&id, after, 1).await,
                Err(webdata_core::store::StoreError::Invalid(_))
            ),
            "document {}",
            after + 1
        );
    }
}

/// A crawl is started with its start URL already held (one transaction), so
/// another runner looking for drained crawls — running with nothing queued
/// or leased, which `finish_drained` ends — never finds it empty while the
/// seeding runner reads robots.txt and sitemaps. (Started and held in two
/// transactions, a second webdata-worker finished a crawl with 0 pages.)
async fn a_started_crawl_never_looks_drained(store: Store) {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    use webdata_core::store::crawl::status;
    let start = urls(1, 0).remove(0);
    let (_, id) = crawl(&store, 100, 10).await;
    let hold = store
        .start_crawl_holding(&id, Some((&start, "seeder", 60_000)))
        .await
        .expect("start")
        .expect("this call started it")
        .expect("the start URL is held");
    assert_eq!(
        (hold.worker.as_str(), hold.key.as_str()),
        ("seeder", start.key.as_str())
    );
    assert_eq!(store.frontier_pending(&id).await.expect("pending"), 1);
    assert!(
        store
            .start_crawl_holding(&id, Some((&start, "other", 60_000)))
            .await
            .expect("again")
            .is_none(),
        "a crawl starts once"
    );
    // Another runner polls for drained crawls while crawls are started.
    let ours: Arc<Mutex<std::collections::HashSet<String>>> = Arc::default();
    let done = Arc::new(AtomicBool::new(false));
    let observer = {
        let (store, ours, done) = (store.clone(), ours.clone(), done.clone());
        tokio::spawn(async move {
            let mut empty = Vec::new();
            let mut looks = 0;
            while !done.load(Ordering::Relaxed) {
                for c in store.crawls_in(status::RUNNING).await.expect("running") {
                    if !ours.lock().unwrap().contains(&c.id) {
                        continue;
                    }
                    looks += 1;
                    if store.frontier_pending(&c.id).await.expect("pending") == 0 {
                        empty.push(c.id);
                    }
                }
                tokio::task::yield_now().await;
            }
            (empty, looks)
        })
    };
    for _ in 0..30 {
        let (_, id) = crawl(&store, 100, 10).await;
        ours.lock().unwrap().insert(id.clone());
        store
            .start_crawl_holding(&id, Some((&start, "seeder", 60_000)))
            .await
            .expect("start");
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    }
    done.store(true, Ordering::Relaxed);
    let (empty, looks) = observer.await.expect("observer");
    assert!(looks > 0, "the observer saw the crawls running");
    assert!(
        empty.is_empty(),
        "running with an empty frontier: {empty:?}"
    );
}

/// The runner's committer leases the next URLs in the commit's transaction:
/// the links a page just stored can come back as leases at once, leased to
/// the asking worker only, never more than asked, and never to another
/// worker as well.
async fn a_commit_leases_the_links_it_stores(store: Store) {
    let (_, id) = running_crawl(&store, 100, 100).await;
    store.enqueue_urls(&id, &urls(1, 0)).await.expect("enqueue");
    let first = store
        .lease_urls("w", None, 10, 60_000)
        .await
        .expect("lease");
    assert_eq!(first.len(), 1);
    let mut links = urls(6, 1);
    for u in &mut links {
        u.key = format!("link-{}", u.key);
        u.url = format!("{}/link", u.url);
    }
    let page = billable_page(&first[0], links);
    let ask = webdata_core::store::LeaseAsk {
        worker: "w",
        pool: None,
        n: 4,
        lease_ms: 60_000,
    };
    let (results, leases) = store
        .commit_pages_and_lease(std::slice::from_ref(&page), Some(ask))
        .await
        .expect("commit");
    assert_eq!(results, vec![PageCommit::Stored { seq: 1, charged: 1 }]);
    assert_eq!(leases.len(), 4, "{leases:?}");
    assert!(leases
        .iter()
        .all(|l| l.worker == "w" && l.key.starts_with("link-") && l.depth == 1));
    // Another worker gets only the two links left; the four stay ours.
    let other = store
        .lease_urls("x", None, 10, 60_000)
        .await
        .expect("lease");
    assert_eq!(other.len(), 2);
    assert!(other.iter().all(|o| leases.iter().all(|l| l.key != o.key)));
    // Asking for nothing leases nothing.
    let page2 = billable_page(&leases[0], Vec::new());
    let (_, none) = store
        .commit_pages_and_lease(
            &[page2],
            Some(webdata_core::store::LeaseAsk { n: 0, ..ask }),
        )
        .await
        .expect("commit");
    assert!(none.is_empty());
    let c = store.get_crawl(&id).await.expect("get").expect("crawl");
    assert_eq!((c.total, c.completed), (7, 2));
}

/// Block counts are kept in two places (per-page rows, folded into
/// per-block counters every few hundred pages and when the crawl ends);
/// `frequent_blocks` must add them up exactly at every moment: a block on
/// pages that straddle a fold is counted once per page, not lost or doubled.
async fn block_counts_stay_exact_across_folds(store: Store) {
    let (_, id) = running_crawl(&store, 10_000, 2_000).await;
    store
        .enqueue_urls(&id, &urls(1_200, 0))
        .await
        .expect("enqueue");
    // Page n (1-based, in commit order) carries: "nav" always, "odd" on odd
    // pages, "span" on pages 500..=530 (across the fold at page 512), and a
    // block of its own.
    let hashes = |n: i64| {
        let mut h = vec!["nav".to_string(), format!("own-{n}")];
        if n % 2 == 1 {
            h.push("odd".into());
        }
        if (500..=530).contains(&n) {
            h.push("span".into());
            h.push("span".into()); // twice on the page, counted once
        }
        h
    };
    let mut committed = 0i64;
    for batch_size in [
        37usize, 64, 64, 64, 64, 64, 64, 64, 64, 33, 64, 64, 64, 64, 64, 64, 64, 64, 64, 42,
    ] {
        let leases = store
            .lease_urls("w", None, batch_size as i64, 60_000)
            .await
            .expect("lease");
        assert_eq!(leases.len(), batch_size);
        let batch: Vec<PageWrite> = leases
            .iter()
            .enumerate()
            .map(|(k, l)| PageWrite {
                block_hashes: hashes(committed + 1 + k as i64),
                ..billable_page(l, Vec::new())
            })
            .collect();
        let results = store.commit_pages(&batch).await.expect("commit");
        assert!(results
            .iter()
            .all(|r| matches!(r, PageCommit::Stored { .. })));
        committed += batch_size as i64;
        let at = |n: i64| store.frequent_blocks(&id, n);
        // "span" is on min(committed, 530) - 499 pages once page 500 is in.
        let span = (committed.min(530) - 499).max(0);
        if span > 0 {
            assert!(
                at(span)
                    .await
                    .expect("blocks")
                    .contains(&"span".to_string()),
                "{committed}"
            );
            assert!(
                !at(span + 1)
                    .await
                    .expect("blocks")
                    .contains(&"span".to_string()),
                "{committed}"
            );
        }
        let odd = (committed + 1) / 2;
        assert_eq!(
            at(odd).await.expect("blocks"),
            vec!["nav".to_string(), "odd".to_string()],
            "after {committed} pages"
        );
        assert_eq!(
            at(committed).await.expect("blocks"),
            vec!["nav".to_string()]
        );
        assert!(at(committed + 1).await.expect("blocks").is_empty());
        // Asked about a few blocks only (what a reader of some documents
        // does), the answer is the full answer restricted to them.
        for n in [1, 2, span.max(1), span + 1, odd, committed, committed + 1] {
            assert_eq!(
                among_answer(&store, &id, n).await,
                restricted(at(n).await.expect("blocks")),
                "at {n} after {committed} pages"
            );
        }
    }
    assert_eq!(committed, 1_200);
    // The crawl ends: everything is folded, the answers do not change.
    store
        .finish_crawl(&id, CrawlStatus::Completed, None)
        .await
        .expect("finish");
    let left: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM crawl_page_blocks WHERE crawl_id = $1")
            .bind(&id)
            .fetch_one(store.pool())
            .await
            .expect("count");
    assert_eq!(left, 0, "the crawl's end folds every page's blocks");
    let all = store.frequent_blocks(&id, 1).await.expect("blocks");
    assert_eq!(
        all.len(),
        1_200 + 3,
        "every page's own block, nav, odd, span"
    );
    assert_eq!(
        store.frequent_blocks(&id, 31).await.expect("blocks"),
        vec!["nav".to_string(), "odd".to_string(), "span".to_string()]
    );
    assert_eq!(
        store.frequent_blocks(&id, 32).await.expect("blocks"),
        vec!["nav".to_string(), "odd".to_string()]
    );
    for n in [1, 2, 31, 32, 600, 601] {
        assert_eq!(
            among_answer(&store, &id, n).await,
            restricted(store.frequent_blocks(&id, n).await.expect("blocks")),
            "at {n} once folded"
        );
    }
    assert_eq!(
        among_answer(&store, &id, 31).await,
        vec!["nav".to_string(), "odd".to_string(), "span".to_string()]
    );
}

/// The blocks `block_counts_stay_exact_across_folds` asks about by name.
const AMONG: [&str; 7] = ["span", "odd", "nav", "own-5", "own-700", "own-5", "missing"];

async fn among_answer(store: &Store, id: &str, n: i64) -> Vec<String> {
    let among: Vec<String> = AMONG.iter().map(|s| s.to_string()).collect();
    store
        .frequent_blocks_among(id, n, &among)
        .await
        .expect("blocks among")
}

fn restricted(all: Vec<String>) -> Vec<String> {
    all.into_iter()
        .filter(|h| AMONG.contains(&h.as_str()))
        .collect()
}

/// Several pages in one transaction (the crawl runner's group commit): seqs
/// and events follow page order, links are enqueued up to the limit, block
/// counts add up across the batch, a lost lease is dropped, and when the
/// organization cannot pay for every page the ones it can pay for are stored.
async fn a_group_commit_stores_in_order_and_charges_what_it_can(store: Store) {
    let (org, id) = running_crawl(&store, 2, 6).await;
    store.enqueue_urls(&id, &urls(4, 0)).await.expect("enqueue");
    let mut leases = store.lease_urls("w", None, 4, 60_000).await.expect("lease");
    assert_eq!(leases.len(), 4);
    // The third page's lease was lost to another worker.
    leases[2].worker = "someone-else".into();
    // Each page carries its change-tracking snapshot (a tracked crawl).
    let snapshot = |l: &webdata_core::store::Lease| SnapshotWrite::Put {
        org_id: org.clone(),
        tag: "t".into(),
        url_key: l.key.clone(),
        url: l.url.clone(),
        site: "example.com".into(),
        markdown: format!("seen by {}", l.worker),
        scraped_at: 1,
        crawl_id: Some(id.clone()),
        fields: None,
    };
    let page = |i: usize, billable: bool, links: Vec<NewUrl>| PageWrite {
        lease: leases[i].clone(),
        document_json: format!("{{\"page\":{i}}}"),
        block_hashes: vec!["nav".into(), format!("own-{i}"), "nav".into()],
        billable,
        links,
        snapshot: Some(snapshot(&leases[i])),
    };
    let mut more = urls(8, 1);
    for u in &mut more {
        u.key = format!("more-{}", u.key);
    }
    let batch = vec![
        page(0, true, more[..3].to_vec()),
        page(1, false, more[2..5].to_vec()),
        page(2, true, Vec::new()),
        page(3, true, Vec::new()),
    ];
    let results = store.commit_pages(&batch).await.expect("commit");
    assert_eq!(
        results,
        vec![
            PageCommit::Stored { seq: 1, charged: 1 },
            PageCommit::Stored { seq: 2, charged: 0 },
            PageCommit::Dropped,
            PageCommit::Stored { seq: 3, charged: 1 },
        ]
    );
    let c = store.get_crawl(&id).await.expect("get").expect("crawl");
    // 4 + 5 distinct new links, but the limit is 6 pages.
    assert_eq!((c.total, c.completed, c.credits_used), (6, 3, 2));
    assert_eq!(store.get_org(&org).await.expect("org").credits, 0);
    let docs = store.crawl_documents(&id, 0, 10).await.expect("docs");
    let urls_in_order: Vec<&str> = docs.iter().map(|d| d.1.as_str()).collect();
    assert_eq!(
        urls_in_order,
        vec![
            leases[0].url.as_str(),
            leases[1].url.as_str(),
            leases[3].url.as_str()
        ]
    );
    let events = store.crawl_events(&id, 0, 10).await.expect("events");
    let page_events: Vec<(i64, String)> = events
        .iter()
        .filter(|e| e.kind == "page")
        .map(|e| (e.seq, e.data.clone()))
        .collect();
    assert_eq!(page_events.len(), 3);
    assert!(page_events.windows(2).all(|w| w[0].0 < w[1].0));
    assert!(page_events[2].1.contains("\"seq\":3"), "{page_events:?}");
    // "nav" is on all three stored pages (counted once per page).
    assert_eq!(
        store.frequent_blocks(&id, 3).await.expect("blocks"),
        vec!["nav".to_string()]
    );
    // The stored pages' snapshots are in; the dropped page's is not (its
    // change is left for the page that will be stored).
    for (i, l) in leases.iter().enumerate() {
        let kept = store
            .change_snapshot(&org, "t", &l.key)
            .await
            .expect("snapshot");
        assert_eq!(kept.is_some(), i != 2, "page {i}: {kept:?}");
    }

    // Out of credits now: a billable page is refused, a free one is stored.
    store.enqueue_urls(&id, &urls(0, 0)).await.expect("noop");
    let next = store.lease_urls("w", None, 2, 60_000).await.expect("lease");
    assert_eq!(next.len(), 2);
    let batch: Vec<PageWrite> = next
        .iter()
        .enumerate()
        .map(|(i, l)| PageWrite {
            lease: l.clone(),
            document_json: "{}".into(),
            block_hashes: Vec::new(),
            billable: i == 0,
            links: Vec::new(),
            snapshot: Some(snapshot(l)),
        })
        .collect();
    let results = store.commit_pages(&batch).await.expect("commit");
    assert_eq!(
        results,
        vec![
            PageCommit::OutOfCredits {
                code: "insufficient_credits"
            },
            PageCommit::Stored { seq: 4, charged: 0 },
        ]
    );
    // A page that could not be paid for keeps no snapshot either.
    for (i, l) in next.iter().enumerate() {
        let kept = store
            .change_snapshot(&org, "t", &l.key)
            .await
            .expect("snapshot");
        assert_eq!(kept.is_some(), i == 1, "unpaid page {i}: {kept:?}");
    }
}

async fn org(store: &Store, credits: i64) -> String {
    store
        .create_org(&NewOrganization {
            name: "acme".into(),
            credits,
            ..Default::default()
        })
        .await
        .expect("org")
        .id
}

async fn keys_are_stored_hashed_and_found_by_secret(store: Store) {
    let org = org(&store, 10).await;
    let k = store.create_key(&org, "ci").await.expect("key");
    assert!(k.secret.starts_with("wd_"));
    assert_eq!(k.key.prefix, &k.secret[..10]);
    let raw: Vec<String> = sqlx::query_scalar("SELECT hash FROM api_keys")
        .fetch_all(store.pool())
        .await
        .expect("hashes");
    assert_eq!(raw, vec![webdata_core::store::keys_hash(&k.secret)]);
    assert!(!raw[0].contains(&k.secret[3..]));
    let found = store.find_key_by_secret(&k.secret).await.expect("find");
    assert_eq!(found.map(|f| f.id), Some(k.key.id.clone()));
    assert!(store
        .find_key_by_secret(&webdata_core::store::generate_key())
        .await
        .expect("find")
        .is_none());
    let revoked = store.revoke_key(&k.key.id).await.expect("revoke");
    assert!(!revoked.is_active(webdata_core::store::now_ms()));
}

async fn rotate_keeps_name_and_revokes_old_key(store: Store) {
    let org = org(&store, 10).await;
    let old = store.create_key(&org, "prod").await.expect("key");
    let new = store.rotate_key(&old.key.id).await.expect("rotate");
    assert_eq!(new.key.name, "prod");
    assert_ne!(new.secret, old.secret);
    let now = webdata_core::store::now_ms();
    assert!(!store
        .get_key(&old.key.id)
        .await
        .expect("old")
        .is_active(now));
    assert!(store
        .get_key(&new.key.id)
        .await
        .expect("new")
        .is_active(now));
    assert!(
        store.rotate_key(&old.key.id).await.is_err(),
        "a revoked key cannot be rotated"
    );
}

async fn playground_keys_are_hidden_limited_and_one_per_person(store: Store) {
    let org = org(&store, 500).await;
    store.create_key(&org, "visible").await.expect("key");
    let p1 = store
        .create_playground_key(&org, "ana@example.com")
        .await
        .expect("pg");
    assert_eq!(p1.key.budget, Some(50));
    assert_eq!(p1.key.rate_limit_per_minute, Some(20));
    assert_eq!(p1.key.concurrency_limit, Some(2));
    let ttl = p1.key.expires_at.expect("expiry") - p1.key.created_at;
    assert_eq!(ttl, 3_600_000);
    let p2 = store
        .create_playground_key(&org, "ana@example.com")
        .await
        .expect("pg2");
    let now = webdata_core::store::now_ms();
    assert!(
        !store.get_key(&p1.key.id).await.expect("p1").is_active(now),
        "one per person"
    );
    assert!(store.get_key(&p2.key.id).await.expect("p2").is_active(now));
    let listed = store.list_keys(&org, false).await.expect("list");
    assert_eq!(
        listed.iter().map(|k| k.name.as_str()).collect::<Vec<_>>(),
        vec!["visible"]
    );
    assert_eq!(store.list_keys(&org, true).await.expect("all").len(), 3);
    let audit = store.audit_log(&org, 50).await.expect("audit");
    let pg_events = audit
        .iter()
        .filter(|a| a["action"] == "playground_key.created")
        .count();
    assert_eq!(pg_events, 2);
}

async fn concurrent_reservations_never_overdraw(store: Store) {
    let org = org(&store, 10).await;
    let mut tasks = Vec::new();
    for _ in 0..16 {
        let s = store.clone();
        let o = org.clone();
        tasks.push(tokio::spawn(async move {
            s.reserve_credits(&Store::new_ledger_id(), &o, None, "scrape", 3)
                .await
        }));
    }
    let mut ok = 0;
    for t in tasks {
        match t.await.expect("join") {
            Ok(_) => ok += 1,
            Err(ReserveError::InsufficientCredits { .. }) => {}
            Err(e) => panic!("unexpected {e:?}"),
        }
    }
    assert_eq!(ok, 3, "10 credits fit exactly three reservations of 3");
    assert_eq!(store.get_org(&org).await.expect("org").credits, 1);
}

/// Requests (hold, then settle) and crawl pages (charged in their commit)
/// of one organization and key at once: every charge and refund takes the
/// organization's row before the key's, so none waits on another in a
/// cycle. (Crawl commits took the key first: PostgreSQL found deadlocks
/// within seconds of the sustained-load run, answered 500 and stalled
/// crawls until their leases expired.)
async fn crawl_charges_and_request_holds_never_deadlock(store: Store) {
    let org = org(&store, 1_000_000).await;
    let key = store.create_key(&org, "k").await.expect("key").key.id;
    let id = Store::new_crawl_id();
    store
        .create_crawl(&id, &org, Some(&key), "https://s.test/", "{}", 10_000)
        .await
        .expect("crawl");
    store.start_crawl(&id).await.expect("start");
    store
        .enqueue_urls(&id, &urls(400, 1))
        .await
        .expect("enqueue");
    let mut tasks = Vec::new();
    for w in 0..6 {
        let s = store.clone();
        let id = id.clone();
        tasks.push(tokio::spawn(async move {
            for _ in 0..20 {
                let leases = s
                    .lease_urls(&format!("w{w}"), Some(&id), 3, 60_000)
                    .await
                    .map_err(|e| e.to_string())?;
                let pages: Vec<PageWrite> = leases
                    .iter()
                    .map(|l| billable_page(l, Vec::new()))
                    .collect();
                s.commit_pages(&pages).await.map_err(|e| e.to_string())?;
            }
            Ok::<(), String>(())
        }));
    }
    for _ in 0..6 {
        let s = store.clone();
        let (org, key) = (org.clone(), key.clone());
        tasks.push(tokio::spawn(async move {
            for _ in 0..40 {
                let res = s
                    .reserve_credits(&Store::new_ledger_id(), &org, Some(&key), "scrape", 2)
                    .await
                    .map_err(|e| format!("{e:?}"))?;
                s.settle_credits(&res, 1).await.map_err(|e| e.to_string())?;
            }
            Ok::<(), String>(())
        }));
    }
    for t in tasks {
        t.await.expect("join").expect("no deadlock, no error");
    }
    let c = store.get_crawl(&id).await.expect("get").expect("crawl");
    let org_now = store.get_org(&org).await.expect("org");
    assert_eq!(c.credits_used, c.completed);
    assert_eq!(org_now.credits, 1_000_000 - c.completed - 6 * 40);
    assert_eq!(
        store.get_key(&key).await.expect("key").spent,
        c.completed + 6 * 40
    );
}

async fn settle_refunds_the_difference_once(store: Store) {
    let org = org(&store, 100).await;
    let res = store
        .reserve_credits(&Store::new_ledger_id(), &org, None, "map", 42)
        .await
        .expect("reserve");
    assert_eq!(store.get_org(&org).await.expect("org").credits, 58);
    assert_eq!(store.settle_credits(&res, 6).await.expect("settle"), 6);
    assert_eq!(store.get_org(&org).await.expect("org").credits, 94);
    assert_eq!(
        store.settle_credits(&res, 0).await.expect("again"),
        6,
        "second settle changes nothing"
    );
    assert_eq!(store.get_org(&org).await.expect("org").credits, 94);
    assert_eq!(store.ledger_charge(&res.id).await.expect("charge"), Some(6));
    let over = store
        .reserve_credits(&Store::new_ledger_id(), &org, None, "scrape", 1)
        .await
        .expect("reserve");
    assert_eq!(
        store.settle_credits(&over, 99).await.expect("clamped"),
        1,
        "never above the reservation"
    );
}

async fn spend_cap_refuses_past_the_monthly_cap(store: Store) {
    let org = org(&store, 100).await;
    store
        .update_org(
            &org,
            &OrgUpdate {
                spend_cap: Some(Some(5)),
                ..Default::default()
            },
        )
        .await
        .expect("cap");
    let a = store
        .reserve_credits(&Store::new_ledger_id(), &org, None, "scrape", 4)
        .await
        .expect("4 fits");
    let err = store
        .reserve_credits(&Store::new_ledger_id(), &org, None, "scrape", 2)
        .await
        .expect_err("6 > 5");
    assert_eq!(err, ReserveError::SpendCapReached { cap: 5, spent: 4 });
    store.settle_credits(&a, 0).await.expect("release");
    store
        .reserve_credits(&Store::new_ledger_id(), &org, None, "scrape", 5)
        .await
        .expect("5 fits after refund");
}

async fn playground_budget_is_enforced_per_key(store: Store) {
    let org = org(&store, 1000).await;
    let pg = store.create_playground_key(&org, "bo").await.expect("pg");
    let r = store
        .reserve_credits(&Store::new_ledger_id(), &org, Some(&pg.key.id), "map", 42)
        .await
        .expect("42");
    let err = store
        .reserve_credits(&Store::new_ledger_id(), &org, Some(&pg.key.id), "map", 42)
        .await
        .expect_err("over budget");
    assert_eq!(
        err,
        ReserveError::KeyBudgetSpent {
            budget: 50,
            spent: 42
        }
    );
    assert_eq!(
        store.get_org(&org).await.expect("org").credits,
        958,
        "refused reservation rolled back"
    );
    store.settle_credits(&r, 3).await.expect("settle");
    assert_eq!(store.get_key(&pg.key.id).await.expect("key").spent, 3);
}

async fn rate_windows_count_across_connections(store: Store) {
    let mut handles = Vec::new();
    for _ in 0..12 {
        let s = store.clone();
        handles.push(tokio::spawn(async move { s.hit_rate("org:x", 10).await }));
    }
    let mut allowed = 0;
    for h in handles {
        let d = h.await.expect("join").expect("hit");
        assert!(d.reset_secs >= 1 && d.reset_secs <= 60);
        if d.allowed {
            allowed += 1;
        }
    }
    // All twelve may straddle a minute boundary; then both windows allow.
    assert!(allowed == 10 || allowed == 12, "allowed {allowed}");
}

async fn concurrency_slots_are_all_or_nothing_and_released(store: Store) {
    let subjects = vec![("org:a".to_string(), 3), ("key:k".to_string(), 2)];
    let a = store
        .acquire_slots(&subjects, 60_000)
        .await
        .expect("a")
        .expect("slot a");
    let b = store
        .acquire_slots(&subjects, 60_000)
        .await
        .expect("b")
        .expect("slot b");
    assert!(
        store
            .acquire_slots(&subjects, 60_000)
            .await
            .expect("c")
            .is_none(),
        "key limit 2"
    );
    let other_key = vec![("org:a".to_string(), 3), ("key:j".to_string(), 2)];
    let c = store
        .acquire_slots(&other_key, 60_000)
        .await
        .expect("c")
        .expect("org has one left");
    assert!(
        store
            .acquire_slots(&other_key, 60_000)
            .await
            .expect("d")
            .is_none(),
        "org limit 3"
    );
    store.release_slots(&a).await.expect("release");
    assert!(store
        .acquire_slots(&other_key, 60_000)
        .await
        .expect("e")
        .is_some());
    store.release_slots(&b).await.expect("release");
    store.release_slots(&c).await.expect("release");
    // Expired slots do not count.
    let short = vec![("org:z".to_string(), 1)];
    store
        .acquire_slots(&short, 1)
        .await
        .expect("s")
        .expect("slot");
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    assert!(store
        .acquire_slots(&short, 1000)
        .await
        .expect("t")
        .is_some());
}

async fn idempotency_replays_conflicts_and_abandons(store: Store) {
    let org = org(&store, 1).await;
    assert_eq!(
        store.idempotency_begin(&org, "k1", "h1").await.expect("b"),
        IdempotencyBegin::Proceed
    );
    assert_eq!(
        store.idempotency_begin(&org, "k1", "h1").await.expect("b"),
        IdempotencyBegin::InProgress
    );
    assert_eq!(
        store.idempotency_begin(&org, "k1", "h2").await.expect("b"),
        IdempotencyBegin::Mismatch
    );
    let resp = StoredResponse {
        status: 200,
        body: "{\"ok\":1}".into(),
    };
    store
        .idempotency_complete(&org, "k1", &resp)
        .await
        .expect("complete");
    assert_eq!(
        store.idempotency_begin(&org, "k1", "h1").await.expect("b"),
        IdempotencyBegin::Replay(resp)
    );
    assert_eq!(
        store.idempotency_begin(&org, "k2", "h").await.expect("b"),
        IdempotencyBegin::Proceed
    );
    store
        .idempotency_abandon(&org, "k2")
        .await
        .expect("abandon");
    assert_eq!(
        store.idempotency_begin(&org, "k2", "h").await.expect("b"),
        IdempotencyBegin::Proceed
    );
    // Older than 24 hours: the key is free again.
    sqlx::query("UPDATE idempotency_keys SET created_at = created_at - 86400001")
        .execute(store.pool())
        .await
        .expect("age");
    assert_eq!(
        store
            .idempotency_begin(&org, "k1", "other")
            .await
            .expect("b"),
        IdempotencyBegin::Proceed
    );
}

/// A scrape's charge and the answer its retries replay are one write: if
/// storing the answer fails (here a trigger makes it fail, standing in for
/// a crash between two writes), the charge is not made either, so the
/// retry that runs again cannot charge twice.
async fn a_charge_and_its_idempotent_answer_commit_together(store: Store) {
    use webdata_core::store::Backend;
    let org = org(&store, 10).await;
    let resp = StoredResponse {
        status: 200,
        body: "{\"credits_used\":1}".into(),
    };
    // Together: settled, and the key replays the answer.
    assert_eq!(
        store.idempotency_begin(&org, "k1", "h").await.expect("b"),
        IdempotencyBegin::Proceed
    );
    let res = store
        .reserve_credits(&Store::new_ledger_id(), &org, None, "scrape", 1)
        .await
        .expect("reserve");
    let charged = store
        .settle_credits_answering(&res, 1, Some((&org, "k1", &resp)), None)
        .await
        .expect("settle");
    assert_eq!(charged, 1);
    assert_eq!(store.ledger_charge(&res.id).await.expect("charge"), Some(1));
    // A change-tracking snapshot written with the charge commits with it,
    // and rolls back with it (below).
    let page = |markdown: &str, scraped_at: i64| webdata_core::store::SnapshotWrite::Put {
        org_id: org.clone(),
        tag: String::new(),
        url_key: "http://a.test/p".into(),
        url: "http://a.test/p".into(),
        site: "http://a.test".into(),
        markdown: markdown.into(),
        scraped_at,
        crawl_id: None,
        fields: None,
    };
    let snap = page("v1", webdata_core::store::now_ms());
    let res2 = store
        .reserve_credits(&Store::new_ledger_id(), &org, None, "scrape", 1)
        .await
        .expect("reserve");
    assert_eq!(
        store
            .settle_credits_answering(&res2, 1, None, Some(&snap))
            .await
            .expect("settle"),
        1
    );
    let got = store
        .change_snapshot(&org, "", "http://a.test/p")
        .await
        .expect("get")
        .expect("written with the charge");
    assert_eq!(got.markdown, "v1");
    let snap = page("v2", webdata_core::store::now_ms() + 1);
    assert_eq!(
        store.idempotency_begin(&org, "k1", "h").await.expect("b"),
        IdempotencyBegin::Replay(resp.clone())
    );
    assert_eq!(store.get_org(&org).await.expect("org").credits, 8);
    // Storing the answer fails: nothing is charged, the key is still running.
    let inject: &[&str] = match store.backend() {
        Backend::Sqlite => &[
            "CREATE TRIGGER no_answers BEFORE UPDATE ON idempotency_keys \
             BEGIN SELECT RAISE(ABORT, 'injected'); END",
        ],
        Backend::Postgres => &[
            "CREATE FUNCTION no_answers() RETURNS trigger AS $$ BEGIN \
             RAISE EXCEPTION 'injected'; END $$ LANGUAGE plpgsql",
            "CREATE TRIGGER no_answers BEFORE UPDATE ON idempotency_keys \
             FOR EACH ROW EXECUTE FUNCTION no_answers()",
        ],
    };
    for sql in inject {
        sqlx::query(sql)
            .execute(store.pool())
            .await
            .expect("trigger");
    }
    assert_eq!(
        store.idempotency_begin(&org, "k2", "h").await.expect("b"),
        IdempotencyBegin::Proceed
    );
    let res = store
        .reserve_credits(&Store::new_ledger_id(), &org, None, "scrape", 1)
        .await
        .expect("reserve");
    assert!(store
        .settle_credits_answering(&res, 1, Some((&org, "k2", &resp)), Some(&snap))
        .await
        .is_err());
    assert_eq!(
        store.ledger_charge(&res.id).await.expect("charge"),
        None,
        "the charge rolled back with the answer"
    );
    assert_eq!(
        store.idempotency_begin(&org, "k2", "h").await.expect("b"),
        IdempotencyBegin::InProgress
    );
    assert_eq!(
        store
            .change_snapshot(&org, "", "http://a.test/p")
            .await
            .expect("get")
            .map(|s| s.markdown),
        Some("v1".to_string()),
        "the snapshot rolled back with the charge: the baseline is the one before"
    );
    // The hold is still there to release; the credits come back whole.
    assert_eq!(store.settle_credits(&res, 0).await.expect("release"), 0);
    assert_eq!(store.get_org(&org).await.expect("org").credits, 8);
}

async fn change_snapshots_keep_the_newest_per_tag_and_expire(store: Store) {
    use webdata_core::store::NewSnapshot;
    let org = org(&store, 1).await;
    let now = webdata_core::store::now_ms();
    let snap = |tag: &'static str, key: &'static str, md: &'static str, at: i64| NewSnapshot {
        org_id: "",
        tag,
        url_key: key,
        url: key,
        site: "http://a.test",
        markdown: md,
        scraped_at: at,
        crawl_id: None,
        fields: (tag == "t").then_some(r#"{"price":9}"#),
    };
    for s in [
        snap("", "http://a.test/p", "v2", now),
        // An older scrape finishing late does not replace the newer one.
        snap("", "http://a.test/p", "v1", now - 1000),
        snap("t", "http://a.test/p", "tagged", now - 10 * 86_400_000),
        snap("", "http://a.test/q", "q", now - 500),
    ] {
        store
            .put_change_snapshot(&NewSnapshot { org_id: &org, ..s })
            .await
            .expect("put");
    }
    let got = store
        .change_snapshot(&org, "", "http://a.test/p")
        .await
        .expect("get")
        .expect("stored");
    assert_eq!((got.markdown.as_str(), got.scraped_at), ("v2", now));
    assert_eq!(got.fields, None);
    let tagged = store
        .change_snapshot(&org, "t", "http://a.test/p")
        .await
        .expect("get")
        .expect("stored");
    assert_eq!(
        tagged.fields.as_deref(),
        Some(r#"{"price":9}"#),
        "the json mode's fields are kept"
    );
    // A newer snapshot replaces the reading too.
    store
        .put_change_snapshot(&NewSnapshot {
            org_id: &org,
            fields: Some(r#"{"price":19}"#),
            scraped_at: now - 9 * 86_400_000,
            ..snap("t", "http://a.test/p", "tagged 2", 0)
        })
        .await
        .expect("put");
    let tagged = store
        .change_snapshot(&org, "t", "http://a.test/p")
        .await
        .expect("get")
        .expect("stored");
    assert_eq!(
        (tagged.markdown.as_str(), tagged.fields.as_deref()),
        ("tagged 2", Some(r#"{"price":19}"#))
    );
    assert_eq!(
        store
            .change_snapshot_urls(&org, "", "http://a.test", 10)
            .await
            .expect("urls"),
        vec!["http://a.test/q".to_string(), "http://a.test/p".to_string()],
        "oldest first, one tag"
    );
    assert!(store
        .change_snapshot("other-org", "", "http://a.test/p")
        .await
        .expect("get")
        .is_none());
    assert_eq!(
        store
            .sweep_change_snapshots(5 * 86_400_000)
            .await
            .expect("sweep"),
        1
    );
    assert!(store
        .change_snapshot(&org, "t", "http://a.test/p")
        .await
        .expect("get")
        .is_none());
    store
        .delete_change_snapshot(&org, "", "http://a.test/q")
        .await
        .expect("delete");
    assert!(store
        .change_snapshot(&org, "", "http://a.test/q")
        .await
        .expect("get")
        .is_none());
}

async fn bootstrap_emptiness_and_org_updates(store: Store) {
    assert!(store.is_empty().await.expect("empty"));
    let org = org(&store, 5).await;
    assert!(!store.is_empty().await.expect("not empty"));
    let up = store
        .update_org(
            &org,
            &OrgUpdate {
                add_credits: Some(7),
                rate_limit_per_minute: Some(3),
                ..Default::default()
            },
        )
        .await
        .expect("update");
    assert_eq!((up.credits, up.rate_limit_per_minute), (12, 3));
    assert!(store
        .update_org(
            &org,
            &OrgUpdate {
                add_credits: Some(-13),
                ..Default::default()
            }
        )
        .await
        .is_err());
    assert_eq!(store.get_org(&org).await.expect("org").credits, 12);
    assert!(store
        .webhook_secret(&org)
        .await
        .expect("secret")
        .starts_with("whsec_"));
}

async fn scrape_cache_honours_max_age_and_replaces(store: Store) {
    assert!(store.cache_get("k", 1000).await.expect("get").is_none());
    store
        .cache_put("k", "https://a/", "{\"v\":1}", true)
        .await
        .expect("put");
    let hit = store
        .cache_get("k", 60_000)
        .await
        .expect("get")
        .expect("hit");
    assert_eq!((hit.document.as_str(), hit.billable), ("{\"v\":1}", true));
    assert!(
        store.cache_get("k", 0).await.expect("get").is_none(),
        "maxAge 0 never hits"
    );
    store
        .cache_put("k", "https://a/", "{\"v\":2}", false)
        .await
        .expect("replace");
    let hit = store
        .cache_get("k", 60_000)
        .await
        .expect("get")
        .expect("hit");
    assert_eq!((hit.document.as_str(), hit.billable), ("{\"v\":2}", false));
    sqlx::query("UPDATE scrape_cache SET created_at = created_at - 10000")
        .execute(store.pool())
        .await
        .expect("age");
    assert!(
        store.cache_get("k", 5_000).await.expect("get").is_none(),
        "older than maxAge"
    );
    assert!(store.cache_get("k", 60_000).await.expect("get").is_some());
    assert_eq!(store.cache_sweep(5_000).await.expect("sweep"), 1);
}

fn urls(n: usize, depth: i64) -> Vec<NewUrl> {
    (0..n)
        .map(|i| NewUrl {
            key: format!("https://s.test/p{i}"),
            url: format!("https://s.test/p{i}"),
            depth,
            source: "link".into(),
        })
        .collect()
}

async fn crawl(store: &Store, credits: i64, max_pages: i64) -> (String, String) {
    let org = org(store, credits).await;
    let id = Store::new_crawl_id();
    store
        .create_crawl(&id, &org, None, "https://s.test/", "{}", max_pages)
        .await
        .expect("crawl");
    (org, id)
}

/// A billable page with an empty document and no blocks, scraped under `lease`.
fn billable_page(lease: &webdata_core::store::Lease, links: Vec<NewUrl>) -> PageWrite {
    PageWrite {
        lease: lease.clone(),
        document_json: "{}".into(),
        block_hashes: Vec::new(),
        billable: true,
        links,
        snapshot: None,
    }
}

/// A crawl of `crawl`'s, already started (running).
async fn running_crawl(store: &Store, credits: i64, max_pages: i64) -> (String, String) {
    let (org, id) = crawl(store, credits, max_pages).await;
    store.start_crawl(&id).await.expect("start");
    (org, id)
}

async fn crawl_lifecycle_counts_charges_and_numbers_events(store: Store) {
    let (org, id) = crawl(&store, 100, 5).await;
    assert!(
        store
            .lease_urls("w", None, 10, 60_000)
            .await
            .expect("lease")
            .is_empty(),
        "queued crawls lease nothing"
    );
    assert!(store.start_crawl(&id).await.expect("start"));
    assert!(!store.start_crawl(&id).await.expect("again"), "starts once");
    assert_eq!(
        store.enqueue_urls(&id, &urls(3, 0)).await.expect("enqueue"),
        3
    );
    assert_eq!(
        store.enqueue_urls(&id, &urls(8, 1)).await.expect("enqueue"),
        2,
        "dedup and the page limit"
    );
    let leases = store
        .lease_urls("w", Some(&id), 10, 60_000)
        .await
        .expect("lease");
    assert_eq!(leases.len(), 5);
    for (i, l) in leases.iter().enumerate().take(4) {
        let c = store
            .commit_page(l, "{\"doc\":1}", &[], i != 3)
            .await
            .expect("commit");
        assert_eq!(
            c,
            PageCommit::Stored {
                seq: i as i64 + 1,
                charged: if i != 3 { 1 } else { 0 }
            }
        );
    }
    assert!(
        store
            .fail_url(&leases[4], "fetch_failed", "boom", true, 0, 2)
            .await
            .expect("fail"),
        "retried"
    );
    let again = store
        .lease_urls("w", Some(&id), 10, 60_000)
        .await
        .expect("lease");
    assert_eq!(again.len(), 1);
    assert!(
        !store
            .fail_url(&again[0], "fetch_failed", "boom", true, 0, 2)
            .await
            .expect("fail"),
        "gives up after 2 attempts"
    );
    assert_eq!(store.frontier_pending(&id).await.expect("pending"), 0);
    assert!(store
        .finish_crawl(&id, CrawlStatus::Completed, None)
        .await
        .expect("finish"));
    let c = store.get_crawl(&id).await.expect("get").expect("crawl");
    assert_eq!(
        (
            c.status.as_str(),
            c.total,
            c.completed,
            c.failed,
            c.credits_used
        ),
        ("completed", 5, 4, 1, 3)
    );
    assert_eq!(store.get_org(&org).await.expect("org").credits, 97);
    assert_eq!(store.ledger_charge(&id).await.expect("ledger"), Some(3));
    let events = store.crawl_events(&id, 0, 100).await.expect("events");
    let kinds: Vec<&str> = events.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(
        kinds,
        vec!["started", "page", "page", "page", "page", "completed"]
    );
    assert_eq!(
        events.iter().map(|e| e.seq).collect::<Vec<_>>(),
        (1..=6).collect::<Vec<_>>()
    );
    // The store writes the events' data itself: a page's id, seq and URL,
    // a lifecycle event's status JSON.
    assert_eq!(
        events[2].data,
        format!(
            "{{\"id\":\"{id}\",\"seq\":2,\"url\":\"{}\"}}",
            leases[1].url
        )
    );
    assert_eq!(events[5].data, webdata_core::store::crawl::status_data(&c));
    assert_eq!(
        events[0].data,
        format!(
            "{{\"completed\":0,\"credits_used\":0,\"failed\":0,\"id\":\"{id}\",\"status\":\"running\",\"total\":0,\"url\":\"https://s.test/\"}}"
        )
    );
    let docs = store.crawl_documents(&id, 2, 10).await.expect("docs");
    assert_eq!(docs.iter().map(|d| d.0).collect::<Vec<_>>(), vec![3, 4]);
    assert!(
        !store
            .finish_crawl(&id, CrawlStatus::Failed, None)
            .await
            .expect("finished"),
        "terminal states stay"
    );
}

async fn concurrent_workers_never_lease_a_url_twice(store: Store) {
    let (_, id) = running_crawl(&store, 1000, 500).await;
    store
        .enqueue_urls(&id, &urls(200, 1))
        .await
        .expect("enqueue");
    let mut tasks = Vec::new();
    for w in 0..6 {
        let s = store.clone();
        tasks.push(tokio::spawn(async move {
            let mut got = Vec::new();
            loop {
                let batch = s
                    .lease_urls(&format!("w{w}"), None, 7, 60_000)
                    .await
                    .expect("lease");
                if batch.is_empty() {
                    break got;
                }
                got.extend(batch.into_iter().map(|l| l.key));
            }
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.expect("join"));
    }
    let n = all.len();
    all.sort();
    all.dedup();
    assert_eq!((n, all.len()), (200, 200));
}

async fn a_lost_lease_is_not_stored_or_charged_twice(store: Store) {
    let (org, id) = running_crawl(&store, 10, 10).await;
    store.enqueue_urls(&id, &urls(1, 0)).await.expect("enqueue");
    let a = store
        .lease_urls("dead", None, 1, 1)
        .await
        .expect("lease")
        .remove(0);
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let b = store
        .lease_urls("alive", None, 1, 60_000)
        .await
        .expect("lease")
        .remove(0);
    assert_eq!(a.key, b.key, "an expired lease is leased again");
    assert_eq!(
        store.commit_page(&a, "{}", &[], true).await.expect("a"),
        PageCommit::Dropped
    );
    assert!(matches!(
        store.commit_page(&b, "{}", &[], true).await.expect("b"),
        PageCommit::Stored { seq: 1, charged: 1 }
    ));
    assert_eq!(
        store
            .commit_page(&b, "{}", &[], true)
            .await
            .expect("b again"),
        PageCommit::Dropped
    );
    assert_eq!(store.get_org(&org).await.expect("org").credits, 9);
}

async fn crawl_stops_charging_when_credits_run_out(store: Store) {
    let (org, id) = running_crawl(&store, 1, 10).await;
    store.enqueue_urls(&id, &urls(3, 0)).await.expect("enqueue");
    let leases = store.lease_urls("w", None, 3, 60_000).await.expect("lease");
    assert!(matches!(
        store
            .commit_page(&leases[0], "{}", &[], true)
            .await
            .expect("1"),
        PageCommit::Stored { .. }
    ));
    assert_eq!(
        store
            .commit_page(&leases[1], "{}", &[], true)
            .await
            .expect("2"),
        PageCommit::OutOfCredits {
            code: "insufficient_credits"
        }
    );
    assert_eq!(store.get_org(&org).await.expect("org").credits, 0);
    store
        .update_org(
            &org,
            &OrgUpdate {
                credits: Some(5),
                spend_cap: Some(Some(1)),
                ..Default::default()
            },
        )
        .await
        .expect("cap");
    assert_eq!(
        store
            .commit_page(&leases[2], "{}", &[], true)
            .await
            .expect("3"),
        PageCommit::OutOfCredits {
            code: "spend_cap_reached"
        }
    );
    assert_eq!(
        store
            .get_crawl(&id)
            .await
            .expect("get")
            .expect("c")
            .completed,
        1
    );
}

async fn cancel_drops_queued_urls_and_later_pages(store: Store) {
    let (_, id) = running_crawl(&store, 10, 10).await;
    store.enqueue_urls(&id, &urls(4, 0)).await.expect("enqueue");
    let l = store
        .lease_urls("w", None, 1, 60_000)
        .await
        .expect("lease")
        .remove(0);
    assert!(store
        .finish_crawl(&id, CrawlStatus::Cancelled, None)
        .await
        .expect("cancel"));
    assert_eq!(
        store.commit_page(&l, "{}", &[], true).await.expect("late"),
        PageCommit::Dropped
    );
    assert_eq!(store.frontier_pending(&id).await.expect("pending"), 0);
    assert!(store
        .lease_urls("w", None, 10, 60_000)
        .await
        .expect("lease")
        .is_empty());
    let c = store.get_crawl(&id).await.expect("get").expect("c");
    assert_eq!((c.status.as_str(), c.credits_used), ("cancelled", 0));
    // Cancel before start: no `started` event.
    let (_, id2) = crawl(&store, 10, 10).await;
    store
        .finish_crawl(&id2, CrawlStatus::Cancelled, None)
        .await
        .expect("cancel");
    let kinds: Vec<String> = store
        .crawl_events(&id2, 0, 10)
        .await
        .expect("events")
        .into_iter()
        .map(|e| e.kind)
        .collect();
    assert_eq!(kinds, vec!["cancelled".to_string()]);
    assert!(
        !store.start_crawl(&id2).await.expect("start"),
        "a cancelled crawl never starts"
    );
}

async fn blobs_round_trip_expire_and_settings_stick(store: Store) {
    let bytes: Vec<u8> = (0..=255u8).chain([0, 0x89, b'P', b'N', b'G']).collect();
    let (id, expires) = store
        .put_blob("org_x", "image/png", &bytes, 60_000)
        .await
        .expect("put");
    assert!(expires > webdata_core::store::now_ms());
    let blob = store.get_blob(&id).await.expect("get").expect("present");
    assert_eq!(
        (blob.content_type.as_str(), blob.data),
        ("image/png", bytes)
    );
    let (short, _) = store
        .put_blob("org_x", "image/png", b"x", 1)
        .await
        .expect("put");
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    assert!(
        store.get_blob(&short).await.expect("get").is_none(),
        "expired blobs are not served"
    );
    assert_eq!(store.sweep_blobs().await.expect("sweep"), 1);
    let a = store
        .setting_or_init("k", || "first".into())
        .await
        .expect("a");
    let b = store
        .setting_or_init("k", || "second".into())
        .await
        .expect("b");
    assert_eq!((a.as_str(), b.as_str()), ("first", "first"));
}

/// The brand cache (issue 7): one lookup per host, its age measured
/// against the caller's clock, a newer lookup replacing an older one and
/// never the other way round (a slow background refresh racing a forced
/// lookup), and the sweep by age.
async fn brand_cache_keeps_the_newest_lookup_per_host(store: Store) {
    const T0: i64 = 1_700_000_000_000;
    const DAY: i64 = 24 * 60 * 60 * 1000;
    assert_eq!(store.brand_cache_get("acme.com").await.expect("get"), None);
    store
        .brand_cache_put("acme.com", r#"{"v":1}"#, T0)
        .await
        .expect("put");
    let got = store
        .brand_cache_get("acme.com")
        .await
        .expect("get")
        .expect("stored");
    assert_eq!((got.brand.as_str(), got.fetched_at), (r#"{"v":1}"#, T0));
    // Age against a chosen clock; never negative.
    assert_eq!(got.age_ms(T0 + 8 * DAY), 8 * DAY);
    assert_eq!(got.age_ms(T0 - 5), 0);
    // Hosts are separate entries (a subdomain is its own brand).
    assert_eq!(
        store.brand_cache_get("shop.acme.com").await.expect("get"),
        None
    );
    // A refresh read later replaces the lookup.
    store
        .brand_cache_put("acme.com", r#"{"v":2}"#, T0 + DAY)
        .await
        .expect("refresh");
    let got = store.brand_cache_get("acme.com").await.expect("get");
    assert_eq!(
        got.map(|c| (c.brand, c.fetched_at)),
        Some((r#"{"v":2}"#.to_string(), T0 + DAY))
    );
    // A lookup that started earlier but finished later never overwrites.
    store
        .brand_cache_put("acme.com", r#"{"v":"old"}"#, T0 + 10)
        .await
        .expect("late old put");
    let got = store.brand_cache_get("acme.com").await.expect("get");
    assert_eq!(
        got.map(|c| (c.brand, c.fetched_at)),
        Some((r#"{"v":2}"#.to_string(), T0 + DAY))
    );
    // The same read time replaces (a retried save of the same lookup).
    store
        .brand_cache_put("acme.com", r#"{"v":3}"#, T0 + DAY)
        .await
        .expect("same time");
    assert_eq!(
        store
            .brand_cache_get("acme.com")
            .await
            .expect("get")
            .map(|c| c.brand),
        Some(r#"{"v":3}"#.to_string())
    );
    // Unicode hosts are stored as given.
    store
        .brand_cache_put("bücher.de", r#"{"v":"u"}"#, T0)
        .await
        .expect("unicode");
    assert!(store
        .brand_cache_get("bücher.de")
        .await
        .expect("get")
        .is_some());
    // The sweep drops lookups read before the cut-off, and only those.
    assert_eq!(
        store.brand_cache_sweep(T0 + 1).await.expect("sweep"),
        1,
        "bücher.de (read at T0) goes, acme.com (T0 + 1 day) stays"
    );
    assert!(store
        .brand_cache_get("acme.com")
        .await
        .expect("get")
        .is_some());
    assert_eq!(store.brand_cache_get("bücher.de").await.expect("get"), None);
}
