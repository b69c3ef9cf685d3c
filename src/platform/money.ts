// USDC amounts are integer atomic units (6 decimals) everywhere; USD decimals exist only at the edges.

export const USDC_DECIMALS = 6;
const SCALE = 10n ** BigInt(USDC_DECIMALS);
const USD_TEXT = /^(\d{1,15})(?:\.(\d{1,6}))?$/;

export class AmountError extends Error {}

/** Parses a non-negative USD decimal ("0.25", "5", "99.0") to atomic units, exactly. */
export function usdToAtomic(usd: string | number): bigint {
  const text = typeof usd === "number" ? numberText(usd) : usd.trim();
  const m = USD_TEXT.exec(text);
  if (!m) throw new AmountError(`not a USD amount with at most ${USDC_DECIMALS} decimals: ${JSON.stringify(usd)}`);
  const frac = (m[2] ?? "").padEnd(USDC_DECIMALS, "0");
  return BigInt(m[1]!) * SCALE + BigInt(frac);
}

function numberText(n: number): string {
  if (!Number.isFinite(n) || n < 0) throw new AmountError(`not a USD amount: ${n}`);
  // Shortest round-trip text; tiny values come out in exponent form and are refused by the pattern.
  return String(n);
}

/** Renders atomic units as a USD decimal string without trailing zeros ("0.25", "5"). */
export function atomicToUsdText(atomic: bigint | string): string {
  const v = BigInt(atomic);
  const neg = v < 0n;
  const abs = neg ? -v : v;
  const whole = abs / SCALE;
  const frac = (abs % SCALE).toString().padStart(USDC_DECIMALS, "0").replace(/0+$/, "");
  return `${neg ? "-" : ""}${whole}${frac ? "." + frac : ""}`;
}

/** Renders atomic units as a JSON number of USD (the legacy REST form). */
export function atomicToUsdNumber(atomic: bigint | string): number {
  return Number(atomicToUsdText(atomic));
}
