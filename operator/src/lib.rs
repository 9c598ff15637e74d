//! The Kubernetes operator for `CrawlJob` and `WorkerPool` resources (group
//! `webdata.io`). Its controllers arrive with the Kubernetes issue; until then
//! this crate holds no code and builds no binary.
