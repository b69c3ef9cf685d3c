import { createHash } from "node:crypto";
import { In, LessThan, type DataSource, type EntityManager } from "typeorm";
import {
  Amount,
  CheckStateEnum,
  Mint,
  OutputData,
  Wallet,
  getDecodedToken,
  getTokenMetadata,
  hashToCurve,
  isMintOperationError,
  type Proof,
  type SwapPreview,
  type Token,
} from "@cashu/cashu-ts";
import type { ConnectError } from "@connectrpc/connect";
import type { Config } from "../config.js";
import type { Logger } from "../platform/log.js";
import { newId } from "../platform/ids.js";
import { isUniqueViolation } from "../platform/db/errors.js";
import { runInTransaction } from "../platform/db/transaction.js";
import type { SafeFetchPolicy } from "../platform/http/safe-fetch.js";
import { SecretBox } from "../registry/credentials.js";
import type { EcashRedeemer, RedeemRequest, Redemption } from "./ecash-redeemer.js";
import { EcashInputEntity, EcashProofEntity, EcashRedemptionEntity } from "./ecash.entity.js";
import { ecashErrors } from "./ecash-errors.js";
import { normalMintUrl } from "./mint-allowlist.js";
import { mintRequest } from "./mint-request.js";

// Redeems Cashu tokens the only safe way: decode (no network), the mint must be on the operator's
// allowlist, unit sat, worth at least what is asked net of the mint's input fee; then the proofs are
// SWAPPED at the mint for fresh proofs only the service knows (NUT-03): that swap is the verification,
// and it moves custody. A NUT-07 state check alone would leave a double-spend race.
//
// Exactly once, across requests and server processes:
// 1. claim: the Ys of the token's proofs are inserted (primary key) with a `pending` redemption and the
//    prepared outputs (secrets and blinding factors sealed), in one committed transaction. A token, or
//    any proof of it, already claimed is refused `ecash_spent` before the mint is asked.
// 2. swap at the mint (through the safe fetcher).
// 3. finalize: the mint's signatures become the held proofs and the redemption `redeemed`, in one
//    transaction, before the caller answers.
// The mint refusing the inputs as spent is `ecash_spent`; any other refusal releases the claim
// (`ecash_invalid`). No usable answer (down, timeout, 5xx) leaves the redemption `interrupted` and
// answers 503: the same token presented again resumes it (NUT-07 check of the inputs: unspent, swap
// again with the same outputs; spent, NUT-09 restore of the signatures), so a swap the mint did but
// could not report is never lost and never charged twice.

const UNIT = "sat";
const MAX_PROOFS = 100;
const MAX_SECRET_CHARS = 1024;
const MAX_TOKEN_CHARS = 64 * 1024;

export interface CashuRedeemerOptions {
  ds: DataSource;
  /** Normalized mint URLs accepted (CASHU_MINTS); empty refuses every token (`ecash_disabled`). */
  mints: readonly string[];
  /** The safe fetcher's policy every mint request runs under. */
  policy: SafeFetchPolicy;
  /** Key sealing the secrets of held proofs (CASHU_PROOF_KEY). */
  proofKey: string;
  /** Per mint request. */
  timeoutMs?: number;
  log?: Logger;
  /** How long a mint's loaded keysets are reused before they are fetched again. */
  keysTtlMs?: number;
  /** A `pending` redemption untouched this long (its process died mid-swap) may be resumed. */
  staleAfterMs?: number;
}

interface ParsedToken {
  raw: string;
  mint: string;
  unit: string;
  amount: bigint;
  ys: string[];
  digest: string;
}

type Writer = <T>(work: (m: EntityManager) => Promise<T>) => Promise<T>;

const yOf = (secret: string) => hashToCurve(new TextEncoder().encode(secret)).toHex(true);

export class CashuRedeemer implements EcashRedeemer {
  private readonly allow: ReadonlySet<string>;
  private readonly box: SecretBox;
  private readonly request;
  private readonly keysTtlMs: number;
  private readonly staleAfterMs: number;
  private readonly wallets = new Map<string, { wallet: Promise<Wallet>; loadedAt: number }>();

  constructor(private readonly o: CashuRedeemerOptions) {
    this.allow = new Set(o.mints.map((m) => normalMintUrl(m) ?? m));
    this.box = new SecretBox(o.proofKey);
    this.request = mintRequest(o.policy, o.timeoutMs ?? 10_000);
    this.keysTtlMs = o.keysTtlMs ?? 10 * 60_000;
    this.staleAfterMs = o.staleAfterMs ?? 2 * 60_000;
  }

  /** Whether any mint is configured (ecash is accepted at all). */
  get enabled(): boolean {
    return this.allow.size > 0;
  }

  get mints(): string[] {
    return [...this.allow];
  }

  async redeem(req: RedeemRequest, manager?: EntityManager): Promise<Redemption> {
    if (!this.enabled) throw ecashErrors.disabled();
    if (req.unit !== UNIT) throw new Error(`CashuRedeemer redeems ${UNIT} only`);
    if (req.minAmount < 0n) throw new Error("minAmount must not be negative");
    const token = this.parse(req);
    const write = this.writer(manager);
    const db = manager ?? this.o.ds.manager;

    const claimed = await db.find(EcashInputEntity, { where: { y: In(token.ys) } });
    if (claimed.length) return this.resume(token, claimed, req, write, db);

    const wallet = await this.walletFor(token.mint);
    const decoded = await this.decode(token, wallet);
    const fee = wallet.getFeesForProofs(decoded.proofs).toBigInt();
    if (token.amount - fee < req.minAmount) throw ecashErrors.insufficient(token.amount - fee, req.minAmount, UNIT, fee);
    let preview: SwapPreview;
    try {
      preview = await wallet.prepareSwapToReceive(decoded);
    } catch (err) {
      throw ecashErrors.invalid(`the token does not verify against the mint's keys: ${brief(err)}`);
    }

    const redemptionId = newId("ecr", 20);
    const now = new Date();
    try {
      await write(async (m) => {
        // Inputs first: a duplicate fails the first statement, before anything else is written.
        await m.insert(
          EcashInputEntity,
          decoded.proofs.map((p) => ({ y: yOf(p.secret), redemptionId, keysetId: p.id, amount: p.amount.toBigInt() })),
        );
        await m.insert(EcashRedemptionEntity, {
          redemptionId,
          mint: token.mint,
          unit: UNIT,
          amount: token.amount,
          fee,
          received: token.amount - fee,
          minAmount: req.minAmount,
          purpose: req.purpose.slice(0, 200),
          state: "pending",
          tokenDigest: token.digest,
          error: null,
          createTime: now,
          updateTime: now,
        });
        await m.insert(EcashProofEntity, (preview.keepOutputs ?? []).map((o) => this.pendingRow(o, redemptionId, token.mint, now)));
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw ecashErrors.spent("this ecash token has already been redeemed");
      throw err;
    }
    const fresh = await this.swap(wallet, preview, redemptionId, token.mint, write);
    return this.finalize(redemptionId, token, fee, fresh, write);
  }

  /** Sum of the proofs held (unspent), per mint; for operators and the ledger reconciliation. */
  async balance(manager: EntityManager = this.o.ds.manager): Promise<Map<string, bigint>> {
    const rows = await manager.find(EcashProofEntity, { where: { state: "unspent" }, select: { mint: true, amount: true } });
    const out = new Map<string, bigint>();
    for (const r of rows) out.set(r.mint, (out.get(r.mint) ?? 0n) + r.amount);
    return out;
  }

  /**
   * The held proofs of a redemption, secrets opened: bearer money. Only for code that spends them at
   * the mint (payouts, melts); never log or return them on a route.
   */
  async proofsOf(redemptionId: string, manager: EntityManager = this.o.ds.manager): Promise<Proof[]> {
    const rows = await manager.find(EcashProofEntity, { where: { redemptionId, state: "unspent" } });
    return rows.map((r) => ({ id: r.keysetId, amount: Amount.from(r.amount), secret: this.box.open(r.secret), C: r.c! }));
  }

  // --- steps -------------------------------------------------------------------------------------

  /** Decodes without any network call and applies every check that needs no mint. */
  private parse(req: RedeemRequest): ParsedToken {
    const raw = req.token.trim();
    if (raw.length > MAX_TOKEN_CHARS) throw ecashErrors.invalid(`the token is longer than ${MAX_TOKEN_CHARS} characters`);
    if (!/^(cashu:)?cashu[AB][A-Za-z0-9_\-+/=]+$/.test(raw)) throw ecashErrors.invalid("not a Cashu token (cashuB… or cashuA…)");
    let meta: ReturnType<typeof getTokenMetadata>;
    try {
      meta = getTokenMetadata(raw);
    } catch (err) {
      throw ecashErrors.invalid(`the Cashu token does not decode: ${brief(err)}`);
    }
    const mint = typeof meta.mint === "string" ? normalMintUrl(meta.mint) : undefined;
    if (!mint) throw ecashErrors.invalid("the token names no valid mint URL");
    if (!this.allow.has(mint)) throw ecashErrors.mintNotAllowed(mint, this.mints);
    if (meta.unit !== UNIT) throw ecashErrors.wrongUnit(String(meta.unit), UNIT);
    const proofs = meta.incompleteProofs;
    if (proofs.length === 0) throw ecashErrors.invalid("the token carries no proofs");
    if (proofs.length > MAX_PROOFS) throw ecashErrors.invalid(`the token carries ${proofs.length} proofs; at most ${MAX_PROOFS} are accepted`);
    for (const p of proofs) {
      if (typeof p.secret !== "string" || !p.secret || p.secret.length > MAX_SECRET_CHARS) throw ecashErrors.invalid("the token carries a malformed proof");
      // NUT-10 secrets (P2PK, HTLC) are JSON arrays: locked to someone's key, not payable to this service.
      if (p.secret.trimStart().startsWith("[")) throw ecashErrors.invalid("proofs with spending conditions (P2PK/HTLC) are not accepted");
    }
    const ys = proofs.map((p) => yOf(p.secret));
    if (new Set(ys).size !== ys.length) throw ecashErrors.invalid("the token carries the same proof twice");
    const amount = meta.amount.toBigInt();
    if (amount < req.minAmount) throw ecashErrors.insufficient(amount, req.minAmount, UNIT);
    const digest = createHash("sha256").update([...ys].sort().join(",")).digest("hex");
    return { raw, mint, unit: meta.unit, amount, ys, digest };
  }

  /** The full token (keyset ids resolved against the mint's keysets, fetched again once if one is unknown). */
  private async decode(token: ParsedToken, wallet: Wallet): Promise<Token> {
    const attempt = (w: Wallet): Token | undefined => {
      try {
        const ids = w.keyChain.getAllKeysetIds();
        const decoded = getDecodedToken(token.raw, ids);
        return decoded.proofs.every((p) => ids.includes(p.id)) ? decoded : undefined;
      } catch {
        return undefined;
      }
    };
    const decoded = attempt(wallet) ?? attempt(await this.walletFor(token.mint, true));
    if (!decoded) throw ecashErrors.invalid("the token's proofs name a keyset the mint does not have");
    return decoded;
  }

  /** Swaps at the mint; maps the failure to the caller's answer after recording it. */
  private async swap(wallet: Wallet, preview: SwapPreview, redemptionId: string, mint: string, write: Writer): Promise<Proof[]> {
    try {
      const { keep } = await wallet.completeSwap(preview);
      return keep;
    } catch (err) {
      throw await this.swapFailed(err, redemptionId, mint, write);
    }
  }

  private async swapFailed(err: unknown, redemptionId: string, mint: string, write: Writer): Promise<ConnectError> {
    const now = new Date();
    if (isMintOperationError(err)) {
      const spent = err.code === 11001 || /already spent/i.test(err.message);
      await write(async (m) => {
        await m.update(EcashRedemptionEntity, { redemptionId }, { state: "refused", error: `mint refused the swap: NUT ${err.code}`, updateTime: now });
        await m.delete(EcashProofEntity, { redemptionId, state: "pending" });
        // A refusal other than "spent" leaves the buyer's proofs valid: release them for another try.
        if (!spent) await m.delete(EcashInputEntity, { redemptionId });
      });
      this.o.log?.warn({ redemptionId, mint, nutCode: err.code }, "ecash swap refused by the mint");
      if (spent) return ecashErrors.spent("the mint reports this token as already spent");
      // Unknown or inactive keyset (12001/12002): our cached keys are stale (the mint rotated), not the token's fault.
      if (err.code === 12001 || err.code === 12002) {
        this.wallets.delete(mint);
        return ecashErrors.mintUnavailable(mint, err);
      }
      return ecashErrors.invalid(`the mint refused the token (NUT error ${err.code}: ${brief(err)})`);
    }
    await write((m) => m.update(EcashRedemptionEntity, { redemptionId }, { state: "interrupted", error: `no usable answer from the mint: ${brief(err)}`, updateTime: now }));
    this.o.log?.warn({ redemptionId, mint, err: brief(err) }, "ecash swap interrupted: resumable with the same token");
    return ecashErrors.mintUnavailable(mint, err);
  }

  private async finalize(redemptionId: string, token: ParsedToken, fee: bigint, fresh: Proof[], write: Writer): Promise<Redemption> {
    const now = new Date();
    await write(async (m) => {
      for (const p of fresh) {
        const res = await m.update(EcashProofEntity, { y: yOf(p.secret), redemptionId }, { c: p.C, state: "unspent", blinding: null, updateTime: now });
        if (res.affected !== 1) throw new Error(`ecash redemption ${redemptionId}: a signed proof matches no prepared output`);
      }
      await m.update(EcashRedemptionEntity, { redemptionId }, { state: "redeemed", error: null, updateTime: now });
    });
    const received = fresh.reduce((s, p) => s + p.amount.toBigInt(), 0n);
    this.o.log?.info({ redemptionId, mint: token.mint, amount: token.amount.toString(), received: received.toString() }, "ecash redeemed");
    return { redemptionId, mint: token.mint, unit: UNIT, amount: token.amount, fee, received };
  }

  /**
   * The token (or a proof of it) was claimed before. Refused `ecash_spent`, unless it is exactly an
   * interrupted redemption of this same token (or one whose process died mid-swap): then this call
   * takes it over and finishes it.
   */
  private async resume(token: ParsedToken, claimed: EcashInputEntity[], req: RedeemRequest, write: Writer, db: EntityManager): Promise<Redemption> {
    const ids = new Set(claimed.map((c) => c.redemptionId));
    const r = ids.size === 1 ? await db.findOneBy(EcashRedemptionEntity, { redemptionId: claimed[0]!.redemptionId }) : null;
    const whole = r !== null && r.tokenDigest === token.digest && claimed.length === token.ys.length;
    const stale = new Date(Date.now() - this.staleAfterMs);
    const resumable = whole && (r.state === "interrupted" || (r.state === "pending" && r.updateTime < stale));
    if (!resumable) {
      const why = r?.state === "pending" ? "is being redeemed by another request" : r?.state === "refused" ? "was refused by the mint as already spent" : "has already been redeemed";
      throw ecashErrors.spent(`this ecash token ${why}`);
    }
    if (r.received < req.minAmount) throw ecashErrors.insufficient(r.received, req.minAmount, UNIT, r.fee);
    const taken = await write((m) =>
      m.update(
        EcashRedemptionEntity,
        r.state === "interrupted" ? { redemptionId: r.redemptionId, state: "interrupted" } : { redemptionId: r.redemptionId, state: "pending", updateTime: LessThan(stale) },
        { state: "pending", purpose: req.purpose.slice(0, 200), minAmount: req.minAmount, updateTime: new Date() },
      ),
    );
    if (taken.affected !== 1) throw ecashErrors.spent("this ecash token is being redeemed by another request");
    const interrupt = async (err: unknown): Promise<never> => {
      await write((m) => m.update(EcashRedemptionEntity, { redemptionId: r.redemptionId }, { state: "interrupted", error: `no usable answer from the mint: ${brief(err)}`, updateTime: new Date() }));
      throw ecashErrors.mintUnavailable(r.mint, err);
    };

    let wallet: Wallet;
    let decoded: Token;
    try {
      wallet = await this.walletFor(r.mint);
      decoded = await this.decode(token, wallet);
    } catch (err) {
      return interrupt(err);
    }
    const rows = await db.find(EcashProofEntity, { where: { redemptionId: r.redemptionId, state: "pending" } });
    if (rows.length === 0) return interrupt(new Error(`redemption ${r.redemptionId} has no recorded outputs`));
    const outputs = rows.map(
      (row) => new OutputData({ amount: Amount.from(row.amount), B_: row.blindedMessage, id: row.keysetId }, BigInt(this.box.open(row.blinding!)), new TextEncoder().encode(this.box.open(row.secret))),
    );
    let states;
    try {
      states = await wallet.checkProofsStates(decoded.proofs);
    } catch (err) {
      return interrupt(err);
    }
    if (states.every((s) => s.state === CheckStateEnum.UNSPENT)) {
      // The swap never reached the mint: send it again, with the outputs already recorded.
      const preview: SwapPreview = { amount: Amount.from(r.received), fees: Amount.from(r.fee), keysetId: rows[0]!.keysetId, inputs: decoded.proofs, keepOutputs: outputs };
      const fresh = await this.swap(wallet, preview, r.redemptionId, r.mint, write);
      return this.finalize(r.redemptionId, token, r.fee, fresh, write);
    }
    if (states.every((s) => s.state === CheckStateEnum.SPENT)) {
      // Spent: by our swap whose answer was lost, if the mint still holds signatures for our outputs (NUT-09).
      let restored;
      try {
        restored = await wallet.mint.restore({ outputs: outputs.map((o) => o.blindedMessage) });
      } catch (err) {
        return interrupt(err);
      }
      const byB = new Map(restored.outputs.map((o, i) => [o.B_, restored.signatures[i]!]));
      if (outputs.every((o) => byB.has(o.blindedMessage.B_))) {
        const keyset = wallet.keyChain.getKeyset(rows[0]!.keysetId);
        const fresh = outputs.map((o) => o.toProof(byB.get(o.blindedMessage.B_)!, keyset));
        return this.finalize(r.redemptionId, token, r.fee, fresh, write);
      }
      await write(async (m) => {
        await m.update(EcashRedemptionEntity, { redemptionId: r.redemptionId }, { state: "refused", error: "inputs spent at the mint by another wallet", updateTime: new Date() });
        await m.delete(EcashProofEntity, { redemptionId: r.redemptionId, state: "pending" });
      });
      throw ecashErrors.spent("the mint reports this token as already spent");
    }
    return interrupt(new Error("the mint reports the token's proofs as pending"));
  }

  // --- helpers -----------------------------------------------------------------------------------

  private pendingRow(o: NonNullable<SwapPreview["keepOutputs"]>[number], redemptionId: string, mint: string, now: Date): EcashProofEntity {
    const secret = new TextDecoder().decode(o.secret);
    return Object.assign(new EcashProofEntity(), {
      y: yOf(secret),
      redemptionId,
      mint,
      keysetId: o.blindedMessage.id,
      amount: Amount.from(o.blindedMessage.amount).toBigInt(),
      secret: this.box.seal(secret),
      c: null,
      blindedMessage: o.blindedMessage.B_,
      blinding: this.box.seal(o.blindingFactor.toString()),
      state: "pending" as const,
      createTime: now,
      updateTime: now,
    });
  }

  /** A loaded wallet of an allowlisted mint (keys cached for keysTtlMs); 503 when the mint cannot be read. */
  private async walletFor(mint: string, refresh = false): Promise<Wallet> {
    const hit = this.wallets.get(mint);
    if (hit && !refresh && Date.now() - hit.loadedAt < this.keysTtlMs) {
      try {
        return await hit.wallet;
      } catch {
        // fall through: load again
      }
    }
    const loading = (async () => {
      const wallet = new Wallet(new Mint(mint, { customRequest: this.request }), { unit: UNIT });
      await wallet.loadMint();
      return wallet;
    })();
    this.wallets.set(mint, { wallet: loading, loadedAt: Date.now() });
    try {
      return await loading;
    } catch (err) {
      if (this.wallets.get(mint)?.wallet === loading) this.wallets.delete(mint);
      this.o.log?.warn({ mint, err: brief(err) }, "ecash mint unreadable");
      throw ecashErrors.mintUnavailable(mint, err);
    }
  }

  private writer(manager?: EntityManager): Writer {
    return manager ? (work) => work(manager) : (work) => runInTransaction(this.o.ds, work);
  }
}

/**
 * The deployment's redeemer, for the markets API (stakes, plans, per-call fees): the CASHU_MINTS
 * allowlist, the engines' safe-fetch policy (SAFE_FETCH_ALLOW, per-mint circuit breaker; plain http
 * only on the dev chain) and CASHU_PROOF_KEY. With no mint configured every token is refused
 * `ecash_disabled`.
 */
export function createCashuRedeemer(deps: { config: Config; ds: DataSource; policy: SafeFetchPolicy; log: Logger }): CashuRedeemer {
  const { cashu } = deps.config;
  if (cashu.mints.length && cashu.proofKeyIsDev && !deps.config.devChain) {
    deps.log.warn("CASHU_PROOF_KEY is unset: the secrets of held ecash are sealed with the public development key");
  }
  return new CashuRedeemer({ ds: deps.ds, mints: cashu.mints, policy: deps.policy, proofKey: cashu.proofKey, timeoutMs: cashu.timeoutMs, log: deps.log });
}

/** A short, secret-free description of an error (cashu-ts messages name amounts and ids, never secrets). */
function brief(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.replace(/[0-9a-f]{32,}/gi, "…").slice(0, 160);
}
