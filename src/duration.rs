//! Durations on the command line, checked when they are parsed so that nothing later
//! can overflow or panic on them (`--timeout inf` once did): finite, above zero (unless a
//! flag says `0` means never), and at most [`MAX_SECS`].

use std::time::Duration;

/// The longest duration any flag takes: one day, in seconds.
pub const MAX_SECS: f64 = 86_400.0;

/// `--timeout`: a finite, positive number of seconds, at most [`MAX_SECS`] (`inf`, `nan`,
/// `1e30`, `0` and negatives are refused).
pub fn seconds(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(secs) if secs.is_finite() && secs > 0.0 && secs <= MAX_SECS => Ok(secs),
        Ok(_) => Err(format!(
            "`{text}` is not a number of seconds greater than 0 and at most {MAX_SECS}"
        )),
        Err(e) => Err(format!("`{text}` is not a number of seconds: {e}")),
    }
}

/// `--timeout` as a [`Duration`]: [`seconds`]' rules.
pub fn timeout(text: &str) -> Result<Duration, String> {
    seconds(text).map(Duration::from_secs_f64)
}

/// A limit that must be longer than 0: [`parse`]'s rules, and not `0`.
pub fn positive(text: &str) -> Result<Duration, String> {
    match parse(text)? {
        d if d.is_zero() => Err("must be longer than 0".to_owned()),
        d => Ok(d),
    }
}

/// The HTTP front's limits: `250ms`, `30s`, `10m`, `1h`, or a bare whole number of
/// seconds; at most [`MAX_SECS`].
pub fn parse(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let d = match text.parse::<u64>() {
        Ok(secs) => Duration::from_secs(secs),
        Err(_) => humantime::parse_duration(text)
            .map_err(|e| format!("`{text}` is not a duration (`30s`, `10m`, `250ms`): {e}"))?,
    };
    if d.as_secs_f64() > MAX_SECS {
        return Err(format!("`{text}` is longer than one day"));
    }
    Ok(d)
}

/// Sleeps until `at`, or forever when there is no deadline (a `select!` arm that is off
/// until a deadline is set).
pub async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_take_units_or_bare_seconds() {
        assert_eq!(parse("30"), Ok(Duration::from_secs(30)));
        assert_eq!(parse("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse("10m"), Ok(Duration::from_secs(600)));
        assert!(parse("soon").is_err());
        assert!(parse("25h").is_err());
        assert!(parse("99999999999999999999h").is_err());
    }

    #[test]
    fn seconds_are_finite_positive_and_at_most_a_day() {
        assert_eq!(seconds("2.5"), Ok(2.5));
        for bad in ["inf", "nan", "1e30", "0", "-1", "86401", "soon"] {
            assert!(seconds(bad).is_err(), "{bad}");
        }
    }
}
