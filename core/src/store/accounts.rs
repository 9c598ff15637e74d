//! People and their organizations: users (an e-mail and a password hash),
//! memberships with a role, sessions (the cookie's SHA-256 is stored, never
//! the cookie), invitations by link and password-reset links. Passwords are
//! hashed by the caller (argon2id in the API); the store never sees them.

use super::orgs::Organization;
use super::{new_id, now_ms, opt_i64, Store, StoreError, StoreResult};
use serde::Serialize;
use sha2::{Digest, Sha256};
use sqlx::Row;

/// How long a session lasts.
pub const SESSION_TTL_MS: i64 = 14 * 24 * 60 * 60 * 1000;
/// How long an invitation link works.
pub const INVITATION_TTL_MS: i64 = 7 * 24 * 60 * 60 * 1000;
/// How long a password-reset link works.
pub const RESET_TTL_MS: i64 = 60 * 60 * 1000;

/// A person's role in an organization.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Member,
    Admin,
    Owner,
}

impl Role {
    /// Every role, least to most.
    pub const ALL: [Role; 3] = [Role::Member, Role::Admin, Role::Owner];

    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Owner => "owner",
            Role::Admin => "admin",
            Role::Member => "member",
        }
    }

    /// The role with this stored name.
    pub fn parse(s: &str) -> Option<Role> {
        Self::ALL.into_iter().find(|r| r.as_str() == s)
    }

    /// Owners and admins manage keys, webhooks and members.
    pub fn manages(self) -> bool {
        self >= Role::Admin
    }
}

/// A person.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct User {
    pub id: String,
    pub email: String,
    #[serde(skip)]
    pub password_hash: String,
    pub created_at: i64,
}

/// A person in an organization.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Member {
    pub user_id: String,
    pub email: String,
    pub role: Role,
    pub since: i64,
}

/// A signed-in browser.
#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    /// SHA-256 of the cookie value.
    pub id: String,
    pub user: User,
    /// The organization the person is looking at.
    pub org_id: Option<String>,
    /// The token every form of this session carries.
    pub csrf: String,
    pub expires_at: i64,
}

/// An invitation to an organization.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Invitation {
    pub id: String,
    pub org_id: String,
    pub role: Role,
    pub email: Option<String>,
    pub invited_by: String,
    pub created_at: i64,
    pub expires_at: i64,
    pub accepted_by: Option<String>,
    pub accepted_at: Option<i64>,
    pub revoked_at: Option<i64>,
}

impl Invitation {
    /// Still usable at `now`.
    pub fn is_open(&self, now: i64) -> bool {
        self.accepted_at.is_none() && self.revoked_at.is_none() && self.expires_at > now
    }
}

/// SHA-256 of a token, lowercase hex.
pub fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// A fresh random token (32 bytes, base64url).
pub fn random_token() -> String {
    use base64::Engine;
    use rand::RngCore;
    let mut bytes = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut bytes);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// E-mail addresses are compared trimmed and lowercased.
pub fn normalize_email(email: &str) -> String {
    email.trim().to_lowercase()
}

fn user_from_row(r: &sqlx::any::AnyRow) -> StoreResult<User> {
    Ok(User {
        id: r.try_get("id")?,
        email: r.try_get("email")?,
        password_hash: r.try_get("password_hash")?,
        created_at: r.try_get("created_at")?,
    })
}

fn role_of(name: &str) -> StoreResult<Role> {
    Role::parse(name).ok_or_else(|| StoreError::Invalid(format!("unknown role `{name}`")))
}

fn invitation_from_row(r: &sqlx::any::AnyRow) -> StoreResult<Invitation> {
    Ok(Invitation {
        id: r.try_get("id")?,
        org_id: r.try_get("org_id")?,
        role: role_of(&r.try_get::<String, _>("role")?)?,
        email: r.try_get("email")?,
        invited_by: r.try_get("invited_by")?,
        created_at: r.try_get("created_at")?,
        expires_at: r.try_get("expires_at")?,
        accepted_by: r.try_get("accepted_by")?,
        accepted_at: opt_i64(r, "accepted_at")?,
        revoked_at: opt_i64(r, "revoked_at")?,
    })
}

const INVITATION_COLUMNS: &str = "id, org_id, role, email, invited_by, created_at, expires_at, accepted_by, accepted_at, revoked_at";

impl Store {
    /// Creates a person; `Invalid` when the e-mail is taken.
    pub async fn create_user(&self, email: &str, password_hash: &str) -> StoreResult<User> {
        let email = normalize_email(email);
        if self.user_by_email(&email).await?.is_some() {
            return Err(StoreError::Invalid(format!(
                "an account with the e-mail {email} already exists"
            )));
        }
        let u = User {
            id: new_id("usr"),
            email,
            password_hash: password_hash.to_string(),
            created_at: now_ms(),
        };
        sqlx::query(
            "INSERT INTO users (id, email, password_hash, created_at) VALUES ($1, $2, $3, $4)",
        )
        .bind(&u.id)
        .bind(&u.email)
        .bind(&u.password_hash)
        .bind(u.created_at)
        .execute(self.pool())
        .await?;
        Ok(u)
    }

    /// The person with this e-mail.
    pub async fn user_by_email(&self, email: &str) -> StoreResult<Option<User>> {
        let row =
            sqlx::query("SELECT id, email, password_hash, created_at FROM users WHERE email = $1")
                .bind(normalize_email(email))
                .fetch_optional(self.pool())
                .await?;
        row.as_ref().map(user_from_row).transpose()
    }

    /// The person with this id.
    pub async fn get_user(&self, id: &str) -> StoreResult<User> {
        let row =
            sqlx::query("SELECT id, email, password_hash, created_at FROM users WHERE id = $1")
                .bind(id)
                .fetch_optional(self.pool())
                .await?
                .ok_or_else(|| StoreError::NotFound(format!("user {id}")))?;
        user_from_row(&row)
    }

    /// Replaces a person's password hash and signs out every session.
    pub async fn set_password(&self, user_id: &str, password_hash: &str) -> StoreResult<()> {
        let mut tx = self.begin_write().await?;
        sqlx::query("UPDATE users SET password_hash = $1 WHERE id = $2")
            .bind(password_hash)
            .bind(user_id)
            .execute(&mut *tx)
            .await?;
        sqlx::query("DELETE FROM sessions WHERE user_id = $1")
            .bind(user_id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Adds (or changes) a person's role in an organization.
    pub async fn set_membership(&self, org_id: &str, user_id: &str, role: Role) -> StoreResult<()> {
        let mut tx = self.begin_write().await?;
        let n = sqlx::query("UPDATE memberships SET role = $1 WHERE org_id = $2 AND user_id = $3")
            .bind(role.as_str())
            .bind(org_id)
            .bind(user_id)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        if n == 0 {
            sqlx::query("INSERT INTO memberships (org_id, user_id, role, created_at) VALUES ($1, $2, $3, $4)")
                .bind(org_id)
                .bind(user_id)
                .bind(role.as_str())
                .bind(now_ms())
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// A person's role in an organization (None: not a member, or the
    /// organization was deleted).
    pub async fn role_in(&self, org_id: &str, user_id: &str) -> StoreResult<Option<Role>> {
        let role: Option<String> = sqlx::query_scalar(
            "SELECT m.role FROM memberships m JOIN organizations o ON o.id = m.org_id \
             WHERE m.org_id = $1 AND m.user_id = $2 AND o.deleted_at IS NULL",
        )
        .bind(org_id)
        .bind(user_id)
        .fetch_optional(self.pool())
        .await?;
        role.map(|r| role_of(&r)).transpose()
    }

    /// The organizations a person belongs to, with their role, by name.
    pub async fn orgs_of(&self, user_id: &str) -> StoreResult<Vec<(Organization, Role)>> {
        let rows = sqlx::query(
            "SELECT m.org_id, m.role FROM memberships m JOIN organizations o ON o.id = m.org_id \
             WHERE m.user_id = $1 AND o.deleted_at IS NULL ORDER BY o.name, o.id",
        )
        .bind(user_id)
        .fetch_all(self.pool())
        .await?;
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            let org_id: String = r.try_get("org_id")?;
            let role = role_of(&r.try_get::<String, _>("role")?)?;
            out.push((self.get_org(&org_id).await?, role));
        }
        Ok(out)
    }

    /// The members of an organization, owners first.
    pub async fn members(&self, org_id: &str) -> StoreResult<Vec<Member>> {
        let rows = sqlx::query(
            "SELECT m.user_id, u.email, m.role, m.created_at FROM memberships m JOIN users u ON u.id = m.user_id \
             WHERE m.org_id = $1 ORDER BY m.created_at, u.email",
        )
        .bind(org_id)
        .fetch_all(self.pool())
        .await?;
        let mut out: Vec<Member> = rows
            .iter()
            .map(|r| {
                Ok(Member {
                    user_id: r.try_get("user_id")?,
                    email: r.try_get("email")?,
                    role: role_of(&r.try_get::<String, _>("role")?)?,
                    since: r.try_get("created_at")?,
                })
            })
            .collect::<StoreResult<_>>()?;
        out.sort_by_key(|m| std::cmp::Reverse(m.role));
        Ok(out)
    }

    /// Removes a person from an organization; their playground key goes too.
    pub async fn remove_member(&self, org_id: &str, user_id: &str) -> StoreResult<()> {
        let n = sqlx::query("DELETE FROM memberships WHERE org_id = $1 AND user_id = $2")
            .bind(org_id)
            .bind(user_id)
            .execute(self.pool())
            .await?
            .rows_affected();
        if n == 0 {
            return Err(StoreError::NotFound(format!("member {user_id}")));
        }
        sqlx::query("UPDATE api_keys SET revoked_at = $1 WHERE org_id = $2 AND person = $3 AND kind = 'playground' AND revoked_at IS NULL")
            .bind(now_ms())
            .bind(org_id)
            .bind(user_id)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// Makes `to` the owner and `from` an admin, in one transaction.
    pub async fn transfer_ownership(&self, org_id: &str, from: &str, to: &str) -> StoreResult<()> {
        let mut tx = self.begin_write().await?;
        let n =
            sqlx::query("UPDATE memberships SET role = 'owner' WHERE org_id = $1 AND user_id = $2")
                .bind(org_id)
                .bind(to)
                .execute(&mut *tx)
                .await?
                .rows_affected();
        if n == 0 {
            return Err(StoreError::NotFound(format!("member {to}")));
        }
        sqlx::query("UPDATE memberships SET role = 'admin' WHERE org_id = $1 AND user_id = $2")
            .bind(org_id)
            .bind(from)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Deletes an organization: its keys are revoked, its running crawls
    /// cancelled, its members removed; the rows stay for the ledger.
    pub async fn delete_org(&self, org_id: &str) -> StoreResult<()> {
        let now = now_ms();
        let mut tx = self.begin_write().await?;
        let n = sqlx::query(
            "UPDATE organizations SET deleted_at = $1 WHERE id = $2 AND deleted_at IS NULL",
        )
        .bind(now)
        .bind(org_id)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if n == 0 {
            return Err(StoreError::NotFound(format!("organization {org_id}")));
        }
        sqlx::query("UPDATE api_keys SET revoked_at = $1 WHERE org_id = $2 AND revoked_at IS NULL")
            .bind(now)
            .bind(org_id)
            .execute(&mut *tx)
            .await?;
        sqlx::query("DELETE FROM memberships WHERE org_id = $1")
            .bind(org_id)
            .execute(&mut *tx)
            .await?;
        sqlx::query("UPDATE sessions SET org_id = NULL WHERE org_id = $1")
            .bind(org_id)
            .execute(&mut *tx)
            .await?;
        sqlx::query("UPDATE webhook_endpoints SET disabled_at = $1 WHERE org_id = $2 AND disabled_at IS NULL")
            .bind(now)
            .bind(org_id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        let running = sqlx::query_scalar::<_, String>(
            "SELECT id FROM crawls WHERE org_id = $1 AND status IN ('queued', 'scraping')",
        )
        .bind(org_id)
        .fetch_all(self.pool())
        .await?;
        for id in running {
            self.finish_crawl(&id, super::CrawlStatus::Cancelled, None)
                .await?;
        }
        self.audit(org_id, None, "org.deleted", "").await
    }

    /// Starts a session; returns it and the cookie value (shown only here).
    pub async fn create_session(
        &self,
        user_id: &str,
        org_id: Option<&str>,
    ) -> StoreResult<(Session, String)> {
        let token = random_token();
        let now = now_ms();
        let id = token_hash(&token);
        let csrf = random_token();
        sqlx::query("INSERT INTO sessions (id, user_id, org_id, csrf, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)")
            .bind(&id)
            .bind(user_id)
            .bind(org_id)
            .bind(&csrf)
            .bind(now)
            .bind(now + SESSION_TTL_MS)
            .execute(self.pool())
            .await?;
        let user = self.get_user(user_id).await?;
        Ok((
            Session {
                id,
                user,
                org_id: org_id.map(str::to_string),
                csrf,
                expires_at: now + SESSION_TTL_MS,
            },
            token,
        ))
    }

    /// The live session behind a cookie value.
    pub async fn session(&self, token: &str) -> StoreResult<Option<Session>> {
        let row = sqlx::query(
            "SELECT s.id AS sid, s.org_id, s.csrf, s.expires_at, u.id, u.email, u.password_hash, u.created_at \
             FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.id = $1",
        )
        .bind(token_hash(token))
        .fetch_optional(self.pool())
        .await?;
        let Some(r) = row else { return Ok(None) };
        let expires_at: i64 = r.try_get("expires_at")?;
        if expires_at <= now_ms() {
            return Ok(None);
        }
        Ok(Some(Session {
            id: r.try_get("sid")?,
            user: user_from_row(&r)?,
            org_id: r.try_get("org_id")?,
            csrf: r.try_get("csrf")?,
            expires_at,
        }))
    }

    /// Points a session at another organization.
    pub async fn switch_session_org(&self, session_id: &str, org_id: &str) -> StoreResult<()> {
        sqlx::query("UPDATE sessions SET org_id = $1 WHERE id = $2")
            .bind(org_id)
            .bind(session_id)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// Ends a session.
    pub async fn end_session(&self, session_id: &str) -> StoreResult<()> {
        sqlx::query("DELETE FROM sessions WHERE id = $1")
            .bind(session_id)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// Creates an invitation; returns it and the token of its link.
    pub async fn create_invitation(
        &self,
        org_id: &str,
        role: Role,
        email: Option<&str>,
        invited_by: &str,
    ) -> StoreResult<(Invitation, String)> {
        let token = random_token();
        let now = now_ms();
        let inv = Invitation {
            id: new_id("inv"),
            org_id: org_id.to_string(),
            role,
            email: email.map(normalize_email).filter(|e| !e.is_empty()),
            invited_by: invited_by.to_string(),
            created_at: now,
            expires_at: now + INVITATION_TTL_MS,
            accepted_by: None,
            accepted_at: None,
            revoked_at: None,
        };
        sqlx::query("INSERT INTO invitations (id, token_hash, org_id, role, email, invited_by, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)")
            .bind(&inv.id)
            .bind(token_hash(&token))
            .bind(org_id)
            .bind(role.as_str())
            .bind(&inv.email)
            .bind(invited_by)
            .bind(now)
            .bind(inv.expires_at)
            .execute(self.pool())
            .await?;
        Ok((inv, token))
    }

    /// The invitation behind a link token.
    pub async fn invitation_by_token(&self, token: &str) -> StoreResult<Option<Invitation>> {
        let row = sqlx::query(&format!(
            "SELECT {INVITATION_COLUMNS} FROM invitations WHERE token_hash = $1"
        ))
        .bind(token_hash(token))
        .fetch_optional(self.pool())
        .await?;
        row.as_ref().map(invitation_from_row).transpose()
    }

    /// An organization's invitations, newest first.
    pub async fn invitations(&self, org_id: &str) -> StoreResult<Vec<Invitation>> {
        let rows = sqlx::query(&format!(
            "SELECT {INVITATION_COLUMNS} FROM invitations WHERE org_id = $1 ORDER BY created_at DESC, id DESC LIMIT 100"
        ))
        .bind(org_id)
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(invitation_from_row).collect()
    }

    /// Accepts an open invitation: the person joins with its role (an
    /// existing member keeps the higher of the two roles). Returns the
    /// organization id; None when the link is used, revoked or expired.
    pub async fn accept_invitation(
        &self,
        token: &str,
        user_id: &str,
    ) -> StoreResult<Option<String>> {
        let now = now_ms();
        let Some(inv) = self.invitation_by_token(token).await? else {
            return Ok(None);
        };
        if !inv.is_open(now) {
            return Ok(None);
        }
        let n = sqlx::query("UPDATE invitations SET accepted_by = $1, accepted_at = $2 WHERE id = $3 AND accepted_at IS NULL AND revoked_at IS NULL")
            .bind(user_id)
            .bind(now)
            .bind(&inv.id)
            .execute(self.pool())
            .await?
            .rows_affected();
        if n == 0 {
            return Ok(None);
        }
        let role = match self.role_in(&inv.org_id, user_id).await? {
            Some(r) if r >= inv.role => r,
            _ => inv.role,
        };
        self.set_membership(&inv.org_id, user_id, role).await?;
        Ok(Some(inv.org_id))
    }

    /// Revokes an open invitation of an organization.
    pub async fn revoke_invitation(&self, org_id: &str, id: &str) -> StoreResult<()> {
        let n = sqlx::query("UPDATE invitations SET revoked_at = $1 WHERE id = $2 AND org_id = $3 AND accepted_at IS NULL AND revoked_at IS NULL")
            .bind(now_ms())
            .bind(id)
            .bind(org_id)
            .execute(self.pool())
            .await?
            .rows_affected();
        if n == 0 {
            return Err(StoreError::NotFound(format!("invitation {id}")));
        }
        Ok(())
    }

    /// A password-reset link token for a person (valid one hour).
    pub async fn create_password_reset(&self, user_id: &str) -> StoreResult<String> {
        let token = random_token();
        let now = now_ms();
        sqlx::query("INSERT INTO password_resets (token_hash, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4)")
            .bind(token_hash(&token))
            .bind(user_id)
            .bind(now)
            .bind(now + RESET_TTL_MS)
            .execute(self.pool())
            .await?;
        Ok(token)
    }

    /// The person a reset link is for, while it is unused and fresh.
    pub async fn password_reset_user(&self, token: &str) -> StoreResult<Option<String>> {
        let row = sqlx::query(
            "SELECT user_id, expires_at, used_at FROM password_resets WHERE token_hash = $1",
        )
        .bind(token_hash(token))
        .fetch_optional(self.pool())
        .await?;
        let Some(r) = row else { return Ok(None) };
        if opt_i64(&r, "used_at")?.is_some() || r.try_get::<i64, _>("expires_at")? <= now_ms() {
            return Ok(None);
        }
        Ok(Some(r.try_get("user_id")?))
    }

    /// Uses a reset link once: sets the new hash and signs out everywhere.
    /// False when the link is used or expired.
    pub async fn use_password_reset(&self, token: &str, password_hash: &str) -> StoreResult<bool> {
        let Some(user_id) = self.password_reset_user(token).await? else {
            return Ok(false);
        };
        let n = sqlx::query(
            "UPDATE password_resets SET used_at = $1 WHERE token_hash = $2 AND used_at IS NULL",
        )
        .bind(now_ms())
        .bind(token_hash(token))
        .execute(self.pool())
        .await?
        .rows_affected();
        if n == 0 {
            return Ok(false);
        }
        self.set_password(&user_id, password_hash).await?;
        Ok(true)
    }

    /// Forgets expired sessions, invitations and reset links.
    pub async fn sweep_accounts(&self) -> StoreResult<()> {
        let now = now_ms();
        sqlx::query("DELETE FROM sessions WHERE expires_at < $1")
            .bind(now)
            .execute(self.pool())
            .await?;
        sqlx::query("DELETE FROM password_resets WHERE expires_at < $1")
            .bind(now - 86_400_000)
            .execute(self.pool())
            .await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Role;

    #[test]
    fn roles_order_and_names() {
        assert!(Role::Owner > Role::Admin && Role::Admin > Role::Member);
        assert!(Role::Admin.manages() && Role::Owner.manages() && !Role::Member.manages());
        for r in Role::ALL {
            assert_eq!(Role::parse(r.as_str()), Some(r));
        }
        assert_eq!(Role::parse("root"), None);
    }
}
