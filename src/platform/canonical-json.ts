import { createRequire } from "node:module";

// RFC 8785 canonical JSON (sorted keys, compact separators) from the `canonicalize` package, loaded
// through require because its CommonJS export has no ESM default under NodeNext typing.
const serialize = createRequire(import.meta.url)("canonicalize") as (input: unknown) => string | undefined;

export function canonicalJson(value: unknown): string {
  const text = serialize(value);
  if (text === undefined) throw new TypeError("value has no JSON form");
  return text;
}
