//! Tool arguments from the command line: `key=value` (typed by the tool's input schema),
//! `key:=JSON` (the value as JSON), or one JSON object.

use serde_json::{Map, Value};

/// Whether the arguments need the tool's input schema to be typed (some `key=value`).
pub fn needs_schema(args: &[String]) -> bool {
    !is_json_object(args) && args.iter().any(|a| split(a).is_some_and(|(_, raw)| !raw))
}

/// One argument that is a JSON object (`'{"a":1}'`).
fn is_json_object(args: &[String]) -> bool {
    matches!(args, [one] if one.trim_start().starts_with('{'))
}

/// `key=value` → `(key, value, false)`; `key:=json` → `(key, json, true)`.
fn split(arg: &str) -> Option<(&str, bool)> {
    let eq = arg.find('=')?;
    let raw = eq > 0 && arg.as_bytes().get(eq - 1) == Some(&b':');
    Some((arg, raw))
}

/// The arguments as a JSON object, `key=value` typed by `schema` (the tool's `inputSchema`,
/// when known).
pub fn tool_arguments(args: &[String], schema: Option<&Value>) -> Result<Value, String> {
    if is_json_object(args) {
        let v: Value = serde_json::from_str(&args[0])
            .map_err(|e| format!("the arguments are not valid JSON: {e}"))?;
        return match v {
            Value::Object(_) => Ok(v),
            _ => Err("the JSON arguments must be an object".into()),
        };
    }
    let mut out = Map::new();
    for arg in args {
        let (key, value) = parse_pair(arg, schema)?;
        if out.insert(key.clone(), value).is_some() {
            return Err(format!("argument {key:?} is given twice"));
        }
    }
    Ok(Value::Object(out))
}

/// Prompt arguments (always strings): `key=value` pairs, or one JSON object whose values are
/// strings (others are written as JSON).
pub fn prompt_arguments(
    args: &[String],
) -> Result<std::collections::BTreeMap<String, String>, String> {
    let mut out = std::collections::BTreeMap::new();
    if is_json_object(args) {
        let Value::Object(map) = serde_json::from_str(&args[0])
            .map_err(|e| format!("the arguments are not valid JSON: {e}"))?
        else {
            return Err("the JSON arguments must be an object".into());
        };
        for (k, v) in map {
            let v = match v {
                Value::String(s) => s,
                other => other.to_string(),
            };
            out.insert(k, v);
        }
        return Ok(out);
    }
    for arg in args {
        let Some((key, value)) = arg.split_once('=') else {
            return Err(format!("argument {arg:?} is not key=value"));
        };
        if key.is_empty() {
            return Err(format!("argument {arg:?} has no name before `=`"));
        }
        if out.insert(key.to_owned(), value.to_owned()).is_some() {
            return Err(format!("argument {key:?} is given twice"));
        }
    }
    Ok(out)
}

/// One `key=value` or `key:=json`.
fn parse_pair(arg: &str, schema: Option<&Value>) -> Result<(String, Value), String> {
    let Some((key, value)) = arg.split_once('=') else {
        return Err(format!(
            "argument {arg:?} is not key=value, key:=JSON or a JSON object"
        ));
    };
    if let Some(key) = key.strip_suffix(':') {
        if key.is_empty() {
            return Err(format!("argument {arg:?} has no name before `:=`"));
        }
        let v = serde_json::from_str(value)
            .map_err(|e| format!("argument {key}: {value:?} is not valid JSON: {e}"))?;
        return Ok((key.to_owned(), v));
    }
    if key.is_empty() {
        return Err(format!("argument {arg:?} has no name before `=`"));
    }
    let types = schema
        .and_then(|s| s.get("properties"))
        .and_then(|p| p.get(key))
        .map(property_types)
        .unwrap_or_default();
    Ok((key.to_owned(), typed(key, value, &types)?))
}

/// The JSON types a property schema allows (`type` as a string or a list, or the `type`s of
/// its `anyOf`/`oneOf` branches); empty when it says none.
fn property_types(schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    match schema.get("type") {
        Some(Value::String(t)) => out.push(t.clone()),
        Some(Value::Array(ts)) => out.extend(ts.iter().filter_map(Value::as_str).map(String::from)),
        _ => {}
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = schema.get(key) {
            for b in branches {
                out.extend(property_types(b));
            }
        }
    }
    if out.is_empty() {
        // An `enum` or `const` of non-strings still says what the value is.
        let values = match (schema.get("enum"), schema.get("const")) {
            (Some(Value::Array(values)), _) => values.clone(),
            (_, Some(c)) => vec![c.clone()],
            _ => Vec::new(),
        };
        for v in values {
            let t = match v {
                Value::Bool(_) => "boolean",
                Value::Number(_) => "number",
                Value::Null => "null",
                Value::String(_) => "string",
                Value::Array(_) => "array",
                Value::Object(_) => "object",
            };
            out.push(t.to_owned());
        }
    }
    out
}

/// `value` as the first of `types` it parses as; a string when the schema allows strings or
/// says nothing; an error naming the expected type otherwise.
fn typed(key: &str, value: &str, types: &[String]) -> Result<Value, String> {
    if types.is_empty() || types.iter().any(|t| t == "string") {
        // A string is what was typed; only a schema that rules strings out changes it.
        if !types.iter().any(|t| t != "string") {
            return Ok(Value::String(value.to_owned()));
        }
    }
    for t in types {
        let parsed = match t.as_str() {
            "integer" => value
                .parse::<i64>()
                .ok()
                .map(Value::from)
                .or_else(|| value.parse::<u64>().ok().map(Value::from)),
            "number" => match value.parse::<i64>() {
                Ok(i) => Some(Value::from(i)),
                Err(_) => value
                    .parse::<f64>()
                    .ok()
                    .filter(|f| f.is_finite())
                    .and_then(|f| serde_json::Number::from_f64(f).map(Value::Number)),
            },
            "boolean" => match value {
                "true" => Some(Value::Bool(true)),
                "false" => Some(Value::Bool(false)),
                _ => None,
            },
            "null" => (value == "null").then_some(Value::Null),
            "array" | "object" => serde_json::from_str::<Value>(value)
                .ok()
                .filter(|v| v.is_array() == (t == "array") && (v.is_array() || v.is_object())),
            _ => None,
        };
        if let Some(v) = parsed {
            return Ok(v);
        }
    }
    if types.iter().any(|t| t == "string") {
        return Ok(Value::String(value.to_owned()));
    }
    Err(format!(
        "argument {key}: {value:?} is not {} (use {key}:=JSON to send a JSON value as is)",
        types
            .iter()
            .map(|t| match t.as_str() {
                "integer" => "an integer",
                "number" => "a number",
                "boolean" => "a boolean (true or false)",
                "null" => "null",
                "array" => "a JSON array",
                "object" => "a JSON object",
                other => other,
            })
            .collect::<Vec<_>>()
            .join(" or ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn values_are_typed_by_the_schema() {
        let schema = json!({"type": "object", "properties": {
            "n": {"type": "integer"}, "x": {"type": "number"}, "b": {"type": "boolean"},
            "s": {"type": "string"}, "l": {"type": "array"}, "o": {"type": "object"},
            "maybe": {"type": ["integer", "null"]}, "either": {"anyOf": [{"type": "boolean"}, {"type": "string"}]},
            "e": {"enum": [1, 2, 3]}
        }});
        let got = tool_arguments(
            &args(&[
                "n=42",
                "x=1.5",
                "b=true",
                "s=42",
                "l=[1,2]",
                "o={\"k\":1}",
                "maybe=null",
                "either=yes",
                "e=2",
                "free=7",
                "raw:=[true]",
            ]),
            Some(&schema),
        )
        .unwrap();
        assert_eq!(
            got,
            json!({"n": 42, "x": 1.5, "b": true, "s": "42", "l": [1, 2], "o": {"k": 1},
                   "maybe": null, "either": "yes", "e": 2, "free": "7", "raw": [true]})
        );
        let e = tool_arguments(&args(&["n=4.5"]), Some(&schema)).unwrap_err();
        assert!(e.contains("argument n: \"4.5\" is not an integer"), "{e}");
        let e = tool_arguments(&args(&["b=maybe"]), Some(&schema)).unwrap_err();
        assert!(e.contains("a boolean (true or false)"), "{e}");
        assert_eq!(
            tool_arguments(&args(&["either=true"]), Some(&schema)).unwrap(),
            json!({"either": true})
        );
    }

    #[test]
    fn json_objects_and_bad_arguments() {
        assert_eq!(
            tool_arguments(&args(&[r#"{"a": [1]}"#]), None).unwrap(),
            json!({"a": [1]})
        );
        assert!(tool_arguments(&args(&["{nope"]), None).is_err());
        assert!(tool_arguments(&args(&["plain"]), None).is_err());
        assert!(tool_arguments(&args(&["=v"]), None).is_err());
        assert!(tool_arguments(&args(&["a=1", "a=2"]), None).is_err());
        assert!(tool_arguments(&args(&["a:=nojson"]), None).is_err());
        assert_eq!(tool_arguments(&[], None).unwrap(), json!({}));
        assert!(needs_schema(&args(&["a=1"])));
        assert!(!needs_schema(&args(&["a:=1"])));
        assert!(!needs_schema(&args(&["{\"a\":1}"])));
    }

    #[test]
    fn prompt_arguments_are_strings() {
        let got = prompt_arguments(&args(&["a=1", "b=x=y"])).unwrap();
        assert_eq!(got["a"], "1");
        assert_eq!(got["b"], "x=y");
        let got = prompt_arguments(&args(&[r#"{"a": 1, "b": "s"}"#])).unwrap();
        assert_eq!(got["a"], "1");
        assert_eq!(got["b"], "s");
        assert!(prompt_arguments(&args(&["nokey"])).is_err());
    }
}
