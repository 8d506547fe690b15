// RFC 8785 (JCS) canonical forms from node itself, for the cross-check in tests/it/jcs.rs
// where Python's rfc8785 refuses an input (integers beyond ±(2^53−1)), and as a second
// witness everywhere: ECMAScript is what JCS is defined by. JSON.parse reads each number
// to its double; JSON.stringify writes numbers and strings exactly as JCS says; names sort
// by UTF-16 code units (Array.prototype.sort's default order) — the RFC's own sketch.
// What I-JSON forbids is refused: a string that is not well-formed UTF-16 (a lone
// surrogate), a number that is not finite (1e400 reads as Infinity).
//
// Usage: node jcs_canon.mjs FILE. FILE: a JSON array of JSON texts; stdout: a JSON array,
// one object per text, {"canonical": hex, "sha256": hex} or {"refused": why}.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";

function canonicalize(value) {
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new Error(`not finite: ${value}`);
    return JSON.stringify(value);
  }
  if (typeof value === "string") {
    if (!value.isWellFormed()) throw new Error("lone surrogate");
    return JSON.stringify(value);
  }
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalize).join(",")}]`;
  const names = Object.keys(value).sort();
  return `{${names.map((n) => `${canonicalize(n)}:${canonicalize(value[n])}`).join(",")}}`;
}

function one(text) {
  let out;
  try {
    out = Buffer.from(canonicalize(JSON.parse(text)), "utf8");
  } catch (error) {
    return { refused: String(error.message) };
  }
  return { canonical: out.toString("hex"), sha256: createHash("sha256").update(out).digest("hex") };
}

const texts = JSON.parse(readFileSync(process.argv[2], "utf8"));
process.stdout.write(JSON.stringify(texts.map(one)));
