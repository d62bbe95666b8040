//! A built-in tool's definition, built from the tool's own type: its name, description and
//! read-only flag from its constants, its input schema derived by `schemars` from its `Args`
//! (members, types, `#[schemars(range(min = …))]` bounds, doc comments as descriptions) and
//! then put in the plain shape the model has always been shown — one place, so every tool's
//! schema reads alike and `args.rs` finds what it checks.
//!
//! What the derived schema says differently, and why it is changed here:
//! - `$schema`, `title` (the struct's name) and the struct's own doc comment go: providers
//!   take a bare object schema, and the struct is an implementation detail.
//! - An `Option` member's `"type": ["string", "null"]` becomes `"string"`: a member not
//!   listed in `required` may be left out, which is what the model needs to know (`null`
//!   still counts as absent when a call is checked).
//! - `format` (`"uint64"`…) goes: it names a Rust type, not a constraint the model keeps.
//! - A doc comment's lines are joined with spaces: rustdoc wraps lines, the model reads one
//!   paragraph.
//! - Every tool refuses members it does not know (`additionalProperties: false`).
//! - Keys are written in one order (`type`, `items`, `minimum`, `description`; `type`,
//!   `properties`, `required`, `additionalProperties`), so the text sent is stable.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

use super::{Tool, ToolDef};

/// What the model is shown of `T`.
pub(super) fn definition<T: Tool>() -> ToolDef {
    ToolDef {
        name: T::NAME.to_owned(),
        description: T::DESCRIPTION.to_owned(),
        input_schema: input_schema::<T::Args>(),
        read_only: T::READ_ONLY,
    }
}

/// The object schema of the arguments `A`, in the shape described above.
fn input_schema<A: JsonSchema>() -> Value {
    let derived = SchemaSettings::draft2020_12()
        .with(|s| {
            s.meta_schema = None;
            s.inline_subschemas = true;
        })
        .into_generator()
        .into_root_schema_for::<A>()
        .to_value();
    let empty = Map::new();
    let properties: Map<String, Value> = derived
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty)
        .iter()
        .map(|(name, schema)| (name.clone(), member(schema)))
        .collect();
    let mut shaped = Map::new();
    shaped.insert("type".into(), "object".into());
    shaped.insert("properties".into(), Value::Object(properties));
    shaped.insert(
        "required".into(),
        derived
            .get("required")
            .cloned()
            .unwrap_or(Value::Array(Vec::new())),
    );
    shaped.insert("additionalProperties".into(), false.into());
    Value::Object(shaped)
}

/// One member's (or array item's) schema: its type without `null`, its allowed values
/// (`enum`), its items, an object's own members (shaped alike, refusing others), its
/// minimum and its description, in that order; nothing else.
fn member(derived: &Value) -> Value {
    let mut shaped = Map::new();
    if let Some(kind) = derived.get("type") {
        shaped.insert("type".into(), without_null(kind));
    }
    // Only an enum a tool wrote (`#[schemars(extend("enum" = …))]`): the one derived
    // from an `Option` of a Rust enum lists `null` and has never been shown (decoding
    // checks its values).
    if let Some(values) = derived.get("enum").filter(|v| {
        v.as_array()
            .is_some_and(|values| !values.iter().any(Value::is_null))
    }) {
        shaped.insert("enum".into(), values.clone());
    }
    if let Some(items) = derived.get("items") {
        shaped.insert("items".into(), member(items));
    }
    if let Some(properties) = derived.get("properties").and_then(Value::as_object) {
        let properties: Map<String, Value> = properties
            .iter()
            .map(|(name, schema)| (name.clone(), member(schema)))
            .collect();
        shaped.insert("properties".into(), Value::Object(properties));
        shaped.insert(
            "required".into(),
            derived
                .get("required")
                .cloned()
                .unwrap_or(Value::Array(Vec::new())),
        );
        shaped.insert("additionalProperties".into(), false.into());
    }
    if let Some(minimum) = derived.get("minimum") {
        shaped.insert("minimum".into(), minimum.clone());
    }
    if let Some(description) = derived.get("description").and_then(Value::as_str) {
        shaped.insert("description".into(), description.replace('\n', " ").into());
    }
    Value::Object(shaped)
}

/// `["string", "null"]` → `"string"`; a single type as it is.
fn without_null(kind: &Value) -> Value {
    match kind.as_array() {
        Some(kinds) => {
            let mut rest: Vec<&Value> = kinds.iter().filter(|k| *k != "null").collect();
            match rest.len() {
                1 => rest.remove(0).clone(),
                _ => Value::Array(rest.into_iter().cloned().collect()),
            }
        }
        None => kind.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[allow(dead_code)] // only its schema is used
    #[derive(Deserialize, JsonSchema)]
    /// The struct's own doc comment is not shown.
    struct Args {
        /// A wrapped
        /// description.
        path: String,
        #[schemars(range(min = 1))]
        count: Option<u64>,
        tags: Option<Vec<String>>,
    }

    #[test]
    fn the_derived_schema_is_put_in_the_plain_shape() {
        let text = serde_json::to_string(&input_schema::<Args>()).unwrap();
        let want = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "A wrapped description."},
                "count": {"type": "integer", "minimum": 1},
                "tags": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["path"],
            "additionalProperties": false
        });
        assert_eq!(text, want.to_string());
    }
}
