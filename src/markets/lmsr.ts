// The market maker of every market: Hanson's logarithmic market scoring rule (LMSR) with liquidity b.
//
//   cost      C(q_yes, q_no) = b ln(e^(q_yes/b) + e^(q_no/b))
//   price     p_yes = e^(q_yes/b) / (e^(q_yes/b) + e^(q_no/b)) = 1 / (1 + e^((q_no - q_yes)/b))
//   a stake   S sats (after the fee) buys the Δ shares of its side with C(q + Δ) - C(q) = S:
//             Δ = S + b ln(1 + e^d (1 - e^(-S/b))),  d = (q_other - q_side) / b
//
// One share pays 1 sat if its outcome wins. Shares are kept as integer milli-shares, rounded down (the
// buyer never gets more than S paid for), and a winning position is paid the floor of its shares in
// sats. The maker's worst-case loss is b ln 2, funded at creation as the market's subsidy
// (ceil(b ln 2) sats), so the pool always covers the payouts. Money is integer sats throughout; only the
// share count and the prices are computed in floating point.

/** Milli-shares per share. */
export const SHARE_SCALE = 1000n;

const sharesOf = (milli: bigint) => Number(milli) / Number(SHARE_SCALE);

/** p_yes for outstanding shares (milli-shares) and liquidity b (sats). */
export function yesProbability(qYesMilli: bigint, qNoMilli: bigint, b: bigint): number {
  const d = (sharesOf(qNoMilli) - sharesOf(qYesMilli)) / Number(b);
  return 1 / (1 + Math.exp(d));
}

/** C(q) in sats, computed stably (log-sum-exp). */
export function lmsrCost(qYesMilli: bigint, qNoMilli: bigint, b: bigint): number {
  const bn = Number(b);
  const y = sharesOf(qYesMilli) / bn;
  const n = sharesOf(qNoMilli) / bn;
  const m = Math.max(y, n);
  return bn * (m + Math.log(Math.exp(y - m) + Math.exp(n - m)));
}

/** Milli-shares of one side that `net` sats buy, rounded down. */
export function sharesForStake(net: bigint, qSideMilli: bigint, qOtherMilli: bigint, b: bigint): bigint {
  if (net <= 0n) return 0n;
  const bn = Number(b);
  const s = Number(net);
  const d = (sharesOf(qOtherMilli) - sharesOf(qSideMilli)) / bn;
  const x = -Math.expm1(-s / bn); // 1 - e^(-S/b), in (0, 1]
  // ln(1 + e^d x), without overflow when the side is already cheap (d large).
  const tail = d > 30 ? d + Math.log(x + Math.exp(-d)) : Math.log1p(Math.exp(d) * x);
  const delta = s + bn * tail;
  return BigInt(Math.floor(delta * Number(SHARE_SCALE)));
}

/** The market maker's subsidy for liquidity b: ceil(b ln 2) sats, its worst-case loss. */
export function subsidyFor(b: bigint): bigint {
  return BigInt(Math.ceil(Number(b) * Math.LN2));
}

/** Milli-shares as a decimal with 3 places ("1234.567"). */
export function sharesText(milli: bigint): string {
  const whole = milli / SHARE_SCALE;
  const frac = (milli % SHARE_SCALE).toString().padStart(3, "0");
  return `${whole}.${frac}`;
}

/** What a winning position is paid: the floor of its shares, in sats. */
export function payoutFor(milli: bigint): bigint {
  return milli / SHARE_SCALE;
}
