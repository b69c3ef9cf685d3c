import { ScalarType, type DescField, type DescMessage, type JsonObject } from "@bufbuild/protobuf";
import { isAmountField, legacyEnumValues, legacyKey } from "../rest/legacy-json.js";

// JSON Schema of the legacy JSON form of a proto message (the same rules as rest/legacy-json.ts).
// Named messages go into `components` and are referenced.

function scalarSchema(t: ScalarType): JsonObject {
  switch (t) {
    case ScalarType.STRING:
      return { type: "string" };
    case ScalarType.BOOL:
      return { type: "boolean" };
    case ScalarType.BYTES:
      return { type: "string", contentEncoding: "base64" };
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return { type: "number" };
    default:
      return { type: "integer" };
  }
}

export function messageSchema(desc: DescMessage, components: Record<string, JsonObject>): JsonObject {
  switch (desc.typeName) {
    case "google.protobuf.Timestamp":
      return { type: "string", format: "date-time" };
    case "google.protobuf.Struct":
      return { type: "object", additionalProperties: true };
    case "google.protobuf.ListValue":
      return { type: "array" };
    case "google.protobuf.Value":
      return {};
  }
  if (!components[desc.typeName]) {
    components[desc.typeName] = {}; // placeholder first: recursive messages terminate
    const properties: JsonObject = {};
    for (const field of desc.fields) properties[legacyKey(field)] = fieldSchema(field, components);
    components[desc.typeName] = { type: "object", properties };
  }
  return { $ref: `#/components/schemas/${desc.typeName}` };
}

function fieldSchema(field: DescField, components: Record<string, JsonObject>): JsonObject {
  if (isAmountField(field)) return { type: "number", minimum: 0, description: "USD (USDC, 6 decimals)" };
  switch (field.fieldKind) {
    case "scalar":
      return scalarSchema(field.scalar);
    case "enum":
      return { type: "string", enum: legacyEnumValues(field.enum) };
    case "message":
      return messageSchema(field.message, components);
    case "list":
      return {
        type: "array",
        items:
          field.listKind === "message"
            ? messageSchema(field.message, components)
            : field.listKind === "enum"
              ? { type: "string", enum: legacyEnumValues(field.enum) }
              : scalarSchema(field.scalar),
      };
    case "map":
      return {
        type: "object",
        additionalProperties:
          field.mapKind === "message"
            ? messageSchema(field.message, components)
            : field.mapKind === "enum"
              ? { type: "string", enum: legacyEnumValues(field.enum) }
              : scalarSchema(field.scalar),
      };
  }
}
