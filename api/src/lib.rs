//! webdata's HTTP API: router, middleware, handlers, the OpenAPI document,
//! and the `webdata` command line.

pub mod app;
pub mod body;
pub mod cli;
pub mod client;
pub mod config;
pub mod context;
pub mod credits;
pub mod dashboard;
pub mod error;
pub mod firecrawl;
pub mod idempotency;
pub mod kube;
pub mod layers;
pub mod mcp;
pub mod metrics;
pub mod openapi;
pub mod routes;
pub mod services;
pub mod state;
pub mod webhooks;
