// Exact decimal amounts for spend audits: parsed into integers of 10^-12 units (bigint), summed and
// compared as integers, rendered back as plain decimal strings. Token prices are small (a millionth of
// a dollar per token is common), so 12 places keep every realistic per-record cost exact.

export const DECIMAL_PLACES = 12;
const SCALE = 10n ** BigInt(DECIMAL_PLACES);
const DECIMAL = new RegExp(`^(\\d{1,18})(?:\\.(\\d{1,${DECIMAL_PLACES}}))?$`);

/** Why a value is not an exact non-negative decimal, or undefined when it is. */
export function decimalProblem(v: unknown): string | undefined {
  if (typeof v === "number") {
    if (!Number.isFinite(v) || v < 0) return "must be a non-negative amount";
    // A JSON number is read by its shortest round-trip text; exponent forms are refused.
    return DECIMAL.test(String(v)) ? undefined : `write ${v} as a decimal string with at most ${DECIMAL_PLACES} places`;
  }
  if (typeof v !== "string") return "must be a decimal string or number";
  return DECIMAL.test(v.trim()) ? undefined : `must be a non-negative decimal with at most ${DECIMAL_PLACES} places`;
}

/** Parses a value `decimalProblem` accepts into 10^-12 units. */
export function toUnits(v: string | number): bigint {
  const m = DECIMAL.exec(typeof v === "number" ? String(v) : v.trim());
  if (!m) throw new RangeError(`not an exact decimal: ${JSON.stringify(v)}`);
  return BigInt(m[1]!) * SCALE + BigInt((m[2] ?? "").padEnd(DECIMAL_PLACES, "0"));
}

/** Renders units as a decimal string without trailing zeros ("12.5", "0.00015", "-3"). */
export function fromUnits(units: bigint): string {
  const neg = units < 0n;
  const abs = neg ? -units : units;
  const frac = (abs % SCALE).toString().padStart(DECIMAL_PLACES, "0").replace(/0+$/, "");
  return `${neg ? "-" : ""}${abs / SCALE}${frac ? `.${frac}` : ""}`;
}

/** a / b in basis points, rounded down (0 when b is 0). */
export function basisPoints(a: bigint, b: bigint): number {
  return b === 0n ? 0 : Number((a * 10_000n) / b);
}
