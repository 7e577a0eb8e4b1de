//! JSON as Python's `json.dump` writes it, and typed reads of its fields.
//!
//! Python writes the bare tokens `NaN`, `Infinity` and `-Infinity` for non-finite
//! floats; strict JSON (and `serde_json`) has no such tokens. [`parse_all`] rewrites each
//! one found outside a string into the string `"NaN"`, `"Infinity"` or `"-Infinity"`,
//! and the readers below take those strings back as the floats they stand for, so a
//! file whose unused `std_ttft_ms` is NaN still imports, while a NaN in a field the
//! point needs is named in the error.

use super::ImportError;
use serde_json::Value;

/// Rewrites Python's bare non-finite tokens outside strings into JSON strings.
fn sanitize(text: &str) -> std::borrow::Cow<'_, str> {
    let b = text.as_bytes();
    if !b.iter().any(|&c| c == b'N' || c == b'I') {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let (mut in_str, mut escaped) = (false, false);
    let mut copied = 0;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if in_str {
            if escaped {
                escaped = false;
            } else if c == b'\\' {
                escaped = true;
            } else if c == b'"' {
                in_str = false;
            }
            i += 1;
            continue;
        }
        if c == b'"' {
            in_str = true;
            i += 1;
            continue;
        }
        let token = ["-Infinity", "Infinity", "NaN"]
            .into_iter()
            .find(|t| b[i..].starts_with(t.as_bytes()));
        if let Some(t) = token {
            // Every cut is at an ASCII byte, so each slice is on a char boundary.
            out.push_str(&text[copied..i]);
            out.push('"');
            out.push_str(t);
            out.push('"');
            i += t.len();
            copied = i;
        } else {
            i += 1;
        }
    }
    out.push_str(&text[copied..]);
    std::borrow::Cow::Owned(out)
}

/// Parses one or more JSON values written back to back (`--append-result` writes one
/// object per line), at most `max` of them.
pub(super) fn parse_all(file: &str, text: &str, max: usize) -> Result<Vec<Value>, ImportError> {
    let clean = sanitize(text);
    let mut out = Vec::new();
    for v in serde_json::Deserializer::from_str(&clean).into_iter::<Value>() {
        match v {
            Ok(v) => {
                if out.len() >= max {
                    return Err(whole(
                        file,
                        format!("holds more than {max} results; split it into several files"),
                    ));
                }
                out.push(v);
            }
            Err(e) => return Err(json_error(file, &e)),
        }
    }
    if out.is_empty() {
        return Err(whole(file, "is empty".into()));
    }
    Ok(out)
}

fn json_error(file: &str, e: &serde_json::Error) -> ImportError {
    let at = format!("line {}, column {}", e.line(), e.column());
    let text = e.to_string();
    let message = if e.is_eof() {
        format!("the JSON is cut short at {at} (truncated file?)")
    } else if text.contains("recursion limit") {
        format!("the JSON is nested too deeply at {at}; a benchmark result is not")
    } else {
        format!("is not valid JSON ({text})")
    };
    whole(file, message)
}

/// An error about the file as a whole.
pub(super) fn whole(file: &str, message: String) -> ImportError {
    ImportError {
        file: file.to_string(),
        field: String::new(),
        message,
    }
}

/// An error about one field.
pub(super) fn bad(file: &str, field: &str, message: String) -> ImportError {
    ImportError {
        file: file.to_string(),
        field: field.to_string(),
        message,
    }
}

/// The value at a path of object keys.
pub(super) fn at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    let mut cur = v;
    for k in path {
        cur = cur.as_object()?.get(*k)?;
    }
    if cur.is_null() {
        None
    } else {
        Some(cur)
    }
}

/// A JSON type's name, for error messages.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "true/false",
        Value::Number(_) => "a number",
        Value::String(_) => "text",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// A number, or one of the non-finite spellings Python and vLLM write.
pub(super) fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "nan" => Some(f64::NAN),
            "inf" | "infinity" | "+inf" => Some(f64::INFINITY),
            "-inf" | "-infinity" => Some(f64::NEG_INFINITY),
            _ => None,
        },
        _ => None,
    }
}

/// An optional number field, any value (NaN and infinities included).
pub(super) fn opt_any(
    file: &str,
    field: &str,
    v: Option<&Value>,
) -> Result<Option<f64>, ImportError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(x) => number(x)
            .map(Some)
            .ok_or_else(|| bad(file, field, format!("must be a number, got {}", kind(x)))),
    }
}

/// An optional finite, non-negative number; `unit` is the file's unit, for messages.
pub(super) fn opt_nonneg(
    file: &str,
    field: &str,
    v: Option<&Value>,
    unit: &str,
) -> Result<Option<f64>, ImportError> {
    match opt_any(file, field, v)? {
        None => Ok(None),
        Some(x) => check_nonneg(file, field, x, unit).map(Some),
    }
}

/// `x` when finite and non-negative, else an error naming the field.
pub(super) fn check_nonneg(
    file: &str,
    field: &str,
    x: f64,
    unit: &str,
) -> Result<f64, ImportError> {
    let unit = if unit.is_empty() {
        String::new()
    } else {
        format!(" {unit}")
    };
    if x.is_nan() {
        Err(bad(
            file,
            field,
            "is NaN (not a number); the benchmark did not measure it".into(),
        ))
    } else if x.is_infinite() {
        Err(bad(
            file,
            field,
            format!("is infinite; expected a finite value{unit}"),
        ))
    } else if x < 0.0 {
        Err(bad(
            file,
            field,
            format!("is negative ({x}{unit}); it must be 0 or more"),
        ))
    } else {
        Ok(x)
    }
}

/// A required finite, non-negative number.
pub(super) fn req_nonneg(
    file: &str,
    field: &str,
    v: Option<&Value>,
    unit: &str,
) -> Result<f64, ImportError> {
    opt_nonneg(file, field, v, unit)?.ok_or_else(|| missing(file, field))
}

/// An optional whole count in `0..=u32::MAX`.
pub(super) fn opt_count(
    file: &str,
    field: &str,
    v: Option<&Value>,
) -> Result<Option<u32>, ImportError> {
    match opt_nonneg(file, field, v, "")? {
        None => Ok(None),
        Some(x) => count_of(file, field, x).map(Some),
    }
}

/// `x` as a whole count, else an error naming the field.
pub(super) fn count_of(file: &str, field: &str, x: f64) -> Result<u32, ImportError> {
    if x.fract() != 0.0 || x > f64::from(u32::MAX) {
        Err(bad(
            file,
            field,
            format!("must be a whole number up to {}, got {x}", u32::MAX),
        ))
    } else {
        Ok(x as u32)
    }
}

/// A required whole count.
pub(super) fn req_count(file: &str, field: &str, v: Option<&Value>) -> Result<u32, ImportError> {
    opt_count(file, field, v)?.ok_or_else(|| missing(file, field))
}

/// A non-empty text field, trimmed.
pub(super) fn opt_text(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.chars().take(crate::plan::MAX_LABEL_CHARS).collect())
}

/// The error for a required field that is absent (or null).
pub(super) fn missing(file: &str, field: &str) -> ImportError {
    bad(file, field, "is missing; this field is required".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_tokens_outside_strings_become_strings() {
        let text = r#"{"a": NaN, "b": [Infinity, -Infinity], "c": "NaN Infinity \" NaN", "d": 1}"#;
        let v = parse_all("f", text, 4).expect("parses");
        assert!(number(&v[0]["a"]).expect("nan").is_nan());
        assert_eq!(number(&v[0]["b"][0]), Some(f64::INFINITY));
        assert_eq!(number(&v[0]["b"][1]), Some(f64::NEG_INFINITY));
        assert_eq!(v[0]["c"], Value::String("NaN Infinity \" NaN".into()));
        assert_eq!(v[0]["d"], Value::from(1));
    }

    #[test]
    fn several_values_back_to_back_and_limits() {
        assert_eq!(
            parse_all("f", "{\"a\":1}\n{\"a\":2}\n", 2)
                .expect("ok")
                .len(),
            2
        );
        let e = parse_all("f", "{}\n{}\n{}", 2).unwrap_err();
        assert!(e.message.contains("more than 2"), "{e}");
        let e = parse_all("f", "{\"a\": [1, 2", 2).unwrap_err();
        assert!(e.message.contains("cut short"), "{e}");
        let deep = "[".repeat(10_000);
        let e = parse_all("f", &deep, 2).unwrap_err();
        assert!(e.message.contains("nested too deeply"), "{e}");
    }
}
