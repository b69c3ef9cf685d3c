// Exact arithmetic on the venues' decimal strings (prices, sizes), so a price difference reported to a
// buyer is the venues' own digits, not a float's approximation. Numbers are for statistics only.

const DECIMAL = /^(-)?(\d+)(?:\.(\d+))?$/;

function parse(s: string): { units: bigint; scale: number } {
  const m = DECIMAL.exec(s);
  if (!m) throw new Error(`not a decimal: ${s}`);
  const frac = m[3] ?? "";
  const units = BigInt(`${m[2]}${frac}`);
  return { units: m[1] ? -units : units, scale: frac.length };
}

function format(units: bigint, scale: number): string {
  const neg = units < 0n;
  const digits = (neg ? -units : units).toString().padStart(scale + 1, "0");
  const int = digits.slice(0, digits.length - scale);
  const frac = scale ? digits.slice(-scale).replace(/0+$/, "") : "";
  return `${neg ? "-" : ""}${int}${frac ? `.${frac}` : ""}`;
}

/** a - b, exactly (trailing zeros dropped). */
export function subDecimal(a: string, b: string): string {
  const x = parse(a);
  const y = parse(b);
  const scale = Math.max(x.scale, y.scale);
  const units = x.units * 10n ** BigInt(scale - x.scale) - y.units * 10n ** BigInt(scale - y.scale);
  return format(units, scale);
}

/** Compares two decimal strings exactly: negative, zero or positive. */
export function compareDecimal(a: string, b: string): number {
  const d = subDecimal(a, b);
  return d.startsWith("-") ? -1 : /^0(\.0*)?$/.test(d) ? 0 : 1;
}
