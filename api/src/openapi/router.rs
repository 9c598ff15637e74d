//! A router that cannot serve a route without describing it: every route
//! is added with its [`Op`], and the OpenAPI document is built from the
//! routes the router holds.

use super::operation::{Op, Security};
use axum::handler::Handler;
use axum::http::Method;
use axum::routing::{self, MethodRouter};
use axum::Router;

/// One served route: method, path template and its description.
#[derive(Debug, Clone)]
pub struct Route {
    /// The HTTP method.
    pub method: Method,
    /// The axum path template (`/v1/crawl/{id}`), as OpenAPI writes it too.
    pub path: &'static str,
    /// What the document says about it.
    pub op: Op,
}

/// An axum router and the description of every route it serves.
pub struct ApiRouter<S = ()> {
    router: Router<S>,
    routes: Vec<Route>,
    security: Security,
}

impl<S: Clone + Send + Sync + 'static> ApiRouter<S> {
    /// An empty router whose routes need `security` (the layer that
    /// enforces it is added by the caller with [`ApiRouter::route_layer`]).
    pub fn new(security: Security) -> Self {
        ApiRouter {
            router: Router::new(),
            routes: Vec::new(),
            security,
        }
    }

    /// `GET path`.
    pub fn get<H: Handler<T, S>, T: 'static>(self, path: &'static str, h: H, op: Op) -> Self {
        self.add(Method::GET, path, routing::get(h), op)
    }

    /// `POST path`.
    pub fn post<H: Handler<T, S>, T: 'static>(self, path: &'static str, h: H, op: Op) -> Self {
        self.add(Method::POST, path, routing::post(h), op)
    }

    /// `PATCH path`.
    pub fn patch<H: Handler<T, S>, T: 'static>(self, path: &'static str, h: H, op: Op) -> Self {
        self.add(Method::PATCH, path, routing::patch(h), op)
    }

    /// `DELETE path`.
    pub fn delete<H: Handler<T, S>, T: 'static>(self, path: &'static str, h: H, op: Op) -> Self {
        self.add(Method::DELETE, path, routing::delete(h), op)
    }

    fn add(mut self, method: Method, path: &'static str, mr: MethodRouter<S>, op: Op) -> Self {
        // axum merges method routers given for the same path.
        self.router = self.router.route(path, mr);
        self.routes.push(Route {
            method,
            path,
            op: op.secured(self.security),
        });
        self
    }

    /// A layer around the routes added so far (auth, admin token).
    pub fn route_layer<L>(mut self, layer: L) -> Self
    where
        L: tower::Layer<axum::routing::Route> + Clone + Send + Sync + 'static,
        L::Service: tower::Service<axum::extract::Request> + Clone + Send + Sync + 'static,
        <L::Service as tower::Service<axum::extract::Request>>::Response:
            axum::response::IntoResponse + 'static,
        <L::Service as tower::Service<axum::extract::Request>>::Error:
            Into<std::convert::Infallible> + 'static,
        <L::Service as tower::Service<axum::extract::Request>>::Future: Send + 'static,
    {
        self.router = self.router.route_layer(layer);
        self
    }

    /// Both routers' routes in one.
    pub fn merge(mut self, other: ApiRouter<S>) -> Self {
        self.router = self.router.merge(other.router);
        self.routes.extend(other.routes);
        self
    }

    /// The routes this router serves, with their descriptions.
    pub fn routes(&self) -> &[Route] {
        &self.routes
    }

    /// The axum router and the routes' descriptions.
    pub fn into_parts(self) -> (Router<S>, Vec<Route>) {
        (self.router, self.routes)
    }
}
