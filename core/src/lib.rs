//! webdata core: wire types, error codes, configuration and the store. No
//! HTTP server and no Kubernetes code lives here.

pub mod brand;
pub mod error;
pub mod schedule;
pub mod shutdown;
pub mod signature;
pub mod store;
pub mod types;
pub mod validate;

pub use error::ErrorCode;
pub use store::{Store, StoreError};
