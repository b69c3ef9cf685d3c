import type { JsonObject } from "@bufbuild/protobuf";
import type { RestRoute } from "../rest/route-table.js";
import { patchCatalogSchema } from "../rest/catalog-json.js";
import { messageSchema } from "./json-schema.js";
import type { SkuSchemas } from "../skus/sku-schemas.js";

// OpenAPI 3.1 description of the REST shim, generated from the route table and the proto contract.

export const OPENAPI_VERSION = "1.0.0";

const ERROR_SCHEMA: JsonObject = {
  type: "object",
  required: ["error"],
  properties: {
    error: {
      type: "object",
      required: ["code", "message"],
      properties: { code: { type: "string", description: "machine reason" }, message: { type: "string" } },
    },
  },
};

const SECURITY: Record<string, JsonObject[]> = {
  bearer: [{ bearer: [] }],
  note: [{ starterCreditNote: [] }],
  "bearer+note": [{ bearer: [], starterCreditNote: [] }],
  operator: [{ operator: [] }],
  x402: [{ x402: [] }, {}],
};

function errorResponses(route: RestRoute): JsonObject {
  const ref = { content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } };
  const out: JsonObject = {
    "400": { description: "invalid input", ...ref },
    "404": { description: "not found", ...ref },
    "409": { description: "gate refusal, not charged", ...ref },
    "413": { description: "body too large", ...ref },
    "501": { description: "not implemented on this server yet", ...ref },
  };
  if (route.auth?.startsWith("bearer") || route.auth === "operator") out["401"] = { description: "auth_required", ...ref };
  if (route.auth?.includes("bearer")) out["403"] = { description: "not allowed for this agent", ...ref };
  if (route.auth === "x402" || route.auth === "bearer+note") {
    out["402"] = { description: "payment required (challenge in the payment-required header)", ...ref };
  }
  return out;
}

/** A concrete path per SKU with its published input and deliverable schemas, next to the generic one. */
function skuPaths(generic: JsonObject | undefined, schemas: ReadonlyMap<string, SkuSchemas>, components: Record<string, JsonObject>, paths: Record<string, JsonObject>): void {
  const post = generic?.post as JsonObject | undefined;
  if (!post) return;
  const ok = ((post.responses as JsonObject)["200"] as JsonObject | undefined) ?? {};
  const okSchema = (((ok.content as JsonObject | undefined)?.["application/json"] as JsonObject | undefined)?.schema ?? {}) as JsonObject;
  for (const [skuId, s] of [...schemas].sort(([a], [b]) => a.localeCompare(b))) {
    const name = `sku.${skuId}`;
    components[`${name}.input`] = s.input;
    if (s.output) components[`${name}.output`] = s.output;
    const { parameters: _path, ...rest } = post;
    paths[`/v1/services/${skuId}`] = {
      post: {
        ...rest,
        operationId: `call_${skuId.replace(/[^A-Za-z0-9]+/g, "_")}`,
        summary: `Call ${skuId} (paid with x402)`,
        requestBody: { required: true, content: { "application/json": { schema: { $ref: `#/components/schemas/${name}.input` } } } },
        responses: {
          ...(post.responses as JsonObject),
          "200": {
            description: "delivered (sync) or accepted (async: poll the job)",
            content: { "application/json": { schema: s.output ? { allOf: [okSchema, { type: "object", properties: { deliverable: { $ref: `#/components/schemas/${name}.output` } } }] } : okSchema } },
          },
        },
      },
    };
  }
}

export function openApiDocument(routes: readonly RestRoute[], serverUrl: string, schemas: ReadonlyMap<string, SkuSchemas> = new Map()): JsonObject {
  const components: Record<string, JsonObject> = {};
  const paths: Record<string, JsonObject> = {};
  for (const route of routes) {
    const pathParams = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
    const parameters: JsonObject[] = pathParams.map((name) => ({ name, in: "path", required: true, schema: { type: "string" } }));
    const op: JsonObject = { operationId: `${route.method.toLowerCase()}${route.path.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c?: string) => (c ? c.toUpperCase() : ""))}`, summary: route.summary, tags: [route.tag] };
    if (route.auth) op.security = SECURITY[route.auth]!;
    let ok: JsonObject = { description: "success", content: { "application/json": { schema: {} } } };
    if (route.kind === "rpc") {
      const proto = route.codec === "proto";
      const input = messageSchema(route.rpc.input, components);
      if (route.method === "GET") {
        for (const field of route.rpc.input.fields) {
          if (!pathParams.includes(field.name)) parameters.push({ name: field.name, in: "query", required: false, schema: { type: field.fieldKind === "scalar" && field.scalar === 8 ? "boolean" : "string" } });
        }
      } else {
        op.requestBody = {
          required: false,
          content: { "application/json": { schema: proto ? { type: "object", description: "x402 facilitator JSON" } : route.path === "/v1/services/{sku_id}" ? { type: "object", description: "the SKU's task body (see x-input-schema in the catalog)" } : input } },
        };
      }
      const isText = route.path.endsWith(".md");
      const output = proto ? { type: "object", description: "x402 facilitator JSON" } : messageSchema(route.rpc.output, components);
      ok = {
        description: "success",
        content: isText ? { "text/markdown": { schema: { type: "string" } } } : { "application/json": { schema: output } },
      };
    }
    if (parameters.length) op.parameters = parameters;
    op.responses = { [String(route.kind === "rpc" ? (route.successStatus ?? 200) : 200)]: ok, ...errorResponses(route) };
    const key = route.path;
    paths[key] = { ...paths[key], [route.method.toLowerCase()]: op };
  }
  skuPaths(paths["/v1/services/{sku_id}"], schemas, components, paths);
  patchCatalogSchema(components);
  return {
    openapi: "3.1.0",
    info: {
      title: "svc: pay-per-call agent services exchange",
      version: OPENAPI_VERSION,
      description: "REST surface of svc. The same operations are served over gRPC and Connect on the same port (services svc.<domain>.v1.*).",
    },
    servers: [{ url: serverUrl }],
    paths,
    components: {
      schemas: { Error: ERROR_SCHEMA, ...components },
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "API key from POST /v1/agents/register" },
        starterCreditNote: { type: "apiKey", in: "header", name: "X-402-Payment", description: "starter-credit note" },
        x402: { type: "apiKey", in: "header", name: "PAYMENT-SIGNATURE", description: "x402 v2 payment (X-PAYMENT for v1)" },
        operator: { type: "http", scheme: "bearer", description: "operator key" },
      },
    },
  };
}
