//! Replica math: how many workers and browsers a pool needs, as a pure
//! function of its backlog in the store, and when a lower number may take
//! effect (up at once, down only after the pool's scale-down delay).

use webdata_core::store::PoolBacklog;

/// A pool's bounds and per-replica capacity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sizing {
    pub min: i32,
    pub max: i32,
    /// URLs one replica works on at once (worker concurrency, or browser sessions).
    pub per_replica: i32,
}

fn clamp(need: i64, s: Sizing) -> i32 {
    let max = s.max.max(0) as i64;
    let min = (s.min.max(0) as i64).min(max);
    need.clamp(min, max) as i32
}

/// Workers for `backlog`: one per `per_replica` URLs waiting (queued and
/// leased URLs of running crawls, plus one per admitted crawl not started
/// yet), at least one while there is any work, clamped to min..max; `min`
/// when idle.
pub fn desired_workers(backlog: &PoolBacklog, s: Sizing) -> i32 {
    let work = backlog.urls.max(0) + backlog.queued_crawls.max(0);
    if work == 0 {
        return clamp(0, s);
    }
    let per = s.per_replica.max(1) as i64;
    clamp(((work + per - 1) / per).max(1), s)
}

/// Browsers for `backlog`: one per `per_replica` (sessions per browser)
/// URLs waiting in crawls that need a browser; `min` when there are none.
pub fn desired_browsers(backlog: &PoolBacklog, s: Sizing) -> i32 {
    let work = backlog.render_urls.max(0);
    if work == 0 {
        return clamp(0, s);
    }
    let per = s.per_replica.max(1) as i64;
    clamp(((work + per - 1) / per).max(1), s)
}

/// The replica count to set now, and since when a lower count has been
/// wanted (kept in the pool's status so a restarted operator continues the
/// same countdown). Up (or equal) takes effect at once and clears the
/// countdown; down waits until `desired` has stayed lower for `delay_ms`.
pub fn stabilize(
    current: i32,
    desired: i32,
    lower_since_ms: Option<i64>,
    now_ms: i64,
    delay_ms: i64,
) -> (i32, Option<i64>) {
    if desired >= current {
        return (desired, None);
    }
    let since = lower_since_ms.unwrap_or(now_ms);
    if now_ms - since >= delay_ms.max(0) {
        (desired, None)
    } else {
        (current, Some(since))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn backlog(urls: i64, queued_crawls: i64, render_urls: i64) -> PoolBacklog {
        PoolBacklog {
            urls,
            queued_crawls,
            render_urls,
            running_crawls: 0,
        }
    }

    #[test]
    fn workers_follow_the_backlog_within_bounds() {
        let s = Sizing {
            min: 0,
            max: 10,
            per_replica: 16,
        };
        let s_min1 = Sizing { min: 1, ..s };
        let cases: &[(PoolBacklog, Sizing, i32)] = &[
            (backlog(0, 0, 0), s, 0),                        // idle: min
            (backlog(0, 0, 0), s_min1, 1),                   // idle with min 1
            (backlog(0, 1, 0), s, 1), // a queued crawl needs a worker to seed it
            (backlog(1, 0, 0), s, 1), // any work: at least one
            (backlog(16, 0, 0), s, 1), // exactly one worker's worth
            (backlog(17, 0, 0), s, 2), // one more URL: two
            (backlog(15, 2, 0), s, 2), // queued crawls count as work
            (backlog(10_000, 0, 0), s, 10), // capped at max
            (backlog(5, 0, 0), Sizing { min: 3, ..s }, 3), // never below min
            (backlog(500, 0, 0), Sizing { max: 0, ..s }, 0), // max 0 disables the pool
            (
                backlog(5, 0, 0),
                Sizing {
                    min: 5,
                    max: 2,
                    per_replica: 16,
                },
                2,
            ), // min above max: max wins
            (
                backlog(20, 0, 0),
                Sizing {
                    per_replica: 0,
                    ..s
                },
                10,
            ), // per_replica 0 treated as 1
        ];
        for (i, (b, sizing, want)) in cases.iter().enumerate() {
            assert_eq!(
                desired_workers(b, *sizing),
                *want,
                "case {i}: {b:?} {sizing:?}"
            );
        }
    }

    #[test]
    fn browsers_follow_render_demand_only() {
        let s = Sizing {
            min: 0,
            max: 4,
            per_replica: 2,
        };
        let cases: &[(PoolBacklog, Sizing, i32)] = &[
            (backlog(100, 3, 0), s, 0), // plenty of work, none needs a browser
            (backlog(100, 0, 0), Sizing { min: 1, ..s }, 1),
            (backlog(100, 0, 1), s, 1),
            (backlog(100, 0, 2), s, 1),
            (backlog(100, 0, 3), s, 2),
            (backlog(100, 0, 50), s, 4),
        ];
        for (i, (b, sizing, want)) in cases.iter().enumerate() {
            assert_eq!(desired_browsers(b, *sizing), *want, "case {i}");
        }
    }

    #[test]
    fn stabilisation_is_up_at_once_down_after_the_delay() {
        let delay = 60_000;
        // (current, desired, lower_since, now) -> (replicas, lower_since)
        type Case = (i32, i32, Option<i64>, i64, (i32, Option<i64>));
        let cases: &[Case] = &[
            (2, 5, None, 1_000, (5, None)),                // up: at once
            (2, 5, Some(0), 1_000, (5, None)),             // up clears a pending countdown
            (3, 3, Some(0), 1_000, (3, None)),             // steady clears it too
            (5, 2, None, 1_000, (5, Some(1_000))), // down: countdown starts, nothing changes
            (5, 2, Some(1_000), 30_000, (5, Some(1_000))), // still waiting
            (5, 2, Some(1_000), 60_999, (5, Some(1_000))), // one ms short
            (5, 2, Some(1_000), 61_000, (2, None)), // delay passed: down
            (5, 0, Some(1_000), 500_000, (0, None)), // idle: down to min (0)
            (5, 3, Some(1_000), 61_000, (3, None)), // the countdown is for "lower", not a number
            (5, 2, Some(1_000), 500, (5, Some(1_000))), // clock behind the mark: keep waiting
        ];
        for (i, (cur, want, since, now, expect)) in cases.iter().enumerate() {
            assert_eq!(
                stabilize(*cur, *want, *since, *now, delay),
                *expect,
                "case {i}"
            );
        }
        // No delay: down at once.
        assert_eq!(stabilize(5, 1, None, 10, 0), (1, None));
    }
}
