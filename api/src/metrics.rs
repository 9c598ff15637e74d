//! Prometheus metrics (`prometheus-client`, OpenMetrics text), kept in
//! process: requests by route and status, latency by route, and counters.

use prometheus_client::encoding::text::encode;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use std::collections::HashMap;
use std::sync::Mutex;

/// Latency buckets, in milliseconds.
const BUCKETS_MS: [f64; 12] = [
    5.0, 10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1000.0, 2500.0, 5000.0, 10000.0, 30000.0,
];

/// The OpenMetrics content type of [`Metrics::render`].
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    method: String,
    route: String,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    route: String,
}

fn latency_histogram() -> Histogram {
    Histogram::new(BUCKETS_MS)
}

/// Counters and histograms the service exposes on `/metrics`.
pub struct Metrics {
    registry: Mutex<Registry>,
    requests: Family<RequestLabels, Counter>,
    latency: Family<RouteLabels, Histogram, fn() -> Histogram>,
    counters: Mutex<HashMap<String, Counter>>,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::default();
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "webdata_http_requests",
            "HTTP requests answered",
            requests.clone(),
        );
        let latency = Family::<RouteLabels, Histogram, fn() -> Histogram>::new_with_constructor(
            latency_histogram,
        );
        registry.register(
            "webdata_http_request_duration_ms",
            "Request latency in milliseconds",
            latency.clone(),
        );
        Metrics {
            registry: Mutex::new(registry),
            requests,
            latency,
            counters: Mutex::new(HashMap::new()),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Metrics {
    /// Records one finished HTTP request.
    pub fn observe_request(&self, method: &str, route: &str, status: u16, ms: f64) {
        self.requests
            .get_or_create(&RequestLabels {
                method: method.to_string(),
                route: route.to_string(),
                status,
            })
            .inc();
        self.latency
            .get_or_create(&RouteLabels {
                route: route.to_string(),
            })
            .observe(ms);
    }

    /// The counter `webdata_<name>_total`, registered on first use.
    fn counter(&self, name: &str) -> Counter {
        let mut counters = lock(&self.counters);
        if let Some(c) = counters.get(name) {
            return c.clone();
        }
        let c = Counter::default();
        lock(&self.registry).register(format!("webdata_{name}"), name.replace('_', " "), c.clone());
        counters.insert(name.to_string(), c.clone());
        c
    }

    /// Adds `n` to a named counter (`webdata_<name>_total`).
    pub fn add(&self, name: &str, n: u64) {
        self.counter(name).inc_by(n);
    }

    /// Raises a named counter to `total`, a count kept elsewhere (the
    /// browser pool's sessions started).
    pub fn raise_to(&self, name: &str, total: u64) {
        let c = self.counter(name);
        let now = c.get();
        if total > now {
            c.inc_by(total - now);
        }
    }

    /// The OpenMetrics text of every metric.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if encode(&mut out, &lock(&self.registry)).is_err() {
            out.clear();
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counts_and_buckets() {
        let m = Metrics::default();
        m.observe_request("POST", "/v1/scrape", 200, 7.0);
        m.observe_request("POST", "/v1/scrape", 200, 700.0);
        m.add("credits_charged", 3);
        m.raise_to("browser_sessions_started", 4);
        m.raise_to("browser_sessions_started", 2);
        let text = m.render();
        assert!(text.contains(
            "webdata_http_requests_total{method=\"POST\",route=\"/v1/scrape\",status=\"200\"} 2"
        ));
        assert!(
            text.contains(
                "webdata_http_request_duration_ms_bucket{le=\"10.0\",route=\"/v1/scrape\"} 1"
            ),
            "{text}"
        );
        assert!(text.contains(
            "webdata_http_request_duration_ms_bucket{le=\"1000.0\",route=\"/v1/scrape\"} 2"
        ));
        assert!(text.contains("webdata_credits_charged_total 3"));
        assert!(text.contains("webdata_browser_sessions_started_total 4"));
        assert!(text.ends_with("# EOF\n"), "{text}");
    }
}
