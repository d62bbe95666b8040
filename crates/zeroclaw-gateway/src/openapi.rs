//! The documented routes and their OpenAPI 3.1 document, from one declaration: each
//! handler's `#[utoipa::path]` is the one place its method and path are written, and
//! [`routes`] registers it with the router and the document at once (`utoipa-axum`). The
//! document's schemas come from the protocol crate's types; it is served at
//! `/api/v1/openapi.json`.

use crate::auth::Shared;
use crate::{hooks, login, rest, sse};
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::{Modify, OpenApi};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// Every route of the REST API, with its document. The router serves a few routes besides
/// these, which are not REST: `/api/v1/openapi.json` itself, `/rpc` and the dashboard's
/// pages (`server.rs`).
pub fn routes() -> OpenApiRouter<Shared> {
    OpenApiRouter::with_openapi(Api::openapi())
        .routes(routes!(rest::health))
        .routes(routes!(rest::status))
        .routes(routes!(rest::list, rest::create))
        .routes(routes!(rest::one, rest::delete))
        .routes(routes!(rest::messages))
        .routes(routes!(rest::checkpoints))
        .routes(routes!(rest::rewind))
        .routes(routes!(rest::unrewind))
        .routes(routes!(rest::fork))
        .routes(routes!(rest::context))
        .routes(routes!(rest::commands))
        .routes(routes!(rest::usage))
        .routes(routes!(rest::attachment))
        .routes(routes!(rest::prompt))
        .routes(routes!(sse::events))
        .routes(routes!(rest::cancel))
        .routes(routes!(rest::approve))
        .routes(routes!(rest::steer))
        .routes(routes!(rest::runs))
        .routes(routes!(rest::run))
        .routes(routes!(login::exchange))
        .routes(routes!(hooks::deliver))
}

#[derive(OpenApi)]
#[openapi(
    info(title = "zeroclaw gateway", description = "REST over the zeroclaw daemon's sessions. Errors: `{\"error\": {\"code\", \"message\", \"data\"?}}` with the JSON-RPC code. See docs/gateway.md."),
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

/// The router of [`routes`] and the document, as served.
pub fn split(routes: OpenApiRouter<Shared>) -> (axum::Router<Shared>, utoipa::openapi::OpenApi) {
    let (router, mut doc) = routes.split_for_parts();
    doc.info.version = env!("CARGO_PKG_VERSION").to_owned();
    (router, doc)
}

/// The document, as served.
pub fn document() -> utoipa::openapi::OpenApi {
    split(routes()).1
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::collections::BTreeSet;

    /// `(method, path)` of every operation in the document.
    pub(crate) fn operations() -> BTreeSet<(String, String)> {
        let doc = serde_json::to_value(document()).unwrap();
        assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
        let mut listed = BTreeSet::new();
        for (path, item) in doc["paths"].as_object().unwrap() {
            for method in item.as_object().unwrap().keys() {
                if ["get", "post", "delete", "put", "patch"].contains(&method.as_str()) {
                    listed.insert((method.to_uppercase(), path.clone()));
                }
            }
        }
        listed
    }

    /// `(method, path)` of every row of docs/gateway.md's REST table (`| \`GET /path?q=\` …`).
    fn rest_table() -> BTreeSet<(String, String)> {
        let doc = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../docs/gateway.md"
        ))
        .unwrap();
        let section = doc.split("## REST: `/api/v1`").nth(1).unwrap();
        let section = section.split("\n## ").next().unwrap();
        section
            .lines()
            .filter_map(|line| line.strip_prefix("| `"))
            .filter_map(|row| {
                let request = row.split('`').next()?;
                let (method, path) = request.split_once(' ')?;
                let path = path.split('?').next()?;
                Some((method.to_owned(), path.to_owned()))
            })
            .collect()
    }

    #[test]
    fn the_docs_rest_table_lists_every_operation_of_the_document_and_no_other() {
        let listed = operations();
        assert!(listed.len() >= 15, "{listed:?}");
        let mut expected = listed.clone();
        // The document does not describe itself; the table does.
        expected.insert(("GET".into(), "/api/v1/openapi.json".into()));
        assert_eq!(rest_table(), expected);
    }

    /// Issue 37: docs/gateway.md lists the values a REST approval's `decision` takes, and
    /// they are the protocol's, every one.
    #[test]
    fn the_docs_list_every_approval_decision_with_an_example() {
        let doc = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../docs/gateway.md"
        ))
        .unwrap();
        let section = doc.split("### Answering an approval").nth(1).unwrap();
        let section = section.split("\n## ").next().unwrap();
        let listed: Vec<&str> = section
            .lines()
            .filter_map(|line| line.strip_prefix("| `\""))
            .filter_map(|row| row.split('"').next())
            .collect();
        let decisions: Vec<&str> = zeroclaw_protocol::Decision::ALL
            .iter()
            .map(|d| d.as_str())
            .collect();
        assert_eq!(listed, decisions);
        assert!(
            section.contains(r#"-d '{"decision":"allow_once"}'"#),
            "{section}"
        );
    }

    #[test]
    fn the_document_names_its_version_and_the_bearer_scheme() {
        let doc = serde_json::to_value(document()).unwrap();
        assert_eq!(doc["info"]["version"], env!("CARGO_PKG_VERSION"));
        assert_eq!(doc["info"]["title"], "zeroclaw gateway");
        assert_eq!(
            doc["components"]["securitySchemes"]["bearer"]["scheme"],
            "bearer"
        );
        assert!(doc["components"]["schemas"]["SessionSummary"].is_object());
    }
}
