//! The dashboard: server-rendered pages under `/dashboard`, served by the
//! same binary. People sign in with an e-mail and password; every action is
//! a form POST that carries a CSRF token and is checked on the server
//! against the person's role in the organization they are looking at.
//! Everything shown that came from the web is escaped (maud) or sanitized
//! (ammonia); assets are embedded; a strict Content-Security-Policy holds.

mod assets;
mod auth;
mod crawls;
mod keys;
mod mail;
mod overview;
mod playground;
mod routes;
mod schedules;
mod team;
mod usage;
mod view;
mod webhooks;

pub use auth::{hash_password, verify_password, MIN_PASSWORD};
pub use routes::routes;

use crate::state::AppState;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use std::net::SocketAddr;
use webdata_core::store::{Organization, Role, Session};

/// Name of the session cookie.
pub const SESSION_COOKIE: &str = "wd_session";
/// Name of the anonymous CSRF cookie (forms shown before signing in).
const CSRF_COOKIE: &str = "wd_csrf";
/// Name of the cookie holding this person's playground key.
const PLAYGROUND_COOKIE: &str = "wd_pg";
/// Largest form body the dashboard reads.
const MAX_FORM_BYTES: usize = 64 * 1024;

/// The Content-Security-Policy of every dashboard page.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// A parsed `application/x-www-form-urlencoded` body.
#[derive(Debug, Clone, Default)]
pub struct FormData(Vec<(String, String)>);

impl FormData {
    /// The first value of a field, trimmed.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.trim())
    }

    /// The value of a field, empty when absent.
    pub fn text(&self, name: &str) -> &str {
        self.get(name).unwrap_or("")
    }

    /// Every value of a repeated field (checkboxes).
    pub fn all(&self, name: &str) -> Vec<&str> {
        self.0
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// A checkbox is on.
    pub fn on(&self, name: &str) -> bool {
        self.get(name).is_some()
    }
}

/// Who is looking at a page: the person, their session, the organization
/// they are in and their role there, and every organization they belong to.
#[derive(Debug, Clone)]
pub struct Ctx {
    pub session: Session,
    pub org: Organization,
    pub role: Role,
    pub orgs: Vec<(Organization, Role)>,
    /// The `Host` the browser used (for links in mails and the playground).
    pub host: String,
}

impl Ctx {
    /// The person's e-mail.
    pub fn email(&self) -> &str {
        &self.session.user.email
    }

    /// The person's id.
    pub fn user_id(&self) -> &str {
        &self.session.user.id
    }

    /// May this person act on (cancel, pause, delete) something started
    /// with the key `key_id`: owners and admins, or the member whose
    /// playground key it was.
    pub async fn may_act_on(&self, app: &AppState, key_id: Option<&str>) -> bool {
        if self.role >= Role::Admin {
            return true;
        }
        match key_id {
            Some(k) => app
                .store
                .get_key(k)
                .await
                .ok()
                .is_some_and(|k| k.person.as_deref() == Some(self.user_id())),
            None => false,
        }
    }

    /// Refuses (403) unless the person's role is at least `role`.
    pub fn require(&self, role: Role) -> Result<(), Page> {
        if self.role >= role {
            Ok(())
        } else {
            Err(Page::error(
                StatusCode::FORBIDDEN,
                "Not allowed",
                &format!(
                    "This needs the {} role in {}; you are {}.",
                    role.as_str(),
                    self.org.name,
                    self.role.as_str()
                ),
            ))
        }
    }

    /// Runs `fut` with this person recorded as the actor of audit records.
    pub async fn audited<F: std::future::Future>(&self, fut: F) -> F::Output {
        webdata_core::store::with_actor(self.email().to_string(), fut).await
    }
}

/// A finished dashboard answer (page, redirect or error page). Its body is
/// final: the API's error envelope leaves it alone.
pub struct Page(Box<Response>);

impl Page {
    /// A 200 page.
    pub fn html(markup: maud::Markup) -> Page {
        Page(Box::new(
            (
                [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
                markup.into_string(),
            )
                .into_response(),
        ))
    }

    /// A page with another status.
    pub fn with_status(status: StatusCode, markup: maud::Markup) -> Page {
        let mut p = Page::html(markup);
        *p.0.status_mut() = status;
        p
    }

    /// An error page.
    pub fn error(status: StatusCode, title: &str, message: &str) -> Page {
        Page::with_status(status, view::error_page(status, title, message))
    }

    /// 404: the thing does not exist for this person.
    pub fn not_found(what: &str) -> Page {
        Page::error(
            StatusCode::NOT_FOUND,
            "Not found",
            &format!("{what} does not exist in this organization."),
        )
    }

    /// 303 to `to` (after a form).
    pub fn see_other(to: &str) -> Page {
        Page(Box::new(Redirect::to(to).into_response()))
    }

    /// Adds a `Set-Cookie`.
    pub fn cookie(mut self, c: String) -> Page {
        if let Ok(v) = HeaderValue::from_str(&c) {
            self.0.headers_mut().append(header::SET_COOKIE, v);
        }
        self
    }

    /// Sets a short flash message shown on the next page.
    pub fn flash(self, text: &str, secure: bool) -> Page {
        let v = url::form_urlencoded::byte_serialize(text.as_bytes()).collect::<String>();
        self.cookie(cookie(
            "wd_flash",
            &v,
            "/dashboard",
            Some(60),
            secure,
            "Strict",
        ))
    }
}

impl IntoResponse for Page {
    fn into_response(self) -> Response {
        let mut r = *self.0;
        r.extensions_mut().insert(crate::error::Enveloped);
        r
    }
}

impl From<webdata_core::store::StoreError> for Page {
    fn from(e: webdata_core::store::StoreError) -> Page {
        use webdata_core::store::StoreError;
        match e {
            StoreError::NotFound(what) => Page::not_found(&what),
            StoreError::Invalid(msg) => Page::error(StatusCode::BAD_REQUEST, "Not possible", &msg),
            other => {
                tracing::error!(error = %other, "dashboard store error");
                Page::error(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "Something went wrong",
                    "The database failed; try again.",
                )
            }
        }
    }
}

/// Result of a dashboard handler.
pub type PageResult = Result<Page, Page>;

/// A `Set-Cookie` value.
fn cookie(
    name: &str,
    value: &str,
    path: &str,
    max_age: Option<i64>,
    secure: bool,
    same_site: &str,
) -> String {
    let mut c = format!("{name}={value}; Path={path}; HttpOnly; SameSite={same_site}");
    if secure {
        c.push_str("; Secure");
    }
    if let Some(a) = max_age {
        c.push_str(&format!("; Max-Age={a}"));
    }
    c
}

/// The value of a request cookie.
pub fn read_cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_string())
}

/// The session behind the request's cookie, if any.
async fn session_of(app: &AppState, headers: &HeaderMap) -> Option<Session> {
    let token = read_cookie(headers, SESSION_COOKIE)?;
    app.store.session(&token).await.ok().flatten()
}

/// The token forms of this request carry: the session's when signed in,
/// else the anonymous cookie's (None: a new one must be set).
fn expected_csrf(session: Option<&Session>, headers: &HeaderMap) -> Option<String> {
    match session {
        Some(s) => Some(s.csrf.clone()),
        None => read_cookie(headers, CSRF_COOKIE).filter(|v| v.len() >= 32),
    }
}

/// The CSRF token to put in forms, as a request extension.
#[derive(Debug, Clone)]
pub struct CsrfToken(pub String);

/// Every dashboard request: security headers on the answer; for POST the
/// same-origin check and the CSRF token (session token, or the anonymous
/// cookie's before sign-in), with the form parsed into [`FormData`].
pub async fn guard_layer(State(app): State<AppState>, req: Request, next: Next) -> Response {
    let (mut parts, body) = req.into_parts();
    let session = session_of(&app, &parts.headers).await;
    let mut new_cookie = None;
    let token = match expected_csrf(session.as_ref(), &parts.headers) {
        Some(t) => t,
        None => {
            let t = webdata_core::store::random_token();
            new_cookie = Some(t.clone());
            t
        }
    };
    let mut body = body;
    if parts.method == Method::POST {
        if !same_origin(&parts.headers) {
            return finish(
                Page::error(
                    StatusCode::FORBIDDEN,
                    "Refused",
                    "This form was sent from another site.",
                )
                .into_response(),
                &app,
                None,
            );
        }
        let bytes = match axum::body::to_bytes(body, MAX_FORM_BYTES).await {
            Ok(b) => b,
            Err(_) => {
                return finish(
                    Page::error(
                        StatusCode::PAYLOAD_TOO_LARGE,
                        "Too large",
                        "The form is too large.",
                    )
                    .into_response(),
                    &app,
                    None,
                )
            }
        };
        let form = FormData(
            url::form_urlencoded::parse(&bytes)
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
        );
        let given = form.get("_csrf").unwrap_or("");
        use subtle::ConstantTimeEq;
        if new_cookie.is_some()
            || given.len() != token.len()
            || !bool::from(given.as_bytes().ct_eq(token.as_bytes()))
        {
            return finish(
                Page::error(
                    StatusCode::FORBIDDEN,
                    "This form has expired",
                    "The form's security token is missing or does not match your session (CSRF protection). Go back, reload the page and try again.",
                )
                .into_response(),
                &app,
                new_cookie.as_deref(),
            );
        }
        parts.extensions.insert(form);
        body = axum::body::Body::from(bytes);
    }
    parts.extensions.insert(CsrfToken(token));
    if let Some(s) = session {
        parts.extensions.insert(s);
    }
    let resp = next.run(Request::from_parts(parts, body)).await;
    finish(resp, &app, new_cookie.as_deref())
}

/// Security headers, and the anonymous CSRF cookie when one was made.
fn finish(mut resp: Response, app: &AppState, new_csrf: Option<&str>) -> Response {
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    if !h.contains_key(header::CACHE_CONTROL) {
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    if let Some(t) = new_csrf {
        let c = cookie(
            CSRF_COOKIE,
            t,
            "/dashboard",
            None,
            app.config.cookie_secure,
            "Strict",
        );
        if let Ok(v) = HeaderValue::from_str(&c) {
            h.append(header::SET_COOKIE, v);
        }
    }
    resp.extensions_mut().insert(crate::error::Enveloped);
    resp
}

/// A POST is same-origin when its `Origin` (or, lacking it, `Referer`)
/// names the `Host` it was sent to. Browsers send `Origin` on every POST.
fn same_origin(headers: &HeaderMap) -> bool {
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let source = headers
        .get(header::ORIGIN)
        .or_else(|| headers.get(header::REFERER))
        .and_then(|v| v.to_str().ok());
    match source {
        None => true,
        Some("null") => false,
        Some(s) => url::Url::parse(s)
            .ok()
            .map(|u| {
                let h = u.host_str().unwrap_or("");
                let with_port = match u.port() {
                    Some(p) => format!("{h}:{p}"),
                    None => h.to_string(),
                };
                with_port.eq_ignore_ascii_case(host)
            })
            .unwrap_or(false),
    }
}

/// Pages behind a sign-in: resolves the person's organization and role
/// (the session's, else their first) or sends them to sign in.
pub async fn login_layer(State(app): State<AppState>, mut req: Request, next: Next) -> Response {
    let Some(session) = req.extensions().get::<Session>().cloned() else {
        if req.method() == Method::GET {
            let next_path = req
                .uri()
                .path_and_query()
                .map(|p| p.as_str())
                .unwrap_or("/dashboard");
            let q: String = url::form_urlencoded::byte_serialize(next_path.as_bytes()).collect();
            return Page::see_other(&format!("/dashboard/login?next={q}")).into_response();
        }
        return Page::error(
            StatusCode::UNAUTHORIZED,
            "Signed out",
            "Sign in again to continue.",
        )
        .into_response();
    };
    let orgs = match app.store.orgs_of(&session.user.id).await {
        Ok(o) => o,
        Err(e) => return Page::from(e).into_response(),
    };
    let chosen = session
        .org_id
        .as_deref()
        .and_then(|id| orgs.iter().find(|(o, _)| o.id == id))
        .or_else(|| orgs.first())
        .cloned();
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("localhost")
        .to_string();
    let Some((org, role)) = chosen else {
        // Not in any organization (removed, or the last one was deleted).
        let csrf = req.extensions().get::<CsrfToken>().cloned();
        let path = req.uri().path().to_string();
        if path == "/dashboard/orgs" || path == "/dashboard/logout" {
            return next.run(req).await;
        }
        return Page::html(view::no_org_page(
            &session.user.email,
            &csrf.map(|c| c.0).unwrap_or_default(),
        ))
        .into_response();
    };
    if session.org_id.as_deref() != Some(org.id.as_str()) {
        if let Err(e) = app.store.switch_session_org(&session.id, &org.id).await {
            return Page::from(e).into_response();
        }
    }
    req.extensions_mut().insert(Ctx {
        session,
        org,
        role,
        orgs,
        host,
    });
    next.run(req).await
}

/// The client's address, when the server knows it.
pub fn client_ip(req_ext: &axum::http::Extensions) -> String {
    req_ext
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip().to_string())
        .unwrap_or_else(|| "unknown".into())
}

/// The base URL of links shown to the person in their own browser (an
/// invitation link to pass on): `WEBDATA_PUBLIC_URL`, else the Host the
/// browser used.
pub fn base_url(app: &AppState, host: &str) -> String {
    match &app.config.public_url {
        Some(u) => u.trim_end_matches('/').to_string(),
        None => format!("http://{host}"),
    }
}

/// The base URL of links sent by mail: `WEBDATA_PUBLIC_URL`, else the
/// address the service listens on. Never the request's `Host`, which
/// anyone can set (a reset link pointing at their host would hand them the
/// victim's token).
pub fn mail_base_url(app: &AppState) -> String {
    app.config
        .public_url
        .as_deref()
        .or(app.config.listen_url.as_deref())
        .unwrap_or("http://localhost:3002")
        .trim_end_matches('/')
        .to_string()
}

/// Unknown paths under `/dashboard`: the dashboard's 404 page with its
/// security headers (the API's JSON 404 is for everything else).
pub async fn fallback(State(app): State<AppState>, req: Request) -> Response {
    let path = req.uri().path();
    if !path.starts_with("/dashboard") {
        return StatusCode::NOT_FOUND.into_response();
    }
    // `/dashboard/` and `/dashboard/keys/` are the pages without the slash.
    if path.ends_with('/') && !path.contains("//") && !path.contains("..") {
        let mut to = path.trim_end_matches('/').to_string();
        if let Some(q) = req.uri().query() {
            to.push('?');
            to.push_str(q);
        }
        return finish(
            axum::response::Redirect::permanent(&to).into_response(),
            &app,
            None,
        );
    }
    finish(
        Page::error(
            StatusCode::NOT_FOUND,
            "Not found",
            "There is no such page in the dashboard.",
        )
        .into_response(),
        &app,
        None,
    )
}

/// A signed-in page: the layout around `body`, with the flash message of
/// the previous action shown once.
pub fn page(
    app: &AppState,
    ctx: &Ctx,
    token: &CsrfToken,
    headers: &HeaderMap,
    active: &str,
    title: &str,
    body: maud::Markup,
) -> Page {
    let flash = read_cookie(headers, "wd_flash").map(|v| {
        url::form_urlencoded::parse(format!("f={v}").as_bytes())
            .next()
            .map(|(_, v)| v.chars().take(300).collect::<String>())
            .unwrap_or_default()
    });
    let p = Page::html(view::layout(
        ctx,
        &token.0,
        active,
        title,
        flash.as_deref(),
        body,
    ));
    if flash.is_some() {
        p.cookie(cookie(
            "wd_flash",
            "",
            "/dashboard",
            Some(0),
            app.config.cookie_secure,
            "Strict",
        ))
    } else {
        p
    }
}
