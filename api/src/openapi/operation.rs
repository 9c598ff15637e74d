//! What the OpenAPI document says about one route: id, summary, parameters,
//! request body, the success response and the error statuses.

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{json, Value};

/// Who may call a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Security {
    /// No credential (health, metrics, the document, signed blob links).
    Public,
    /// An API key (`Authorization: Bearer wd_…`).
    Key,
    /// The operator's admin token (`WEBDATA_ADMIN_TOKEN`).
    Admin,
    /// A dashboard session cookie (HTML pages, not in the API document).
    Session,
}

/// Builds a schema in the document's generator (so `$ref`s are shared).
pub type SchemaFn = fn(&mut SchemaGenerator) -> Schema;

/// The schema of `T`, as a reference into the document's components.
pub fn schema_of<T: JsonSchema>(g: &mut SchemaGenerator) -> Schema {
    g.subschema_for::<T>()
}

/// The body of the success response.
#[derive(Debug, Clone)]
pub enum Body {
    /// `application/json` with a schema.
    Json(SchemaFn),
    /// `text/event-stream`.
    EventStream,
    /// `text/plain` (the Prometheus exposition format, health answers).
    Text,
    /// An image behind a signed link.
    Image,
    /// A dashboard page.
    Html,
}

/// One operation of the document.
#[derive(Debug, Clone)]
pub struct Op {
    /// `operationId`.
    pub id: &'static str,
    /// One line: what it does and what it costs.
    pub summary: &'static str,
    /// Who may call it (set by the router group it is added to).
    pub security: Security,
    /// Parameters as OpenAPI objects.
    pub params: Vec<Value>,
    /// The JSON request body, when there is one.
    pub body: Option<SchemaFn>,
    /// The success status, its description and body.
    pub ok: (u16, &'static str, Body),
    /// Error statuses answered with the Error shape.
    pub errors: &'static [u16],
    /// OpenAPI links from the success response to the operations that take
    /// its `id` (what a client, or a stateful fuzzer, calls next).
    pub links: &'static [Link],
    /// Where the success body holds that `id` (a JSON pointer, `/id`).
    pub link_id_at: &'static str,
}

/// An OpenAPI link: `operationId` called with the success body's `id` as its
/// `id` path parameter.
#[derive(Debug, Clone, Copy)]
pub struct Link {
    /// The link's name in the document.
    pub name: &'static str,
    /// The operation it leads to.
    pub operation_id: &'static str,
}

impl Op {
    /// An operation answering 200 with a JSON object.
    pub fn new(id: &'static str, summary: &'static str) -> Self {
        Op {
            id,
            summary,
            security: Security::Key,
            params: Vec::new(),
            body: None,
            ok: (200, "OK", Body::Json(any_object)),
            errors: &[],
            links: &[],
            link_id_at: "/id",
        }
    }

    /// The JSON request body is a `T`.
    pub fn body<T: JsonSchema>(mut self) -> Self {
        self.body = Some(schema_of::<T>);
        self
    }

    /// Success: `status` with `description` and a `T` as JSON.
    pub fn ok<T: JsonSchema>(self, status: u16, description: &'static str) -> Self {
        self.answers(status, description, Body::Json(schema_of::<T>))
    }

    /// Success: `status` with `description` and `body`.
    pub fn answers(mut self, status: u16, description: &'static str, body: Body) -> Self {
        self.ok = (status, description, body);
        self
    }

    /// Error statuses (each answered with the Error shape).
    pub fn errors(mut self, statuses: &'static [u16]) -> Self {
        self.errors = statuses;
        self
    }

    /// Links from the success response (see [`Link`]).
    pub fn links(mut self, links: &'static [Link]) -> Self {
        self.links = links;
        self
    }

    /// Links whose `id` is at `pointer` in the success body (`/data/id`).
    pub fn links_at(mut self, pointer: &'static str, links: &'static [Link]) -> Self {
        self.links = links;
        self.link_id_at = pointer;
        self
    }

    /// A path parameter (a string).
    pub fn path(mut self, name: &'static str) -> Self {
        self.params.push(
            json!({ "name": name, "in": "path", "required": true, "schema": { "type": "string" } }),
        );
        self
    }

    /// Any other parameter, as an OpenAPI parameter object.
    pub fn param(mut self, p: Value) -> Self {
        self.params.push(p);
        self
    }

    /// The optional `Idempotency-Key` header.
    pub fn idempotent(self) -> Self {
        self.param(json!({
            "name": "Idempotency-Key", "in": "header", "required": false,
            "schema": { "type": "string", "maxLength": 255 },
            "description": "Repeats within 24 hours replay the first answer with `Idempotent-Replayed: true`."
        }))
    }

    /// The same operation under `security` (routers set this).
    pub fn secured(mut self, security: Security) -> Self {
        self.security = security;
        self
    }
}

/// A JSON object with no fixed schema.
pub fn any_object(_: &mut SchemaGenerator) -> Schema {
    schemars::json_schema!({ "type": "object" })
}

/// The shape of the admin API's answers: `{success, data, request_id}`.
#[derive(JsonSchema)]
#[allow(dead_code)]
pub struct Data<T> {
    /// Always true (errors use the Error shape).
    pub success: bool,
    /// What was asked for.
    pub data: T,
    /// The request's id.
    pub request_id: String,
}
