import type { JsonObject, JsonValue } from "@bufbuild/protobuf";

// The catalog's legacy shape: `summary`/`name`, `x-price-usd` (absent for the retired SKU),
// `x-payment`, and the published schemas as `x-input-schema`/`x-output-schema`.

function skuToLegacy(sku: JsonObject): JsonObject {
  const { price_usd, payment, input_schema, output_schema, ...rest } = sku;
  const out: JsonObject = { sku_id: rest.sku_id!, summary: rest.name!, ...rest };
  if (price_usd !== null && price_usd !== undefined) out["x-price-usd"] = price_usd;
  out["x-payment"] = payment ?? null;
  if (input_schema && Object.keys(input_schema as JsonObject).length) out["x-input-schema"] = input_schema;
  if (output_schema && Object.keys(output_schema as JsonObject).length) out["x-output-schema"] = output_schema;
  return out;
}

export function catalogToLegacy(json: JsonValue): JsonObject {
  const c = json as JsonObject;
  return { ...c, services: ((c.services ?? []) as JsonObject[]).map(skuToLegacy) };
}

/** The OpenAPI schema of the catalog response, patched the same way as the JSON. */
export function patchCatalogSchema(components: Record<string, JsonObject>): void {
  const sku = components["svc.catalog.v1.Sku"];
  const props = sku?.properties as JsonObject | undefined;
  if (!props) return;
  const { price_usd, payment, input_schema, output_schema, ...rest } = props;
  sku!.properties = {
    summary: { type: "string", description: "human title (same as name)" },
    ...rest,
    "x-price-usd": { ...(price_usd as JsonObject), description: "list price in USD per call; absent for the retired SKU" },
    "x-payment": payment!,
    "x-input-schema": input_schema!,
    "x-output-schema": output_schema!,
  };
}
