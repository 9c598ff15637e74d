//! The loop: seed, lease, start pages on free slots, finish drained crawls,
//! and give back what was leased but not started when told to stop.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{watch, Semaphore};
use webdata_core::store::Lease;

use super::commit::Refill;
use super::CrawlRunner;

impl CrawlRunner {
    /// The loop: seed, lease, scrape, finish; returns after `stop` turns true
    /// and the pages in flight are done.
    ///
    /// While pages are in flight their URLs come from the committer: each
    /// commit also leases the next URLs in its transaction (the links it
    /// just stored among them) and hands them here. The loop leases on its
    /// own when idle and on the housekeeping tick when it is short: a lease
    /// transaction of its own queues behind the committer's on SQLite's one
    /// writer, and slots that waited for it left most of them free.
    pub async fn run(self: Arc<Self>, mut stop: watch::Receiver<bool>) {
        let slots = Arc::new(Semaphore::new(self.cfg.concurrency.max(1)));
        let mut tasks = tokio::task::JoinSet::new();
        // Leases taken but not started yet (the committer reads the count).
        let mut ready: std::collections::VecDeque<Lease> = std::collections::VecDeque::new();
        let ready_len = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (leases_tx, mut leases_rx) = tokio::sync::mpsc::unbounded_channel::<Vec<Lease>>();
        // The crawl-level checks (seeding, finishing) run at most every
        // HOUSEKEEPING while pages are in flight: each is a store round trip.
        const HOUSEKEEPING: Duration = Duration::from_millis(50);
        let batch = (self.cfg.concurrency / 4).max(1);
        let committer = self.commits.take_queue().map(|queue| {
            tokio::spawn(self.clone().committer(
                queue,
                Refill {
                    slots: slots.clone(),
                    ready: ready_len.clone(),
                    ahead: batch,
                    leases: leases_tx.clone(),
                    stop: stop.clone(),
                },
            ))
        });
        let mut last_housekeeping: Option<tokio::time::Instant> = None;
        loop {
            if *stop.borrow() {
                break;
            }
            // Finished pages are reaped first, so the crawl-level checks
            // (finishing a drained crawl) run as soon as the last page is in.
            while tasks.try_join_next().is_some() {}
            while let Ok(leases) = leases_rx.try_recv() {
                ready.extend(leases);
            }
            self.start_ready(&mut ready, &slots, &mut tasks);
            let busy = !tasks.is_empty();
            let housekeeping =
                !busy || last_housekeeping.is_none_or(|t| t.elapsed() >= HOUSEKEEPING);
            if housekeeping {
                last_housekeeping = Some(tokio::time::Instant::now());
                if let Err(e) = self.seed_queued().await {
                    tracing::warn!(error = %e, "seeding crawls failed");
                }
            }
            let mut leased = 0;
            if housekeeping && ready.len() < batch && slots.available_permits() > 0 {
                let want = slots.available_permits() + batch - ready.len();
                match self
                    .store
                    .lease_pool_urls(
                        &self.cfg.worker_id,
                        self.cfg.pool.as_deref(),
                        want as i64,
                        self.cfg.lease_ms,
                    )
                    .await
                {
                    Ok(leases) => {
                        leased = leases.len();
                        ready.extend(leases);
                    }
                    Err(e) => tracing::warn!(error = %e, "leasing failed"),
                }
                self.start_ready(&mut ready, &slots, &mut tasks);
            }
            ready_len.store(ready.len(), std::sync::atomic::Ordering::Relaxed);
            while tasks.try_join_next().is_some() {}
            if housekeeping {
                if let Err(e) = self.finish_drained().await {
                    tracing::warn!(error = %e, "finishing crawls failed");
                }
            }
            if leased > 0 && slots.available_permits() > 0 {
                continue;
            }
            tokio::select! {
                p = slots.clone().acquire_owned(), if !ready.is_empty() => drop(p),
                leases = leases_rx.recv() => ready.extend(leases.unwrap_or_default()),
                _ = tasks.join_next(), if !tasks.is_empty() => {}
                _ = self.wake.notified() => {}
                _ = tokio::time::sleep(self.cfg.idle_poll) => {}
                _ = stop.changed() => {}
            }
        }
        while tasks.join_next().await.is_some() {}
        // Every page task has had its commit answered; nothing is pending.
        if let Some(c) = committer {
            c.abort();
        }
        // Leases taken but not started go back to the queue at once (not
        // after their lease expires).
        while let Ok(leases) = leases_rx.try_recv() {
            ready.extend(leases);
        }
        for lease in ready {
            if let Err(e) = self.store.release_lease(&lease).await {
                tracing::warn!(error = %e, url = %lease.url, "releasing a lease failed; it will expire");
            }
        }
    }

    /// Starts leased pages while a slot is free.
    fn start_ready(
        self: &Arc<Self>,
        ready: &mut std::collections::VecDeque<Lease>,
        slots: &Arc<Semaphore>,
        tasks: &mut tokio::task::JoinSet<()>,
    ) {
        while !ready.is_empty() {
            let Ok(permit) = slots.clone().try_acquire_owned() else {
                break;
            };
            let Some(lease) = ready.pop_front() else {
                break;
            };
            let me = self.clone();
            tasks.spawn(async move {
                me.process(lease, permit).await;
            });
        }
    }
}
