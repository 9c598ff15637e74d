//! When scheduled crawls run: five-field cron expressions (with the usual
//! `@daily`-style macros) in an IANA time zone, or a fixed interval
//! (`every`). Pure functions of a time; the scheduler owns the clock.

use jiff::civil::{Date, Time};
use jiff::tz::TimeZone;
use jiff::{Timestamp, ToSpan};

/// Shortest interval `every` accepts.
pub const EVERY_MIN_MS: i64 = 60_000;
/// Longest interval `every` accepts (a year).
pub const EVERY_MAX_MS: i64 = 366 * 86_400_000;

/// When a schedule fires.
#[derive(Debug, Clone, PartialEq)]
pub enum When {
    Cron(Cron, TimeZone),
    /// Every `ms`, counted from `anchor_ms` (the schedule's creation).
    Every {
        ms: i64,
        anchor_ms: i64,
    },
}

impl When {
    /// Parses `cron` or `every` (exactly one) in `timezone` (IANA, default UTC).
    pub fn parse(
        cron: Option<&str>,
        every: Option<&str>,
        timezone: Option<&str>,
        anchor_ms: i64,
    ) -> Result<When, (&'static str, String)> {
        let tz = match timezone {
            None => TimeZone::UTC,
            Some(name) => TimeZone::get(name).map_err(|_| {
                (
                    "timezone",
                    format!(
                        "`{name}` is not an IANA time zone (for example `Europe/Berlin` or `UTC`)"
                    ),
                )
            })?,
        };
        match (cron, every) {
            (Some(c), None) => Ok(When::Cron(Cron::parse(c).map_err(|e| ("cron", e))?, tz)),
            (None, Some(e)) => {
                let ms = parse_every(e).map_err(|m| ("every", m))?;
                Ok(When::Every { ms, anchor_ms })
            }
            (Some(_), Some(_)) => Err(("every", "give `cron` or `every`, not both".into())),
            (None, None) => Err((
                "cron",
                "give `cron` (for example `0 9 * * 1`) or `every` (for example `6h`)".into(),
            )),
        }
    }

    /// The first firing time strictly after `after_ms` (unix ms).
    pub fn next_after(&self, after_ms: i64) -> Option<i64> {
        match self {
            When::Every { ms, anchor_ms } => {
                if after_ms < *anchor_ms {
                    return Some(*anchor_ms + ms);
                }
                let n = (after_ms - anchor_ms) / ms + 1;
                Some(anchor_ms + n * ms)
            }
            When::Cron(c, tz) => c.next_after(after_ms, tz),
        }
    }
}

/// `every`: a number and a unit, repeated (`90m`, `1h30m`, `2d`, `1w`),
/// 1 minute to 366 days.
pub fn parse_every(s: &str) -> Result<i64, String> {
    let total = parse_interval(s)?;
    if !(EVERY_MIN_MS..=EVERY_MAX_MS).contains(&total) {
        return Err(format!("`{s}` is outside 1 minute to 366 days"));
    }
    Ok(total)
}

/// An interval in milliseconds: a number and a unit (s, m, h, d, w),
/// repeated (`1h30m`), without bounds.
pub fn parse_interval(s: &str) -> Result<i64, String> {
    let bad = || {
        format!("`{s}` is not an interval: use a number and a unit (s, m, h, d, w), for example `15m`, `6h` or `1d`")
    };
    let mut total: i64 = 0;
    let mut num = String::new();
    let mut any = false;
    for ch in s.trim().chars() {
        if ch.is_ascii_digit() {
            num.push(ch);
            continue;
        }
        let unit: i64 = match ch {
            's' => 1_000,
            'm' => 60_000,
            'h' => 3_600_000,
            'd' => 86_400_000,
            'w' => 7 * 86_400_000,
            _ => return Err(bad()),
        };
        let n: i64 = num.parse().map_err(|_| bad())?;
        total = total.saturating_add(n.saturating_mul(unit));
        num.clear();
        any = true;
    }
    if !num.is_empty() || !any {
        return Err(bad());
    }
    Ok(total)
}

/// A parsed five-field cron expression: minute, hour, day of month, month,
/// day of week (0 or 7 = Sunday). Each field is a bit set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cron {
    minutes: u64,
    hours: u32,
    days: u32,
    months: u16,
    weekdays: u8,
    /// Both day fields restricted: a day matches either (as cron does).
    day_or: bool,
}

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];
const WEEKDAYS: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

impl Cron {
    /// Parses `m h dom mon dow` or a macro (`@hourly`, `@daily`/`@midnight`,
    /// `@weekly`, `@monthly`, `@yearly`/`@annually`).
    pub fn parse(expr: &str) -> Result<Cron, String> {
        let expanded = match expr.trim() {
            "@hourly" => "0 * * * *",
            "@daily" | "@midnight" => "0 0 * * *",
            "@weekly" => "0 0 * * 0",
            "@monthly" => "0 0 1 * *",
            "@yearly" | "@annually" => "0 0 1 1 *",
            other => other,
        };
        let fields: Vec<&str> = expanded.split_whitespace().collect();
        if fields.len() != 5 {
            return Err(format!(
                "`{expr}` has {} fields; cron takes five: minute hour day-of-month month day-of-week (for example `0 9 * * 1-5`)",
                fields.len()
            ));
        }
        let minutes = field(fields[0], 0, 59, &[], "minute")?;
        let hours = field(fields[1], 0, 23, &[], "hour")? as u32;
        let days = field(fields[2], 1, 31, &[], "day of month")? as u32;
        let months = field(fields[3], 1, 12, &MONTHS, "month")? as u16;
        let mut weekdays = field(fields[4], 0, 7, &WEEKDAYS, "day of week")?;
        if weekdays & (1 << 7) != 0 {
            weekdays |= 1;
        }
        let day_or = !fields[2].starts_with('*') && !fields[4].starts_with('*');
        Ok(Cron {
            minutes,
            hours,
            days,
            months,
            weekdays: (weekdays & 0x7f) as u8,
            day_or,
        })
    }

    fn day_matches(&self, d: Date) -> bool {
        if self.months & (1 << d.month()) == 0 {
            return false;
        }
        let dom = self.days & (1 << d.day()) != 0;
        let dow = self.weekdays & (1 << d.weekday().to_sunday_zero_offset()) != 0;
        if self.day_or {
            dom || dow
        } else {
            dom && dow
        }
    }

    /// The first matching minute strictly after `after_ms`, in `tz`; None if
    /// none within 5 years (`0 0 30 2 *`).
    pub fn next_after(&self, after_ms: i64, tz: &TimeZone) -> Option<i64> {
        let start = Timestamp::from_millisecond(after_ms)
            .ok()?
            .to_zoned(tz.clone());
        let mut day = start.date();
        for _ in 0..(366 * 5) {
            if self.day_matches(day) {
                for h in 0..24i8 {
                    if self.hours & (1 << h) == 0 {
                        continue;
                    }
                    for m in 0..60i8 {
                        if self.minutes & (1 << m) == 0 {
                            continue;
                        }
                        let Ok(t) = Time::new(h, m, 0, 0) else {
                            continue;
                        };
                        // A wall time skipped by a DST change runs at the
                        // first instant after the gap (jiff's `compatible`).
                        let Ok(z) = day.to_datetime(t).to_zoned(tz.clone()) else {
                            continue;
                        };
                        let ms = z.timestamp().as_millisecond();
                        if ms > after_ms {
                            return Some(ms);
                        }
                    }
                }
            }
            day = day.checked_add(1.day()).ok()?;
        }
        None
    }
}

/// One cron field as a bit set over `lo..=hi`.
fn field(s: &str, lo: u32, hi: u32, names: &[&str], what: &str) -> Result<u64, String> {
    let bad = |why: String| format!("cron {what} field `{s}`: {why}");
    let value = |v: &str| -> Result<u32, String> {
        if let Some(i) = names.iter().position(|n| n.eq_ignore_ascii_case(v)) {
            return Ok(i as u32 + if lo == 1 { 1 } else { 0 });
        }
        let n: u32 = v
            .parse()
            .map_err(|_| bad(format!("`{v}` is not a number")))?;
        if n < lo || n > hi {
            return Err(bad(format!("{n} is outside {lo}-{hi}")));
        }
        Ok(n)
    };
    let mut bits = 0u64;
    for part in s.split(',') {
        let (range, step) = match part.split_once('/') {
            Some((r, st)) => {
                let st: u32 = st
                    .parse()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| bad(format!("step `{st}` is not a positive number")))?;
                (r, st)
            }
            None => (part, 1),
        };
        let (a, b) = if range == "*" {
            (lo, hi)
        } else if let Some((a, b)) = range.split_once('-') {
            (value(a)?, value(b)?)
        } else {
            let v = value(range)?;
            (v, if step > 1 { hi } else { v })
        };
        if a > b {
            return Err(bad(format!("range {a}-{b} runs backwards")));
        }
        let mut v = a;
        while v <= b {
            bits |= 1 << v;
            v += step;
        }
    }
    Ok(bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(s: &str) -> i64 {
        s.parse::<Timestamp>().expect("ts").as_millisecond()
    }

    fn next(cron: &str, tz: &str, after: &str) -> String {
        let w = When::parse(Some(cron), None, Some(tz), 0).expect("parse");
        let n = w.next_after(ms(after)).expect("next");
        Timestamp::from_millisecond(n).expect("ts").to_string()
    }

    #[test]
    fn cron_fields_steps_ranges_names_and_macros() {
        assert_eq!(
            next("*/15 * * * *", "UTC", "2026-11-29T10:07:00Z"),
            "2026-11-29T10:15:00Z"
        );
        assert_eq!(
            next("0 9 * * mon-fri", "UTC", "2026-11-28T12:00:00Z"),
            "2026-11-30T09:00:00Z"
        );
        assert_eq!(
            next("@daily", "UTC", "2026-11-29T00:00:00Z"),
            "2026-11-30T00:00:00Z"
        );
        assert_eq!(
            next("30 4 1 jan,jul *", "UTC", "2026-11-29T00:00:00Z"),
            "2027-01-01T04:30:00Z"
        );
        // Day of month OR day of week when both are given (as cron does).
        assert_eq!(
            next("0 0 13 * 5", "UTC", "2026-11-29T00:00:00Z"),
            "2026-12-04T00:00:00Z"
        );
        // 7 is Sunday too.
        assert_eq!(
            next("0 12 * * 7", "UTC", "2026-11-28T12:00:00Z"),
            "2026-11-29T12:00:00Z"
        );
        // February 29th.
        assert_eq!(
            next("0 0 29 2 *", "UTC", "2026-03-01T00:00:00Z"),
            "2028-02-29T00:00:00Z"
        );
    }

    #[test]
    fn cron_runs_in_its_time_zone_across_dst() {
        // 09:00 in Berlin is 08:00 UTC in winter, 07:00 in summer.
        assert_eq!(
            next("0 9 * * *", "Europe/Berlin", "2026-11-29T10:00:00Z"),
            "2026-11-30T08:00:00Z"
        );
        assert_eq!(
            next("0 9 * * *", "Europe/Berlin", "2026-06-01T10:00:00Z"),
            "2026-06-02T07:00:00Z"
        );
        // 02:30 does not exist on 2026-03-29 in Berlin: it runs at 03:00 CEST.
        assert_eq!(
            next("30 2 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z"),
            "2026-03-29T01:30:00Z"
        );
    }

    #[test]
    fn bad_expressions_say_what_is_wrong() {
        for (expr, needle) in [
            ("* * * *", "five"),
            ("61 * * * *", "minute"),
            ("* 24 * * *", "hour"),
            ("* * 0 * *", "day of month"),
            ("* * * 13 *", "month"),
            ("* * * * 8", "day of week"),
            ("*/0 * * * *", "step"),
            ("5-1 * * * *", "backwards"),
            ("x * * * *", "not a number"),
        ] {
            let e = Cron::parse(expr).expect_err(expr);
            assert!(e.contains(needle), "{expr}: {e}");
        }
        assert_eq!(
            When::parse(Some("* * * * *"), None, Some("Mars/Olympus"), 0)
                .expect_err("tz")
                .0,
            "timezone"
        );
        assert_eq!(
            When::parse(Some("* * * * *"), Some("1h"), None, 0)
                .expect_err("both")
                .0,
            "every"
        );
        assert_eq!(
            When::parse(None, None, None, 0).expect_err("none").0,
            "cron"
        );
    }

    #[test]
    fn every_counts_from_its_anchor() {
        assert_eq!(parse_every("1h30m"), Ok(5_400_000));
        assert_eq!(parse_every("1w"), Ok(604_800_000));
        assert!(parse_every("30s").is_err(), "under a minute");
        assert!(parse_every("5").is_err());
        assert!(parse_every("5x").is_err());
        assert!(parse_every("400d").is_err());
        let w = When::parse(None, Some("10m"), None, 1_000_000).expect("every");
        assert_eq!(w.next_after(999_999), Some(1_600_000));
        assert_eq!(w.next_after(1_000_000), Some(1_600_000));
        assert_eq!(w.next_after(1_600_000), Some(2_200_000));
        // After downtime: the next slot after now, not every missed one.
        assert_eq!(
            w.next_after(1_000_000 + 10 * 600_000 + 5),
            Some(1_000_000 + 11 * 600_000)
        );
    }
}
