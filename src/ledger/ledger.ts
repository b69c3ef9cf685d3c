import type { EntityManager } from "typeorm";
import { newId } from "../platform/ids.js";
import { insertRows } from "../platform/db/raw-insert.js";
import { LedgerEntryEntity, LedgerPostingEntity } from "./ledger.entity.js";

// Double-entry journal. Every business event posts one entry whose postings sum to zero; the
// (kind, ref) unique index makes posting an event idempotent. Positive = debit, negative = credit.

/** Chart of accounts used so far. */
export const ACCOUNTS = {
  /** USDC held by the treasury wallet on-chain. */
  treasuryUsdc: "asset:treasury_usdc",
  /** The service's fee income (svc_fee). */
  feeRevenue: "revenue:svc_fee",
  /** What is owed to the provider of a catalog SKU (an internal identity). */
  providerPayable: (provider: string) => `liability:provider_payable:${provider}`,
  /** Refunds of upheld disputes over work already paid out: the service bears them. */
  disputeRefunds: "expense:dispute_refunds",
} as const;

export interface Posting {
  account: string;
  amount: bigint;
}

export class LedgerError extends Error {}

/** Posts one balanced entry; returns false when this event was already posted. */
export async function postEntry(manager: EntityManager, kind: string, ref: string, postings: Posting[], opts: { fresh?: boolean } = {}): Promise<boolean> {
  const sum = postings.reduce((s, p) => s + p.amount, 0n);
  if (sum !== 0n) throw new LedgerError(`unbalanced ${kind} entry for ${ref}: postings sum to ${sum}`);
  // fresh: the caller won the guarded update that makes this event due, in the same transaction, so it
  // cannot be posted yet; the (kind, ref) unique index still refuses a second post.
  if (!opts.fresh && (await manager.findOneBy(LedgerEntryEntity, { kind, ref }))) return false;
  const entryId = newId("le");
  // Raw inserts: the query builder's CPU is most of these writes on the paid path.
  await insertRows(manager.connection, LedgerEntryEntity, [{ entryId, kind, ref, createTime: new Date() }], manager);
  await insertRows(
    manager.connection,
    LedgerPostingEntity,
    postings.filter((p) => p.amount !== 0n).map((p) => ({ entryId, account: p.account, amount: p.amount })),
    manager,
  );
  return true;
}

/** Balance of one account (sum of its postings). */
export async function accountBalance(manager: EntityManager, account: string): Promise<bigint> {
  const rows = await manager.findBy(LedgerPostingEntity, { account });
  return rows.reduce((s, r) => s + r.amount, 0n);
}

/** The journal's checks: every entry balances and all postings sum to zero. Returns the problems found. */
export async function checkJournal(manager: EntityManager): Promise<string[]> {
  const postings = await manager.find(LedgerPostingEntity);
  const byEntry = new Map<string, bigint>();
  let total = 0n;
  for (const p of postings) {
    byEntry.set(p.entryId, (byEntry.get(p.entryId) ?? 0n) + p.amount);
    total += p.amount;
  }
  const problems = [...byEntry].filter(([, s]) => s !== 0n).map(([id, s]) => `entry ${id} sums to ${s}`);
  if (total !== 0n) problems.push(`all postings sum to ${total}`);
  return problems;
}
