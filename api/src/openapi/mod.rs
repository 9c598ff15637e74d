//! The OpenAPI document, derived from the router (a route cannot be served
//! without its description, see [`ApiRouter`]) and the wire types;
//! `crate::app::openapi_document` is the application's.

mod document;
mod operation;
mod router;

pub use document::{crawl_status, document_for};
pub use operation::{any_object, schema_of, Body, Data, Link, Op, Security};
pub use router::{ApiRouter, Route};
