//! Mail the dashboard sends (password-reset links): through SMTP when
//! `WEBDATA_SMTP_URL` is set (`smtp://host:port`, `smtps://…`, with
//! `user:pass@` when the relay wants a login), otherwise to the log.

use crate::state::AppState;
use lettre::message::header::ContentType;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

/// Sends `body` to `to`, or logs it when no SMTP server is configured.
/// Failures are logged, never shown (the reset page says the same either way).
pub async fn send(app: &AppState, to: &str, subject: &str, body: &str) {
    let Some(url) = app.config.smtp_url.as_deref() else {
        tracing::warn!(
            to,
            subject,
            "no WEBDATA_SMTP_URL: this mail was not sent; its text:\n{body}"
        );
        return;
    };
    let message = match (app.config.smtp_from.parse(), to.parse()) {
        (Ok(from), Ok(to_addr)) => Message::builder()
            .from(from)
            .to(to_addr)
            .subject(subject)
            .header(ContentType::TEXT_PLAIN)
            .body(body.to_string()),
        _ => {
            tracing::error!(to, from = %app.config.smtp_from, "a mail address is not valid; mail not sent");
            return;
        }
    };
    let message = match message {
        Ok(m) => m,
        Err(e) => {
            tracing::error!(error = %e, "could not build the mail");
            return;
        }
    };
    let transport = match AsyncSmtpTransport::<Tokio1Executor>::from_url(url) {
        Ok(t) => t.timeout(Some(std::time::Duration::from_secs(10))).build(),
        Err(e) => {
            tracing::error!(error = %e, "WEBDATA_SMTP_URL is not a valid SMTP URL");
            return;
        }
    };
    match transport.send(message).await {
        Ok(_) => tracing::info!(to, subject, "mail sent"),
        Err(e) => tracing::error!(error = %e, to, "sending mail failed"),
    }
}
