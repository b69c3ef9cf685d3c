import {
  fromJson,
  toJson,
  ScalarType,
  type DescEnum,
  type DescField,
  type DescMessage,
  type JsonObject,
  type JsonValue,
  type MessageShape,
} from "@bufbuild/protobuf";
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { AmountError, atomicToUsdNumber, usdToAtomic } from "../platform/money.js";

// The REST shim's generic translation between proto messages and the spec's legacy JSON:
// - keys are the proto field names (snake_case), every field present (implicit defaults included);
// - an atomic-units string field `amount` / `*_amount` appears as `amount_usd` / `*_usd`, a USD number;
// - enums appear as their short lowercase name (`CALL_STATUS_DELIVERED` -> `delivered`);
// - Timestamps are RFC 3339 strings, int64 values numbers (strings beyond 2^53), Structs plain JSON.

const AMOUNT_FIELD = /(^|_)amount$/;
const JSON_WKT = new Set([
  "google.protobuf.Struct",
  "google.protobuf.Value",
  "google.protobuf.ListValue",
  "google.protobuf.Duration",
]);

export class LegacyJsonError extends Error {
  constructor(readonly field: string, message: string) {
    super(message);
  }
}

/** True for a string field that carries atomic USDC units. */
export function isAmountField(field: DescField): boolean {
  return field.fieldKind === "scalar" && field.scalar === ScalarType.STRING && AMOUNT_FIELD.test(field.name);
}

/** The key of a field in legacy JSON. */
export function legacyKey(field: DescField): string {
  if (!isAmountField(field)) return field.name;
  return field.name === "amount" ? "amount_usd" : field.name.replace(/_amount$/, "_usd");
}

/** The legacy names of an enum's values, UNSPECIFIED excluded. */
export function legacyEnumValues(e: DescEnum): string[] {
  return e.values.filter((v) => v.number !== 0).map((v) => v.localName.toLowerCase());
}

function enumOut(e: DescEnum, n: number): JsonValue {
  const v = e.values.find((x) => x.number === n);
  return v ? v.localName.toLowerCase() : n;
}

function enumIn(e: DescEnum, value: JsonValue, path: string): JsonValue {
  if (typeof value !== "string") return value;
  const v = e.values.find((x) => x.localName.toLowerCase() === value.toLowerCase() || x.name === value);
  if (!v || v.number === 0) {
    throw new LegacyJsonError(path, `${path} must be one of ${legacyEnumValues(e).join(", ")}`);
  }
  return v.name;
}

function scalarOut(type: ScalarType, value: unknown): JsonValue {
  switch (type) {
    case ScalarType.INT64:
    case ScalarType.UINT64:
    case ScalarType.SINT64:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64: {
      const n = Number(value);
      return Number.isSafeInteger(n) ? n : String(value);
    }
    case ScalarType.BYTES:
      return Buffer.from(value as Uint8Array).toString("base64");
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return Number.isFinite(value as number) ? (value as number) : null;
    default:
      return value as JsonValue;
  }
}

function fieldValue(msg: Record<string, unknown>, field: DescField): unknown {
  if (field.oneof) {
    const o = msg[field.oneof.localName] as { case?: string; value?: unknown };
    return o?.case === field.localName ? o.value : undefined;
  }
  return msg[field.localName];
}

function messageOut(desc: DescMessage, msg: unknown): JsonValue {
  if (desc.typeName === "google.protobuf.Timestamp") return timestampDate(msg as Timestamp).toISOString();
  // protobuf-es stores Struct fields as plain JSON objects; other JSON-shaped WKTs stay messages.
  if (JSON_WKT.has(desc.typeName)) return typeof msg === "object" && msg !== null && "$typeName" in msg ? toJson(desc, msg as never) : (msg as JsonValue);
  return toLegacyJson(desc, msg as never);
}

/** Renders a message as legacy JSON. */
export function toLegacyJson<D extends DescMessage>(desc: D, msg: MessageShape<D>): JsonObject {
  const out: JsonObject = {};
  const m = msg as unknown as Record<string, unknown>;
  for (const field of desc.fields) {
    const value = fieldValue(m, field);
    if (value === undefined) continue;
    const key = legacyKey(field);
    switch (field.fieldKind) {
      case "scalar":
        out[key] = isAmountField(field) ? (value === "" ? null : atomicToUsdNumber(value as string)) : scalarOut(field.scalar, value);
        break;
      case "enum":
        out[key] = enumOut(field.enum, value as number);
        break;
      case "message":
        out[key] = messageOut(field.message, value);
        break;
      case "list": {
        const items = value as unknown[];
        out[key] = items.map((v) =>
          field.listKind === "message" ? messageOut(field.message, v) : field.listKind === "enum" ? enumOut(field.enum, v as number) : scalarOut(field.scalar, v),
        );
        break;
      }
      case "map": {
        const obj: JsonObject = {};
        for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
          obj[k] = field.mapKind === "message" ? messageOut(field.message, v) : field.mapKind === "enum" ? enumOut(field.enum, v as number) : scalarOut(field.scalar, v);
        }
        out[key] = obj;
        break;
      }
    }
  }
  return out;
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function messageIn(desc: DescMessage, value: JsonValue, path: string): JsonValue {
  if (desc.typeName.startsWith("google.protobuf.")) return value;
  return toProtoJson(desc, value, path);
}

/** Translates legacy JSON to proto3 JSON for `desc`; values of the wrong type are left for fromJson to reject. */
function toProtoJson(desc: DescMessage, json: JsonValue, path = ""): JsonValue {
  if (!isObject(json)) return json;
  const out: JsonObject = {};
  for (const field of desc.fields) {
    const key = legacyKey(field);
    const here = path ? `${path}.${key}` : key;
    const value = json[key] ?? (key === field.name ? json[field.jsonName] : undefined);
    if (value === undefined || value === null) continue;
    if (isAmountField(field)) {
      if (typeof value !== "number" && typeof value !== "string") throw new LegacyJsonError(here, `${here} must be a USD number`);
      try {
        out[field.name] = usdToAtomic(value).toString();
      } catch (err) {
        throw new LegacyJsonError(here, `${here}: ${(err as AmountError).message}`);
      }
      continue;
    }
    switch (field.fieldKind) {
      case "enum":
        out[field.name] = enumIn(field.enum, value, here);
        break;
      case "message":
        out[field.name] = messageIn(field.message, value, here);
        break;
      case "list":
        out[field.name] = !Array.isArray(value)
          ? value
          : value.map((v, i) =>
              field.listKind === "message" ? messageIn(field.message, v, `${here}[${i}]`) : field.listKind === "enum" ? enumIn(field.enum, v, `${here}[${i}]`) : v,
            );
        break;
      case "map":
        out[field.name] =
          field.mapKind === "message" && isObject(value)
            ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, messageIn(field.message, v, `${here}.${k}`)]))
            : value;
        break;
      default:
        out[field.name] = value;
    }
  }
  return out;
}

/** Parses legacy JSON into a message of `desc`; unknown keys are ignored. Throws LegacyJsonError or a protobuf-es error. */
export function fromLegacyJson<D extends DescMessage>(desc: D, json: JsonValue): MessageShape<D> {
  if (!isObject(json)) throw new LegacyJsonError("", "the request body must be a JSON object");
  return fromJson(desc, toProtoJson(desc, json), { ignoreUnknownFields: true });
}
