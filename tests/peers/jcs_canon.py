#!/usr/bin/env python3
"""RFC 8785 (JCS) canonical forms from the PyPI package `rfc8785` (0.1.4, pinned in
requirements.txt): an implementation independent of mcptape's, for the cross-check in
tests/it/jcs.rs.

Usage: jcs_canon.py FILE. FILE holds a JSON array of JSON texts (strings); a JSON array
is written on stdout, one object per text, in order:

    {"canonical": "<the canonical bytes, hex>", "sha256": "<their SHA-256, hex>"}
    {"refused": "<exception class>: <message>"}

A text is read with Python's `json` (a lone surrogate escape reads as a lone surrogate,
`1e400` as infinity: rfc8785 refuses both), then canonicalized with `rfc8785.dumps`.
"""

import hashlib
import json
import sys

import rfc8785


def one(text: str) -> dict:
    try:
        value = json.loads(text)
    except ValueError as error:
        return {"refused": f"json: {error}"}
    try:
        out = rfc8785.dumps(value)
    except Exception as error:  # noqa: BLE001 - rfc8785's refusals are the answer
        return {"refused": f"{type(error).__name__}: {error}"}
    return {"canonical": out.hex(), "sha256": hashlib.sha256(out).hexdigest()}


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: jcs_canon.py FILE", file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding="utf-8") as f:
        texts = json.load(f)
    json.dump([one(t) for t in texts], sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
