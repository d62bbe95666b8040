//! The OpenAPI 3.1 document of `/api/v1`, generated from the handlers' annotations and the
//! protocol crate's types (never written by hand). Served at `/api/v1/openapi.json`; a
//! test requests every path it lists from a real gateway, and [`ROUTES`] (the router's own
//! table) must list the same paths.

use crate::rest;
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::{Modify, OpenApi};

/// Every route the router serves besides `/rpc` and the dashboard's files (`/login`, `/`,
/// `/assets/{name}`), as `(method, path)`.
pub const ROUTES: &[(&str, &str)] = &[
    ("get", "/api/v1/health"),
    ("get", "/api/v1/status"),
    ("get", "/api/v1/sessions"),
    ("post", "/api/v1/sessions"),
    ("get", "/api/v1/sessions/{id}"),
    ("delete", "/api/v1/sessions/{id}"),
    ("get", "/api/v1/sessions/{id}/messages"),
    ("post", "/api/v1/sessions/{id}/prompt"),
    ("get", "/api/v1/sessions/{id}/events"),
    ("post", "/api/v1/sessions/{id}/cancel"),
    ("post", "/api/v1/sessions/{id}/approvals/{requestId}"),
    ("post", "/auth/exchange"),
    ("get", "/api/v1/runs"),
    ("get", "/api/v1/runs/{id}"),
    ("post", "/hooks/{name}"),
];

#[derive(OpenApi)]
#[openapi(
    info(title = "zeroclaw gateway", description = "REST over the zeroclaw daemon's sessions. Errors: `{\"error\": {\"code\", \"message\", \"data\"?}}` with the JSON-RPC code. See docs/gateway.md."),
    paths(
        rest::health,
        rest::status,
        rest::list,
        rest::create,
        rest::one,
        rest::delete,
        rest::messages,
        rest::prompt,
        rest::events,
        rest::cancel,
        rest::approve,
        crate::login::exchange,
        rest::runs,
        rest::run,
        crate::hooks::deliver,
    ),
    modifiers(&Bearer)
)]
struct Api;

struct Bearer;

impl Modify for Bearer {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)),
        );
    }
}

/// The document, as served.
pub fn document() -> utoipa::openapi::OpenApi {
    let mut doc = Api::openapi();
    doc.info.version = env!("CARGO_PKG_VERSION").to_owned();
    doc
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_document_lists_exactly_the_routes_the_router_serves() {
        let doc = serde_json::to_value(document()).unwrap();
        assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
        let mut listed: Vec<(String, String)> = Vec::new();
        for (path, item) in doc["paths"].as_object().unwrap() {
            for method in item.as_object().unwrap().keys() {
                if ["get", "post", "delete", "put", "patch"].contains(&method.as_str()) {
                    listed.push((method.clone(), path.clone()));
                }
            }
        }
        listed.sort();
        let mut routes: Vec<(String, String)> = ROUTES
            .iter()
            .map(|(m, p)| ((*m).to_owned(), (*p).to_owned()))
            .collect();
        routes.sort();
        assert_eq!(listed, routes);
    }
}
