import { In, type EntityManager } from "typeorm";
import { MarketJobEntity, MarketRequestEntity, PayoutEntity } from "../marketplace/marketplace.entity.js";
import { held, MARKET_ACCOUNTS } from "../marketplace/marketplace-ledger.js";
import { StarterNoteEntity } from "../registry/starter-note.entity.js";
import { NOTE_ACCOUNTS } from "../registry/registry.service.js";
import { ACCOUNTS, checkJournal } from "./ledger.js";
import { checkMarketBooks } from "../markets/market-books.js";

// `svc ledger check`: the journal balances, and the business records agree with it:
// notes never below zero; an open request's escrow holds its budget and a closed one holds nothing;
// an assigned job holds its amount and a finished one nothing; each provider's payable equals its
// unreleased payouts.

export async function checkBooks(m: EntityManager): Promise<string[]> {
  const problems = await checkJournal(m);
  for (const note of await m.find(StarterNoteEntity)) {
    const remaining = await held(m, NOTE_ACCOUNTS.note(note.noteId));
    if (remaining < 0n) problems.push(`note ${note.noteId} is overspent: ${remaining}`);
  }
  for (const r of await m.find(MarketRequestEntity)) {
    const escrow = await held(m, MARKET_ACCOUNTS.escrow(r.requestId));
    const expected = r.state === "open" ? r.budget : 0n;
    if (escrow !== expected) problems.push(`request ${r.requestId} (${r.state}) escrow holds ${escrow}, expected ${expected}`);
  }
  for (const j of await m.find(MarketJobEntity)) {
    const hold = await held(m, MARKET_ACCOUNTS.job(j.jobId));
    const expected = j.state === "assigned" ? j.amount : 0n;
    if (hold !== expected) problems.push(`job ${j.jobId} (${j.state}) holds ${hold}, expected ${expected}`);
  }
  const owed = new Map<string, bigint>();
  for (const p of await m.findBy(PayoutEntity, { state: In(["pending", "releasing"]) })) owed.set(p.providerAgentId, (owed.get(p.providerAgentId) ?? 0n) + p.net);
  const providers = new Set([...owed.keys(), ...(await m.find(PayoutEntity)).map((p) => p.providerAgentId)]);
  for (const agentId of providers) {
    const payable = await held(m, ACCOUNTS.providerPayable(agentId));
    if (payable !== (owed.get(agentId) ?? 0n)) problems.push(`provider ${agentId} payable ${payable}, unreleased payouts ${owed.get(agentId) ?? 0n}`);
  }
  problems.push(...(await checkMarketBooks(m)));
  return problems;
}
