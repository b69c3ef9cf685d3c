import type { EntityManager } from "typeorm";
import { accountBalance, ACCOUNTS, postEntry } from "../ledger/ledger.js";
import { NOTE_ACCOUNTS } from "../registry/registry.service.js";

// The marketplace's money moves, each one balanced journal entry:
//   request posted    note -> escrow (budget)
//   bid accepted      escrow -> job (price), the rest of the escrow back to the note
//   request closed    escrow -> note (what is left)
//   job completed     job -> fee revenue (fee) + provider payable (net)
//   payout released   provider payable -> treasury USDC (paid on-chain) or the provider's note (credit)

export const MARKET_ACCOUNTS = {
  escrow: (requestId: string) => `liability:escrow:${requestId}`,
  job: (jobId: string) => `liability:job:${jobId}`,
};

/** What an account that is a liability holds (its credit balance, positive). */
export async function held(m: EntityManager, account: string): Promise<bigint> {
  return -(await accountBalance(m, account));
}

export const noteRemaining = (m: EntityManager, noteId: string) => held(m, NOTE_ACCOUNTS.note(noteId));

export function escrowBudget(m: EntityManager, requestId: string, noteId: string, amount: bigint) {
  return postEntry(m, "request_escrow", requestId, [
    { account: NOTE_ACCOUNTS.note(noteId), amount },
    { account: MARKET_ACCOUNTS.escrow(requestId), amount: -amount },
  ]);
}

export function escrowToJob(m: EntityManager, requestId: string, jobId: string, amount: bigint) {
  return postEntry(m, "job_assign", jobId, [
    { account: MARKET_ACCOUNTS.escrow(requestId), amount },
    { account: MARKET_ACCOUNTS.job(jobId), amount: -amount },
  ]);
}

export function returnEscrow(m: EntityManager, requestId: string, noteId: string, amount: bigint, kind: string) {
  if (amount === 0n) return Promise.resolve(false);
  return postEntry(m, kind, requestId, [
    { account: MARKET_ACCOUNTS.escrow(requestId), amount },
    { account: NOTE_ACCOUNTS.note(noteId), amount: -amount },
  ]);
}

export function jobToPayable(m: EntityManager, jobId: string, providerAgentId: string, gross: bigint, fee: bigint) {
  return postEntry(m, "job_complete", jobId, [
    { account: MARKET_ACCOUNTS.job(jobId), amount: gross },
    { account: ACCOUNTS.feeRevenue, amount: -fee },
    { account: ACCOUNTS.providerPayable(providerAgentId), amount: -(gross - fee) },
  ]);
}

export function payableOut(m: EntityManager, payoutId: string, providerAgentId: string, net: bigint, to: { usdc: true } | { noteId: string }) {
  return postEntry(m, "payout_release", payoutId, [
    { account: ACCOUNTS.providerPayable(providerAgentId), amount: net },
    "usdc" in to ? { account: ACCOUNTS.treasuryUsdc, amount: -net } : { account: NOTE_ACCOUNTS.note(to.noteId), amount: -net },
  ]);
}
