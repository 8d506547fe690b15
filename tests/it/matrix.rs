//! The interop matrix as a test suite: real clients of both protocol eras (the Python SDK
//! 2.3 `Client` in auto, legacy and pinned modes, the TypeScript SDK, the MCP Inspector
//! CLI, rmcp 3.x, `mcptape call`) against real servers (server-everything, -filesystem,
//! -memory, FastMCP 4.x, rmcp 3.x) over stdio and Streamable HTTP. Every row gets the four
//! checks of `matrix::harness` (through the recorder = direct; replay = recorded; verify
//! same is clean; verify changed is flagged), one test each:
//! `matrix::ROW::CHECK`.
//!
//! Slow rows (the Inspector CLI starts a Node process per call) are
//! `#[ignore = "slow: …"]`: `cargo test --locked --test it -- --ignored matrix` runs them
//! (`.ci/run` does).

mod harness;
mod rows;

/// One test per check of a row; an attribute before a check (an `#[ignore]`) applies to it.
macro_rules! cells {
    ($row:ident { $( $(#[$attr:meta])* $check:ident ),* $(,)? }) => {
        mod $row {
            $(
                #[test]
                $(#[$attr])*
                fn $check() {
                    super::harness::$check(super::rows::$row)
                }
            )*
        }
    };
}

cells!(py_auto_everything_stdio {
    recorded_equals_direct,
    replay_equals_recorded,
    verify_same_is_clean,
    verify_changed_is_flagged,
});
cells!(py_legacy_everything_stdio {
    recorded_equals_direct,
    replay_equals_recorded,
    verify_same_is_clean,
    verify_changed_is_flagged,
});
cells!(py_auto_everything_http {
    recorded_equals_direct,
    replay_equals_recorded,
    verify_same_is_clean,
    verify_changed_is_flagged,
});
cells!(py_legacy_everything_http {
    recorded_equals_direct,
    replay_equals_recorded,
    verify_same_is_clean,
    verify_changed_is_flagged,
});
cells!(py_auto_fastmcp_stdio {
    recorded_equals_direct,
    replay_equals_recorded,
    verify_same_is_clean,
    verify_changed_is_flagged,
});
cells!(py_legacy_fastmcp_stdio {
    recorded_equals_direct,
    replay_equals_recorded,
    verify_same_is_clean,
    verify_changed_is_flagged,
});
cells!(py_pinned_fastmcp_stdio {
    recorded_equals_direct,
    replay_equals_recorded,
    verify_same_is_clean,
    verify_changed_is_flagged,
});
cells!(py_auto_fastmcp_http {
    recorded_equals_direct,
    replay_equals_recorded,
    verify_same_is_clean,
    verify_changed_is_flagged,
});
cells!(py_legacy_fastmcp_http {
    recorded_equals_direct,
    replay_equals_recorded,
    verify_same_is_clean,
    verify_changed_is_flagged,
});
cells!(py_pinned_fastmcp_http {
    recorded_equals_direct,
    replay_equals_recorded,
    verify_same_is_clean,
    verify_changed_is_flagged,
});
cells!(ts_filesystem {
    recorded_equals_direct,
    replay_equals_recorded,
    verify_same_is_clean,
    verify_changed_is_flagged,
});
cells!(ts_memory {
    recorded_equals_direct,
    replay_equals_recorded,
    verify_same_is_clean,
    verify_changed_is_flagged,
});
cells!(ts_everything {
    recorded_equals_direct,
    replay_equals_recorded,
    verify_same_is_clean,
    verify_changed_is_flagged,
});
cells!(inspector_legacy_everything {
    #[ignore = "slow: the Inspector CLI starts Node per call"]
    recorded_equals_direct,
    #[ignore = "slow: the Inspector CLI starts Node per call"]
    replay_equals_recorded,
    #[ignore = "slow: the Inspector CLI starts Node per call"]
    verify_same_is_clean,
    #[ignore = "slow: the Inspector CLI starts Node per call"]
    verify_changed_is_flagged,
});
cells!(inspector_modern_fastmcp {
    #[ignore = "slow: the Inspector CLI starts Node per call"]
    recorded_equals_direct,
    #[ignore = "slow: the Inspector CLI starts Node per call"]
    replay_equals_recorded,
    #[ignore = "slow: the Inspector CLI starts Node per call"]
    verify_same_is_clean,
    #[ignore = "slow: the Inspector CLI starts Node per call"]
    verify_changed_is_flagged,
});
cells!(rmcp_legacy_stdio {
    recorded_equals_direct,
    replay_equals_recorded,
    verify_same_is_clean,
    verify_changed_is_flagged,
});
cells!(rmcp_modern_stdio {
    recorded_equals_direct,
    replay_equals_recorded,
    verify_same_is_clean,
    verify_changed_is_flagged,
});
cells!(rmcp_legacy_http {
    recorded_equals_direct,
    replay_equals_recorded,
    verify_same_is_clean,
    verify_changed_is_flagged,
});
cells!(rmcp_modern_http {
    recorded_equals_direct,
    replay_equals_recorded,
    verify_same_is_clean,
    verify_changed_is_flagged,
});
cells!(call_fastmcp_http {
    recorded_equals_direct,
    replay_equals_recorded,
    verify_same_is_clean,
    verify_changed_is_flagged,
});
