import { Like, type EntityManager } from "typeorm";
import { LedgerPostingEntity } from "../ledger/ledger.entity.js";
import { MarketEcashReceiptEntity, MarketEntity, MarketPositionEntity } from "./markets.entity.js";
import { heldSats, MARKETS_ACCOUNTS } from "./markets-ledger.js";

// The markets API's part of `svc ledger check`: the journal agrees with the markets records.
//   - an unresolved market's pool holds its subsidy plus its stakes after fees; a resolved one holds nothing
//   - a market's volume, stakes and position count equal the sums of its positions
//   - no agent's markets balance is below zero
//   - the ecash held equals the value of every redemption received

export async function checkMarketBooks(m: EntityManager): Promise<string[]> {
  const problems: string[] = [];
  const positions = await m.find(MarketPositionEntity);
  for (const market of await m.find(MarketEntity)) {
    const pool = await heldSats(m, MARKETS_ACCOUNTS.pool(market.marketId));
    const expected = market.state === "resolved" ? 0n : market.subsidy + market.yesStake + market.noStake;
    if (pool !== expected) problems.push(`market ${market.marketId} (${market.state}) pool holds ${pool} sats, expected ${expected}`);
    const own = positions.filter((p) => p.marketId === market.marketId);
    const sum = (side: "yes" | "no") => own.filter((p) => p.outcome === side).reduce((s, p) => s + p.stake, 0n);
    const volume = own.reduce((s, p) => s + p.paid, 0n);
    if (sum("yes") !== market.yesStake || sum("no") !== market.noStake || volume !== market.volume || own.length !== market.positionsCount) {
      problems.push(`market ${market.marketId} totals disagree with its ${own.length} positions`);
    }
  }
  const balances = new Map<string, bigint>();
  for (const p of await m.find(LedgerPostingEntity, { where: { account: Like(`${MARKETS_ACCOUNTS.balance("")}%`) } })) {
    balances.set(p.account, (balances.get(p.account) ?? 0n) + p.amount);
  }
  for (const [account, balance] of balances) if (balance > 0n) problems.push(`${account} is overspent: ${-balance} sats`);
  const received = (await m.find(MarketEcashReceiptEntity)).reduce((s, r) => s + r.amount, 0n);
  const held = -(await heldSats(m, MARKETS_ACCOUNTS.ecash));
  if (held !== received) problems.push(`ecash held ${held} sats, redemptions received ${received}`);
  return problems;
}
