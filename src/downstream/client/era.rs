//! Which protocol era the built-in client speaks.
//!
//! Over HTTP, and in replay, [`Session::connect`] sends `server/discover` first (id 0,
//! which the `initialize` after a refused probe takes again,
//! at [`STATELESS_VERSION`], with the client's info and empty capabilities in `_meta`,
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic/lifecycle>). A server
//! whose answer lists a stateless version among its `supportedVersions` is spoken to in
//! the stateless revision: no `initialize`, no session, and every later request carries
//! the same `_meta` envelope. Any other answer (an error, a 4xx, no such version) means
//! the handshake era: `initialize` then, as before. A child process gets `initialize`
//! at once (an older stdio server need not take an unknown first message well), and a
//! replayed legacy tape answers the probe with method-not-found, so it replays as
//! recorded.

use serde_json::{Value, json};

use crate::era::{STATELESS_VERSION, is_stateless_version};
use crate::layer::AnyLink;

use super::{ClientError, Reply, Session};

impl Session {
    /// The handshake of the era the server speaks: the discover probe's answer when it
    /// offers the stateless revision, else [`Session::initialize`]'s.
    pub async fn connect(&mut self) -> Result<Reply, ClientError> {
        if matches!(self.link, AnyLink::Child(_)) {
            return self.initialize().await;
        }
        let envelope = json!({
            "io.modelcontextprotocol/protocolVersion": STATELESS_VERSION,
            "io.modelcontextprotocol/clientInfo": {"name": "mcptape", "version": env!("CARGO_PKG_VERSION")},
            "io.modelcontextprotocol/clientCapabilities": {},
        });
        let probe = self
            .request("server/discover", json!({"_meta": envelope}))
            .await?;
        if offers_stateless(&probe.value) {
            self.envelope = Some(envelope);
            return Ok(probe);
        }
        // The probe is over: the handshake takes its id, so the requests after it are
        // numbered as they always were (and a legacy tape replays as recorded).
        self.next_id = 0;
        self.initialize().await
    }

    /// `params` with the stateless envelope merged into its `_meta`, once there is one.
    pub(super) fn enveloped(&self, mut params: Value) -> Value {
        let (Some(Value::Object(envelope)), Some(members)) =
            (&self.envelope, params.as_object_mut())
        else {
            return params;
        };
        let meta = members.entry("_meta").or_insert_with(|| json!({}));
        if let Some(meta) = meta.as_object_mut() {
            for (k, v) in envelope {
                meta.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        params
    }
}

/// True when a discover answer lists a version of the stateless revision.
fn offers_stateless(answer: &Value) -> bool {
    answer["result"]["supportedVersions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .any(is_stateless_version)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_discover_result_naming_a_stateless_version_is_the_stateless_era() {
        let yes = json!({"result": {"supportedVersions": ["2025-11-25", "2026-07-28"]}});
        assert!(offers_stateless(&yes));
        let old = json!({"result": {"supportedVersions": ["2025-11-25"]}});
        assert!(!offers_stateless(&old));
        let refused = json!({"error": {"code": -32601, "message": "no"}});
        assert!(!offers_stateless(&refused));
    }
}
