//! The Kubernetes side of webdata: the pure replica and phase math, the
//! Deployment/Service builders, and the controllers of `webdata-operator`.
//! The custom resources (group `webdata.io`) are the `webdata-crd` crate,
//! re-exported here as [`crd`].

pub mod build;
pub use webdata_crd as crd;
pub mod controller;
pub mod metrics;
pub mod phase;
pub mod scale;
