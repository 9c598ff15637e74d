//! API keys: list (playground keys hidden), create (the secret shown once),
//! rotate (same name, old key revoked) and revoke. Owners and admins only.

use super::view::{button_form, csrf, secret_once, time, time_or};
use super::{page, CsrfToken, Ctx, FormData, Page, PageResult};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::Extension;
use maud::{html, Markup};
use webdata_core::store::{now_ms, ApiKey, KeyKind, NewKey, Role};

async fn render(
    app: &AppState,
    ctx: &Ctx,
    token: &CsrfToken,
    headers: &HeaderMap,
    created: Option<(&NewKey, &str)>,
) -> PageResult {
    let keys = app.store.list_keys(&ctx.org.id, false).await?;
    let now = now_ms();
    let body = html! {
        @if let Some((k, what)) = created {
            (secret_once("new-key", "New API key", &k.secret, &format!("This is the only time the key \"{}\" is shown ({what}); only its hash is stored. Lost keys must be rotated.", k.key.name)))
        }
        section aria-labelledby="create-h" {
            h2 id="create-h" { "Create a key" }
            form method="post" action="/dashboard/keys" class="row" {
                (csrf(&token.0))
                label for="key-name" { "Name" }
                input id="key-name" name="name" required maxlength="100" placeholder="production";
                button type="submit" { "Create key" }
            }
        }
        section aria-labelledby="list-h" {
            h2 id="list-h" { "Keys" }
            @if keys.is_empty() { p.muted { "No keys yet." } } @else {
                div.scroll { table {
                    thead { tr { th { "Name" } th { "Prefix" } th { "Created" } th { "Created by" } th { "Last used" } th { "Status" } th { span.sr { "Actions" } } } }
                    tbody { @for k in &keys { (row(k, now, &token.0)) } }
                } }
            }
        }
    };
    Ok(page(app, ctx, token, headers, "keys", "API keys", body))
}

fn row(k: &ApiKey, now: i64, token: &str) -> Markup {
    let active = k.is_active(now);
    html! {
        tr data-key=(k.id) {
            td { (k.name) }
            td { code { (k.prefix) "…" } }
            td { (time(k.created_at)) }
            td { @match &k.created_by { Some(c) => (c), None => span.muted { "admin API / CLI" } } }
            td { (time_or(k.last_used_at, "never")) }
            td { @if active { span.ok { "active" } } @else { span.muted { "revoked" } } }
            td.actions {
                @if active {
                    (button_form(&format!("/dashboard/keys/{}/rotate", k.id), token, "Rotate", "secondary", Some("Rotate this key? The old key stops working now.")))
                    (button_form(&format!("/dashboard/keys/{}/revoke", k.id), token, "Revoke", "danger", Some("Revoke this key? Requests with it will get 401.")))
                }
            }
        }
    }
}

/// `GET /dashboard/keys`
pub async fn list(
    State(app): State<AppState>,
    Extension(ctx): Extension<Ctx>,
    Extension(token): Extension<CsrfToken>,
    headers: HeaderMap,
) -> PageResult {
    ctx.require(Role::Admin)?;
    render(&app, &ctx, &token, &headers, None).await
}

/// `POST /dashboard/keys`
pub async fn create(
    State(app): State<AppState>,
    Extension(ctx): Extension<Ctx>,
    Extension(token): Extension<CsrfToken>,
    Extension(form): Extension<FormData>,
    headers: HeaderMap,
) -> PageResult {
    ctx.require(Role::Admin)?;
    let name = form.text("name");
    if name.is_empty() || name.chars().count() > 100 {
        return Err(Page::error(
            StatusCode::BAD_REQUEST,
            "Not possible",
            "A key needs a name of 1 to 100 characters.",
        ));
    }
    let k = ctx.audited(app.store.create_key(&ctx.org.id, name)).await?;
    render(&app, &ctx, &token, &headers, Some((&k, "created"))).await
}

/// A standard key of the person's organization, or 404.
async fn own_key(app: &AppState, ctx: &Ctx, id: &str) -> Result<ApiKey, Page> {
    match app.store.get_key(id).await {
        Ok(k) if k.org_id == ctx.org.id && k.kind == KeyKind::Standard => Ok(k),
        Ok(_) | Err(webdata_core::store::StoreError::NotFound(_)) => {
            Err(Page::not_found("That key"))
        }
        Err(e) => Err(e.into()),
    }
}

/// `POST /dashboard/keys/{id}/rotate`
pub async fn rotate(
    State(app): State<AppState>,
    Extension(ctx): Extension<Ctx>,
    Extension(token): Extension<CsrfToken>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> PageResult {
    ctx.require(Role::Admin)?;
    own_key(&app, &ctx, &id).await?;
    let k = ctx.audited(app.store.rotate_key(&id)).await?;
    render(
        &app,
        &ctx,
        &token,
        &headers,
        Some((&k, "rotated; the old key is revoked")),
    )
    .await
}

/// `POST /dashboard/keys/{id}/revoke`
pub async fn revoke(
    State(app): State<AppState>,
    Extension(ctx): Extension<Ctx>,
    Path(id): Path<String>,
) -> PageResult {
    ctx.require(Role::Admin)?;
    let k = own_key(&app, &ctx, &id).await?;
    ctx.audited(app.store.revoke_key(&id)).await?;
    Ok(Page::see_other("/dashboard/keys").flash(
        &format!("Key \"{}\" revoked.", k.name),
        app.config.cookie_secure,
    ))
}
