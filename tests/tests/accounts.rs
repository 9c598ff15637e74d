//! The dashboard's store, on SQLite and PostgreSQL: people, memberships and
//! roles, sessions, invitations, password resets, organization deletion,
//! the request log and daily usage, and usage alerts queued once per
//! crossing into the webhook outbox.

mod support;
use support::{fresh_database, Db};
use webdata_core::store::{
    now_ms, DeliveryState, LedgerFilter, NewOrganization, OrgUpdate, RequestRecord, Role,
};
use webdata_core::Store;

async fn store(db: Db) -> Store {
    Store::connect(&fresh_database(db).await)
        .await
        .expect("store")
}

async fn org(s: &Store, credits: i64) -> String {
    s.create_org(&NewOrganization {
        name: "acme".into(),
        credits,
        ..Default::default()
    })
    .await
    .expect("org")
    .id
}

on_both!(
    people_roles_sessions_and_invitations,
    password_resets_work_once_and_sign_out_everywhere,
    deleting_an_organization_revokes_its_keys_and_hides_it,
    request_log_feeds_daily_usage_failures_and_key_last_use,
    low_credit_alert_goes_once_per_crossing_and_rearms_after_a_top_up,
    spend_cap_alert_goes_once_a_month_even_when_a_refusal_triggered_it,
    audit_records_name_the_person_and_keys_their_creator,
    minting_playground_keys_at_once_leaves_one_live_key,
);

async fn minting_playground_keys_at_once_leaves_one_live_key(db: Db) {
    let s = store(db).await;
    let o = org(&s, 10).await;
    let mints: Vec<_> = (0..8)
        .map(|_| {
            let s = s.clone();
            let o = o.clone();
            tokio::spawn(async move { s.create_playground_key(&o, "usr_ann").await })
        })
        .collect();
    for m in mints {
        m.await.expect("task").expect("mint");
    }
    let live: Vec<_> = s
        .list_keys(&o, true)
        .await
        .expect("keys")
        .into_iter()
        .filter(|k| k.is_active(now_ms()))
        .collect();
    assert_eq!(live.len(), 1, "{live:?}");
}

async fn people_roles_sessions_and_invitations(db: Db) {
    let s = store(db).await;
    let o = org(&s, 10).await;
    let ann = s
        .create_user(" Ann@Example.test ", "hash-a")
        .await
        .expect("ann");
    assert_eq!(ann.email, "ann@example.test");
    assert!(
        s.create_user("ANN@example.test", "x").await.is_err(),
        "e-mails are unique, case-insensitively"
    );
    s.set_membership(&o, &ann.id, Role::Owner)
        .await
        .expect("owner");
    assert_eq!(
        s.role_in(&o, &ann.id).await.expect("role"),
        Some(Role::Owner)
    );

    let (sess, cookie) = s.create_session(&ann.id, Some(&o)).await.expect("session");
    assert_ne!(sess.id, cookie, "only the cookie's hash is stored");
    let found = s.session(&cookie).await.expect("lookup").expect("live");
    assert_eq!(found.user.id, ann.id);
    assert_eq!(found.org_id.as_deref(), Some(o.as_str()));
    assert!(s.session("not-a-cookie").await.expect("lookup").is_none());

    // An invitation link: one use, the role it names.
    let (inv, token) = s
        .create_invitation(&o, Role::Admin, Some("bob@example.test"), &ann.email)
        .await
        .expect("invite");
    assert!(inv.is_open(now_ms()));
    let bob = s
        .create_user("bob@example.test", "hash-b")
        .await
        .expect("bob");
    assert_eq!(
        s.accept_invitation(&token, &bob.id).await.expect("accept"),
        Some(o.clone())
    );
    assert_eq!(
        s.role_in(&o, &bob.id).await.expect("role"),
        Some(Role::Admin)
    );
    assert_eq!(
        s.accept_invitation(&token, &ann.id).await.expect("again"),
        None,
        "a used link does not work twice"
    );
    let (inv2, token2) = s
        .create_invitation(&o, Role::Member, None, &ann.email)
        .await
        .expect("invite 2");
    s.revoke_invitation(&o, &inv2.id).await.expect("revoke");
    let carl = s.create_user("carl@example.test", "h").await.expect("carl");
    assert_eq!(
        s.accept_invitation(&token2, &carl.id)
            .await
            .expect("revoked"),
        None
    );
    assert_eq!(s.role_in(&o, &carl.id).await.expect("role"), None);

    // Members, owners first; transfer keeps exactly one owner.
    let members = s.members(&o).await.expect("members");
    assert_eq!(members[0].role, Role::Owner);
    assert_eq!(members.len(), 2);
    s.transfer_ownership(&o, &ann.id, &bob.id)
        .await
        .expect("transfer");
    assert_eq!(s.role_in(&o, &bob.id).await.expect("r"), Some(Role::Owner));
    assert_eq!(s.role_in(&o, &ann.id).await.expect("r"), Some(Role::Admin));
    assert!(
        s.transfer_ownership(&o, &bob.id, &carl.id).await.is_err(),
        "only members"
    );

    // Removing a member also revokes their playground key.
    let pg = s.create_playground_key(&o, &ann.id).await.expect("pg");
    s.remove_member(&o, &ann.id).await.expect("remove");
    assert!(s
        .get_key(&pg.key.id)
        .await
        .expect("key")
        .revoked_at
        .is_some());
    assert!(s.orgs_of(&ann.id).await.expect("orgs").is_empty());
    s.end_session(&sess.id).await.expect("end");
    assert!(s.session(&cookie).await.expect("lookup").is_none());
}

async fn password_resets_work_once_and_sign_out_everywhere(db: Db) {
    let s = store(db).await;
    let u = s.create_user("r@example.test", "old").await.expect("user");
    let (_, cookie) = s.create_session(&u.id, None).await.expect("session");
    let token = s.create_password_reset(&u.id).await.expect("reset");
    assert_eq!(
        s.password_reset_user(&token)
            .await
            .expect("lookup")
            .as_deref(),
        Some(u.id.as_str())
    );
    assert!(s.use_password_reset(&token, "new").await.expect("use"));
    assert_eq!(s.get_user(&u.id).await.expect("user").password_hash, "new");
    assert!(
        s.session(&cookie).await.expect("lookup").is_none(),
        "signed out"
    );
    assert!(!s.use_password_reset(&token, "again").await.expect("reuse"));
    assert_eq!(s.get_user(&u.id).await.expect("user").password_hash, "new");
}

async fn deleting_an_organization_revokes_its_keys_and_hides_it(db: Db) {
    let s = store(db).await;
    let o = org(&s, 10).await;
    let u = s.create_user("d@example.test", "h").await.expect("user");
    s.set_membership(&o, &u.id, Role::Owner).await.expect("m");
    let k = s.create_key(&o, "k").await.expect("key");
    s.delete_org(&o).await.expect("delete");
    assert!(s
        .get_key(&k.key.id)
        .await
        .expect("key")
        .revoked_at
        .is_some());
    assert!(s.orgs_of(&u.id).await.expect("orgs").is_empty());
    assert_eq!(s.role_in(&o, &u.id).await.expect("role"), None);
    assert!(
        s.delete_org(&o).await.is_err(),
        "deleting twice is not found"
    );
}

async fn request_log_feeds_daily_usage_failures_and_key_last_use(db: Db) {
    let s = store(db).await;
    let o = org(&s, 100).await;
    let k = s.create_key(&o, "k").await.expect("key");
    assert_eq!(k.key.last_used_at, None);
    let now = now_ms();
    for (status, code) in [
        (200, None),
        (200, None),
        (402, Some("insufficient_credits")),
        (400, Some("invalid_request")),
        (400, Some("invalid_request")),
    ] {
        s.log_request(&RequestRecord {
            org_id: o.clone(),
            key_id: Some(k.key.id.clone()),
            method: "POST".into(),
            route: "/v1/scrape".into(),
            status,
            error_code: code.map(str::to_string),
            message: code.map(|c| format!("because {c}")),
            at: now,
        })
        .await
        .expect("log");
    }
    let res = s
        .reserve_credits(&Store::new_ledger_id(), &o, Some(&k.key.id), "scrape", 5)
        .await
        .expect("reserve");
    s.settle_credits(&res, 3).await.expect("settle");
    let days = s.daily_usage(&o, 30).await.expect("days");
    assert_eq!(days.len(), 30);
    let today = days.last().expect("today");
    assert_eq!((today.requests, today.credits), (5, 3));
    assert!(days[..29].iter().all(|d| d.requests == 0 && d.credits == 0));
    let fails = s.failures_by_code(&o, now - 1000).await.expect("failures");
    assert_eq!(fails.len(), 2);
    assert_eq!(
        (fails[0].code.as_str(), fails[0].count),
        ("invalid_request", 2)
    );
    assert_eq!(fails[0].last_message, "because invalid_request");
    assert_eq!(
        s.get_key(&k.key.id).await.expect("key").last_used_at,
        Some(now)
    );
    let rows = s
        .ledger_rows(
            &o,
            &LedgerFilter {
                operation: Some("scrape".into()),
                limit: 10,
                ..Default::default()
            },
        )
        .await
        .expect("ledger");
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (rows[0].settled, rows[0].key_name.as_deref()),
        (Some(3), Some("k"))
    );
    let none = s
        .ledger_rows(
            &o,
            &LedgerFilter {
                operation: Some("crawl".into()),
                limit: 10,
                ..Default::default()
            },
        )
        .await
        .expect("ledger");
    assert!(none.is_empty());
}

async fn alerts(s: &Store, org_id: &str) -> Vec<(String, serde_json::Value)> {
    s.deliveries(org_id, None, 100)
        .await
        .expect("deliveries")
        .into_iter()
        .map(|d| (d.event_type, serde_json::from_str(&d.body).expect("json")))
        .collect()
}

async fn low_credit_alert_goes_once_per_crossing_and_rearms_after_a_top_up(db: Db) {
    let s = store(db).await;
    let o = org(&s, 100).await;
    let e = s
        .create_webhook_endpoint(&o, "https://hooks.example.test/a")
        .await
        .expect("endpoint");
    let off = s
        .create_webhook_endpoint(&o, "https://hooks.example.test/off")
        .await
        .expect("endpoint");
    s.set_endpoint_disabled(&o, &off.id, true)
        .await
        .expect("disable");
    assert_eq!(
        s.alert_settings(&o).await.expect("a").effective(),
        10,
        "10% of the first 100"
    );
    assert_eq!(s.queue_usage_alerts().await.expect("q"), 0);
    let spend = |n: i64| {
        let s = s.clone();
        let o = o.clone();
        async move {
            let r = s
                .reserve_credits(&Store::new_ledger_id(), &o, None, "scrape", n)
                .await
                .expect("reserve");
            s.settle_credits(&r, n).await.expect("settle");
        }
    };
    spend(89).await;
    assert_eq!(
        s.queue_usage_alerts().await.expect("q"),
        0,
        "11 left is above 10"
    );
    spend(1).await;
    assert_eq!(s.queue_usage_alerts().await.expect("q"), 1);
    assert_eq!(
        s.queue_usage_alerts().await.expect("q"),
        0,
        "once per crossing"
    );
    spend(5).await;
    assert_eq!(
        s.queue_usage_alerts().await.expect("q"),
        0,
        "still the same crossing"
    );
    let sent = alerts(&s, &o).await;
    assert_eq!(
        sent.len(),
        1,
        "the disabled endpoint gets nothing: {sent:?}"
    );
    assert_eq!(sent[0].0, "usage.credits_low");
    assert_eq!(sent[0].1["data"]["credits"], 10);
    assert_eq!(sent[0].1["data"]["threshold"], 10);
    let d = &s
        .deliveries(&o, Some(DeliveryState::Pending), 10)
        .await
        .expect("d")[0];
    assert_eq!(d.endpoint_id.as_deref(), Some(e.id.as_str()));

    // A top-up of 1000 re-arms it and moves the default threshold to 100.
    s.update_org(
        &o,
        &OrgUpdate {
            add_credits: Some(1000),
            ..Default::default()
        },
    )
    .await
    .expect("top up");
    assert_eq!(s.alert_settings(&o).await.expect("a").effective(), 100);
    assert_eq!(s.queue_usage_alerts().await.expect("q"), 0);
    spend(905).await;
    assert_eq!(s.queue_usage_alerts().await.expect("q"), 1, "crossed again");
    // The owner's own threshold wins over the default.
    s.set_alert_threshold(&o, Some(0)).await.expect("threshold");
    assert_eq!(s.alert_settings(&o).await.expect("a").effective(), 0);
    assert!(s.set_alert_threshold(&o, Some(-1)).await.is_err());
}

async fn spend_cap_alert_goes_once_a_month_even_when_a_refusal_triggered_it(db: Db) {
    let s = store(db).await;
    let o = org(&s, 100).await;
    s.create_webhook_endpoint(&o, "https://hooks.example.test/a")
        .await
        .expect("endpoint");
    s.update_org(
        &o,
        &OrgUpdate {
            spend_cap: Some(Some(10)),
            ..Default::default()
        },
    )
    .await
    .expect("cap");
    let r = s
        .reserve_credits(&Store::new_ledger_id(), &o, None, "scrape", 8)
        .await
        .expect("reserve");
    s.settle_credits(&r, 8).await.expect("settle");
    assert_eq!(s.queue_usage_alerts().await.expect("q"), 0, "8 of 10");
    assert!(s
        .reserve_credits(&Store::new_ledger_id(), &o, None, "map", 5)
        .await
        .is_err());
    s.note_spend_cap_hit(&o).await.expect("note");
    assert_eq!(
        s.queue_usage_alerts().await.expect("q"),
        1,
        "the refusal counts"
    );
    assert_eq!(s.queue_usage_alerts().await.expect("q"), 0, "once a month");
    let sent = alerts(&s, &o).await;
    assert_eq!(sent[0].0, "usage.spend_cap_reached");
    assert_eq!(sent[0].1["data"]["spendCap"], 10);
    assert_eq!(sent[0].1["data"]["spent"], 8);
}

async fn audit_records_name_the_person_and_keys_their_creator(db: Db) {
    let s = store(db).await;
    let o = org(&s, 10).await;
    let k = webdata_core::store::with_actor(
        "ann@example.test".into(),
        s.create_key(&o, "made in the dashboard"),
    )
    .await
    .expect("key");
    assert_eq!(k.key.created_by.as_deref(), Some("ann@example.test"));
    let cli = s.create_key(&o, "made by the CLI").await.expect("key");
    assert_eq!(cli.key.created_by, None);
    let log = s.audit_log(&o, 10).await.expect("audit");
    let dash = log
        .iter()
        .find(|r| r["detail"] == "made in the dashboard")
        .expect("record");
    assert_eq!(dash["actor"], "ann@example.test");
    let plain = log
        .iter()
        .find(|r| r["detail"] == "made by the CLI")
        .expect("record");
    assert!(plain["actor"].is_null());
}
