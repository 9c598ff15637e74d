//! Page actions (wait, click, scroll, type, press), run in order after load.

use std::time::Duration;

use fantoccini::actions::{InputSource, KeyAction, KeyActions};
use fantoccini::elements::Element;
use fantoccini::error::{CmdError, ErrorStatus};
use fantoccini::{Client, Locator};
use serde_json::json;
use tokio::time::Instant;
use webdata_core::types::{Action, ActionType};

use super::failure::{is_fatal, Failure, FINISH_MARGIN};
use super::RenderError;

/// How long click, type, scroll and press look for their element.
const FIND_GRACE: Duration = Duration::from_secs(2);
/// Pause between looks for a selector.
const POLL: Duration = Duration::from_millis(50);

/// Scrolls one viewport (or the element) up or down, then lets a frame pass
/// so scroll handlers and intersection observers run.
const SCROLL_JS: &str = r#"
const [el, dir, done] = arguments;
if (el) {
  const style = getComputedStyle(el);
  const scrollable = el.scrollHeight > el.clientHeight + 1 && !["visible", "clip"].includes(style.overflowY);
  if (scrollable) el.scrollBy(0, dir * el.clientHeight);
  else el.scrollIntoView({ block: dir > 0 ? "start" : "end" });
} else {
  window.scrollBy(0, dir * window.innerHeight);
}
requestAnimationFrame(() => setTimeout(done, 50));
"#;

/// Runs `actions` in order; the first failure stops the render.
pub(crate) async fn run(
    client: &Client,
    actions: &[Action],
    deadline: Instant,
) -> Result<(), Failure> {
    // Keep time to read the page after the last action.
    let latest = deadline.checked_sub(FINISH_MARGIN).unwrap_or(deadline);
    for (index, action) in actions.iter().enumerate() {
        run_one(client, action, latest)
            .await
            .map_err(|e| e.into_failure(index))?;
    }
    Ok(())
}

/// Why one action failed.
enum ActionError {
    /// A problem with the page or the request (message names the selector).
    Page(String),
    /// The session broke underneath.
    Fatal(RenderError),
}

impl ActionError {
    fn into_failure(self, index: usize) -> Failure {
        match self {
            Self::Page(message) => Failure::page(RenderError::ActionFailed { index, message }),
            Self::Fatal(error) => Failure {
                error,
                session_ok: false,
            },
        }
    }

    fn from_cmd(what: String) -> impl Fn(CmdError) -> Self {
        move |e| {
            if is_fatal(&e) {
                Self::Fatal(RenderError::Browser(format!("{what}: {e}")))
            } else {
                Self::Page(format!("{what}: {e}"))
            }
        }
    }
}

async fn run_one(client: &Client, action: &Action, latest: Instant) -> Result<(), ActionError> {
    let selector = action.selector.as_deref().filter(|s| !s.trim().is_empty());
    match action.kind {
        ActionType::Wait => match (selector, action.ms) {
            (Some(sel), ms) => {
                // With both, `ms` caps how long the selector is awaited.
                let until = match ms.and_then(|ms| u64::try_from(ms).ok()) {
                    Some(ms) => (Instant::now() + Duration::from_millis(ms)).min(latest),
                    None => latest,
                };
                find(client, sel, until).await.map_err(|e| match e {
                    ActionError::Page(_) => ActionError::Page(format!(
                        "wait: selector {sel:?} did not appear before the timeout"
                    )),
                    fatal => fatal,
                })?;
                Ok(())
            }
            (None, Some(ms)) => {
                let ms = u64::try_from(ms).unwrap_or(0);
                tokio::time::sleep_until((Instant::now() + Duration::from_millis(ms)).min(latest))
                    .await;
                Ok(())
            }
            (None, None) => Err(ActionError::Page("wait needs ms or a selector".into())),
        },
        ActionType::Click => {
            let sel = selector.ok_or_else(|| ActionError::Page("click needs a selector".into()))?;
            let element = find_soon(client, sel, "click", latest).await?;
            click(client, &element, sel).await
        }
        ActionType::Scroll => {
            let down = !action
                .text
                .as_deref()
                .is_some_and(|t| t.trim().eq_ignore_ascii_case("up"));
            let dir = if down { 1 } else { -1 };
            let target = match selector {
                Some(sel) => {
                    let el = find_soon(client, sel, "scroll", latest).await?;
                    serde_json::to_value(&el).map_err(|e| ActionError::Page(e.to_string()))?
                }
                None => serde_json::Value::Null,
            };
            let what = match selector {
                Some(sel) => format!("scroll {sel:?}"),
                None => "scroll".to_owned(),
            };
            client
                .execute_async(SCROLL_JS, vec![target, json!(dir)])
                .await
                .map(|_| ())
                .map_err(ActionError::from_cmd(what))
        }
        ActionType::Type => {
            let sel = selector.ok_or_else(|| ActionError::Page("type needs a selector".into()))?;
            let text = action.text.as_deref().unwrap_or("");
            let element = find_soon(client, sel, "type", latest).await?;
            focus(client, &element, sel).await?;
            element
                .send_keys(text)
                .await
                .map_err(ActionError::from_cmd(format!("type into {sel:?}")))
        }
        ActionType::Press => {
            let key = action.key.as_deref().unwrap_or("");
            let chord = parse_key(key).map_err(ActionError::Page)?;
            if let Some(sel) = selector {
                let element = find_soon(client, sel, "press", latest).await?;
                focus(client, &element, sel).await?;
            }
            let mut keys = KeyActions::new("keyboard".to_owned());
            for value in &chord {
                keys = keys.then(KeyAction::Down { value: *value });
            }
            for value in chord.iter().rev() {
                keys = keys.then(KeyAction::Up { value: *value });
            }
            client
                .perform_actions(keys)
                .await
                .map_err(ActionError::from_cmd(format!("press {key:?}")))?;
            client
                .release_actions()
                .await
                .map_err(ActionError::from_cmd(format!("press {key:?}")))
        }
    }
}

/// Looks for `selector` until `latest`; a missing element is a page problem.
async fn find(client: &Client, selector: &str, latest: Instant) -> Result<Element, ActionError> {
    loop {
        match client.find(Locator::Css(selector)).await {
            Ok(element) => return Ok(element),
            Err(e) if e.is_no_such_element() => {}
            Err(e) if e.is_invalid_selector() => {
                return Err(ActionError::Page(format!(
                    "{selector:?} is not a valid CSS selector"
                )))
            }
            Err(e) => return Err(ActionError::from_cmd(format!("finding {selector:?}"))(e)),
        }
        if Instant::now() + POLL >= latest {
            return Err(ActionError::Page(format!(
                "no element matches selector {selector:?}"
            )));
        }
        tokio::time::sleep(POLL).await;
    }
}

/// [`find`] with a short grace period for elements a script adds late.
async fn find_soon(
    client: &Client,
    selector: &str,
    verb: &str,
    latest: Instant,
) -> Result<Element, ActionError> {
    let until = (Instant::now() + FIND_GRACE).min(latest);
    find(client, selector, until).await.map_err(|e| match e {
        ActionError::Page(m) => ActionError::Page(format!("{verb}: {m}")),
        fatal => fatal,
    })
}

/// A real click, or a script click when something covers the element.
async fn click(client: &Client, element: &Element, selector: &str) -> Result<(), ActionError> {
    match element.click().await {
        Ok(()) => Ok(()),
        Err(CmdError::Standard(wd))
            if matches!(
                wd.error,
                ErrorStatus::ElementClickIntercepted | ErrorStatus::ElementNotInteractable
            ) =>
        {
            let el = serde_json::to_value(element).map_err(|e| ActionError::Page(e.to_string()))?;
            client
                .execute("arguments[0].click()", vec![el])
                .await
                .map(|_| ())
                .map_err(ActionError::from_cmd(format!("click {selector:?}")))
        }
        Err(e) => Err(ActionError::from_cmd(format!("click {selector:?}"))(e)),
    }
}

async fn focus(client: &Client, element: &Element, selector: &str) -> Result<(), ActionError> {
    let el = serde_json::to_value(element).map_err(|e| ActionError::Page(e.to_string()))?;
    client
        .execute("arguments[0].focus()", vec![el])
        .await
        .map(|_| ())
        .map_err(ActionError::from_cmd(format!("focus {selector:?}")))
}

/// WebDriver key codes for a key name (`Enter`, `ArrowDown`, `a`, `Control+a`).
pub(crate) fn parse_key(key: &str) -> Result<Vec<char>, String> {
    if key.chars().count() == 1 {
        return Ok(key.chars().collect());
    }
    let parts: Vec<&str> = if key.len() > 1 && key.contains('+') {
        key.split('+').collect()
    } else {
        vec![key]
    };
    parts
        .iter()
        .map(|part| {
            let mut chars = part.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => Ok(c),
                _ => named_key(part).ok_or_else(|| {
                    format!("press: unknown key {key:?} (use a name such as Enter, Tab, Escape, ArrowDown, or one character)")
                }),
            }
        })
        .collect()
}

fn named_key(name: &str) -> Option<char> {
    let lower = name.trim().to_ascii_lowercase();
    let code = match lower.as_str() {
        "enter" | "return" => 0xE007,
        "tab" => 0xE004,
        "escape" | "esc" => 0xE00C,
        "backspace" => 0xE003,
        "delete" | "del" => 0xE017,
        "space" | "spacebar" => 0xE00D,
        "arrowup" | "up" => 0xE013,
        "arrowdown" | "down" => 0xE015,
        "arrowleft" | "left" => 0xE012,
        "arrowright" | "right" => 0xE014,
        "home" => 0xE011,
        "end" => 0xE010,
        "pageup" => 0xE00E,
        "pagedown" => 0xE00F,
        "insert" => 0xE016,
        "shift" => 0xE008,
        "control" | "ctrl" => 0xE009,
        "alt" | "option" => 0xE00A,
        "meta" | "command" | "cmd" | "os" => 0xE03D,
        f if f.len() >= 2 && f.starts_with('f') => {
            let n: u32 = f[1..].parse().ok()?;
            if (1..=12).contains(&n) {
                0xE031 + n - 1
            } else {
                return None;
            }
        }
        _ => return None,
    };
    char::from_u32(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_names_map_to_webdriver_codes() {
        assert_eq!(parse_key("Enter").unwrap(), vec!['\u{E007}']);
        assert_eq!(parse_key("ArrowDown").unwrap(), vec!['\u{E015}']);
        assert_eq!(parse_key("escape").unwrap(), vec!['\u{E00C}']);
        assert_eq!(parse_key("F5").unwrap(), vec!['\u{E035}']);
        assert_eq!(parse_key("a").unwrap(), vec!['a']);
        assert_eq!(parse_key("+").unwrap(), vec!['+']);
        assert_eq!(parse_key("Control+a").unwrap(), vec!['\u{E009}', 'a']);
    }

    #[test]
    fn unknown_key_names_are_refused_with_the_name() {
        let err = parse_key("Hyper").unwrap_err();
        assert!(err.contains("\"Hyper\""), "{err}");
        assert!(parse_key("F13").is_err());
        assert!(parse_key("").is_err());
    }
}
