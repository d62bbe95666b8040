//! A call's arguments: checked against the tool's own JSON Schema, then decoded.
//!
//! The schema is what the model was shown, so the check speaks its terms ("missing
//! required string argument `path`") rather than serde's ("missing field `path`"). Only
//! what the built-in schemas use is checked — an object, `additionalProperties: false`,
//! `required`, each member's `type` (array items and an object's members too), a string's
//! `enum` and an integer's `minimum`; anything
//! else a schema says is left to the decoding. `null` counts as absent.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::{ToolDef, ToolOutput};

/// `args` checked against `def`'s schema and decoded; otherwise the error for the model.
pub(super) fn decode<A: DeserializeOwned>(def: &ToolDef, args: &Value) -> Result<A, ToolOutput> {
    let invalid =
        |msg: String| ToolOutput::error(format!("invalid arguments for {}: {msg}", def.name));
    check_object(&def.input_schema, args).map_err(invalid)?;
    A::deserialize(args).map_err(|e| invalid(e.to_string()))
}

fn check_object(schema: &Value, args: &Value) -> Result<(), String> {
    let Some(args) = args.as_object() else {
        return Err(format!("expected a JSON object, got {}", type_name(args)));
    };
    let empty = Map::new();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    if schema.get("additionalProperties") == Some(&Value::Bool(false))
        && let Some(unknown) = args.keys().find(|k| !properties.contains_key(*k))
    {
        let allowed: Vec<&str> = properties.keys().map(String::as_str).collect();
        return Err(format!(
            "unknown argument `{unknown}` (allowed: {})",
            allowed.join(", ")
        ));
    }
    let required = |key: &str| {
        schema
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|r| r.iter().any(|k| k == key))
    };
    for (key, property) in properties {
        match args.get(key) {
            None | Some(Value::Null) if required(key) => {
                let kind = match property.get("type").and_then(Value::as_str) {
                    Some(kind) => format!("{kind} "),
                    None => String::new(),
                };
                return Err(format!("missing required {kind}argument `{key}`"));
            }
            None | Some(Value::Null) => {}
            Some(value) => check_value(key, property, value)?,
        }
    }
    Ok(())
}

/// `value` against `schema`'s `type` (and `minimum`, `items`); `label` names it.
fn check_value(label: &str, schema: &Value, value: &Value) -> Result<(), String> {
    let must_be = |what: &str| {
        Err(format!(
            "`{label}` must be {what}, got {}",
            type_name(value)
        ))
    };
    match schema.get("type").and_then(Value::as_str) {
        Some("string") if !value.is_string() => must_be("a string"),
        Some("boolean") if !value.is_boolean() => must_be("a boolean"),
        Some("number") if !value.is_number() => must_be("a number"),
        Some("object") if !value.is_object() => must_be("an object"),
        Some("object") if schema.get("properties").is_some() => {
            check_object(schema, value).map_err(|e| format!("in `{label}`: {e}"))
        }
        Some("string") => match schema.get("enum").and_then(Value::as_array) {
            Some(values) if !values.contains(value) => {
                let allowed: Vec<String> = values.iter().map(Value::to_string).collect();
                Err(format!(
                    "`{label}` must be one of {}, got {value}",
                    allowed.join(", ")
                ))
            }
            _ => Ok(()),
        },
        Some("integer") => check_integer(label, schema, value),
        Some("array") => {
            let Some(items) = value.as_array() else {
                return must_be("an array");
            };
            match schema.get("items") {
                Some(item_schema) => items.iter().enumerate().try_for_each(|(i, item)| {
                    check_value(&format!("{label}[{i}]"), item_schema, item)
                }),
                None => Ok(()),
            }
        }
        _ => Ok(()),
    }
}

fn check_integer(label: &str, schema: &Value, value: &Value) -> Result<(), String> {
    let Some(n) = value.as_number() else {
        return Err(format!(
            "`{label}` must be an integer, got {}",
            type_name(value)
        ));
    };
    let minimum = schema.get("minimum").and_then(Value::as_number);
    let non_negative = minimum.and_then(|m| m.as_f64()).is_some_and(|m| m >= 0.0);
    let integer = n.as_u64().map(i128::from).or(n.as_i64().map(i128::from));
    match (integer, minimum) {
        (Some(i), _) if i < 0 && non_negative => {
            Err(format!("`{label}` must be a non-negative integer, got {n}"))
        }
        (None, _) if non_negative => {
            Err(format!("`{label}` must be a non-negative integer, got {n}"))
        }
        (None, _) => Err(format!("`{label}` must be an integer, got {n}")),
        (Some(i), Some(m)) if m.as_f64().is_some_and(|m| (i as f64) < m) => {
            Err(format!("`{label}` must be at least {m}"))
        }
        _ => Ok(()),
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    fn def() -> ToolDef {
        ToolDef {
            name: "t".into(),
            description: "A test tool.".into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "count": {"type": "integer", "minimum": 1},
                    "offset": {"type": "integer"},
                    "flag": {"type": "boolean"},
                    "tags": {"type": "array", "items": {"type": "string"}}
                },
                "required": ["path"],
                "additionalProperties": false
            }),
            read_only: true,
        }
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Args {
        path: String,
        count: Option<u64>,
        offset: Option<i64>,
        flag: Option<bool>,
        tags: Option<Vec<String>>,
    }

    fn error(args: Value) -> String {
        match decode::<Args>(&def(), &args) {
            Ok(a) => panic!("decoded {a:?} from {args}"),
            Err(out) => {
                assert!(out.is_error);
                out.text
            }
        }
    }

    #[test]
    fn valid_arguments_decode_and_null_means_absent() {
        let args: Args = decode(
            &def(),
            &json!({"path": "a", "count": 2, "offset": -3, "flag": true, "tags": ["x"]}),
        )
        .unwrap();
        assert_eq!(
            args,
            Args {
                path: "a".into(),
                count: Some(2),
                offset: Some(-3),
                flag: Some(true),
                tags: Some(vec!["x".into()]),
            }
        );
        let args: Args = decode(&def(), &json!({"path": "a", "count": null})).unwrap();
        assert_eq!(args.count, None);
    }

    #[test]
    fn every_mistake_is_named_in_the_schemas_terms() {
        for (args, want) in [
            (json!("x"), "expected a JSON object, got a string"),
            (json!({}), "missing required string argument `path`"),
            (
                json!({"path": null}),
                "missing required string argument `path`",
            ),
            (json!({"path": 3}), "`path` must be a string, got a number"),
            (
                json!({"path": "a", "x": 1}),
                "unknown argument `x` (allowed: path, count, offset, flag, tags)",
            ),
            (
                json!({"path": "a", "count": "5"}),
                "`count` must be an integer, got a string",
            ),
            (
                json!({"path": "a", "count": -1}),
                "`count` must be a non-negative integer, got -1",
            ),
            (
                json!({"path": "a", "count": 1.5}),
                "`count` must be a non-negative integer, got 1.5",
            ),
            (
                json!({"path": "a", "count": 0}),
                "`count` must be at least 1",
            ),
            (
                json!({"path": "a", "offset": 0.5}),
                "`offset` must be an integer, got 0.5",
            ),
            (
                json!({"path": "a", "flag": "yes"}),
                "`flag` must be a boolean, got a string",
            ),
            (
                json!({"path": "a", "tags": "x"}),
                "`tags` must be an array, got a string",
            ),
            (
                json!({"path": "a", "tags": ["x", 2]}),
                "`tags[1]` must be a string, got a number",
            ),
        ] {
            assert_eq!(error(args), format!("invalid arguments for t: {want}"));
        }
    }

    #[test]
    fn what_the_check_leaves_out_is_reported_by_the_decoding() {
        #[derive(Debug, Deserialize)]
        struct Narrow {
            #[allow(dead_code)]
            offset: Option<u8>,
        }
        let out = decode::<Narrow>(&def(), &json!({"path": "a", "offset": 300})).unwrap_err();
        assert!(out.is_error);
        assert!(
            out.text
                .starts_with("invalid arguments for t: invalid value: integer `300`"),
            "{}",
            out.text
        );
    }
}
