//! Extract: scraped pages, trimmed to a token budget, go to an
//! OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama,
//! llama.cpp) that is asked for JSON matching the caller's schema; the
//! answer is checked against that schema here.

use super::search::{provider_transport_error, ProviderError};
use serde::Serialize;
use serde_json::{json, Value};
use std::time::Duration;
use webdata_core::ErrorCode;

/// Largest `schema` accepted, serialised (it goes into every model call).
pub const SCHEMA_MAX_BYTES: usize = 64 * 1024;
/// Validation errors shown to the model (and logged) at most.
const ERRORS_SHOWN: usize = 20;

/// One chat message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Message {
    pub role: &'static str,
    pub content: String,
}

impl Message {
    fn new(role: &'static str, content: impl Into<String>) -> Self {
        Message {
            role,
            content: content.into(),
        }
    }
}

/// A chat-completions endpoint and the model to ask.
pub struct ChatModel {
    endpoint: String,
    model: String,
    key: Option<String>,
    client: reqwest::Client,
    /// Tokens of page content one extract may send.
    pub max_input_tokens: usize,
}

impl ChatModel {
    /// `base` is the API root (`https://api.openai.com/v1`,
    /// `http://localhost:11434/v1`); `/chat/completions` is appended.
    pub fn new(
        base: &str,
        model: &str,
        key: Option<String>,
        timeout: Duration,
        max_input_tokens: usize,
    ) -> anyhow::Result<Self> {
        let parsed = url::Url::parse(base.trim())
            .map_err(|e| anyhow::anyhow!("WEBDATA_LLM_BASE_URL is not a URL: {e}"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            anyhow::bail!("WEBDATA_LLM_BASE_URL must be an http or https URL");
        }
        if model.trim().is_empty() {
            anyhow::bail!("WEBDATA_LLM_MODEL is required with WEBDATA_LLM_BASE_URL");
        }
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .user_agent(concat!("webdata/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(ChatModel {
            endpoint: format!("{}/chat/completions", base.trim().trim_end_matches('/')),
            model: model.trim().to_string(),
            key: key.filter(|k| !k.is_empty()),
            client,
            max_input_tokens: max_input_tokens.max(500),
        })
    }

    /// The model's name, for logs.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// One completion at temperature 0; `json_object` asks for JSON mode.
    /// Returns the first choice's text.
    pub async fn complete(
        &self,
        messages: &[Message],
        json_object: bool,
    ) -> Result<String, ProviderError> {
        let mut body = json!({ "model": self.model, "messages": messages, "temperature": 0 });
        if json_object {
            body["response_format"] = json!({ "type": "json_object" });
        }
        let mut rb = self.client.post(&self.endpoint).json(&body);
        if let Some(k) = &self.key {
            rb = rb.bearer_auth(k);
        }
        let resp = rb
            .send()
            .await
            .map_err(|e| provider_transport_error("model endpoint", &e))?;
        let status = resp.status();
        if !status.is_success() {
            let text = resp.text().await.unwrap_or_default();
            let text: String = text.chars().take(300).collect();
            return Err(ProviderError {
                code: ErrorCode::FetchFailed,
                message: format!(
                    "the model endpoint answered HTTP {}: {text}",
                    status.as_u16()
                ),
            });
        }
        let v: Value = resp.json().await.map_err(|e| ProviderError {
            code: ErrorCode::FetchFailed,
            message: format!("the model endpoint's answer is not JSON: {e}"),
        })?;
        v["choices"][0]["message"]["content"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| ProviderError {
                code: ErrorCode::FetchFailed,
                message: "the model endpoint's answer has no `choices[0].message.content`".into(),
            })
    }
}

/// Compiles the caller's schema (checked against its meta-schema);
/// the message says what is wrong.
pub fn compile_schema(schema: &Value) -> Result<jsonschema::Validator, String> {
    let size = serde_json::to_vec(schema).map(|v| v.len()).unwrap_or(0);
    if size > SCHEMA_MAX_BYTES {
        return Err(format!(
            "it is {size} bytes; at most {SCHEMA_MAX_BYTES} are allowed"
        ));
    }
    // `offline`: no `$ref` is ever fetched (and the crate is built without
    // its HTTP and file resolvers).
    jsonschema::options()
        .offline()
        .build(schema)
        .map_err(|e| e.to_string())
}

/// Whether to ask for JSON mode (`response_format: json_object`), which
/// forces an object: only when the schema wants one (or there is none).
pub fn wants_object(schema: Option<&Value>) -> bool {
    match schema.and_then(|s| s.get("type")) {
        None => true,
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
        Some(_) => false,
    }
}

/// Shares `budget` tokens among pages of `tokens` each: equal shares,
/// with what short pages leave unused going to the longer ones.
pub fn share_budget(tokens: &[usize], budget: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..tokens.len()).collect();
    order.sort_by_key(|&i| tokens[i]);
    let mut out = vec![0; tokens.len()];
    let mut left = budget;
    for (n, &i) in order.iter().enumerate() {
        let share = left / (tokens.len() - n);
        out[i] = tokens[i].min(share);
        left -= out[i];
    }
    out
}

/// A page as the model sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageText {
    pub url: String,
    pub markdown: String,
    pub trimmed: bool,
}

/// Trims each page's markdown to its share of `budget` tokens.
pub fn trim_pages(pages: &[(String, String)], budget: usize) -> Vec<PageText> {
    let tokens: Vec<usize> = pages
        .iter()
        .map(|(_, md)| webdata_content::count_tokens(md))
        .collect();
    let shares = share_budget(&tokens, budget);
    pages
        .iter()
        .zip(shares)
        .map(|((url, md), share)| {
            let (text, trimmed) = webdata_content::truncate_to_tokens(md, share);
            PageText {
                url: url.clone(),
                markdown: text.to_string(),
                trimmed,
            }
        })
        .collect()
}

/// The first request: instructions (with the schema) and the pages.
pub fn first_messages(
    prompt: Option<&str>,
    schema: Option<&Value>,
    pages: &[PageText],
) -> Vec<Message> {
    let mut system = String::from(
        "You extract structured data from web pages for a program. Answer with one JSON value and nothing else: no prose, no code fences. Use only facts stated in the pages; use null (or leave out optional fields) for what they do not say.",
    );
    match schema {
        Some(s) => {
            system.push_str("\n\nThe JSON must match this JSON Schema:\n");
            system.push_str(&serde_json::to_string_pretty(s).unwrap_or_default());
        }
        None => system.push_str("\n\nAnswer with a JSON object."),
    }
    let task = prompt
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .unwrap_or("Extract the data the schema describes.");
    let mut user = format!("Task: {task}\n\nPages:\n");
    for p in pages {
        let note = if p.trimmed { " trimmed=\"true\"" } else { "" };
        user.push_str(&format!(
            "\n<page url=\"{}\"{note}>\n{}\n</page>\n",
            p.url, p.markdown
        ));
    }
    vec![Message::new("system", system), Message::new("user", user)]
}

/// The retry: the first exchange, then the validation errors.
pub fn retry_messages(first: &[Message], answer: &str, errors: &[String]) -> Vec<Message> {
    let mut m = first.to_vec();
    m.push(Message::new("assistant", answer));
    let list: String = errors.iter().map(|e| format!("\n- {e}")).collect();
    m.push(Message::new(
        "user",
        format!("Your answer does not match the schema:{list}\n\nAnswer again with corrected JSON only."),
    ));
    m
}

/// Reads the model's answer as JSON (a surrounding code fence is dropped)
/// and checks it against the schema; the errors name where and what.
pub fn check_answer(
    validator: Option<&jsonschema::Validator>,
    answer: &str,
) -> Result<Value, Vec<String>> {
    let text = strip_fence(answer);
    let value: Value = serde_json::from_str(text)
        .map_err(|e| vec![format!("the answer is not valid JSON: {e}")])?;
    let Some(v) = validator else {
        return Ok(value);
    };
    let errors: Vec<String> = v
        .iter_errors(&value)
        .take(ERRORS_SHOWN)
        .map(|e| {
            let at = e.instance_path().to_string();
            let at = if at.is_empty() { "/".to_string() } else { at };
            let msg: String = e.to_string().chars().take(300).collect();
            format!("at `{at}`: {msg}")
        })
        .collect();
    if errors.is_empty() {
        Ok(value)
    } else {
        Err(errors)
    }
}

fn strip_fence(s: &str) -> &str {
    let t = s.trim();
    let Some(rest) = t.strip_prefix("```") else {
        return t;
    };
    let rest = rest.strip_prefix("json").unwrap_or(rest);
    rest.strip_suffix("```").unwrap_or(rest).trim()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_is_shared_fairly() {
        assert_eq!(
            share_budget(&[100, 5000, 5000], 3000),
            vec![100, 1450, 1450]
        );
        assert_eq!(share_budget(&[10, 20], 3000), vec![10, 20]);
        assert_eq!(share_budget(&[], 3000), Vec::<usize>::new());
    }

    #[test]
    fn bad_schemas_are_refused_without_fetching() {
        assert!(compile_schema(&json!({"type": "object"})).is_ok());
        assert!(compile_schema(&json!({"type": "nonsense"})).is_err());
        assert!(compile_schema(&json!({"minimum": "ten"})).is_err());
        let remote = compile_schema(&json!({"$ref": "http://127.0.0.2:9/schema.json"}));
        assert!(remote.is_err());
    }

    #[test]
    fn answers_are_checked_against_the_schema() {
        let schema = json!({"type": "object", "required": ["price"], "properties": {"price": {"type": "number"}}});
        let v = compile_schema(&schema).unwrap();
        assert_eq!(
            check_answer(Some(&v), "```json\n{\"price\": 3}\n```"),
            Ok(json!({"price": 3}))
        );
        let errs = check_answer(Some(&v), "{\"price\": \"3\"}").unwrap_err();
        assert!(errs[0].starts_with("at `/price`"), "{errs:?}");
        let errs = check_answer(Some(&v), "{}").unwrap_err();
        assert!(errs[0].contains("price"), "{errs:?}");
        assert!(check_answer(Some(&v), "not json").unwrap_err()[0].contains("not valid JSON"));
        assert_eq!(check_answer(None, "[1]"), Ok(json!([1])));
    }

    #[test]
    fn json_mode_only_for_objects() {
        assert!(wants_object(None));
        assert!(wants_object(Some(&json!({"type": "object"}))));
        assert!(!wants_object(Some(&json!({"type": "array"}))));
    }

    #[test]
    fn the_retry_shows_the_errors() {
        let first = first_messages(Some("prices"), None, &[]);
        let m = retry_messages(&first, "{}", &["at `/`: bad".into()]);
        assert_eq!(m.len(), 4);
        assert_eq!(m[2].role, "assistant");
        assert!(m[3].content.contains("at `/`: bad"));
    }
}
