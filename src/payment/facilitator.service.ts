import { create } from "@bufbuild/protobuf";
import { timingSafeEqual, createHash } from "node:crypto";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { getAddress, type Address } from "viem";
import type { FacilitatorService, SettleRequest, VerifyRequest } from "../../gen/svc/payment/v1/facilitator_service_pb.js";
import { SettleResponseSchema, VerifyResponseSchema } from "../../gen/svc/payment/v1/x402_pb.js";
import { errors } from "../platform/rpc/errors.js";
import type { Facilitator } from "../x402/facilitator.js";

// The built-in facilitator's x402 API. The facilitator key pays the gas, so verify and settle are not a
// public relay: they require `Authorization: Bearer <FACILITATOR_API_KEY>` (closed when no key is set)
// and settle only payments to this service's own treasury. /supported is public.

const NOT_OURS = "invalid_payment_requirements";

export class FacilitatorServiceImpl implements ServiceImpl<typeof FacilitatorService> {
  private readonly treasury: Address;
  private readonly keyDigest: Buffer | undefined;

  constructor(private readonly facilitator: Facilitator | undefined, treasury: Address, apiKey: string | undefined) {
    this.treasury = getAddress(treasury);
    this.keyDigest = apiKey ? createHash("sha256").update(apiKey).digest() : undefined;
  }

  /** Constant-time check of the bearer key (digests compared, so lengths never leak). */
  private authorize(ctx: HandlerContext): void {
    if (!this.keyDigest) throw errors.permissionDenied("facilitator_api_closed", "this facilitator's verify and settle API is closed (no FACILITATOR_API_KEY is set)");
    const given = /^Bearer (.+)$/.exec(ctx.requestHeader.get("authorization") ?? "")?.[1];
    if (!given || !timingSafeEqual(createHash("sha256").update(given).digest(), this.keyDigest)) throw errors.authRequired("a valid facilitator API key is required");
  }

  private use(): Facilitator {
    if (!this.facilitator || this.facilitator.kind !== "built-in") {
      throw errors.unimplemented("the built-in facilitator (this server uses a remote one)");
    }
    return this.facilitator;
  }

  private ours(req: VerifyRequest | SettleRequest): boolean {
    try {
      return getAddress(req.paymentRequirements?.payTo ?? "") === this.treasury;
    } catch {
      return false;
    }
  }

  async verify(req: VerifyRequest, ctx: HandlerContext) {
    const f = this.use();
    this.authorize(ctx);
    if (!req.paymentPayload || !req.paymentRequirements) throw errors.invalidArgument("invalid_payload", "paymentPayload and paymentRequirements are required");
    if (!this.ours(req)) return create(VerifyResponseSchema, { isValid: false, invalidReason: NOT_OURS, invalidMessage: "this facilitator settles payments to its own treasury only" });
    return f.verify(req.paymentPayload, req.paymentRequirements);
  }

  async settle(req: SettleRequest, ctx: HandlerContext) {
    const f = this.use();
    this.authorize(ctx);
    if (!req.paymentPayload || !req.paymentRequirements) throw errors.invalidArgument("invalid_payload", "paymentPayload and paymentRequirements are required");
    if (!this.ours(req)) return create(SettleResponseSchema, { success: false, errorReason: NOT_OURS, errorMessage: "this facilitator settles payments to its own treasury only", network: req.paymentRequirements.network });
    return f.settle(req.paymentPayload, req.paymentRequirements);
  }

  async getSupported() {
    return this.use().supported();
  }
}
