import { createHash } from "node:crypto";
import { canonicalJson } from "../platform/canonical-json.js";
import type { JsonObject } from "@bufbuild/protobuf";
import { scanContent } from "./content-scan.js";

// The `svc_trust` envelope. Hash rule (spec): SHA-256 hex of `deliverable.content_markdown` (UTF-8)
// when it is a string; otherwise of the deliverable serialized with sorted keys and compact separators
// (RFC 8785 canonical JSON, non-ASCII characters kept as UTF-8).

export function contentSha256(deliverable: JsonObject): string {
  const md = deliverable.content_markdown;
  const text = typeof md === "string" ? md : canonicalJson(deliverable);
  return createHash("sha256").update(text, "utf8").digest("hex");
}

export interface TrustEnvelope {
  content_sha256: string;
  content_scanned: boolean;
  content_flags: string[];
  policy_manifest: JsonObject;
}

export function trustEnvelope(deliverable: JsonObject, policyManifest: JsonObject): TrustEnvelope {
  return {
    content_sha256: contentSha256(deliverable),
    content_scanned: true,
    content_flags: scanContent(deliverable),
    policy_manifest: policyManifest,
  };
}
