//! Holding credits for one request: reserve the worst case up front,
//! settle the actual cost after. A hold dropped unsettled (error, panic,
//! timeout) is released at no cost.

use crate::app::AppState;
use crate::context::Caller;
use crate::error::{ApiError, ApiResult};
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
            .await
            .map_err(|e| match e {
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
                    ApiError::internal("the database failed; it is safe to retry")
                }
            })?;
        Ok(CreditHold {
            store: app.store.clone(),
            reservation: Some(res),
            metrics: app.metrics.clone(),
        })
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
