import type { JsonObject } from "@bufbuild/protobuf";
import { z } from "zod";
import type { SkuHandler } from "./sku-handler.js";

// The JSON Schemas a SKU publishes (catalog `x-input-schema`/`x-output-schema`, OpenAPI), generated
// from the same zod schemas that validate the call and describe the deliverable: one source of truth.

export interface SkuSchemas {
  input: JsonObject;
  output: JsonObject;
}

function jsonSchema(schema: z.ZodType, io: "input" | "output"): JsonObject {
  // Transforms and refinements have no JSON Schema form: the published schema is their input shape.
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as JsonObject;
  return rest;
}

/** Each handler's published schemas, by SKU id. */
export function skuSchemas(handlers: ReadonlyMap<string, SkuHandler<any>>): Map<string, SkuSchemas> {
  const out = new Map<string, SkuSchemas>();
  for (const [skuId, h] of handlers) out.set(skuId, { input: jsonSchema(h.input, "input"), output: jsonSchema(h.output, "output") });
  return out;
}
