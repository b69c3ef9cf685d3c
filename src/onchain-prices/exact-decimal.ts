// Exact rational arithmetic over bigints for prices read from contracts (integer answers, reserves,
// sqrtPriceX96). Values stay exact fractions until they are rendered; rendering rounds half up at a
// fixed number of decimals and drops trailing zeros, so a Chainlink answer renders exactly and a
// reserve ratio never shows binary float noise.

export interface Ratio {
  readonly num: bigint;
  /** Always positive. */
  readonly den: bigint;
}

/** Decimals a rendered price keeps (a quotient that does not terminate is rounded half up here). */
export const PRICE_DECIMALS = 18;

const abs = (v: bigint) => (v < 0n ? -v : v);

function gcd(a: bigint, b: bigint): bigint {
  a = abs(a);
  b = abs(b);
  while (b) [a, b] = [b, a % b];
  return a;
}

export function ratio(num: bigint, den = 1n): Ratio {
  if (den === 0n) throw new RangeError("division by zero");
  if (den < 0n) [num, den] = [-num, -den];
  const g = gcd(num, den) || 1n;
  return { num: num / g, den: den / g };
}

export const pow10 = (n: number) => 10n ** BigInt(n);

/** An integer with `decimals` implied decimals (a Chainlink answer, a token amount). */
export const fromScaled = (value: bigint, decimals: number): Ratio => ratio(value, pow10(decimals));

const DECIMAL = /^(-)?(\d+)(?:\.(\d+))?$/;

/** Parses a plain decimal string ("97011.50", "-3", "0.000001") exactly. */
export function parseDecimal(text: string): Ratio {
  const m = DECIMAL.exec(text.trim());
  if (!m) throw new RangeError(`not a decimal number: ${JSON.stringify(text)}`);
  const frac = m[3] ?? "";
  const v = BigInt(m[2]! + frac);
  return fromScaled(m[1] ? -v : v, frac.length);
}

export const add = (a: Ratio, b: Ratio) => ratio(a.num * b.den + b.num * a.den, a.den * b.den);
export const sub = (a: Ratio, b: Ratio) => ratio(a.num * b.den - b.num * a.den, a.den * b.den);
export const mul = (a: Ratio, b: Ratio) => ratio(a.num * b.num, a.den * b.den);
export const div = (a: Ratio, b: Ratio) => ratio(a.num * b.den, a.den * b.num);

export function compare(a: Ratio, b: Ratio): -1 | 0 | 1 {
  const l = a.num * b.den;
  const r = b.num * a.den;
  return l < r ? -1 : l > r ? 1 : 0;
}

/** The median; the mean of the two middle values for an even count. */
export function median(values: readonly Ratio[]): Ratio {
  if (!values.length) throw new RangeError("median of nothing");
  const sorted = [...values].sort(compare);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : div(add(sorted[mid - 1]!, sorted[mid]!), ratio(2n));
}

/** Renders a ratio as a decimal string, rounded half up (away from zero) at `decimals`, trailing zeros dropped. */
export function toDecimalString(r: Ratio, decimals = PRICE_DECIMALS): string {
  const neg = r.num < 0n;
  const scale = pow10(decimals);
  const scaled = (abs(r.num) * scale * 2n + r.den) / (2n * r.den);
  const whole = scaled / scale;
  const frac = (scaled % scale).toString().padStart(decimals, "0").replace(/0+$/, "");
  const text = `${whole}${frac ? "." + frac : ""}`;
  return neg && scaled !== 0n ? `-${text}` : text;
}

/** True when `toDecimalString(r, decimals)` is the exact value (the quotient terminates in time). */
export function isExactAt(r: Ratio, decimals = PRICE_DECIMALS): boolean {
  return (r.num * pow10(decimals)) % r.den === 0n;
}
