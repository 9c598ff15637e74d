//! Team (members, roles, invitations by link) and the organization's
//! settings (name, spend cap, alert threshold, transfer, delete). Owners
//! and admins manage members; only owners change the spend cap and the
//! alert threshold, transfer ownership or delete the organization.

use super::view::{button_form, csrf, secret_once, time};
use super::{base_url, page, CsrfToken, Ctx, FormData, Page, PageResult};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::Extension;
use maud::{html, Markup};
use webdata_core::store::{now_ms, OrgUpdate, Role};

fn bad(msg: &str) -> Page {
    Page::error(StatusCode::BAD_REQUEST, "Not possible", msg)
}

async fn render_team(
    app: &AppState,
    ctx: &Ctx,
    token: &CsrfToken,
    headers: &HeaderMap,
    shown: Option<Markup>,
) -> PageResult {
    let members = app.store.members(&ctx.org.id).await?;
    let invitations = if ctx.role.manages() {
        app.store.invitations(&ctx.org.id).await?
    } else {
        Vec::new()
    };
    let t = &token.0;
    let now = now_ms();
    let body = html! {
        @if let Some(s) = shown { (s) }
        h2 { "Members" }
        div.scroll { table id="members" {
            thead { tr { th { "E-mail" } th { "Role" } th { "Since" } @if ctx.role.manages() { th { span.sr { "Actions" } } } } }
            tbody {
                @for m in &members {
                    tr {
                        td { (m.email) @if m.user_id == ctx.user_id() { " " span.muted { "(you)" } } }
                        td { (m.role.as_str()) }
                        td { (time(m.since)) }
                        @if ctx.role.manages() {
                            td.actions {
                                @if m.role != Role::Owner && m.user_id != ctx.user_id() {
                                    form method="post" action={ "/dashboard/team/members/" (m.user_id) "/role" } class="inline" {
                                        (csrf(t))
                                        label.sr for={ "role-" (m.user_id) } { "Role of " (m.email) }
                                        select id={ "role-" (m.user_id) } name="role" {
                                            option value="member" selected[m.role == Role::Member] { "member" }
                                            option value="admin" selected[m.role == Role::Admin] { "admin" }
                                        }
                                        button type="submit" class="secondary" { "Change role" }
                                    }
                                    (button_form(&format!("/dashboard/team/members/{}/remove", m.user_id), t, "Remove", "danger", Some("Remove this person from the organization?")))
                                }
                            }
                        }
                    }
                }
            }
        } }
        @if ctx.role.manages() {
            h2 { "Invite someone" }
            form method="post" action="/dashboard/team/invitations" class="row" {
                (csrf(t))
                label for="inv-email" { "E-mail (optional)" }
                input id="inv-email" name="email" type="email";
                label for="inv-role" { "Role" }
                select id="inv-role" name="role" { option value="member" { "member" } option value="admin" { "admin" } }
                button type="submit" { "Create invitation link" }
            }
            h2 { "Invitations" }
            @if invitations.is_empty() { p.muted { "None." } } @else {
                div.scroll { table id="invitations" {
                    thead { tr { th { "For" } th { "Role" } th { "Created" } th { "State" } th { span.sr { "Actions" } } } }
                    tbody {
                        @for i in &invitations {
                            tr {
                                td { (i.email.clone().unwrap_or_else(|| "anyone with the link".into())) }
                                td { (i.role.as_str()) }
                                td { (time(i.created_at)) }
                                td { @if i.accepted_at.is_some() { "accepted" } @else if i.revoked_at.is_some() { "revoked" } @else if i.expires_at <= now { "expired" } @else { "open" } }
                                td { @if i.is_open(now) { (button_form(&format!("/dashboard/team/invitations/{}/revoke", i.id), t, "Revoke", "danger", None)) } }
                            }
                        }
                    }
                } }
            }
        }
    };
    Ok(page(app, ctx, token, headers, "team", "Team", body))
}

/// `GET /dashboard/team`
pub async fn team(
    State(app): State<AppState>,
    Extension(ctx): Extension<Ctx>,
    Extension(token): Extension<CsrfToken>,
    headers: HeaderMap,
) -> PageResult {
    render_team(&app, &ctx, &token, &headers, None).await
}

/// `POST /dashboard/team/invitations`: the link is shown once.
pub async fn invite(
    State(app): State<AppState>,
    Extension(ctx): Extension<Ctx>,
    Extension(token): Extension<CsrfToken>,
    Extension(form): Extension<FormData>,
    headers: HeaderMap,
) -> PageResult {
    ctx.require(Role::Admin)?;
    let role = match form.text("role") {
        "admin" => Role::Admin,
        "member" | "" => Role::Member,
        _ => {
            return Err(bad(
                "Invitations are for members or admins; ownership is transferred in Settings.",
            ))
        }
    };
    let email = form.get("email").filter(|e| !e.is_empty());
    let (inv, link) = app
        .store
        .create_invitation(&ctx.org.id, role, email, ctx.email())
        .await?;
    ctx.audited(app.store.audit(
        &ctx.org.id,
        None,
        "invitation.created",
        &format!(
            "{} as {}",
            inv.email.clone().unwrap_or_else(|| "link".into()),
            role.as_str()
        ),
    ))
    .await?;
    let url = format!("{}/dashboard/invite/{link}", base_url(&app, &ctx.host));
    let shown = secret_once(
        "invite-link",
        "Invitation link",
        &url,
        "Send this link to the person; it works once, for 7 days.",
    );
    render_team(&app, &ctx, &token, &headers, Some(shown)).await
}

/// `POST /dashboard/team/invitations/{id}/revoke`
pub async fn revoke_invite(
    State(app): State<AppState>,
    Extension(ctx): Extension<Ctx>,
    Path(id): Path<String>,
) -> PageResult {
    ctx.require(Role::Admin)?;
    app.store.revoke_invitation(&ctx.org.id, &id).await?;
    ctx.audited(
        app.store
            .audit(&ctx.org.id, None, "invitation.revoked", &id),
    )
    .await?;
    Ok(Page::see_other("/dashboard/team").flash("Invitation revoked.", app.config.cookie_secure))
}

/// `POST /dashboard/team/members/{user}/{action}`: role, remove.
pub async fn member_action(
    State(app): State<AppState>,
    Extension(ctx): Extension<Ctx>,
    Extension(form): Extension<FormData>,
    Path((user, action)): Path<(String, String)>,
) -> PageResult {
    ctx.require(Role::Admin)?;
    let Some(current) = app.store.role_in(&ctx.org.id, &user).await? else {
        return Err(Page::not_found("That member"));
    };
    if current == Role::Owner {
        return Err(Page::error(
            StatusCode::FORBIDDEN,
            "Not allowed",
            "The owner's role changes only by transferring ownership.",
        ));
    }
    if user == ctx.user_id() {
        return Err(bad("You cannot change your own role here."));
    }
    let email = app.store.get_user(&user).await?.email;
    match action.as_str() {
        "role" => {
            let role = match form.text("role") {
                "admin" => Role::Admin,
                "member" => Role::Member,
                _ => return Err(bad("The role is member or admin.")),
            };
            app.store.set_membership(&ctx.org.id, &user, role).await?;
            ctx.audited(app.store.audit(
                &ctx.org.id,
                None,
                "member.role_changed",
                &format!("{email} → {}", role.as_str()),
            ))
            .await?;
            Ok(Page::see_other("/dashboard/team").flash(
                &format!("{email} is now {}.", role.as_str()),
                app.config.cookie_secure,
            ))
        }
        "remove" => {
            app.store.remove_member(&ctx.org.id, &user).await?;
            ctx.audited(app.store.audit(&ctx.org.id, None, "member.removed", &email))
                .await?;
            Ok(Page::see_other("/dashboard/team")
                .flash(&format!("{email} removed."), app.config.cookie_secure))
        }
        _ => Err(Page::not_found("That action")),
    }
}

/// `GET /dashboard/settings`
pub async fn settings(
    State(app): State<AppState>,
    Extension(ctx): Extension<Ctx>,
    Extension(token): Extension<CsrfToken>,
    headers: HeaderMap,
) -> PageResult {
    let alerts = app.store.alert_settings(&ctx.org.id).await?;
    let members = app.store.members(&ctx.org.id).await?;
    let t = &token.0;
    let owner = ctx.role == Role::Owner;
    let body = html! {
        section aria-labelledby="org-h" {
            h2 id="org-h" { "Organization" }
            p { "Name: " strong { (ctx.org.name) } " · id " code { (ctx.org.id) } " · your role: " (ctx.role.as_str()) }
            @if ctx.role.manages() {
                form method="post" action="/dashboard/settings/name" class="row" {
                    (csrf(t))
                    label for="org-name" { "Rename" }
                    input id="org-name" name="name" required maxlength="100" value=(ctx.org.name);
                    button type="submit" class="secondary" { "Save name" }
                }
            }
        }
        section aria-labelledby="cap-h" {
            h2 id="cap-h" { "Spend cap" }
            p { "Credits the organization may spend per calendar month (UTC). Now: " strong id="cap-now" { @match ctx.org.spend_cap { Some(c) => (c), None => "none" } } "." }
            @if owner {
                form method="post" action="/dashboard/settings/spend-cap" class="row" {
                    (csrf(t))
                    label for="cap" { "Monthly cap (empty for none)" }
                    input id="cap" name="spendCap" type="number" min="0" value=(ctx.org.spend_cap.map(|c| c.to_string()).unwrap_or_default());
                    button type="submit" { "Save spend cap" }
                }
            } @else { p.muted { "Only the owner changes it." } }
        }
        section aria-labelledby="alert-h" {
            h2 id="alert-h" { "Usage alerts" }
            p { "Your endpoints receive " code { "usage.credits_low" } " when credits fall to the threshold (now " strong id="threshold-now" { (alerts.effective()) } ", "
                @if alerts.threshold.is_some() { "set by the owner" } @else { "10% of the last top-up of " (alerts.last_topup) }
                ") and " code { "usage.spend_cap_reached" } " when the cap stops a request; each once per crossing." }
            @if owner {
                form method="post" action="/dashboard/settings/alerts" class="row" {
                    (csrf(t))
                    label for="threshold" { "Low-credit threshold (empty: 10% of the last top-up)" }
                    input id="threshold" name="threshold" type="number" min="0" value=(alerts.threshold.map(|c| c.to_string()).unwrap_or_default());
                    button type="submit" { "Save threshold" }
                }
            }
        }
        @if owner {
            section aria-labelledby="transfer-h" {
                h2 id="transfer-h" { "Transfer ownership" }
                form method="post" action="/dashboard/settings/transfer" class="row" data-confirm="Transfer ownership? You become an admin." {
                    (csrf(t))
                    label for="new-owner" { "New owner" }
                    select id="new-owner" name="user" {
                        @for m in members.iter().filter(|m| m.user_id != ctx.user_id()) { option value=(m.user_id) { (m.email) } }
                    }
                    button type="submit" class="secondary" { "Transfer" }
                }
            }
            section aria-labelledby="delete-h" {
                h2 id="delete-h" { "Delete the organization" }
                p { "Keys stop working, running crawls are cancelled, members lose access. Type the organization's name to confirm." }
                form method="post" action="/dashboard/settings/delete" class="row" {
                    (csrf(t))
                    label for="confirm-name" { "Organization name" }
                    input id="confirm-name" name="confirm" required;
                    button type="submit" class="danger" { "Delete organization" }
                }
            }
        }
        section aria-labelledby="new-h" {
            h2 id="new-h" { "Another organization" }
            form method="post" action="/dashboard/orgs" class="row" {
                (csrf(t))
                label for="new-org" { "Name" }
                input id="new-org" name="name" required maxlength="100";
                button type="submit" class="secondary" { "Create organization" }
            }
        }
    };
    Ok(page(
        &app, &ctx, &token, &headers, "settings", "Settings", body,
    ))
}

fn number(s: &str, what: &str) -> Result<Option<i64>, Page> {
    if s.is_empty() {
        return Ok(None);
    }
    match s.parse::<i64>() {
        Ok(n) if n >= 0 => Ok(Some(n)),
        _ => Err(bad(&format!("{what} is a whole number, 0 or more."))),
    }
}

/// `POST /dashboard/settings/{action}`: name, spend-cap, alerts, transfer, delete.
pub async fn settings_action(
    State(app): State<AppState>,
    Extension(ctx): Extension<Ctx>,
    Extension(form): Extension<FormData>,
    Path(action): Path<String>,
) -> PageResult {
    let secure = app.config.cookie_secure;
    let back = "/dashboard/settings";
    match action.as_str() {
        "name" => {
            ctx.require(Role::Admin)?;
            let name = form.text("name");
            if name.is_empty() || name.chars().count() > 100 {
                return Err(bad("The name must have 1 to 100 characters."));
            }
            ctx.audited(app.store.update_org(
                &ctx.org.id,
                &OrgUpdate {
                    name: Some(name.into()),
                    ..Default::default()
                },
            ))
            .await?;
            Ok(Page::see_other(back).flash("Name saved.", secure))
        }
        "spend-cap" => {
            ctx.require(Role::Owner)?;
            let cap = number(form.text("spendCap"), "The spend cap")?;
            ctx.audited(app.store.update_org(
                &ctx.org.id,
                &OrgUpdate {
                    spend_cap: Some(cap),
                    ..Default::default()
                },
            ))
            .await?;
            Ok(Page::see_other(back).flash("Spend cap saved.", secure))
        }
        "alerts" => {
            ctx.require(Role::Owner)?;
            let t = number(form.text("threshold"), "The threshold")?;
            ctx.audited(app.store.set_alert_threshold(&ctx.org.id, t))
                .await?;
            Ok(Page::see_other(back).flash("Alert threshold saved.", secure))
        }
        "transfer" => {
            ctx.require(Role::Owner)?;
            let to = form.text("user");
            if to == ctx.user_id() || app.store.role_in(&ctx.org.id, to).await?.is_none() {
                return Err(Page::not_found("That member"));
            }
            app.store
                .transfer_ownership(&ctx.org.id, ctx.user_id(), to)
                .await?;
            let email = app.store.get_user(to).await?.email;
            ctx.audited(
                app.store
                    .audit(&ctx.org.id, None, "org.ownership_transferred", &email),
            )
            .await?;
            Ok(Page::see_other(back).flash(
                &format!("{email} is now the owner; you are an admin."),
                secure,
            ))
        }
        "delete" => {
            ctx.require(Role::Owner)?;
            if form.text("confirm") != ctx.org.name {
                return Err(bad("Type the organization's exact name to delete it."));
            }
            ctx.audited(app.store.delete_org(&ctx.org.id)).await?;
            Ok(Page::see_other("/dashboard").flash("Organization deleted.", secure))
        }
        _ => Err(Page::not_found("That setting")),
    }
}
