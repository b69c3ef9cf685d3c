import { create, fromJson } from "@bufbuild/protobuf";
import { ListValueSchema } from "@bufbuild/protobuf/wkt";
import { decodeEventLog, encodeFunctionData, getAddress, parseSignature, type Address, type Hex, type PublicClient } from "viem";
import { GetSupportedResponseSchema } from "../../gen/svc/payment/v1/facilitator_service_pb.js";
import { SettleResponseSchema, VerifyResponseSchema, type PaymentPayload, type PaymentRequirements, type SettleResponse, type VerifyResponse } from "../../gen/svc/payment/v1/x402_pb.js";
import type { NetworkInfo } from "../chain/networks.js";
import { DEV_USDC } from "../chain/artifacts.js";
import { BroadcastError, type TransactionSender } from "../chain/tx-sender.js";
import { authorizationDigest, domainSeparator, recoverSigner, SignatureFormatError, type Authorization } from "./eip3009.js";
import { FacilitatorUnavailableError, REASON, type Facilitator, type SettleHooks } from "./facilitator.js";

// The built-in facilitator: verifies locally (signature on libsecp256k1, chain state in one
// multicall) in the reference's order, and settles by sending transferWithAuthorization from the
// facilitator key, then checks the receipt's Transfer event.

/** Gas for transferWithAuthorization on a USDC-like token, with headroom (measured ~70k). */
const SETTLE_GAS = 150_000n;
/** An authorization must stay valid this long after verification (reference: 6 s). */
const VALID_BEFORE_MARGIN_S = 6n;

/** Recovers the signer of an authorization; libsecp256k1 by default (benchmarks compare viem's pure-JS one). */
export type SignerRecovery = (separator: Uint8Array, auth: Authorization, signature: Hex) => Address | Promise<Address>;
export const nativeRecovery: SignerRecovery = (separator, auth, signature) => recoverSigner(authorizationDigest(separator, auth), signature);

type Verified = { ok: true; auth: Authorization; signature: Hex } | { ok: false; reason: string; message: string; payer: string };

export class BuiltInFacilitator implements Facilitator {
  readonly kind = "built-in" as const;
  private readonly separator: Uint8Array;

  constructor(
    private readonly network: NetworkInfo,
    private readonly client: PublicClient,
    private readonly sender: TransactionSender,
    private readonly now: () => number = () => Date.now(),
    private readonly recover: SignerRecovery = nativeRecovery,
  ) {
    this.separator = domainSeparator({ ...network.usdcDomain, chainId: network.chainId, verifyingContract: network.usdcAddress });
  }

  async verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse> {
    let v: Verified;
    try {
      v = await this.check(payload, requirements);
    } catch (err) {
      throw new FacilitatorUnavailableError(`could not read chain state: ${(err as Error).message}`, false);
    }
    return v.ok
      ? create(VerifyResponseSchema, { isValid: true, payer: v.auth.from })
      : create(VerifyResponseSchema, { isValid: false, invalidReason: v.reason, invalidMessage: v.message, payer: v.payer });
  }

  async settle(payload: PaymentPayload, requirements: PaymentRequirements, hooks?: SettleHooks): Promise<SettleResponse> {
    let v: Verified;
    try {
      v = await this.check(payload, requirements);
    } catch (err) {
      throw new FacilitatorUnavailableError(`could not read chain state: ${(err as Error).message}`, false);
    }
    const network = requirements.network;
    if (!v.ok) return create(SettleResponseSchema, { success: false, errorReason: v.reason, errorMessage: v.message, payer: v.payer, network });
    const { auth, signature } = v;
    const sig = parseSignature(signature);
    const data = encodeFunctionData({
      abi: DEV_USDC.abi,
      functionName: "transferWithAuthorization",
      args: [auth.from, auth.to, auth.value, auth.validAfter, auth.validBefore, auth.nonce, Number(sig.v ?? 27n + BigInt(sig.yParity)), sig.r, sig.s],
    });
    let receipt;
    try {
      receipt = await this.sender.send({ to: this.network.usdcAddress, data, gas: SETTLE_GAS }, hooks?.onSubmitted);
    } catch (err) {
      // Refused by the node: nothing can be mined. Sent but unconfirmed: the outcome is unknown.
      throw new FacilitatorUnavailableError(`settlement transaction: ${(err as Error).message}`, !(err instanceof BroadcastError));
    }
    const base = { payer: auth.from, network, transaction: receipt.transactionHash, amount: auth.value.toString() };
    if (receipt.status !== "success") return create(SettleResponseSchema, { ...base, success: false, errorReason: REASON.txFailed });
    if (!this.hasTransfer(receipt.logs, auth)) return create(SettleResponseSchema, { ...base, success: false, errorReason: REASON.transferEvent });
    return create(SettleResponseSchema, { ...base, success: true });
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

  private hasTransfer(logs: readonly { address: string; data: Hex; topics: readonly Hex[] }[], auth: Authorization): boolean {
    return logs.some((log) => {
      if (log.address.toLowerCase() !== this.network.usdcAddress.toLowerCase()) return false;
      try {
        const ev = decodeEventLog({ abi: DEV_USDC.abi, data: log.data, topics: log.topics as [Hex, ...Hex[]] });
        const a = ev.args as { from?: Address; to?: Address; value?: bigint };
        return ev.eventName === "Transfer" && a.from === getAddress(auth.from) && a.to === getAddress(auth.to) && a.value === auth.value;
      } catch {
        return false;
      }
    });
  }

  /** The reference's order: scheme, domain, network, signature, recipient, validity, value, nonce, balance. */
  private async check(payload: PaymentPayload, req: PaymentRequirements): Promise<Verified> {
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
      signer = await this.recover(this.separator, auth, signature);
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
