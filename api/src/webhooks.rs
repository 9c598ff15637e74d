//! Webhook dispatcher: turns crawl events into signed deliveries (a durable
//! outbox in the store) and sends them with retries:
//! 10 s, 20 s, 40 s … capped at 1 h, 8 attempts, `410 Gone` stops, the
//! undeliverable are kept as dead letters (listable and re-drivable).
//! Usage alerts (`usage.credits_low`, `usage.spend_cap_reached`) are queued
//! by the store into the same outbox and sent the same way.

use std::sync::Arc;
use std::time::Duration;
use webdata_core::store::{rfc3339, AttemptOutcome, CrawlEvent, Delivery, NewDelivery};
use webdata_core::types::CrawlRequest;
use webdata_core::Store;
use webdata_engine::guard::NetworkGuard;

/// Attempts per delivery.
pub const MAX_ATTEMPTS: i64 = 8;
/// The receiver must answer within this.
pub const DELIVERY_TIMEOUT: Duration = Duration::from_secs(10);

/// `t=<unix>,v1=<hex>[,v1=<hex>]` for a body, one `v1` per secret (the
/// spec's signature; [`webdata_core::signature::verify_signature`] checks it).
pub use webdata_core::signature::signature_header;

/// Delay before attempt `failed + 1`, after `failed` failed attempts
/// (10 s doubling, at most 1 h), times `scale`.
pub fn backoff(failed: i64, scale: f64) -> Duration {
    let secs = (10u64 << (failed.clamp(1, 20) - 1) as u32).min(3600);
    Duration::from_secs_f64(secs as f64 * scale.max(0.0))
}

/// Why an attempt got no answer, for the dead letter: a timeout says so
/// (reqwest's own text is only "error sending request for url …").
fn attempt_error(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        return format!(
            "the receiver did not answer within {} s (timed out)",
            DELIVERY_TIMEOUT.as_secs()
        );
    }
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(inner) = source {
        let part = inner.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        source = inner.source();
    }
    text
}

/// Short event name of a stored crawl event, if it is sent as a webhook.
fn short_name(kind: &str) -> Option<&'static str> {
    match kind {
        "started" => Some("started"),
        "page" => Some("page"),
        "completed" => Some("completed"),
        "failed" => Some("failed"),
        "cancelled" => Some("cancelled"),
        _ => None,
    }
}

/// Dispatcher settings.
#[derive(Clone)]
pub struct Dispatcher {
    pub store: Store,
    pub guard: NetworkGuard,
    pub client: reqwest::Client,
    /// Multiplies every retry delay (tests use a small value).
    pub delay_scale: f64,
    pub poll: Duration,
}

impl Dispatcher {
    /// A dispatcher whose HTTP client connects only to addresses the guard allows.
    pub fn new(store: Store, guard: NetworkGuard, delay_scale: f64) -> anyhow::Result<Self> {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .dns_resolver(guard.reqwest_resolver())
            .timeout(DELIVERY_TIMEOUT)
            .user_agent(webdata_engine::fetch::DEFAULT_USER_AGENT)
            .build()?;
        Ok(Dispatcher {
            store,
            guard,
            client,
            delay_scale,
            poll: Duration::from_millis(200),
        })
    }

    /// Runs until `stop` turns true.
    pub async fn run(self: Arc<Self>, mut stop: tokio::sync::watch::Receiver<bool>) {
        let mut alerts_checked = std::time::Instant::now() - Duration::from_secs(60);
        loop {
            if *stop.borrow() {
                return;
            }
            if alerts_checked.elapsed() >= Duration::from_secs(1) {
                alerts_checked = std::time::Instant::now();
                if let Err(e) = self.store.queue_usage_alerts().await {
                    tracing::warn!(error = %e, "queueing usage alerts failed");
                }
            }
            if let Err(e) = self.fill_outbox().await {
                tracing::warn!(error = %e, "webhook outbox step failed");
            }
            let sent = match self.deliver_due().await {
                Ok(n) => n,
                Err(e) => {
                    tracing::warn!(error = %e, "webhook delivery step failed");
                    0
                }
            };
            if sent == 0 {
                tokio::select! {
                    _ = tokio::time::sleep(self.poll) => {}
                    _ = stop.changed() => {}
                }
            }
        }
    }

    async fn event_body(
        &self,
        prefix: &str,
        crawl_id: &str,
        ev: &CrawlEvent,
        metadata: Option<&serde_json::Value>,
        boilerplate: &std::collections::HashSet<String>,
    ) -> Option<(String, String, String)> {
        let short = short_name(&ev.kind)?;
        let data: serde_json::Value = if short == "page" {
            let reference: serde_json::Value = serde_json::from_str(&ev.data).ok()?;
            let seq = reference["seq"].as_i64()?;
            let (url, document) =
                webdata_engine::crawl::page_document(&self.store, crawl_id, seq, boilerplate)
                    .await?;
            serde_json::json!({ "id": crawl_id, "url": url, "document": document })
        } else {
            serde_json::from_str(&ev.data).unwrap_or_default()
        };
        let event_id = format!("evt_{crawl_id}_{}", ev.seq);
        let mut body = serde_json::json!({
            "id": event_id,
            "type": format!("{prefix}.{short}"),
            "createdAt": rfc3339(ev.created_at),
            "data": data,
        });
        if let Some(m) = metadata {
            body["metadata"] = m.clone();
        }
        Some((event_id, short.to_string(), body.to_string()))
    }

    /// Turns new crawl events into delivery rows.
    pub async fn fill_outbox(&self) -> anyhow::Result<()> {
        for (crawl_id, from) in self.store.crawls_with_unsent_events(50).await? {
            let Some(crawl) = self.store.get_crawl(&crawl_id).await? else {
                continue;
            };
            let events = self.store.crawl_events(&crawl_id, from, 500).await?;
            let Some(upto) = events.last().map(|e| e.seq) else {
                continue;
            };
            let request: Option<CrawlRequest> = serde_json::from_str(&crawl.request).ok();
            let hook = request.as_ref().and_then(|r| r.webhook.clone());
            let mut endpoints = self.store.webhook_endpoints(&crawl.org_id).await?;
            endpoints.retain(|e| e.disabled_at.is_none());
            let metadata = hook
                .as_ref()
                .and_then(|h| h.metadata.clone())
                .map(serde_json::Value::Object);
            // Read when a page event's body is first built: the crawl's
            // frequent blocks, stripped from the documents sent.
            let mut boilerplate: Option<std::collections::HashSet<String>> = None;
            let no_blocks = std::collections::HashSet::new();
            // Batch scrapes send `batch_scrape.*`, crawls `crawl.*`.
            let prefix = if crawl.is_batch() {
                "batch_scrape"
            } else {
                "crawl"
            };
            let mut deliveries = Vec::new();
            let hook_wants = |short: &str| {
                hook.as_ref().is_some_and(|h| {
                    h.events
                        .as_ref()
                        .is_none_or(|list| list.iter().any(|e| e == short))
                })
            };
            for ev in &events {
                // An event no endpoint and not the crawl's own webhook
                // receives: no body to build (a page event's body is its
                // document, read back from the store: 3% of a crawl's CPU
                // when nobody listens), and the cursor still moves past it.
                if endpoints.is_empty() && short_name(&ev.kind).is_none_or(|s| !hook_wants(s)) {
                    continue;
                }
                if ev.kind == "page" && boilerplate.is_none() {
                    boilerplate =
                        Some(webdata_engine::crawl::boilerplate_for(&self.store, &crawl).await);
                }
                let blocks = boilerplate.as_ref().unwrap_or(&no_blocks);
                let Some((event_id, short, body)) = self
                    .event_body(prefix, &crawl_id, ev, metadata.as_ref(), blocks)
                    .await
                else {
                    continue;
                };
                if let Some(h) = &hook {
                    if hook_wants(&short) {
                        deliveries.push(NewDelivery {
                            event_id: event_id.clone(),
                            endpoint_id: None,
                            url: h.url.clone(),
                            event_type: format!("{prefix}.{short}"),
                            body: body.clone(),
                        });
                    }
                }
                for e in &endpoints {
                    deliveries.push(NewDelivery {
                        event_id: event_id.clone(),
                        endpoint_id: Some(e.id.clone()),
                        url: e.url.clone(),
                        event_type: format!("{prefix}.{short}"),
                        body: body.clone(),
                    });
                }
            }
            self.store
                .enqueue_deliveries(&crawl.org_id, &crawl_id, from, upto, &deliveries)
                .await?;
        }
        Ok(())
    }

    /// Sends the deliveries that are due; returns how many were attempted.
    pub async fn deliver_due(&self) -> anyhow::Result<usize> {
        let due = self.store.lease_deliveries(32, 60_000).await?;
        let n = due.len();
        let mut set = tokio::task::JoinSet::new();
        for d in due {
            let me = self.clone();
            set.spawn(async move { me.attempt(d).await });
        }
        while let Some(r) = set.join_next().await {
            if let Ok(Err(e)) = r {
                tracing::warn!(error = %e, "recording a webhook attempt failed");
            }
        }
        Ok(n)
    }

    async fn attempt(&self, d: Delivery) -> anyhow::Result<()> {
        let attempt_no = d.attempts + 1;
        let secrets = match &d.endpoint_id {
            None => self.store.signing_secrets(&d.org_id).await?,
            Some(id) => match self.store.endpoint_secret(id).await? {
                Some(s) => vec![s],
                None => {
                    let outcome = AttemptOutcome::Dead {
                        status: None,
                        error: "the endpoint was deleted".into(),
                    };
                    self.store.record_attempt(&d.id, &outcome).await?;
                    return Ok(());
                }
            },
        };
        let result = match self.guard.check_url(&d.url) {
            Err(e) => Err((None, format!("refused by the network guard: {e}"))),
            Ok(url) => {
                let t = webdata_core::store::now_ms() / 1000;
                let sig = signature_header(t, d.body.as_bytes(), &secrets);
                self.client
                    .post(url)
                    .header("content-type", "application/json")
                    .header("service-signature", sig)
                    .header("service-event", &d.event_type)
                    .header("service-delivery-attempt", attempt_no.to_string())
                    .body(d.body.clone())
                    .send()
                    .await
                    .map_err(|e| (None, attempt_error(&e)))
                    .map(|r| r.status().as_u16() as i64)
            }
        };
        let outcome = match result {
            Ok(s) if (200..300).contains(&s) => AttemptOutcome::Delivered { status: s },
            Ok(410) => AttemptOutcome::Gone,
            other => {
                let (status, error) = match other {
                    Ok(s) => (Some(s), format!("the receiver answered HTTP {s}")),
                    Err(e) => e,
                };
                if attempt_no >= MAX_ATTEMPTS {
                    AttemptOutcome::Dead { status, error }
                } else {
                    let delay = backoff(attempt_no, self.delay_scale);
                    AttemptOutcome::Retry {
                        status,
                        error,
                        next_at: webdata_core::store::now_ms() + delay.as_millis() as i64,
                    }
                }
            }
        };
        self.store.record_attempt(&d.id, &outcome).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hmac::{Hmac, Mac};
    use sha2::Sha256;

    #[test]
    fn backoff_doubles_from_ten_seconds_to_an_hour() {
        let secs: Vec<u64> = (1..=10).map(|n| backoff(n, 1.0).as_secs()).collect();
        assert_eq!(secs, vec![10, 20, 40, 80, 160, 320, 640, 1280, 2560, 3600]);
        assert_eq!(backoff(3, 0.001).as_millis(), 40);
    }

    #[test]
    fn signature_matches_a_known_vector_and_lists_every_secret() {
        // HMAC-SHA256("whsec_a", "1700000000.{}"), computed independently.
        let h = signature_header(1_700_000_000, b"{}", &["whsec_a".into(), "whsec_b".into()]);
        let parts: Vec<&str> = h.split(',').collect();
        assert_eq!(parts[0], "t=1700000000");
        assert_eq!(parts.len(), 3);
        let mut mac = Hmac::<Sha256>::new_from_slice(b"whsec_a").expect("key");
        mac.update(b"1700000000.{}");
        assert_eq!(
            parts[1],
            format!("v1={}", hex::encode(mac.finalize().into_bytes()))
        );
    }
}
