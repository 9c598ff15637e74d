//! The group commit: page tasks queue their scraped pages; one committer
//! task writes them in batches and, in the same transaction, leases the
//! loop's next URLs.

use std::sync::{Arc, Mutex};

use tokio::sync::{watch, Semaphore};
use webdata_core::store::{Lease, LeaseAsk, PageCommit, PageWrite};

use super::CrawlRunner;

/// How the committer refills the loop's leases.
pub(super) struct Refill {
    pub(super) slots: Arc<Semaphore>,
    /// Leases the loop holds but has not started.
    pub(super) ready: Arc<std::sync::atomic::AtomicUsize>,
    /// Leased beyond the free slots.
    pub(super) ahead: usize,
    pub(super) leases: tokio::sync::mpsc::UnboundedSender<Vec<Lease>>,
    pub(super) stop: watch::Receiver<bool>,
}

/// A page waiting for the committer, with where to send its result.
type PendingCommit = (
    PageWrite,
    tokio::sync::oneshot::Sender<Result<PageCommit, Failed>>,
);
/// Most pages committed in one transaction.
const COMMIT_BATCH: usize = 64;
/// Pages that may wait for the committer, per concurrency slot.
const COMMIT_SLOTS_PER_SLOT: usize = 2;

/// The queue between the page tasks and the committer task.
pub(super) struct CommitQueue {
    /// Scraped pages on their way to the committer task.
    sender: tokio::sync::mpsc::UnboundedSender<PendingCommit>,
    /// Pages waiting for their commit (scraped, slot given back): at most
    /// [`COMMIT_SLOTS_PER_SLOT`] times the concurrency.
    pub(super) slots: Semaphore,
    /// The committer's end, taken by [`CrawlRunner::run`].
    queue: Mutex<Option<tokio::sync::mpsc::UnboundedReceiver<PendingCommit>>>,
}

impl CommitQueue {
    pub(super) fn new(concurrency: usize) -> Self {
        let (sender, queue) = tokio::sync::mpsc::unbounded_channel();
        CommitQueue {
            sender,
            slots: Semaphore::new(concurrency.max(1) * COMMIT_SLOTS_PER_SLOT),
            queue: Mutex::new(Some(queue)),
        }
    }

    /// The committer's end, once.
    pub(super) fn take_queue(&self) -> Option<tokio::sync::mpsc::UnboundedReceiver<PendingCommit>> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

impl CrawlRunner {
    /// Group commit: takes every page waiting (up to [`COMMIT_BATCH`]) and
    /// commits them in one transaction, so under load the cost of a write
    /// transaction is shared by many pages and idle pages are not delayed.
    /// The same transaction leases what the runner's free slots (and one
    /// batch ahead) can take, and hands it to the loop.
    pub(super) async fn committer(
        self: Arc<Self>,
        mut queue: tokio::sync::mpsc::UnboundedReceiver<PendingCommit>,
        refill: Refill,
    ) {
        while let Some(first) = queue.recv().await {
            let mut batch = vec![first];
            while batch.len() < COMMIT_BATCH {
                match queue.try_recv() {
                    Ok(p) => batch.push(p),
                    Err(_) => break,
                }
            }
            let (pages, replies): (Vec<PageWrite>, Vec<_>) = batch.into_iter().unzip();
            let want = if *refill.stop.borrow() {
                0
            } else {
                (refill.slots.available_permits() + refill.ahead)
                    .saturating_sub(refill.ready.load(std::sync::atomic::Ordering::Relaxed))
            };
            let ask = LeaseAsk {
                worker: &self.cfg.worker_id,
                pool: self.cfg.pool.as_deref(),
                n: want as i64,
                lease_ms: self.cfg.lease_ms,
            };
            let result = self.store.commit_pages_and_lease(&pages, Some(ask)).await;
            match result {
                Ok((results, leases)) => {
                    if !leases.is_empty() {
                        refill
                            .ready
                            .fetch_add(leases.len(), std::sync::atomic::Ordering::Relaxed);
                        if let Err(unsent) = refill.leases.send(leases) {
                            // The loop has stopped: give them back.
                            for lease in unsent.0 {
                                let _ = self.store.release_lease(&lease).await;
                            }
                        }
                    }
                    for (reply, r) in replies.into_iter().zip(results) {
                        let _ = reply.send(Ok(r));
                    }
                }
                Err(e) => {
                    let failed = Failed {
                        transient: e.is_transient(),
                        message: e.to_string(),
                    };
                    for reply in replies {
                        let _ = reply.send(Err(failed.clone()));
                    }
                }
            }
        }
    }

    /// Commits a page through the committer task.
    pub(super) async fn commit(
        &self,
        page: PageWrite,
    ) -> Result<PageCommit, webdata_core::StoreError> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        if self.commits.sender.send((page, tx)).is_err() {
            return Err(webdata_core::StoreError::Invalid(
                "the crawl committer stopped".into(),
            ));
        }
        rx.await
            .map_err(|_| webdata_core::StoreError::Invalid("the crawl committer stopped".into()))?
            .map_err(|f| {
                if f.transient {
                    webdata_core::StoreError::Unavailable(f.message)
                } else {
                    webdata_core::StoreError::Invalid(f.message)
                }
            })
    }
}

/// A group commit that failed, as each of its pages hears of it: the store
/// error's kind (whether it was the connection) and its message.
#[derive(Debug, Clone)]
pub(super) struct Failed {
    transient: bool,
    message: String,
}
