//! The operator's `/metrics` (`prometheus-client`, OpenMetrics text):
//! leadership, each pool's backlog and replicas, reconcile errors.

use prometheus_client::encoding::text::encode;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PoolLabels {
    pool: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReplicaLabels {
    pool: String,
    component: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ControllerLabels {
    controller: String,
}

/// Counters and gauges for `/metrics`.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    leader: Gauge,
    backlog: Family<PoolLabels, Gauge>,
    render_backlog: Family<PoolLabels, Gauge>,
    replicas: Family<ReplicaLabels, Gauge>,
    reconcile_errors: Family<ControllerLabels, Counter>,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::default();
        let leader = Gauge::default();
        registry.register(
            "webdata_operator_leader",
            "Whether this replica holds the leader Lease (0 or 1)",
            leader.clone(),
        );
        let backlog = Family::<PoolLabels, Gauge>::default();
        registry.register(
            "webdata_operator_backlog",
            "URLs waiting in the pool's admitted crawls",
            backlog.clone(),
        );
        let render_backlog = Family::<PoolLabels, Gauge>::default();
        registry.register(
            "webdata_operator_render_backlog",
            "URLs waiting that need a browser",
            render_backlog.clone(),
        );
        let replicas = Family::<ReplicaLabels, Gauge>::default();
        registry.register(
            "webdata_operator_replicas",
            "Replicas set on the pool's Deployments",
            replicas.clone(),
        );
        let reconcile_errors = Family::<ControllerLabels, Counter>::default();
        registry.register(
            "webdata_operator_reconcile_errors",
            "Reconciles that failed",
            reconcile_errors.clone(),
        );
        Metrics {
            registry,
            leader,
            backlog,
            render_backlog,
            replicas,
            reconcile_errors,
        }
    }
}

impl Metrics {
    /// Whether this replica leads.
    pub fn set_leader(&self, leader: bool) {
        self.leader.set(leader as i64);
    }

    /// A pool's backlog and the replicas set for it.
    pub fn set_pool(
        &self,
        pool: &str,
        backlog: i64,
        render_backlog: i64,
        workers: i64,
        browsers: i64,
    ) {
        let p = PoolLabels {
            pool: pool.to_string(),
        };
        self.backlog.get_or_create(&p).set(backlog);
        self.render_backlog.get_or_create(&p).set(render_backlog);
        for (component, n) in [("worker", workers), ("browser", browsers)] {
            self.replicas
                .get_or_create(&ReplicaLabels {
                    pool: pool.to_string(),
                    component: component.to_string(),
                })
                .set(n);
        }
    }

    /// One failed reconcile of `controller` (`crawljob`, `workerpool`).
    pub fn reconcile_error(&self, controller: &str) {
        self.reconcile_errors
            .get_or_create(&ControllerLabels {
                controller: controller.to_string(),
            })
            .inc();
    }

    /// The OpenMetrics text.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if encode(&mut out, &self.registry).is_err() {
            out.clear();
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_leader_pools_and_errors() {
        let m = Metrics::default();
        m.set_leader(true);
        m.set_pool("default", 7, 2, 3, 1);
        m.reconcile_error("crawljob");
        let text = m.render();
        for line in [
            "webdata_operator_leader 1",
            "webdata_operator_backlog{pool=\"default\"} 7",
            "webdata_operator_render_backlog{pool=\"default\"} 2",
            "webdata_operator_replicas{pool=\"default\",component=\"worker\"} 3",
            "webdata_operator_replicas{pool=\"default\",component=\"browser\"} 1",
            "webdata_operator_reconcile_errors_total{controller=\"crawljob\"} 1",
        ] {
            assert!(text.contains(line), "{line} in {text}");
        }
        assert!(text.ends_with("# EOF\n"));
        // Tests and dashboards read `webdata_operator_leader 1` as a sample;
        // no help text may contain it.
        m.set_leader(false);
        assert!(!m.render().contains("webdata_operator_leader 1"));
    }
}
