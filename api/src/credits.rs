//! Holding credits for one request: reserve the worst case up front,
//! settle the actual cost after. A hold dropped unsettled (error, panic,
//! timeout) is released at no cost.

use crate::context::Caller;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use webdata_core::store::{Reservation, ReserveError};
use webdata_core::{ErrorCode, Store};

/// Credits reserved for a request.
pub struct CreditHold {
    store: Store,
    reservation: Option<Reservation>,
    metrics: std::sync::Arc<crate::metrics::Metrics>,
}

impl CreditHold {
    /// Reserves `amount` for `operation`, or answers 402.
    pub async fn reserve(
        app: &AppState,
        caller: &Caller,
        operation: &str,
        amount: i64,
    ) -> ApiResult<Self> {
        let id = Store::new_ledger_id();
        let res = app
            .store
            .reserve_credits(&id, &caller.org.id, Some(&caller.key.id), operation, amount)
            .await;
        if let Err(ReserveError::SpendCapReached { .. }) = &res {
            if let Err(e) = app.store.note_spend_cap_hit(&caller.org.id).await {
                tracing::warn!(error = %e, "could not note the spend cap for its alert");
            }
        }
        let res = res.map_err(|e| match e {
                ReserveError::InsufficientCredits { available, needed } => ApiError::new(
                    ErrorCode::InsufficientCredits,
                    format!("this request needs up to {needed} credits and the organization has {available}"),
                ),
                ReserveError::SpendCapReached { cap, spent } => ApiError::new(
                    ErrorCode::SpendCapReached,
                    format!("the monthly spend cap of {cap} credits is reached ({spent} spent); raise it to continue"),
                ),
                ReserveError::KeyBudgetSpent { budget, .. } => ApiError::new(
                    ErrorCode::InsufficientCredits,
                    format!("this playground key has spent its {budget} credits; create an API key to continue"),
                ),
                ReserveError::Store(msg) => {
                    tracing::error!(error = %msg, "reserving credits failed");
                    ApiError::database()
                }
            })?;
        Ok(CreditHold {
            store: app.store.clone(),
            reservation: Some(res),
            metrics: app.metrics.clone(),
        })
    }

    /// Reserves the largest multiple of `step` up to `max` that the
    /// organization, its monthly spend cap and the key's budget allow, but
    /// at least `min`; answers 402 when even `min` cannot be held. Returns
    /// the hold and the amount held.
    pub async fn reserve_up_to(
        app: &AppState,
        caller: &Caller,
        operation: &str,
        max: i64,
        step: i64,
        min: i64,
    ) -> ApiResult<(Self, i64)> {
        let mut amount = max;
        // The balance can move between attempts; a few rounds settle it.
        for _ in 0..4 {
            let id = Store::new_ledger_id();
            let room = match app
                .store
                .reserve_credits(&id, &caller.org.id, Some(&caller.key.id), operation, amount)
                .await
            {
                Ok(res) => {
                    return Ok((
                        CreditHold {
                            store: app.store.clone(),
                            reservation: Some(res),
                            metrics: app.metrics.clone(),
                        },
                        amount,
                    ))
                }
                Err(ReserveError::InsufficientCredits { available, .. }) => available,
                Err(ReserveError::SpendCapReached { cap, spent }) => cap - spent,
                Err(ReserveError::KeyBudgetSpent { budget, spent }) => budget - spent,
                Err(ReserveError::Store(msg)) => {
                    tracing::error!(error = %msg, "reserving credits failed");
                    return Err(ApiError::database());
                }
            };
            let next = (room.min(amount - 1) / step) * step;
            if next < min {
                break;
            }
            amount = next;
        }
        // Not even `min`: answer with the regular 402 or spend-cap message.
        let hold = Self::reserve(app, caller, operation, min).await?;
        Ok((hold, min))
    }

    /// Settles at `actual` and returns what was charged.
    pub async fn settle(mut self, actual: i64) -> ApiResult<i64> {
        let Some(res) = self.reservation.take() else {
            return Ok(0);
        };
        let charged = self.store.settle_credits(&res, actual).await?;
        self.metrics.add("credits_charged", charged.max(0) as u64);
        Ok(charged)
    }

    /// Settles at `actual` and builds the answer from the charge; with an
    /// idempotency key, the answer is stored in the same transaction as the
    /// charge, so a crash can never leave a charge whose retry runs again.
    pub async fn settle_answering(
        mut self,
        actual: i64,
        held: Option<crate::idempotency::Held>,
        status: axum::http::StatusCode,
        snapshot: Option<webdata_core::store::SnapshotWrite>,
        build: impl Fn(i64) -> serde_json::Value,
    ) -> ApiResult<serde_json::Value> {
        let Some(res) = self.reservation.take() else {
            if let Some(w) = &snapshot {
                self.store.write_change_snapshot(w).await?;
            }
            let body = build(0);
            if let Some(h) = held {
                h.complete(status, &body).await;
            }
            return Ok(body);
        };
        let expected = actual.clamp(0, res.amount);
        let body = build(expected);
        let stored = held.as_ref().map(|h| h.stored(status, &body));
        let charged = self
            .store
            .settle_credits_answering(
                &res,
                actual,
                held.as_ref()
                    .zip(stored.as_ref())
                    .map(|(h, s)| (h.org(), h.key(), s)),
                snapshot.as_ref(),
            )
            .await?;
        self.metrics.add("credits_charged", charged.max(0) as u64);
        if charged == expected {
            if let Some(h) = held {
                h.stored_already();
            }
            return Ok(body);
        }
        // Settled by someone else (the janitor, after a very late answer):
        // the transaction stored nothing; answer and store the real charge.
        let body = build(charged);
        if let Some(h) = held {
            h.complete(status, &body).await;
        }
        Ok(body)
    }
}

impl Drop for CreditHold {
    fn drop(&mut self) {
        if let Some(res) = self.reservation.take() {
            let store = self.store.clone();
            tokio::spawn(async move {
                if let Err(e) = store.settle_credits(&res, 0).await {
                    tracing::error!(error = %e, ledger = %res.id, "releasing a reservation failed; the janitor will retry");
                }
            });
        }
    }
}
