import { create, fromJson } from "@bufbuild/protobuf";
import { ListValueSchema } from "@bufbuild/protobuf/wkt";
import { getAbiItem, getAddress, type AbiEvent, type Address, type Hex, type PublicClient } from "viem";
import { GetSupportedResponseSchema } from "../../gen/svc/payment/v1/facilitator_service_pb.js";
import { SettleResponseSchema, VerifyResponseSchema, type PaymentPayload, type PaymentRequirements, type SettleResponse, type VerifyResponse } from "../../gen/svc/payment/v1/x402_pb.js";
import type { NetworkInfo } from "../chain/networks.js";
import { DEV_USDC } from "../chain/artifacts.js";
import { BroadcastError, type TransactionSender } from "../chain/tx-sender.js";
import { findSettlement } from "../chain/settlement-logs.js";
import type { Logger } from "../platform/log.js";
import { SettlementBatchQueue, type BatchingOptions, type SentItem } from "./settlement-batcher.js";
import { authorizationDigest, domainSeparator, recoverSigner, SignatureFormatError, type Authorization } from "./eip3009.js";
import { FacilitatorUnavailableError, REASON, type Facilitator, type SettleHooks } from "./facilitator.js";

// The built-in facilitator: verifies locally (signature on libsecp256k1, chain state in one
// multicall) in the reference's order, and settles by sending transferWithAuthorization from the
// facilitator key (alone, or batched through the SettlementBatcher contract within a short window),
// then checks the receipt for this authorization's own AuthorizationUsed and Transfer events.

/** An authorization must stay valid this long after verification (reference: 6 s). */
const VALID_BEFORE_MARGIN_S = 6n;

/** Recovers the signer of an authorization; libsecp256k1 by default (benchmarks compare viem's pure-JS one). */
export type SignerRecovery = (separator: Uint8Array, auth: Authorization, signature: Hex) => Address | Promise<Address>;
export const nativeRecovery: SignerRecovery = (separator, auth, signature) => recoverSigner(authorizationDigest(separator, auth), signature);

type Verified = { ok: true; auth: Authorization; signature: Hex } | { ok: false; reason: string; message: string; payer: string };

/** How long a verification done here is trusted by a settle of the very same payload objects. */
const TRUST_VERIFIED_MS = 60_000;

export class BuiltInFacilitator implements Facilitator {
  readonly kind = "built-in" as const;
  private readonly separator: Uint8Array;
  private readonly batches: SettlementBatchQueue;
  /**
   * Payloads this process verified as valid (keyed by the payload object, so only an in-process caller
   * that settles the very objects it verified, i.e. the payment gate, hits it; the /facilitator HTTP
   * API decodes fresh objects per request and always re-verifies), with the requirements checked.
   */
  private readonly verified = new WeakMap<PaymentPayload, { requirements: PaymentRequirements; at: number }>();

  constructor(
    private readonly network: NetworkInfo,
    private readonly client: PublicClient,
    private readonly sender: TransactionSender,
    private readonly now: () => number = () => Date.now(),
    private readonly recover: SignerRecovery = nativeRecovery,
    /** Batched settlement (SETTLE_BATCH_WINDOW_MS); one transaction per payment when absent. */
    private readonly batching?: BatchingOptions,
    log?: Logger,
  ) {
    this.separator = domainSeparator({ ...network.usdcDomain, chainId: network.chainId, verifyingContract: network.usdcAddress });
    this.batches = new SettlementBatchQueue(sender, network.usdcAddress, batching ?? { batcher: network.usdcAddress, windowMs: 0, max: 1 }, log);
  }

  async verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse> {
    let v: Verified;
    try {
      v = await this.check(payload, requirements);
    } catch (err) {
      throw new FacilitatorUnavailableError(`could not read chain state: ${(err as Error).message}`, false);
    }
    if (v.ok) this.verified.set(payload, { requirements, at: this.now() });
    return v.ok
      ? create(VerifyResponseSchema, { isValid: true, payer: v.auth.from })
      : create(VerifyResponseSchema, { isValid: false, invalidReason: v.reason, invalidMessage: v.message, payer: v.payer });
  }

  async settle(payload: PaymentPayload, requirements: PaymentRequirements, hooks?: SettleHooks): Promise<SettleResponse> {
    // Verified moments ago by this process (the gate's verify -> run -> settle): the signature and the
    // chain reads are not repeated (half the RPC load per payment); the cheap checks are. The on-chain
    // transferWithAuthorization (alone, or in the batcher's per-item try/catch) is the final check.
    const seen = this.verified.get(payload);
    this.verified.delete(payload);
    const trusted = seen !== undefined && seen.requirements === requirements && this.now() - seen.at < TRUST_VERIFIED_MS;
    let v: Verified;
    try {
      v = await this.check(payload, requirements, trusted);
    } catch (err) {
      throw new FacilitatorUnavailableError(`could not read chain state: ${(err as Error).message}`, false);
    }
    const network = requirements.network;
    if (!v.ok) return create(SettleResponseSchema, { success: false, errorReason: v.reason, errorMessage: v.message, payer: v.payer, network });
    const { auth, signature } = v;
    let sent: SentItem;
    try {
      sent = await this.batches.submit({ auth, signature, onSubmitted: hooks?.onSubmitted && ((hash, index) => hooks.onSubmitted!(hash, index)) });
    } catch (err) {
      // Refused by the node: nothing can be mined. Sent but unconfirmed: the outcome is unknown.
      throw new FacilitatorUnavailableError(`settlement transaction: ${(err as Error).message}`, !(err instanceof BroadcastError));
    }
    const { receipt, batchIndex } = sent;
    const extra = batchIndex === null ? undefined : { batchIndex };
    const base = { payer: auth.from, network, transaction: receipt.transactionHash, amount: auth.value.toString(), extra };
    if (receipt.status !== "success") {
      // Sent on trust and reverted: the chain state now names why (a balance spent meanwhile...), as verify would have.
      const why = trusted ? await this.check(payload, requirements).catch(() => undefined) : undefined;
      if (why && !why.ok) return create(SettleResponseSchema, { ...base, success: false, errorReason: why.reason, errorMessage: why.message });
      return create(SettleResponseSchema, { ...base, success: false, errorReason: REASON.txFailed });
    }
    const found = findSettlement(receipt.logs, this.network.usdcAddress, auth.from, auth.nonce, { to: auth.to, value: auth.value }, this.batching?.batcher);
    if (batchIndex !== null && found.failure !== undefined) {
      // This item reverted inside the batch while the others settled: the same refusal as a lone
      // transaction that reverted, named after the token's reason when it is a known one.
      const reason = reasonOfRevert(found.failure);
      // Used already: someone (anyone may) submitted this very authorization first. It paid `to` as
      // signed, so the payment is settled, by that transaction.
      const elsewhere = reason === REASON.nonceUsed ? await this.settledElsewhere(auth).catch(() => undefined) : undefined;
      if (elsewhere) {
        const extraThere = elsewhere.batchIndex === null ? undefined : { batchIndex: elsewhere.batchIndex };
        return create(SettleResponseSchema, { ...base, transaction: elsewhere.hash, extra: extraThere, success: true });
      }
      return create(SettleResponseSchema, { ...base, success: false, errorReason: reason, errorMessage: `authorization reverted on-chain: ${found.failure}` });
    }
    if (!found.transferred || (batchIndex !== null && (!found.used || found.batchIndex !== batchIndex))) {
      return create(SettleResponseSchema, { ...base, success: false, errorReason: REASON.transferEvent });
    }
    return create(SettleResponseSchema, { ...base, success: true });
  }

  /** The transaction that already used `auth` and paid its recipient (AuthorizationUsed in recent blocks), if any. */
  private async settledElsewhere(auth: Authorization): Promise<{ hash: Hex; batchIndex: number | null } | undefined> {
    const latest = await this.client.getBlockNumber();
    const logs = await this.client.getLogs({
      address: this.network.usdcAddress,
      event: getAbiItem({ abi: DEV_USDC.abi, name: "AuthorizationUsed" }) as AbiEvent,
      args: { authorizer: auth.from, nonce: auth.nonce } as never,
      fromBlock: latest > 5_000n ? latest - 5_000n : 0n,
      toBlock: latest,
    });
    const hash = logs[0]?.transactionHash;
    if (!hash) return undefined;
    const receipt = await this.client.getTransactionReceipt({ hash });
    const there = findSettlement(receipt.logs, this.network.usdcAddress, auth.from, auth.nonce, { to: auth.to, value: auth.value });
    return receipt.status === "success" && there.used && there.transferred ? { hash, batchIndex: there.batchIndex } : undefined;
  }

  async supported() {
    return create(GetSupportedResponseSchema, {
      kinds: [
        { x402Version: 2, scheme: "exact", network: this.network.caip2 },
        { x402Version: 1, scheme: "exact", network: this.network.v1Name },
      ],
      extensions: [],
      signers: { "eip155:*": fromJson(ListValueSchema, [this.sender.address]) },
    });
  }

  /** The reference's order: scheme, domain, network, signature, recipient, validity, value, nonce, balance. */
  private async check(payload: PaymentPayload, req: PaymentRequirements, trusted = false): Promise<Verified> {
    const raw = payload.payload?.authorization;
    const payer = raw?.from ?? "";
    const fail = (reason: string, message: string): Verified => ({ ok: false, reason, message, payer });
    if (!raw || !payload.payload?.signature) return fail(REASON.parse, "payload lacks signature or authorization");
    let amount: bigint;
    try {
      amount = BigInt(payload.x402Version === 1 ? req.maxAmountRequired : req.amount);
      getAddress(req.payTo);
    } catch {
      return fail(REASON.invalidRequirements, "requirements carry no valid amount or payTo");
    }
    const scheme = payload.x402Version === 1 ? payload.scheme : payload.accepted?.scheme;
    if (scheme !== "exact" || req.scheme !== "exact") return fail(REASON.scheme, "scheme must be exact");
    const extra = (req.extra ?? {}) as { name?: unknown; version?: unknown };
    if (typeof extra.name !== "string" || typeof extra.version !== "string") return fail(REASON.missingDomain, "requirements lack the EIP-712 domain");
    const network = payload.x402Version === 1 ? payload.network : payload.accepted?.network;
    const ours = payload.x402Version === 1 ? this.network.v1Name : this.network.caip2;
    if (network !== req.network || req.network !== ours) return fail(REASON.network, `network must be ${ours}`);
    if (req.asset.toLowerCase() !== this.network.usdcAddress.toLowerCase()) return fail(REASON.assetMismatch, `asset must be ${this.network.usdcAddress}`);
    if (extra.name !== this.network.usdcDomain.name) return fail(REASON.tokenName, `EIP-712 name must be ${this.network.usdcDomain.name}`);
    if (extra.version !== this.network.usdcDomain.version) return fail(REASON.tokenVersion, `EIP-712 version must be ${this.network.usdcDomain.version}`);

    let auth: Authorization;
    let signer: Address;
    const signature = payload.payload!.signature as Hex;
    try {
      auth = {
        from: getAddress(raw!.from),
        to: getAddress(raw!.to),
        value: BigInt(raw!.value),
        validAfter: BigInt(raw!.validAfter),
        validBefore: BigInt(raw!.validBefore),
        nonce: raw!.nonce as Hex,
      };
      signer = trusted ? auth.from : await this.recover(this.separator, auth, signature);
    } catch (err) {
      const reason = err instanceof SignatureFormatError && /s value|v must/.test(err.message) ? REASON.signature : REASON.parse;
      return fail(reason, `authorization or signature is malformed: ${(err as Error).message}`);
    }
    if (signer !== auth.from) return fail(REASON.signature, "signature is not by the payer");
    if (auth.to !== getAddress(req.payTo)) return fail(REASON.recipient, "authorization pays someone other than payTo");
    const now = BigInt(Math.floor(this.now() / 1000));
    if (auth.validBefore < now + VALID_BEFORE_MARGIN_S) return fail(REASON.validBefore, "authorization has expired or expires too soon");
    if (auth.validAfter > now) return fail(REASON.validAfter, "authorization is not valid yet");
    if (auth.value !== amount) return fail(REASON.value, `authorization value must be exactly ${amount}`);

    if (trusted) return { ok: true, auth, signature };
    const token = { address: this.network.usdcAddress, abi: DEV_USDC.abi } as const;
    const [used, balance] = await Promise.all([
      this.client.readContract({ ...token, functionName: "authorizationState", args: [auth.from, auth.nonce] }) as Promise<boolean>,
      this.client.readContract({ ...token, functionName: "balanceOf", args: [auth.from] }) as Promise<bigint>,
    ]);
    if (used) return fail(REASON.nonceUsed, "authorization nonce is already used or canceled");
    if (balance < auth.value) return fail(REASON.balance, "payer balance is below the amount");
    return { ok: true, auth, signature };
  }
}

/** FiatTokenV2 revert messages mapped to the reason codes verification gives for the same condition. */
function reasonOfRevert(message: string): string {
  if (/authorization is used or canceled/.test(message)) return REASON.nonceUsed;
  if (/exceeds balance/.test(message)) return REASON.balance;
  if (/authorization is expired/.test(message)) return REASON.validBefore;
  if (/not yet valid/.test(message)) return REASON.validAfter;
  if (/invalid signature/.test(message)) return REASON.signature;
  return REASON.txFailed;
}
