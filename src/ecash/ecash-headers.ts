import { PaymentRequest } from "@cashu/cashu-ts";
import { ecashErrors } from "./ecash-errors.js";

// Where an ecash payment travels: the spec's `X-402-Payment` header, or NUT-24's `X-Cashu`, each
// carrying one serialized Cashu token (cashuB… or the older cashuA…).

export const ECASH_PAYMENT_HEADERS = ["x-402-payment", "x-cashu"] as const;

type HeaderBag = Headers | Record<string, string | string[] | undefined>;

function read(headers: HeaderBag, name: string): string | string[] | undefined {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
  const bag = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(bag).find((k) => k.toLowerCase() === name);
  return key === undefined ? undefined : bag[key];
}

/**
 * The Cashu token a request carries, trimmed; undefined when neither header is present. Refuses
 * (`ecash_invalid`) a header repeated, or the two headers carrying different tokens.
 */
export function cashuTokenFromHeaders(headers: HeaderBag): string | undefined {
  const found: string[] = [];
  for (const name of ECASH_PAYMENT_HEADERS) {
    const value = read(headers, name);
    if (value === undefined) continue;
    if (Array.isArray(value) || value.includes(",")) throw ecashErrors.invalid(`${name} must carry exactly one Cashu token`);
    const token = value.trim();
    if (!token) throw ecashErrors.invalid(`${name} is empty`);
    found.push(token);
  }
  if (found.length === 2 && found[0] !== found[1]) throw ecashErrors.invalid("X-402-Payment and X-Cashu carry different tokens");
  return found[0];
}

/**
 * The NUT-24 challenge of an ecash-priced call: the value of an `X-Cashu` response header (a NUT-18
 * payment request, creqA…) naming the amount in sat and the mints accepted. Wallets that speak NUT-24
 * pay it by retrying with a token in `X-Cashu`.
 */
export function ecashChallengeHeader(amount: bigint, mints: readonly string[], description?: string): string {
  return new PaymentRequest([], undefined, amount, "sat", [...mints], description, true).toEncodedCreqA();
}
