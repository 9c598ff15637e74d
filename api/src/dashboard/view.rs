//! The dashboard's look: the page layout (header, organization switcher,
//! navigation), shared pieces (forms with their CSRF token, times, the
//! 30-day chart) and sanitized markdown. maud escapes every interpolated
//! value; the only raw HTML is markdown that went through ammonia.

use super::Ctx;
use axum::http::StatusCode;
use maud::{html, Markup, PreEscaped, DOCTYPE};
use webdata_core::store::{rfc3339, DayUsage, Role};

/// The sections of the dashboard, and the least role that sees each.
const NAV: &[(&str, &str, Role)] = &[
    ("overview", "Overview", Role::Member),
    ("playground", "Playground", Role::Member),
    ("crawls", "Crawls", Role::Member),
    ("schedules", "Schedules", Role::Member),
    ("keys", "API keys", Role::Admin),
    ("webhooks", "Webhooks", Role::Admin),
    ("usage", "Usage", Role::Member),
    ("audit", "Audit log", Role::Member),
    ("team", "Team", Role::Member),
    ("settings", "Settings", Role::Member),
];

fn head(title: &str) -> Markup {
    html! {
        meta charset="utf-8";
        meta name="viewport" content="width=device-width, initial-scale=1";
        meta name="color-scheme" content="light";
        title { (title) " · webdata" }
        link rel="stylesheet" href="/dashboard/assets/app.css";
        script src="/dashboard/assets/app.js" defer {}
    }
}

/// A hidden CSRF field.
pub fn csrf(token: &str) -> Markup {
    html! { input type="hidden" name="_csrf" value=(token); }
}

/// A one-button form (POST), optionally asking for confirmation.
pub fn button_form(
    action: &str,
    token: &str,
    label: &str,
    class: &str,
    confirm: Option<&str>,
) -> Markup {
    html! {
        form method="post" action=(action) class="inline" data-confirm=[confirm] {
            (csrf(token))
            button type="submit" class=(class) { (label) }
        }
    }
}

/// A page of the signed-in dashboard.
pub fn layout(
    ctx: &Ctx,
    csrf_token: &str,
    active: &str,
    title: &str,
    flash: Option<&str>,
    body: Markup,
) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head { (head(title)) }
            body {
                a.skip href="#main" { "Skip to content" }
                header.top {
                    a.brand href="/dashboard" { "webdata" }
                    form.switcher method="post" action="/dashboard/switch" {
                        (csrf(csrf_token))
                        label for="org-switch" { "Organization" }
                        select id="org-switch" name="org" {
                            @for (o, r) in &ctx.orgs {
                                option value=(o.id) selected[o.id == ctx.org.id] { (o.name) " (" (r.as_str()) ")" }
                            }
                        }
                        button type="submit" class="secondary" { "Switch" }
                    }
                    div.me {
                        span.email { (ctx.email()) }
                        form method="post" action="/dashboard/logout" class="inline" {
                            (csrf(csrf_token))
                            button type="submit" class="link" { "Sign out" }
                        }
                    }
                }
                nav aria-label="Sections" {
                    ul {
                        @for (slug, label, least) in NAV {
                            @if ctx.role >= *least {
                                li {
                                    a href={ "/dashboard" @if *slug != "overview" { "/" (slug) } }
                                      aria-current=[(*slug == active).then_some("page")] { (label) }
                                }
                            }
                        }
                    }
                }
                main id="main" {
                    h1 { (title) }
                    @if let Some(f) = flash {
                        p.flash role="status" { (f) }
                    }
                    (body)
                }
            }
        }
    }
}

/// A page for signed-out people (sign in, sign up, reset, invitations).
pub fn bare(title: &str, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head { (head(title)) }
            body.bare {
                main id="main" class="narrow" {
                    p.brand { "webdata" }
                    h1 { (title) }
                    (body)
                }
            }
        }
    }
}

/// An error page.
pub fn error_page(status: StatusCode, title: &str, message: &str) -> Markup {
    bare(
        title,
        html! {
            p.error role="alert" { (message) }
            p.muted { "HTTP " (status.as_u16()) }
            p { a href="/dashboard" { "Back to the dashboard" } }
        },
    )
}

/// Signed in but in no organization: create one.
pub fn no_org_page(email: &str, token: &str) -> Markup {
    bare(
        "Create an organization",
        html! {
            p { "You (" (email) ") are not in any organization. Create one, or open an invitation link." }
            form method="post" action="/dashboard/orgs" {
                (csrf(token))
                label for="org-name" { "Organization name" }
                input id="org-name" name="name" required maxlength="100";
                button type="submit" { "Create organization" }
            }
            form method="post" action="/dashboard/logout" {
                (csrf(token))
                button type="submit" class="link" { "Sign out" }
            }
        },
    )
}

/// A time as `YYYY-MM-DD HH:MM UTC`, in a `<time>` element.
pub fn time(ms: i64) -> Markup {
    let iso = rfc3339(ms);
    let shown = format!("{} {} UTC", &iso[..10], &iso[11..16]);
    html! { time datetime=(iso) { (shown) } }
}

/// An optional time, or a dash.
pub fn time_or(ms: Option<i64>, none: &str) -> Markup {
    match ms {
        Some(t) => time(t),
        None => html! { span.muted { (none) } },
    }
}

/// Markdown from the web as HTML with anything active removed (scripts,
/// event handlers, `javascript:` links, forms, frames, styles).
pub fn markdown_html(md: &str) -> Markup {
    use pulldown_cmark::{Event, Tag, TagEnd};
    // Pictures become links to them: the dashboard loads nothing from
    // other sites (its CSP allows images from itself only).
    let parser =
        pulldown_cmark::Parser::new_ext(md, pulldown_cmark::Options::ENABLE_TABLES).map(|ev| {
            match ev {
                Event::Start(Tag::Image {
                    dest_url,
                    title,
                    id,
                    ..
                }) => Event::Start(Tag::Link {
                    link_type: pulldown_cmark::LinkType::Inline,
                    dest_url,
                    title,
                    id,
                }),
                Event::End(TagEnd::Image) => Event::End(TagEnd::Link),
                other => other,
            }
        });
    let mut raw = String::new();
    pulldown_cmark::html::push_html(&mut raw, parser);
    PreEscaped(
        ammonia::Builder::default()
            .link_rel(Some("noopener noreferrer nofollow"))
            .clean(&raw)
            .to_string(),
    )
}

/// Bars of one series over the days, as an accessible SVG (no script, no
/// inline styles).
pub fn bar_chart(
    days: &[DayUsage],
    label: &str,
    value: fn(&DayUsage) -> i64,
    class: &str,
) -> Markup {
    let max = days.iter().map(value).max().unwrap_or(0).max(1);
    let (w, h, gap) = (600.0_f64, 120.0_f64, 2.0_f64);
    let bw = (w / days.len().max(1) as f64) - gap;
    let total: i64 = days.iter().map(value).sum();
    html! {
        figure.chart {
            figcaption { (label) ": " strong { (total) } " in " (days.len()) " days" }
            svg viewBox={ "0 0 " (w) " " (h + 16.0) } role="img" aria-label={ (label) " per day for " (days.len()) " days" } class=(class) {
                @for (i, d) in days.iter().enumerate() {
                    @let v = value(d);
                    @let bh = (v as f64 / max as f64) * h;
                    rect x=(format!("{:.1}", i as f64 * (bw + gap))) y=(format!("{:.1}", h - bh)) width=(format!("{:.1}", bw.max(1.0))) height=(format!("{:.1}", bh.max(if v > 0 { 1.0 } else { 0.0 }))) {
                        title { (&rfc3339(d.day)[..10]) ": " (v) }
                    }
                }
                line x1="0" y1=(h) x2=(w) y2=(h) class="axis" {}
                text x="0" y=(h + 14.0) class="tick" { (&rfc3339(days.first().map(|d| d.day).unwrap_or(0))[..10]) }
                text x=(w) y=(h + 14.0) text-anchor="end" class="tick" { (&rfc3339(days.last().map(|d| d.day).unwrap_or(0))[..10]) }
            }
        }
    }
}

/// A box showing a secret once, with a copy button.
pub fn secret_once(id: &str, label: &str, secret: &str, warning: &str) -> Markup {
    html! {
        div.secret role="region" aria-label=(label) {
            p.warn { strong { "Copy it now. " } (warning) }
            div.copyrow {
                code id=(id) { (secret) }
                button type="button" class="secondary" data-copy=(id) { "Copy" }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_from_the_web_loses_everything_active() {
        let md = "# Title\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(2)>\n\n[x](javascript:alert(3)) and [ok](https://example.com)\n\n![The harbour](https://example.com/h.png)\n";
        let out = markdown_html(md).into_string();
        assert!(!out.contains("<script"), "{out}");
        assert!(!out.contains("onerror"), "{out}");
        assert!(!out.contains("javascript:"), "{out}");
        assert!(out.contains("<h1>Title</h1>"), "{out}");
        assert!(out.contains("href=\"https://example.com\""), "{out}");
        assert!(
            out.contains("rel=\"noopener noreferrer nofollow\""),
            "{out}"
        );
    }

    #[test]
    fn interpolated_text_is_escaped() {
        let t = "<script>alert(1)</script>";
        let out = html! { td { (t) } }.into_string();
        assert_eq!(out, "<td>&lt;script&gt;alert(1)&lt;/script&gt;</td>");
    }

    #[test]
    fn chart_has_one_bar_per_day_and_no_inline_style() {
        let days: Vec<DayUsage> = (0..30)
            .map(|i| DayUsage {
                day: i * 86_400_000,
                requests: i,
                credits: 2 * i,
            })
            .collect();
        let out = bar_chart(&days, "Requests", |d| d.requests, "requests").into_string();
        assert_eq!(out.matches("<rect").count(), 30);
        assert!(!out.contains("style="));
        assert!(out.contains("<strong>435</strong>"));
    }
}
