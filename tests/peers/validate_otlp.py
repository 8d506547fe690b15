"""Parses an OTLP/JSON traces document into the official protobuf type,
opentelemetry-proto's ExportTraceServiceRequest, with protobuf's json_format (unknown
fields refused). OTLP/JSON writes traceId/spanId/parentSpanId as hex (the OTLP
specification's one departure from the proto3 JSON mapping), while json_format reads
bytes fields as base64: the ids are checked to be lowercase hex of 16 / 8 bytes and
turned into base64 before parsing. Prints a summary of the parsed message as JSON
(spans with their ids back in hex); on failure prints why on stderr and exits 1.

    validate_otlp.py FILE.json
"""

import base64
import json
import re
import sys

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

SIZES = {"traceId": 16, "spanId": 8, "parentSpanId": 8}


def hex_to_base64(node, path="$"):
    if isinstance(node, dict):
        for key, value in node.items():
            if key in SIZES and isinstance(value, str):
                if not re.fullmatch("[0-9a-f]{%d}" % (2 * SIZES[key]), value):
                    raise ValueError(f"{path}.{key}: `{value}` is not {SIZES[key]} bytes of lowercase hex")
                node[key] = base64.b64encode(bytes.fromhex(value)).decode()
            else:
                hex_to_base64(value, f"{path}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            hex_to_base64(value, f"{path}[{i}]")


def value(v):
    kind = v.WhichOneof("value")
    return getattr(v, kind) if kind else None


def main() -> int:
    with open(sys.argv[1], encoding="utf-8") as f:
        doc = json.load(f)
    try:
        hex_to_base64(doc)
        msg = json_format.Parse(json.dumps(doc), ExportTraceServiceRequest())
    except (ValueError, json_format.ParseError) as e:
        print(f"not an OTLP/JSON ExportTraceServiceRequest: {e}", file=sys.stderr)
        return 1
    spans = []
    for rs in msg.resource_spans:
        service = {a.key: value(a.value) for a in rs.resource.attributes}.get("service.name")
        for ss in rs.scope_spans:
            for s in ss.spans:
                spans.append({
                    "service": service,
                    "scope": ss.scope.name,
                    "traceId": s.trace_id.hex(),
                    "spanId": s.span_id.hex(),
                    "parentSpanId": s.parent_span_id.hex(),
                    "name": s.name,
                    "kind": s.kind,
                    "start": s.start_time_unix_nano,
                    "end": s.end_time_unix_nano,
                    "status": s.status.code,
                    "status_message": s.status.message,
                    "attributes": {a.key: value(a.value) for a in s.attributes},
                    "events": [e.name for e in s.events],
                })
    print(json.dumps({"resourceSpans": len(msg.resource_spans), "spans": spans}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
