//! The dashboard's routes: signed-out pages (sign in and up, password
//! reset, invitations, assets) and the signed-in pages behind
//! [`super::login_layer`]; all behind [`super::guard_layer`] (CSRF,
//! same-origin POSTs, security headers).

use super::{assets, auth, crawls, keys, overview, playground, schedules, team, usage, webhooks};
use crate::openapi::{ApiRouter, Body, Op, Security};
use crate::state::AppState;

fn page(id: &'static str, summary: &'static str) -> Op {
    Op::new(id, summary).answers(200, "An HTML page.", Body::Html)
}

/// Pages anyone may open.
fn open() -> ApiRouter<AppState> {
    ApiRouter::new(Security::Session)
        .get(
            "/dashboard/assets/{file}",
            assets::asset,
            page("dashAsset", "Stylesheet and script."),
        )
        .get(
            "/dashboard/login",
            auth::login_page,
            page("dashLoginPage", "Sign in."),
        )
        .post(
            "/dashboard/login",
            auth::login,
            page("dashLogin", "Sign in (rate limited)."),
        )
        .post(
            "/dashboard/logout",
            auth::logout,
            page("dashLogout", "Sign out."),
        )
        .get(
            "/dashboard/signup",
            auth::signup_page,
            page(
                "dashSignupPage",
                "Create an account (unless WEBDATA_SIGNUP=off).",
            ),
        )
        .post(
            "/dashboard/signup",
            auth::signup,
            page("dashSignup", "Create an account and a free organization."),
        )
        .get(
            "/dashboard/forgot",
            auth::forgot_page,
            page("dashForgotPage", "Ask for a password-reset link."),
        )
        .post(
            "/dashboard/forgot",
            auth::forgot,
            page("dashForgot", "Mail a password-reset link."),
        )
        .get(
            "/dashboard/reset/{token}",
            auth::reset_page,
            page("dashResetPage", "Choose a new password."),
        )
        .post(
            "/dashboard/reset/{token}",
            auth::reset,
            page("dashReset", "Set the new password."),
        )
        .get(
            "/dashboard/invite/{token}",
            auth::invite_page,
            page("dashInvitePage", "An invitation."),
        )
        .post(
            "/dashboard/invite/{token}",
            auth::accept_invite,
            page("dashInviteAccept", "Accept an invitation."),
        )
}

/// Pages behind a sign-in.
fn signed_in() -> ApiRouter<AppState> {
    ApiRouter::new(Security::Session)
        .get(
            "/dashboard",
            overview::overview,
            page("dashOverview", "Credits, spend, 30 days of use, failures."),
        )
        .post(
            "/dashboard/switch",
            auth::switch,
            page("dashSwitch", "Switch organization."),
        )
        .post(
            "/dashboard/orgs",
            auth::create_org,
            page("dashCreateOrg", "Create an organization."),
        )
        .get("/dashboard/keys", keys::list, page("dashKeys", "API keys."))
        .post(
            "/dashboard/keys",
            keys::create,
            page("dashKeyCreate", "Create a key."),
        )
        .post(
            "/dashboard/keys/{id}/rotate",
            keys::rotate,
            page("dashKeyRotate", "Rotate a key."),
        )
        .post(
            "/dashboard/keys/{id}/revoke",
            keys::revoke,
            page("dashKeyRevoke", "Revoke a key."),
        )
        .get(
            "/dashboard/playground",
            playground::show,
            page("dashPlayground", "The playground."),
        )
        .post(
            "/dashboard/playground",
            playground::run,
            page(
                "dashPlaygroundRun",
                "Run a request with the playground key.",
            ),
        )
        .post(
            "/dashboard/playground/key",
            playground::mint,
            page("dashPlaygroundKey", "Mint a playground key."),
        )
        .get(
            "/dashboard/crawls",
            crawls::list,
            page("dashCrawls", "Crawls."),
        )
        .get(
            "/dashboard/crawls/{id}",
            crawls::show,
            page("dashCrawl", "One crawl."),
        )
        .get(
            "/dashboard/crawls/{id}/events",
            crawls::events,
            Op::new("dashCrawlEvents", "A crawl's events.").answers(
                200,
                "Server-sent events.",
                Body::EventStream,
            ),
        )
        .post(
            "/dashboard/crawls/{id}/cancel",
            crawls::cancel,
            page("dashCrawlCancel", "Cancel a crawl."),
        )
        .get(
            "/dashboard/schedules",
            schedules::list,
            page("dashSchedules", "Scheduled crawls."),
        )
        .get(
            "/dashboard/schedules/{id}",
            schedules::show,
            page("dashSchedule", "One schedule, its runs and changes."),
        )
        .post(
            "/dashboard/schedules/{id}/pause",
            schedules::pause,
            page("dashSchedulePause", "Pause a schedule."),
        )
        .post(
            "/dashboard/schedules/{id}/resume",
            schedules::resume,
            page("dashScheduleResume", "Resume a schedule."),
        )
        .post(
            "/dashboard/schedules/{id}/delete",
            schedules::delete,
            page("dashScheduleDelete", "Delete a schedule."),
        )
        .get(
            "/dashboard/webhooks",
            webhooks::show,
            page("dashWebhooks", "Webhooks."),
        )
        .post(
            "/dashboard/webhooks/secret/reveal",
            webhooks::reveal,
            page("dashSecretReveal", "Reveal the signing secret."),
        )
        .post(
            "/dashboard/webhooks/secret/rotate",
            webhooks::rotate,
            page("dashSecretRotate", "Rotate the signing secret."),
        )
        .post(
            "/dashboard/webhooks/endpoints",
            webhooks::add,
            page("dashEndpointAdd", "Add an endpoint."),
        )
        .post(
            "/dashboard/webhooks/endpoints/{id}/{action}",
            webhooks::endpoint_action,
            page(
                "dashEndpointAction",
                "Test, reveal, disable, enable or delete an endpoint.",
            ),
        )
        .post(
            "/dashboard/webhooks/deliveries/{id}/redrive",
            webhooks::redrive,
            page("dashRedrive", "Re-drive a dead letter."),
        )
        .get(
            "/dashboard/usage",
            usage::show,
            page("dashUsage", "The credit ledger."),
        )
        .get(
            "/dashboard/usage.csv",
            usage::csv,
            Op::new("dashUsageCsv", "The ledger as CSV.").answers(200, "CSV.", Body::Text),
        )
        .get(
            "/dashboard/audit",
            usage::audit,
            page("dashAudit", "The audit log."),
        )
        .get(
            "/dashboard/team",
            team::team,
            page("dashTeam", "Members and invitations."),
        )
        .post(
            "/dashboard/team/invitations",
            team::invite,
            page("dashInvite", "Invite someone."),
        )
        .post(
            "/dashboard/team/invitations/{id}/revoke",
            team::revoke_invite,
            page("dashInviteRevoke", "Revoke an invitation."),
        )
        .post(
            "/dashboard/team/members/{user}/{action}",
            team::member_action,
            page("dashMember", "Change a member's role or remove them."),
        )
        .get(
            "/dashboard/settings",
            team::settings,
            page("dashSettings", "Organization settings."),
        )
        .post(
            "/dashboard/settings/{action}",
            team::settings_action,
            page("dashSettingsAction", "Change a setting."),
        )
}

/// Every dashboard route; the caller adds [`super::guard_layer`] around
/// them all and [`super::login_layer`] around the signed-in ones.
pub fn routes() -> (ApiRouter<AppState>, ApiRouter<AppState>) {
    (open(), signed_in())
}
