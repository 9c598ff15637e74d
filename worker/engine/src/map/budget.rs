//! The fetch budget and its price: credits per block of fetches, and the
//! counter every fetch takes from.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Most fetches one map makes (42 credits' worth).
pub const MAX_FETCHES: usize = 140;
/// What a map reserves up front: the cost of [`MAX_FETCHES`].
pub const WORST_CASE_CREDITS: i64 = 42;
/// Credits per started block of ten fetches.
pub const CREDIT_STEP: i64 = 3;

/// Credits for `fetches`: 3 per 10 started, at least 3.
pub fn credits_for(fetches: usize) -> i64 {
    fetches.max(1).div_ceil(10) as i64 * CREDIT_STEP
}

/// Fetches `credits` pay for (at most [`MAX_FETCHES`]).
pub fn fetches_for(credits: i64) -> usize {
    ((credits.max(0) / CREDIT_STEP) as usize * 10).min(MAX_FETCHES)
}
/// The fetch budget; `take` before every fetch.
pub(super) struct Budget {
    pub(super) used: AtomicUsize,
    pub(super) max: usize,
    pub(super) refused: AtomicBool,
}

impl Budget {
    pub(super) fn take(&self) -> bool {
        let mut cur = self.used.load(Ordering::Acquire);
        loop {
            if cur >= self.max {
                self.refused.store(true, Ordering::Release);
                return false;
            }
            match self
                .used
                .compare_exchange_weak(cur, cur + 1, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return true,
                Err(now) => cur = now,
            }
        }
    }

    pub(super) fn give_back(&self) {
        self.used.fetch_sub(1, Ordering::AcqRel);
    }

    pub(super) fn used(&self) -> usize {
        self.used.load(Ordering::Acquire)
    }
}
