//! Prometheus metrics in the text exposition format, kept in process.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;

const BUCKETS_MS: [f64; 12] = [
    5.0, 10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1000.0, 2500.0, 5000.0, 10000.0, 30000.0,
];

#[derive(Default)]
struct Histogram {
    buckets: [u64; BUCKETS_MS.len()],
    count: u64,
    sum_ms: f64,
}

/// Counters and histograms the service exposes on `/metrics`.
#[derive(Default)]
pub struct Metrics {
    requests: Mutex<BTreeMap<(String, String, u16), u64>>,
    latency: Mutex<BTreeMap<String, Histogram>>,
    counters: Mutex<BTreeMap<String, u64>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Metrics {
    /// Records one finished HTTP request.
    pub fn observe_request(&self, method: &str, route: &str, status: u16, ms: f64) {
        *lock(&self.requests)
            .entry((method.to_string(), route.to_string(), status))
            .or_default() += 1;
        let mut lat = lock(&self.latency);
        let h = lat.entry(route.to_string()).or_default();
        for (i, b) in BUCKETS_MS.iter().enumerate() {
            if ms <= *b {
                h.buckets[i] += 1;
            }
        }
        h.count += 1;
        h.sum_ms += ms;
    }

    /// Adds `n` to a named counter (`webdata_<name>_total`).
    pub fn add(&self, name: &str, n: u64) {
        *lock(&self.counters).entry(name.to_string()).or_default() += n;
    }

    /// The text exposition of every metric.
    pub fn render(&self) -> String {
        let mut out = String::new();
        out.push_str("# HELP webdata_http_requests_total HTTP requests answered.\n# TYPE webdata_http_requests_total counter\n");
        for ((m, r, s), n) in lock(&self.requests).iter() {
            let _ = writeln!(
                out,
                "webdata_http_requests_total{{method=\"{m}\",route=\"{r}\",status=\"{s}\"}} {n}"
            );
        }
        out.push_str("# HELP webdata_http_request_duration_ms Request latency.\n# TYPE webdata_http_request_duration_ms histogram\n");
        for (r, h) in lock(&self.latency).iter() {
            for (i, b) in BUCKETS_MS.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "webdata_http_request_duration_ms_bucket{{route=\"{r}\",le=\"{b}\"}} {}",
                    h.buckets[i]
                );
            }
            let _ = writeln!(
                out,
                "webdata_http_request_duration_ms_bucket{{route=\"{r}\",le=\"+Inf\"}} {}",
                h.count
            );
            let _ = writeln!(
                out,
                "webdata_http_request_duration_ms_sum{{route=\"{r}\"}} {}",
                h.sum_ms
            );
            let _ = writeln!(
                out,
                "webdata_http_request_duration_ms_count{{route=\"{r}\"}} {}",
                h.count
            );
        }
        for (name, n) in lock(&self.counters).iter() {
            let _ = writeln!(
                out,
                "# TYPE webdata_{name}_total counter\nwebdata_{name}_total {n}"
            );
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
        let text = m.render();
        assert!(text.contains(
            "webdata_http_requests_total{method=\"POST\",route=\"/v1/scrape\",status=\"200\"} 2"
        ));
        assert!(text
            .contains("webdata_http_request_duration_ms_bucket{route=\"/v1/scrape\",le=\"10\"} 1"));
        assert!(text.contains(
            "webdata_http_request_duration_ms_bucket{route=\"/v1/scrape\",le=\"1000\"} 2"
        ));
        assert!(text.contains("webdata_credits_charged_total 3"));
    }
}
