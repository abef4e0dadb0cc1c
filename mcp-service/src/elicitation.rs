//! Helpers for answering form elicitations (`elicitation/create`) on the client side.
//!
//! SEP-1034 (2025-11-25) lets a form's fields carry a `default`; a client that accepts a form
//! should send those defaults for the fields the user left empty. [`apply_defaults`] does that
//! for any content, [`defaults`] gives the whole default form and [`accept_with_defaults`]
//! builds the `accept` result of a form submitted as it was offered.

use std::collections::BTreeMap;

use mcp_proto::schema::elicitation::{
    ElicitRequestParams, ElicitResult, ElicitValue, ElicitationSchema, PrimitiveSchemaDefinition,
};

/// The `default` of one field, as a submitted value (`None` when it has none).
pub fn field_default(field: &PrimitiveSchemaDefinition) -> Option<ElicitValue> {
    use PrimitiveSchemaDefinition as F;
    match field {
        F::String(s) => s.default.clone().map(ElicitValue::String),
        F::Number(n) => n.default.clone().map(ElicitValue::Number),
        F::Boolean(b) => b.default.map(ElicitValue::Boolean),
        F::SingleSelect(e) => e.default.clone().map(ElicitValue::String),
        F::TitledSingleSelect(e) => e.default.clone().map(ElicitValue::String),
        F::LegacyEnum(e) => e.default.clone().map(ElicitValue::String),
        F::MultiSelect(e) => e.default.clone().map(ElicitValue::StringArray),
        F::TitledMultiSelect(e) => e.default.clone().map(ElicitValue::StringArray),
        _ => None,
    }
}

/// Every field of `schema` that has a `default`, with that default.
pub fn defaults(schema: &ElicitationSchema) -> BTreeMap<String, ElicitValue> {
    let mut content = BTreeMap::new();
    apply_defaults(schema, &mut content);
    content
}

/// Fills into `content` the default of every field of `schema` that `content` lacks; values
/// already there are kept.
pub fn apply_defaults(schema: &ElicitationSchema, content: &mut BTreeMap<String, ElicitValue>) {
    for (name, field) in schema.properties.iter() {
        if content.contains_key(name) {
            continue;
        }
        if let Some(value) = field_default(field) {
            content.insert(name.to_owned(), value);
        }
    }
}

/// The `accept` result of a form elicitation submitted with `content` completed by the
/// schema's defaults. A URL elicitation has no form: it is accepted without content.
pub fn accept_with_defaults(
    params: &ElicitRequestParams,
    mut content: BTreeMap<String, ElicitValue>,
) -> ElicitResult {
    match params {
        ElicitRequestParams::Form(form) => {
            apply_defaults(&form.requested_schema, &mut content);
            ElicitResult::accept(content)
        }
        _ => ElicitResult {
            content: None,
            ..ElicitResult::accept(BTreeMap::new())
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params() -> ElicitRequestParams {
        serde_json::from_value(json!({
            "message": "defaults please",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "default": "John Doe"},
                    "age": {"type": "integer", "default": 30},
                    "score": {"type": "number", "default": 95.5},
                    "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
                    "plan": {"type": "string", "oneOf": [{"const": "a", "title": "A"}], "default": "a"},
                    "tags": {"type": "array", "items": {"type": "string", "enum": ["x", "y"]}, "default": ["y"]},
                    "verified": {"type": "boolean", "default": true},
                    "nickname": {"type": "string"}
                }
            }
        }))
        .unwrap()
    }

    #[test]
    fn every_kind_of_default_is_applied_and_only_defaults() {
        let ElicitRequestParams::Form(form) = params() else {
            panic!("a form")
        };
        let d = defaults(&form.requested_schema);
        assert_eq!(
            serde_json::to_value(&d).unwrap(),
            json!({
                "name": "John Doe", "age": 30, "score": 95.5, "status": "active",
                "plan": "a", "tags": ["y"], "verified": true
            })
        );
        assert!(!d.contains_key("nickname"), "no default, no value");
    }

    #[test]
    fn submitted_values_win_over_defaults() {
        let mut content = BTreeMap::new();
        content.insert("name".to_owned(), ElicitValue::from("Ada"));
        content.insert("verified".to_owned(), ElicitValue::from(false));
        let result = accept_with_defaults(&params(), content);
        let v = serde_json::to_value(&result).unwrap();
        assert_eq!(v["action"], "accept");
        assert_eq!(v["content"]["name"], "Ada");
        assert_eq!(v["content"]["verified"], false);
        assert_eq!(v["content"]["age"], 30);
    }

    #[test]
    fn url_elicitations_are_accepted_without_content() {
        let p = ElicitRequestParams::url("visit", "https://example.com/x", Some("e1".into()));
        let result = accept_with_defaults(&p, BTreeMap::new());
        assert_eq!(
            serde_json::to_value(&result).unwrap(),
            json!({"action": "accept"})
        );
    }
}
