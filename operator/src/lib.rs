//! The Kubernetes side of webdata: the `CrawlJob` and `WorkerPool` custom
//! resources (group `webdata.io`), the pure replica and phase math, the
//! Deployment/Service builders, and the controllers of `webdata-operator`.

pub mod build;
pub mod controller;
pub mod crd;
pub mod phase;
pub mod scale;
