//! Webhooks: the organization's signing secret (revealed on request,
//! rotated with an overlap during which deliveries carry two `v1` values),
//! endpoints with their own secrets (add, test event, disable, delete),
//! recent deliveries and dead letters with re-drive. Owners and admins.

use super::view::{button_form, csrf, secret_once, time, time_or};
use super::{page, CsrfToken, Ctx, FormData, Page, PageResult};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::Extension;
use maud::{html, Markup};
use webdata_core::store::{DeliveryState, Role, WebhookEndpoint};

async fn render(
    app: &AppState,
    ctx: &Ctx,
    token: &CsrfToken,
    headers: &HeaderMap,
    shown: Option<Markup>,
) -> PageResult {
    let endpoints = app.store.webhook_endpoints(&ctx.org.id).await?;
    let recent = app.store.deliveries(&ctx.org.id, None, 50).await?;
    let dead = app
        .store
        .deliveries(&ctx.org.id, Some(DeliveryState::Dead), 100)
        .await?;
    let t = &token.0;
    let body = html! {
        @if let Some(s) = shown { (s) }
        section aria-labelledby="secret-h" {
            h2 id="secret-h" { "Signing secret" }
            p { "Crawl webhooks (the " code { "webhook" } " of a crawl request) are signed with this secret. Verify " code { "Service-Signature" } " as the API reference describes." }
            div.row {
                (button_form("/dashboard/webhooks/secret/reveal", t, "Reveal secret", "secondary", None))
                form method="post" action="/dashboard/webhooks/secret/rotate" class="inline" data-confirm="Rotate the signing secret? Deliveries carry both secrets during the overlap." {
                    (csrf(t))
                    label for="overlap" { "Overlap (hours)" }
                    input id="overlap" name="overlapHours" type="number" min="0" max="720" value="24";
                    button type="submit" class="secondary" { "Rotate secret" }
                }
            }
        }
        section aria-labelledby="ep-h" {
            h2 id="ep-h" { "Endpoints" }
            p { "Each endpoint receives every crawl event and the usage alerts, signed with its own secret." }
            form method="post" action="/dashboard/webhooks/endpoints" class="row" {
                (csrf(t))
                label for="ep-url" { "Endpoint URL" }
                input id="ep-url" name="url" type="url" required placeholder="https://example.com/hooks/webdata";
                button type="submit" { "Add endpoint" }
            }
            @if endpoints.is_empty() { p.muted { "No endpoints." } } @else {
                div.scroll { table {
                    thead { tr { th { "URL" } th { "Added" } th { "State" } th { span.sr { "Actions" } } } }
                    tbody { @for e in &endpoints { (endpoint_row(e, t)) } }
                } }
            }
        }
        section aria-labelledby="dead-h" {
            h2 id="dead-h" { "Dead letters" }
            @if dead.is_empty() { p.muted { "None: every event was delivered or is still being retried." } } @else {
                div.scroll { table id="dead-letters" {
                    thead { tr { th { "Event" } th { "URL" } th { "Attempts" } th { "Last answer" } th { "Created" } th { span.sr { "Actions" } } } }
                    tbody {
                        @for d in &dead {
                            tr {
                                td { code { (d.event_type) } br; span.muted { (d.event_id) } }
                                td { (d.url) }
                                td { (d.attempts) }
                                td { (last_answer(d)) }
                                td { (time(d.created_at)) }
                                td { (button_form(&format!("/dashboard/webhooks/deliveries/{}/redrive", d.id), t, "Re-drive", "secondary", None)) }
                            }
                        }
                    }
                } }
            }
        }
        section aria-labelledby="recent-h" {
            h2 id="recent-h" { "Recent deliveries" }
            @if recent.is_empty() { p.muted { "No deliveries yet." } } @else {
                div.scroll { table id="deliveries" {
                    thead { tr { th { "Event" } th { "URL" } th { "State" } th { "Attempts" } th { "Last answer" } th { "Next attempt" } } }
                    tbody {
                        @for d in &recent {
                            tr {
                                td { code { (d.event_type) } }
                                td { (d.url) }
                                td { span class={ "state " (d.state.as_str()) } { (d.state.as_str()) } }
                                td { (d.attempts) }
                                td { (last_answer(d)) }
                                td { @if d.state == DeliveryState::Pending { (time(d.next_attempt_at)) } }
                            }
                        }
                    }
                } }
            }
        }
    };
    Ok(page(app, ctx, token, headers, "webhooks", "Webhooks", body))
}

/// What the receiver last answered: the error when there is one (it
/// names the status), else the status.
fn last_answer(d: &webdata_core::store::Delivery) -> String {
    match (&d.last_error, d.last_status) {
        (Some(e), _) => e.clone(),
        (None, Some(s)) => format!("HTTP {s}"),
        (None, None) => String::new(),
    }
}

fn endpoint_row(e: &WebhookEndpoint, t: &str) -> Markup {
    let base = format!("/dashboard/webhooks/endpoints/{}", e.id);
    html! {
        tr {
            td { (e.url) }
            td { (time(e.created_at)) }
            td { @if e.disabled_at.is_some() { span.muted { "disabled " (time_or(e.disabled_at, "")) } } @else { span.ok { "enabled" } } }
            td.actions {
                (button_form(&format!("{base}/test"), t, "Send test event", "secondary", None))
                (button_form(&format!("{base}/secret"), t, "Reveal secret", "secondary", None))
                @if e.disabled_at.is_some() {
                    (button_form(&format!("{base}/enable"), t, "Enable", "secondary", None))
                } @else {
                    (button_form(&format!("{base}/disable"), t, "Disable", "secondary", None))
                }
                (button_form(&format!("{base}/delete"), t, "Delete", "danger", Some("Delete this endpoint? Its pending deliveries become dead letters.")))
            }
        }
    }
}

/// `GET /dashboard/webhooks`
pub async fn show(
    State(app): State<AppState>,
    Extension(ctx): Extension<Ctx>,
    Extension(token): Extension<CsrfToken>,
    headers: HeaderMap,
) -> PageResult {
    ctx.require(Role::Admin)?;
    render(&app, &ctx, &token, &headers, None).await
}

/// `POST /dashboard/webhooks/secret/reveal` (audited)
pub async fn reveal(
    State(app): State<AppState>,
    Extension(ctx): Extension<Ctx>,
    Extension(token): Extension<CsrfToken>,
    headers: HeaderMap,
) -> PageResult {
    ctx.require(Role::Admin)?;
    let secrets = app.store.signing_secrets(&ctx.org.id).await?;
    ctx.audited(
        app.store
            .audit(&ctx.org.id, None, "webhook_secret.revealed", ""),
    )
    .await?;
    let shown = html! {
        (secret_once("signing-secret", "Signing secret", &secrets[0], "Keep it on your server only."))
        @if secrets.len() > 1 {
            p.muted { "The previous secret still signs deliveries (a second " code { "v1" } ") until its overlap ends." }
        }
    };
    render(&app, &ctx, &token, &headers, Some(shown)).await
}

/// `POST /dashboard/webhooks/secret/rotate`
pub async fn rotate(
    State(app): State<AppState>,
    Extension(ctx): Extension<Ctx>,
    Extension(token): Extension<CsrfToken>,
    Extension(form): Extension<FormData>,
    headers: HeaderMap,
) -> PageResult {
    ctx.require(Role::Admin)?;
    let hours: i64 = form.text("overlapHours").parse().map_err(|_| {
        Page::error(
            StatusCode::BAD_REQUEST,
            "Not possible",
            "The overlap is a whole number of hours.",
        )
    })?;
    if !(0..=720).contains(&hours) {
        return Err(Page::error(
            StatusCode::BAD_REQUEST,
            "Not possible",
            "The overlap is 0 to 720 hours.",
        ));
    }
    let secret = ctx
        .audited(
            app.store
                .rotate_webhook_secret(&ctx.org.id, hours * 3_600_000),
        )
        .await?;
    let shown = html! {
        (secret_once("signing-secret", "New signing secret", &secret, &format!("For the next {hours} hours deliveries are signed with both the new and the old secret.")))
    };
    render(&app, &ctx, &token, &headers, Some(shown)).await
}

/// `POST /dashboard/webhooks/endpoints`: the URL passes the network guard.
pub async fn add(
    State(app): State<AppState>,
    Extension(ctx): Extension<Ctx>,
    Extension(token): Extension<CsrfToken>,
    Extension(form): Extension<FormData>,
    headers: HeaderMap,
) -> PageResult {
    ctx.require(Role::Admin)?;
    let url = form.text("url");
    if let Err(e) = webdata_core::validate::check_url("url", url) {
        return Err(Page::error(
            StatusCode::BAD_REQUEST,
            "Not possible",
            &crate::error::ApiError::from(e).message,
        ));
    }
    if let Err(e) = app.engine.check_url(url) {
        return Err(Page::error(
            StatusCode::BAD_REQUEST,
            "This URL is refused",
            &e.message,
        ));
    }
    let e = ctx
        .audited(app.store.create_webhook_endpoint(&ctx.org.id, url))
        .await?;
    let shown = secret_once(
        "endpoint-secret",
        "Endpoint secret",
        &e.secret,
        "Deliveries to this endpoint are signed with it; you can reveal it again here.",
    );
    render(&app, &ctx, &token, &headers, Some(shown)).await
}

async fn own_endpoint(app: &AppState, ctx: &Ctx, id: &str) -> Result<WebhookEndpoint, Page> {
    app.store
        .webhook_endpoints(&ctx.org.id)
        .await?
        .into_iter()
        .find(|e| e.id == id)
        .ok_or_else(|| Page::not_found("That endpoint"))
}

/// `POST /dashboard/webhooks/endpoints/{id}/{action}`: test, secret,
/// disable, enable, delete.
pub async fn endpoint_action(
    State(app): State<AppState>,
    Extension(ctx): Extension<Ctx>,
    Extension(token): Extension<CsrfToken>,
    Path((id, action)): Path<(String, String)>,
    headers: HeaderMap,
) -> PageResult {
    ctx.require(Role::Admin)?;
    let e = own_endpoint(&app, &ctx, &id).await?;
    let secure = app.config.cookie_secure;
    let back = "/dashboard/webhooks";
    match action.as_str() {
        "test" => {
            let ev = app.store.queue_test_event(&ctx.org.id, &e.id).await?;
            Ok(Page::see_other(back)
                .flash(&format!("Test event {ev} queued to {}.", e.url), secure))
        }
        "secret" => {
            ctx.audited(app.store.audit(
                &ctx.org.id,
                None,
                "webhook_endpoint.secret_revealed",
                &e.id,
            ))
            .await?;
            let shown = secret_once(
                "endpoint-secret",
                "Endpoint secret",
                &e.secret,
                &format!("The secret of {}.", e.url),
            );
            render(&app, &ctx, &token, &headers, Some(shown)).await
        }
        "disable" | "enable" => {
            ctx.audited(
                app.store
                    .set_endpoint_disabled(&ctx.org.id, &e.id, action == "disable"),
            )
            .await?;
            Ok(Page::see_other(back).flash(&format!("Endpoint {action}d."), secure))
        }
        "delete" => {
            ctx.audited(app.store.delete_webhook_endpoint(&ctx.org.id, &e.id))
                .await?;
            Ok(Page::see_other(back).flash("Endpoint deleted.", secure))
        }
        _ => Err(Page::not_found("That action")),
    }
}

/// `POST /dashboard/webhooks/deliveries/{id}/redrive`
pub async fn redrive(
    State(app): State<AppState>,
    Extension(ctx): Extension<Ctx>,
    Path(id): Path<String>,
) -> PageResult {
    ctx.require(Role::Admin)?;
    ctx.audited(app.store.redrive_delivery(&ctx.org.id, &id))
        .await?;
    ctx.audited(
        app.store
            .audit(&ctx.org.id, None, "webhook_delivery.redriven", &id),
    )
    .await?;
    Ok(Page::see_other("/dashboard/webhooks")
        .flash("Dead letter sent again.", app.config.cookie_secure))
}
