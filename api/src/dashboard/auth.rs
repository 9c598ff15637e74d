//! Signing up, in and out, password resets, invitations, and moving
//! between organizations. Passwords are hashed with argon2id; sign-in is
//! rate limited per e-mail and per client address.

use super::view::{bare, csrf};
use super::{client_ip, cookie, CsrfToken, Ctx, FormData, Page, PageResult, SESSION_COOKIE};
use crate::state::AppState;
use argon2::password_hash::{
    rand_core::OsRng, PasswordHash, PasswordHasher, PasswordVerifier, SaltString,
};
use argon2::Argon2;
use axum::extract::{Path, Query, State};
use axum::http::{header, StatusCode};
use axum::Extension;
use maud::{html, Markup};
use serde::Deserialize;
use webdata_core::store::{normalize_email, NewOrganization, Role, Session, SESSION_TTL_MS};

/// Shortest password accepted.
pub const MIN_PASSWORD: usize = 10;
/// Sign-in attempts per minute for one e-mail.
const LOGIN_PER_EMAIL: i64 = 5;
/// Sign-in attempts per minute from one address.
const LOGIN_PER_IP: i64 = 30;

/// argon2id hash (PHC string) of a password.
pub fn hash_password(password: &str) -> anyhow::Result<String> {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| anyhow::anyhow!("hashing the password failed: {e}"))
}

/// True when `password` matches the PHC hash.
pub fn verify_password(password: &str, hash: &str) -> bool {
    PasswordHash::new(hash)
        .map(|h| {
            Argon2::default()
                .verify_password(password.as_bytes(), &h)
                .is_ok()
        })
        .unwrap_or(false)
}

/// Hashing is slow on purpose; keep it off the async workers.
async fn hash_blocking(password: String) -> Result<String, Page> {
    tokio::task::spawn_blocking(move || hash_password(&password))
        .await
        .ok()
        .and_then(Result::ok)
        .ok_or_else(|| {
            Page::error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Something went wrong",
                "Hashing the password failed.",
            )
        })
}

async fn verify_blocking(password: String, hash: String) -> bool {
    tokio::task::spawn_blocking(move || verify_password(&password, &hash))
        .await
        .unwrap_or(false)
}

fn check_password(p: &str) -> Result<(), String> {
    if p.chars().count() < MIN_PASSWORD {
        return Err(format!(
            "The password needs at least {MIN_PASSWORD} characters."
        ));
    }
    if p.len() > 1024 {
        return Err("The password is too long (1024 bytes at most).".into());
    }
    Ok(())
}

fn check_email(e: &str) -> Result<(), String> {
    let e = e.trim();
    let ok = e.len() <= 254
        && e.split_once('@').is_some_and(|(l, d)| {
            !l.is_empty()
                && d.contains('.')
                && !d.starts_with('.')
                && !e.contains(char::is_whitespace)
        });
    if ok {
        Ok(())
    } else {
        Err("Enter a valid e-mail address.".into())
    }
}

fn session_cookie(app: &AppState, token: &str) -> String {
    cookie(
        SESSION_COOKIE,
        token,
        "/",
        Some(SESSION_TTL_MS / 1000),
        app.config.cookie_secure,
        "Lax",
    )
}

fn clear_cookie(app: &AppState, name: &str, path: &str) -> String {
    cookie(name, "", path, Some(0), app.config.cookie_secure, "Lax")
}

/// Only local paths are followed after sign-in.
fn safe_next(next: Option<&str>) -> String {
    match next {
        Some(n) if n.starts_with("/dashboard") && !n.starts_with("//") && !n.contains('\\') => {
            n.to_string()
        }
        _ => "/dashboard".into(),
    }
}

#[derive(Deserialize, Default)]
pub struct NextQuery {
    next: Option<String>,
}

fn login_form(token: &str, app: &AppState, email: &str, next: &str, error: Option<&str>) -> Markup {
    bare(
        "Sign in",
        html! {
            @if let Some(e) = error { p.error role="alert" { (e) } }
            form method="post" action="/dashboard/login" {
                (csrf(token))
                input type="hidden" name="next" value=(next);
                label for="email" { "E-mail" }
                input id="email" name="email" type="email" autocomplete="username" required value=(email);
                label for="password" { "Password" }
                input id="password" name="password" type="password" autocomplete="current-password" required;
                button type="submit" { "Sign in" }
            }
            p { a href="/dashboard/forgot" { "Forgot your password?" } }
            @if app.config.signup {
                p { "New here? " a href="/dashboard/signup" { "Create an account" } " (free, no card)." }
            }
        },
    )
}

/// `GET /dashboard/login`
pub async fn login_page(
    State(app): State<AppState>,
    Extension(token): Extension<CsrfToken>,
    session: Option<Extension<Session>>,
    Query(q): Query<NextQuery>,
) -> PageResult {
    if session.is_some() {
        return Ok(Page::see_other(&safe_next(q.next.as_deref())));
    }
    Ok(Page::html(login_form(
        &token.0,
        &app,
        "",
        &safe_next(q.next.as_deref()),
        None,
    )))
}

/// `POST /dashboard/login`
pub async fn login(
    State(app): State<AppState>,
    Extension(token): Extension<CsrfToken>,
    Extension(form): Extension<FormData>,
    req: axum::extract::Request,
) -> PageResult {
    let email = normalize_email(form.text("email"));
    let next = safe_next(form.get("next"));
    let ip = client_ip(req.extensions());
    for (subject, limit) in [
        (format!("login:{email}"), LOGIN_PER_EMAIL),
        (format!("login-ip:{ip}"), LOGIN_PER_IP),
    ] {
        let d = app.store.hit_rate(&subject, limit).await?;
        if !d.allowed {
            let mut p = Page::with_status(
                StatusCode::TOO_MANY_REQUESTS,
                login_form(
                    &token.0,
                    &app,
                    &email,
                    &next,
                    Some(&format!(
                        "Too many sign-in attempts. Wait {} seconds and try again.",
                        d.reset_secs
                    )),
                ),
            );
            if let Ok(v) = d.reset_secs.to_string().parse() {
                p.0.headers_mut().insert(header::RETRY_AFTER, v);
            }
            return Ok(p);
        }
    }
    let user = app.store.user_by_email(&email).await?;
    let ok = match &user {
        Some(u) => {
            verify_blocking(form.text("password").to_string(), u.password_hash.clone()).await
        }
        None => {
            // Same work whether or not the account exists.
            let _ = hash_blocking(form.text("password").to_string()).await;
            false
        }
    };
    let Some(user) = user.filter(|_| ok) else {
        tracing::info!(email = %email, ip = %ip, "dashboard sign-in refused");
        return Ok(Page::with_status(
            StatusCode::UNAUTHORIZED,
            login_form(
                &token.0,
                &app,
                &email,
                &next,
                Some("The e-mail or password is not right."),
            ),
        ));
    };
    let first_org = app
        .store
        .orgs_of(&user.id)
        .await?
        .first()
        .map(|(o, _)| o.id.clone());
    let (_, cookie_value) = app
        .store
        .create_session(&user.id, first_org.as_deref())
        .await?;
    tracing::info!(user = %user.id, "dashboard sign-in");
    Ok(Page::see_other(&next).cookie(session_cookie(&app, &cookie_value)))
}

/// `POST /dashboard/logout`
pub async fn logout(
    State(app): State<AppState>,
    session: Option<Extension<Session>>,
) -> PageResult {
    if let Some(Extension(s)) = session {
        app.store.end_session(&s.id).await?;
    }
    Ok(Page::see_other("/dashboard/login")
        .cookie(clear_cookie(&app, SESSION_COOKIE, "/"))
        .cookie(clear_cookie(&app, super::PLAYGROUND_COOKIE, "/dashboard")))
}

fn signup_form(token: &str, email: &str, org: &str, error: Option<&str>, app: &AppState) -> Markup {
    bare(
        "Create your account",
        html! {
            p { "Free plan: " (app.config.free_credits) " credits, no card. You will own a new organization." }
            @if let Some(e) = error { p.error role="alert" { (e) } }
            form method="post" action="/dashboard/signup" {
                (csrf(token))
                label for="email" { "E-mail" }
                input id="email" name="email" type="email" autocomplete="username" required value=(email);
                label for="password" { "Password (" (MIN_PASSWORD) " characters or more)" }
                input id="password" name="password" type="password" autocomplete="new-password" required minlength=(MIN_PASSWORD);
                label for="org" { "Organization name" }
                input id="org" name="org" maxlength="100" value=(org) placeholder="Acme";
                button type="submit" { "Create account" }
            }
            p { "Have an account? " a href="/dashboard/login" { "Sign in" } }
        },
    )
}

fn signup_off() -> Page {
    Page::error(
        StatusCode::NOT_FOUND,
        "Sign-up is off",
        "This deployment does not accept new accounts; ask an owner for an invitation.",
    )
}

/// `GET /dashboard/signup`
pub async fn signup_page(
    State(app): State<AppState>,
    Extension(token): Extension<CsrfToken>,
) -> PageResult {
    if !app.config.signup {
        return Err(signup_off());
    }
    Ok(Page::html(signup_form(&token.0, "", "", None, &app)))
}

/// `POST /dashboard/signup`: a person, a free organization they own, a session.
pub async fn signup(
    State(app): State<AppState>,
    Extension(token): Extension<CsrfToken>,
    Extension(form): Extension<FormData>,
) -> PageResult {
    if !app.config.signup {
        return Err(signup_off());
    }
    let email = normalize_email(form.text("email"));
    let org_name = form.text("org").to_string();
    let again = |msg: &str| {
        Page::with_status(
            StatusCode::BAD_REQUEST,
            signup_form(&token.0, &email, &org_name, Some(msg), &app),
        )
    };
    if let Err(m) = check_email(&email).and_then(|_| check_password(form.text("password"))) {
        return Ok(again(&m));
    }
    if app.store.user_by_email(&email).await?.is_some() {
        return Ok(again(
            "An account with this e-mail exists; sign in instead.",
        ));
    }
    let hash = hash_blocking(form.text("password").to_string()).await?;
    let user = match app.store.create_user(&email, &hash).await {
        Ok(u) => u,
        Err(webdata_core::store::StoreError::Invalid(m)) => return Ok(again(&m)),
        Err(e) => return Err(e.into()),
    };
    let name = if org_name.is_empty() {
        format!("{email}'s organization")
    } else {
        org_name.chars().take(100).collect()
    };
    let org = webdata_core::store::with_actor(
        email.clone(),
        app.store.create_org(&NewOrganization {
            name,
            credits: app.config.free_credits,
            ..Default::default()
        }),
    )
    .await?;
    app.store
        .set_membership(&org.id, &user.id, Role::Owner)
        .await?;
    webdata_core::store::with_actor(
        email.clone(),
        app.store.audit(
            &org.id,
            None,
            "member.joined",
            &format!("{email} (owner, sign-up)"),
        ),
    )
    .await?;
    let (_, cookie_value) = app.store.create_session(&user.id, Some(&org.id)).await?;
    Ok(Page::see_other("/dashboard")
        .cookie(session_cookie(&app, &cookie_value))
        .flash(
            "Welcome! Create an API key to start.",
            app.config.cookie_secure,
        ))
}

/// `GET /dashboard/forgot`
pub async fn forgot_page(Extension(token): Extension<CsrfToken>) -> PageResult {
    Ok(Page::html(bare(
        "Reset your password",
        html! {
            form method="post" action="/dashboard/forgot" {
                (csrf(&token.0))
                label for="email" { "E-mail" }
                input id="email" name="email" type="email" autocomplete="username" required;
                button type="submit" { "Send a reset link" }
            }
            p { a href="/dashboard/login" { "Back to sign in" } }
        },
    )))
}

/// `POST /dashboard/forgot`: mails a one-hour link; answers the same
/// whether or not the account exists.
pub async fn forgot(
    State(app): State<AppState>,
    Extension(form): Extension<FormData>,
) -> PageResult {
    let email = normalize_email(form.text("email"));
    let allowed = app
        .store
        .hit_rate(&format!("reset:{email}"), 3)
        .await?
        .allowed;
    if allowed {
        if let Some(user) = app.store.user_by_email(&email).await? {
            let token = app.store.create_password_reset(&user.id).await?;
            // Never the request's Host: anyone can set it, and the mail
            // would hand them the victim's token.
            let link = format!("{}/dashboard/reset/{token}", super::mail_base_url(&app));
            let body = format!(
                "Someone asked to reset the password of your webdata account ({email}).\n\nOpen this link within an hour to choose a new password:\n\n{link}\n\nIf it was not you, ignore this mail; your password stays as it is.\n"
            );
            super::mail::send(&app, &email, "Reset your webdata password", &body).await;
        }
    }
    Ok(Page::html(bare(
        "Check your mail",
        html! {
            p role="status" { "If an account exists for " (email) ", a link to reset its password is on its way. It works for one hour." }
            p { a href="/dashboard/login" { "Back to sign in" } }
        },
    )))
}

fn reset_form(token: &str, link: &str, error: Option<&str>) -> Markup {
    bare(
        "Choose a new password",
        html! {
            @if let Some(e) = error { p.error role="alert" { (e) } }
            form method="post" action={ "/dashboard/reset/" (link) } {
                (csrf(token))
                label for="password" { "New password (" (MIN_PASSWORD) " characters or more)" }
                input id="password" name="password" type="password" autocomplete="new-password" required minlength=(MIN_PASSWORD);
                button type="submit" { "Set password" }
            }
        },
    )
}

fn dead_link() -> Page {
    Page::error(
        StatusCode::NOT_FOUND,
        "This link does not work",
        "The link was used already, has expired or is not one we sent.",
    )
}

/// `GET /dashboard/reset/{token}`
pub async fn reset_page(
    State(app): State<AppState>,
    Extension(token): Extension<CsrfToken>,
    Path(link): Path<String>,
) -> PageResult {
    if app.store.password_reset_user(&link).await?.is_none() {
        return Err(dead_link());
    }
    Ok(Page::html(reset_form(&token.0, &link, None)))
}

/// `POST /dashboard/reset/{token}`: sets the password, signs out everywhere.
pub async fn reset(
    State(app): State<AppState>,
    Extension(token): Extension<CsrfToken>,
    Extension(form): Extension<FormData>,
    Path(link): Path<String>,
) -> PageResult {
    if let Err(m) = check_password(form.text("password")) {
        return Ok(Page::with_status(
            StatusCode::BAD_REQUEST,
            reset_form(&token.0, &link, Some(&m)),
        ));
    }
    let hash = hash_blocking(form.text("password").to_string()).await?;
    if !app.store.use_password_reset(&link, &hash).await? {
        return Err(dead_link());
    }
    Ok(Page::see_other("/dashboard/login")
        .cookie(clear_cookie(&app, SESSION_COOKIE, "/"))
        .flash(
            "Password changed; sign in with it.",
            app.config.cookie_secure,
        ))
}

/// `GET /dashboard/invite/{token}`: join as the signed-in person, or
/// create an account for the invitation (even with sign-up off).
pub async fn invite_page(
    State(app): State<AppState>,
    Extension(token): Extension<CsrfToken>,
    session: Option<Extension<Session>>,
    Path(link): Path<String>,
) -> PageResult {
    let inv = match app.store.invitation_by_token(&link).await? {
        Some(i) if i.is_open(webdata_core::store::now_ms()) => i,
        _ => return Err(dead_link()),
    };
    let org = app.store.get_org(&inv.org_id).await?;
    let action = format!("/dashboard/invite/{link}");
    Ok(Page::html(bare(
        "Join an organization",
        html! {
            p { "You are invited to " strong { (org.name) } " as " strong { (inv.role.as_str()) } "." }
            @if let Some(Extension(s)) = &session {
                @if inv.email.as_deref().is_some_and(|e| e != s.user.email) {
                    p.error role="alert" { "This invitation is for " (inv.email.clone().unwrap_or_default()) "; you are signed in as " (s.user.email) ". Sign out and open the link again as that person." }
                } @else {
                form method="post" action=(action) {
                    (csrf(&token.0))
                    p { "Signed in as " (s.user.email) "." }
                    button type="submit" { "Accept and join" }
                }
                }
            } @else {
                h2 { "New to webdata" }
                form method="post" action=(action) {
                    (csrf(&token.0))
                    label for="email" { "E-mail" }
                    input id="email" name="email" type="email" autocomplete="username" required value=(inv.email.clone().unwrap_or_default());
                    label for="password" { "Password (" (MIN_PASSWORD) " characters or more)" }
                    input id="password" name="password" type="password" autocomplete="new-password" required minlength=(MIN_PASSWORD);
                    button type="submit" { "Create account and join" }
                }
                p { "Have an account? " a href={ "/dashboard/login?next=" (url::form_urlencoded::byte_serialize(action.as_bytes()).collect::<String>()) } { "Sign in first" } }
            }
        },
    )))
}

/// `POST /dashboard/invite/{token}`
pub async fn accept_invite(
    State(app): State<AppState>,
    Extension(form): Extension<FormData>,
    session: Option<Extension<Session>>,
    Path(link): Path<String>,
) -> PageResult {
    let inv = match app.store.invitation_by_token(&link).await? {
        Some(i) if i.is_open(webdata_core::store::now_ms()) => i,
        _ => return Err(dead_link()),
    };
    let signed_in = session.as_ref().map(|Extension(s)| s.id.clone());
    let (user_id, email, new_cookie) = match session {
        Some(Extension(s)) => {
            if inv.email.as_deref().is_some_and(|e| e != s.user.email) {
                return Err(Page::error(
                    StatusCode::FORBIDDEN,
                    "Not for you",
                    "This invitation is for another e-mail address; sign in as that person to accept it.",
                ));
            }
            (s.user.id.clone(), s.user.email.clone(), None)
        }
        None => {
            let email = normalize_email(form.text("email"));
            if let Err(m) = check_email(&email).and_then(|_| check_password(form.text("password")))
            {
                return Err(Page::error(StatusCode::BAD_REQUEST, "Not possible", &m));
            }
            if inv.email.as_deref().is_some_and(|e| e != email) {
                return Err(Page::error(
                    StatusCode::BAD_REQUEST,
                    "Not possible",
                    "This invitation is for another e-mail address.",
                ));
            }
            if app.store.user_by_email(&email).await?.is_some() {
                return Err(Page::error(
                    StatusCode::BAD_REQUEST,
                    "Not possible",
                    "An account with this e-mail exists; sign in first, then open the link again.",
                ));
            }
            let hash = hash_blocking(form.text("password").to_string()).await?;
            let user = app.store.create_user(&email, &hash).await?;
            (user.id, email, Some(()))
        }
    };
    let Some(org_id) = app.store.accept_invitation(&link, &user_id).await? else {
        return Err(dead_link());
    };
    webdata_core::store::with_actor(
        email.clone(),
        app.store.audit(
            &org_id,
            None,
            "member.joined",
            &format!("{email} ({}, invitation)", inv.role.as_str()),
        ),
    )
    .await?;
    let mut page = Page::see_other("/dashboard");
    match new_cookie {
        Some(()) => {
            let (_, c) = app.store.create_session(&user_id, Some(&org_id)).await?;
            page = page.cookie(session_cookie(&app, &c));
        }
        None => {
            if let Some(sid) = signed_in {
                app.store.switch_session_org(&sid, &org_id).await?;
            }
        }
    }
    Ok(page.flash("You joined the organization.", app.config.cookie_secure))
}

/// `POST /dashboard/switch`: look at another of the person's organizations.
pub async fn switch(
    State(app): State<AppState>,
    Extension(ctx): Extension<Ctx>,
    Extension(form): Extension<FormData>,
) -> PageResult {
    let target = form.text("org");
    if !ctx.orgs.iter().any(|(o, _)| o.id == target) {
        return Err(Page::not_found("That organization"));
    }
    app.store
        .switch_session_org(&ctx.session.id, target)
        .await?;
    Ok(Page::see_other("/dashboard"))
}

/// `POST /dashboard/orgs`: a new free organization the person owns.
pub async fn create_org(
    State(app): State<AppState>,
    Extension(session): Extension<Session>,
    Extension(form): Extension<FormData>,
) -> PageResult {
    let name = form.text("name");
    if name.is_empty() || name.chars().count() > 100 {
        return Err(Page::error(
            StatusCode::BAD_REQUEST,
            "Not possible",
            "The name must have 1 to 100 characters.",
        ));
    }
    let email = session.user.email.clone();
    let org = webdata_core::store::with_actor(
        email,
        app.store.create_org(&NewOrganization {
            name: name.to_string(),
            credits: app.config.free_credits,
            ..Default::default()
        }),
    )
    .await?;
    app.store
        .set_membership(&org.id, &session.user.id, Role::Owner)
        .await?;
    app.store.switch_session_org(&session.id, &org.id).await?;
    Ok(Page::see_other("/dashboard").flash("Organization created.", app.config.cookie_secure))
}
