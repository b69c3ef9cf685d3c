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

function checkBalanced(kind: string, ref: string, postings: Posting[]): void {
  const sum = postings.reduce((s, p) => s + p.amount, 0n);
  if (sum !== 0n) throw new LedgerError(`unbalanced ${kind} entry for ${ref}: postings sum to ${sum}`);
}

/** Posts one balanced entry; returns false when this event was already posted. */
export async function postEntry(manager: EntityManager, kind: string, ref: string, postings: Posting[], opts: { fresh?: boolean } = {}): Promise<boolean> {
  checkBalanced(kind, ref, postings);
  // fresh: the caller won the guarded update that makes this event due, in the same transaction, so it
  // cannot be posted yet; the (kind, ref) unique index still refuses a second post.
  if (!opts.fresh && (await manager.findOneBy(LedgerEntryEntity, { kind, ref }))) return false;
  await postEntries(manager, [{ kind, ref, postings }]);
  return true;
}

/**
 * Posts entries for events the caller has just made due in the same transaction (each won a guarded update, so
 * none can be posted yet; the (kind, ref) unique index still refuses a second post): all entries in one INSERT,
 * all postings in another.
 */
export async function postEntries(manager: EntityManager, entries: { kind: string; ref: string; postings: Posting[] }[]): Promise<void> {
  if (entries.length === 0) return;
  const rows = entries.map((e) => {
    checkBalanced(e.kind, e.ref, e.postings);
    return { ...e, entryId: newId("le") };
  });
  const createTime = new Date();
  await insertRows(manager.connection, LedgerEntryEntity, rows.map(({ entryId, kind, ref }) => ({ entryId, kind, ref, createTime })), manager);
  await insertRows(
    manager.connection,
    LedgerPostingEntity,
    rows.flatMap(({ entryId, postings }) => postings.filter((p) => p.amount !== 0n).map((p) => ({ entryId, account: p.account, amount: p.amount }))),
    manager,
  );
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
