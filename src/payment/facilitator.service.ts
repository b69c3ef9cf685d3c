import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { getAddress, type Address } from "viem";
import type { FacilitatorService, SettleRequest, VerifyRequest } from "../../gen/svc/payment/v1/facilitator_service_pb.js";
import { SettleResponseSchema, VerifyResponseSchema } from "../../gen/svc/payment/v1/x402_pb.js";
import { errors } from "../platform/rpc/errors.js";
import type { Facilitator } from "../x402/facilitator.js";

// The built-in facilitator's x402 API. It settles only payments to this service's treasury: the
// facilitator key pays the gas, so it is not a public relay for anyone's authorizations.

const NOT_OURS = "invalid_payment_requirements";

export class FacilitatorServiceImpl implements ServiceImpl<typeof FacilitatorService> {
  constructor(private readonly facilitator: Facilitator | undefined, private readonly treasury: Address) {}

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

  async verify(req: VerifyRequest) {
    const f = this.use();
    if (!req.paymentPayload || !req.paymentRequirements) throw errors.invalidArgument("invalid_payload", "paymentPayload and paymentRequirements are required");
    if (!this.ours(req)) return create(VerifyResponseSchema, { isValid: false, invalidReason: NOT_OURS, invalidMessage: "this facilitator settles payments to its own treasury only" });
    return f.verify(req.paymentPayload, req.paymentRequirements);
  }

  async settle(req: SettleRequest) {
    const f = this.use();
    if (!req.paymentPayload || !req.paymentRequirements) throw errors.invalidArgument("invalid_payload", "paymentPayload and paymentRequirements are required");
    if (!this.ours(req)) return create(SettleResponseSchema, { success: false, errorReason: NOT_OURS, errorMessage: "this facilitator settles payments to its own treasury only", network: req.paymentRequirements.network });
    return f.settle(req.paymentPayload, req.paymentRequirements);
  }

  async getSupported() {
    return this.use().supported();
  }
}
