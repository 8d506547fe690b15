"""Validates a HAR document against the HAR 1.2 JSON schemas (tests/fixtures/har, from the
npm package har-schema), resolving the schemas' `$ref`s between their files, with Python
jsonschema. Prints {"entries": N, "pages": N, ...} on success; on failure prints every
error on stderr and exits 1.

    validate_har.py SCHEMA_DIR FILE.har
"""

import json
import pathlib
import sys

import jsonschema
from referencing import Registry, Resource


def main() -> int:
    schemas = pathlib.Path(sys.argv[1])
    doc = json.loads(pathlib.Path(sys.argv[2]).read_text(encoding="utf-8"))
    resources = []
    for path in sorted(schemas.glob("*.json")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        # The files name each other as `log.json#`; register them under that name.
        resources.append((path.name, Resource.from_contents(schema)))
    registry = Registry().with_resources(resources)
    root = registry.contents("har.json")
    validator = jsonschema.Draft6Validator(
        root, registry=registry, format_checker=jsonschema.Draft6Validator.FORMAT_CHECKER
    )
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    for e in errors:
        where = "/".join(str(p) for p in e.absolute_path)
        print(f"{where}: {e.message}", file=sys.stderr)
    if errors:
        return 1
    log = doc["log"]
    methods = sorted({e["request"]["method"] for e in log["entries"]})
    print(json.dumps({
        "entries": len(log["entries"]),
        "pages": len(log.get("pages", [])),
        "methods": methods,
        "statuses": sorted({e["response"]["status"] for e in log["entries"]}),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
