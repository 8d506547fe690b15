//! Progress bars for people, on stderr: `verify`'s calls, `call`'s server progress,
//! `redact`'s bytes, the loading of a big tape ([`indicatif`]).
//!
//! Invariants:
//!
//! - A bar is drawn only when stderr is a terminal (never into a pipe, a file or a CI
//!   log) and `MCPTAPE_PROGRESS` is not `0`. Colour settings do not matter: a bar has no
//!   colour.
//! - Nothing is drawn for work that ends within [`DELAY`]: a bar starts hidden and is
//!   shown by a timer thread, unless it was finished first (one lock orders the two).
//! - Nothing else on stderr is garbled by a bar: every line mcptape writes there goes
//!   through [`suspend`] (`term::eprintln_escaped!`, the one error printer), which clears
//!   the bar shown, writes, and draws it again. The shown bars are kept in one list for
//!   that, the process's terminal being one. A finished (or dropped) bar is cleared.
//! - Text from outside in a bar (a server's progress `message`, a tape's name) is escaped
//!   ([`crate::term::line`]).
//!
//! Not covered: what a server started with an inherited stderr writes itself while a bar
//! is shown (the bar is drawn again over the next line).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressFinish, ProgressStyle, WeakProgressBar};

/// The environment variable that turns progress off: `MCPTAPE_PROGRESS=0`.
pub const ENV_PROGRESS: &str = "MCPTAPE_PROGRESS";

/// How long work runs before its bar is first drawn.
pub const DELAY: Duration = Duration::from_millis(300);

/// How often a shown bar is redrawn (elapsed time, spinner) without news.
const TICK: Duration = Duration::from_millis(100);

/// Scale of a server's progress numbers, which may be fractions (`0.5` of `1`).
const SCALE: f64 = 1000.0;

/// What a bar is drawn with: done, the edge, to do (ASCII, for any terminal font).
const BAR_CHARS: &str = "=> ";

/// A spinner's steps, then what it shows once finished (ASCII too).
const SPINNER_CHARS: &str = "|/-\\ ";

/// The bars that may be on the terminal, for [`suspend`].
static SHOWN: Mutex<Vec<WeakProgressBar>> = Mutex::new(Vec::new());

/// Whether bars are drawn at all: stderr is a terminal and `MCPTAPE_PROGRESS` is not `0`.
pub fn enabled() -> bool {
    use std::io::IsTerminal;
    let off = std::env::var_os(ENV_PROGRESS).is_some_and(|v| v == "0");
    !off && std::io::stderr().is_terminal()
}

/// Runs `print` (which writes to stderr) with every shown bar cleared, then draws them
/// again: what it prints is never mixed with a bar.
pub fn suspend<R>(print: impl FnOnce() -> R) -> R {
    let bars: Vec<ProgressBar> = {
        let mut shown = SHOWN.lock().unwrap_or_else(PoisonError::into_inner);
        shown.retain(|weak| weak.upgrade().is_some());
        shown.iter().filter_map(WeakProgressBar::upgrade).collect()
    };
    // One bar at a time is the rule (a command's steps follow each other).
    match bars.last() {
        Some(bar) => bar.suspend(print),
        None => print(),
    }
}

/// One bar: a handle that may be cloned (the clones update the same bar). Turned off, or
/// off because stderr is no terminal, it does nothing. Cleared when finished or dropped.
#[derive(Clone, Default)]
pub struct Progress {
    shown: Option<Arc<Shown>>,
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Progress")
            .field("drawn", &self.shown.is_some())
            .finish()
    }
}

/// A bar and the lock that orders its showing and its finish.
struct Shown {
    bar: ProgressBar,
    /// `true` once finished: the timer no longer shows it.
    done: Arc<Mutex<bool>>,
}

impl Drop for Shown {
    fn drop(&mut self) {
        finish(&self.bar, &self.done);
    }
}

fn finish(bar: &ProgressBar, done: &Mutex<bool>) {
    let mut done = done.lock().unwrap_or_else(PoisonError::into_inner);
    *done = true;
    bar.finish_and_clear();
}

impl Progress {
    /// A bar of `total` things (`what`: `requests`):
    /// `verify `example` [0s] [=====>    ] 3/7 requests`.
    pub fn counts(prefix: &str, total: u64, what: &str) -> Progress {
        Progress::new(
            prefix,
            Some(total),
            &format!("{{prefix}} [{{elapsed}}] [{{bar:30}}] {{pos}}/{{len}} {what} {{wide_msg}}"),
        )
    }

    /// A bar of `total` bytes of the file at `path` (named by its file name, which
    /// keeps the line short): `redact`, `check`, `loading`.
    pub fn file(what: &str, path: &std::path::Path, total: u64) -> Progress {
        let name = path.file_name().unwrap_or(path.as_os_str());
        Progress::bytes(&format!("{what} `{}`", name.to_string_lossy()), total)
    }

    /// A bar of `total` bytes: `loading `big.ndjson` [1s] [===>   ] 3.1 MiB/12.0 MiB`.
    pub fn bytes(prefix: &str, total: u64) -> Progress {
        Progress::new(
            prefix,
            Some(total),
            "{prefix} [{elapsed}] [{bar:30}] {binary_bytes}/{binary_total_bytes} {wide_msg}",
        )
    }

    /// A bar for a server's progress notifications ([`Progress::server_progress`]); a
    /// spinner until one says its total.
    pub fn server(prefix: &str) -> Progress {
        let bar = Progress::new(prefix, None, "{prefix} [{elapsed}] {spinner} {wide_msg}");
        if let Some(b) = bar.bar() {
            b.set_style(b.style().tick_chars(SPINNER_CHARS));
        }
        bar.message("waiting for the answer");
        bar
    }

    /// A bar that draws nothing.
    pub fn off() -> Progress {
        Progress::default()
    }

    fn new(prefix: &str, total: Option<u64>, template: &str) -> Progress {
        if !enabled() {
            return Progress::off();
        }
        let Ok(style) = ProgressStyle::with_template(template) else {
            // The templates are ours, fixed: they parse.
            return Progress::off();
        };
        let bar = ProgressBar::with_draw_target(total, ProgressDrawTarget::hidden())
            .with_style(style.progress_chars(BAR_CHARS))
            .with_prefix(crate::term::line(prefix).into_owned())
            .with_finish(ProgressFinish::AndClear);
        let done = Arc::new(Mutex::new(false));
        reveal_later(bar.downgrade(), Arc::clone(&done));
        let mut shown = SHOWN.lock().unwrap_or_else(PoisonError::into_inner);
        shown.retain(|weak| weak.upgrade().is_some());
        shown.push(bar.downgrade());
        drop(shown);
        Progress {
            shown: Some(Arc::new(Shown { bar, done })),
        }
    }

    /// Whether this bar may be drawn (it is not off); before [`DELAY`] it is not yet.
    pub fn is_on(&self) -> bool {
        self.shown.is_some()
    }

    fn bar(&self) -> Option<&ProgressBar> {
        self.shown.as_ref().map(|s| &s.bar)
    }

    /// Counts `n` more done.
    pub fn inc(&self, n: u64) {
        if let Some(bar) = self.bar() {
            bar.inc(n);
        }
    }

    /// Sets the text after the bar (escaped).
    pub fn message(&self, text: &str) {
        if let Some(bar) = self.bar() {
            bar.set_message(crate::term::line(text).into_owned());
        }
    }

    /// Shows a server's `notifications/progress` params: `progress` of `total` (when
    /// given, as a bar) and its `message` (escaped).
    pub fn server_progress(&self, params: &serde_json::Value) {
        let Some(bar) = self.bar() else {
            return;
        };
        let progress = params["progress"].as_f64().unwrap_or(0.0);
        let total = params["total"].as_f64().filter(|t| *t > 0.0);
        let mut text = match total {
            Some(_) => format!("{}/{}", params["progress"], params["total"]),
            None => params["progress"].to_string(),
        };
        if let Some(message) = params["message"].as_str() {
            text.push(' ');
            text.push_str(message);
        }
        if let Some(total) = total {
            if bar.length().is_none() {
                // A total: from now on a bar, not a spinner.
                if let Ok(style) =
                    ProgressStyle::with_template("{prefix} [{elapsed}] [{bar:30}] {wide_msg}")
                {
                    bar.set_style(style.progress_chars(BAR_CHARS));
                }
            }
            // `as` saturates: a huge or negative number is the end or the start.
            bar.set_length((total * SCALE) as u64);
            bar.set_position((progress.min(total) * SCALE) as u64);
        }
        bar.set_message(crate::term::line(&text).into_owned());
    }

    /// Sets how many are done.
    pub fn set_position(&self, done: u64) {
        if let Some(bar) = self.bar() {
            bar.set_position(done);
        }
    }

    /// A reader that counts the bytes read from `inner` on this bar.
    pub fn reader<R: std::io::Read>(&self, inner: R) -> Counted<R> {
        Counted {
            inner,
            bar: self.bar().cloned(),
        }
    }

    /// The bytes read are now being parsed: the bar starts again, `parsing`.
    pub fn parsing(&self) {
        if let Some(bar) = self.bar() {
            bar.set_position(0);
            bar.set_message("parsing");
        }
    }

    /// Clears the bar (for good): what follows on stderr or stdout stands alone.
    pub fn finish(&self) {
        if let Some(shown) = &self.shown {
            finish(&shown.bar, &shown.done);
        }
    }
}

/// A reader counting its bytes on a bar ([`Progress::reader`]).
pub struct Counted<R> {
    inner: R,
    bar: Option<ProgressBar>,
}

impl<R: std::io::Read> std::io::Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(bar) = &self.bar {
            bar.inc(n as u64);
        }
        Ok(n)
    }
}

/// Shows the bar after [`DELAY`], unless it was finished (or dropped) before.
fn reveal_later(bar: WeakProgressBar, done: Arc<Mutex<bool>>) {
    let spawned = std::thread::Builder::new()
        .name("mcptape-progress".into())
        .spawn(move || {
            std::thread::sleep(DELAY);
            let done = done.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(bar) = bar.upgrade()
                && !*done
            {
                bar.set_draw_target(ProgressDrawTarget::stderr());
                bar.enable_steady_tick(TICK);
            }
        });
    // No thread, no bar: the work goes on unshown.
    drop(spawned);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_off_bar_takes_every_update_and_draws_nothing() {
        let bar = Progress::off();
        bar.inc(3);
        bar.message("\u{1b}[2J");
        bar.server_progress(&serde_json::json!({"progress": 1, "total": 2}));
        bar.finish();
        assert_eq!(suspend(|| 7), 7);
    }
}
