import { fromJson, toJson, type JsonValue } from "@bufbuild/protobuf";
import { GetSupportedResponseSchema, type GetSupportedResponse } from "../../gen/svc/payment/v1/facilitator_service_pb.js";
import {
  PaymentPayloadSchema,
  PaymentRequirementsSchema,
  SettleResponseSchema,
  VerifyResponseSchema,
  type PaymentPayload,
  type PaymentRequirements,
  type SettleResponse,
  type VerifyResponse,
} from "../../gen/svc/payment/v1/x402_pb.js";
import { FacilitatorUnavailableError, type Facilitator } from "./facilitator.js";

// A remote x402 facilitator over its HTTP API (POST /verify, POST /settle, GET /supported). The URL is
// operator configuration, not buyer input. Timeouts, 5xx and malformed answers become
// FacilitatorUnavailableError: the caller charges nothing it cannot prove and says why.

export class HttpFacilitator implements Facilitator {
  readonly kind = "remote" as const;

  constructor(
    private readonly baseUrl: string,
    private readonly timeoutMs: number,
    private readonly authToken?: string,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {}

  verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse> {
    return this.post("verify", payload, requirements, (json) => {
      const res = fromJson(VerifyResponseSchema, json, { ignoreUnknownFields: true });
      if (typeof (json as { isValid?: unknown }).isValid !== "boolean") throw new Error("answer lacks isValid");
      return res;
    });
  }

  settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse> {
    return this.post("settle", payload, requirements, (json) => {
      const res = fromJson(SettleResponseSchema, json, { ignoreUnknownFields: true });
      if (typeof (json as { success?: unknown }).success !== "boolean") throw new Error("answer lacks success");
      if (res.success && !/^0x[0-9a-fA-F]{64}$/.test(res.transaction)) throw new Error("successful settlement without a transaction hash");
      return res;
    });
  }

  async supported(): Promise<GetSupportedResponse> {
    const json = await this.request("supported", { method: "GET" }, false);
    try {
      return fromJson(GetSupportedResponseSchema, json, { ignoreUnknownFields: true });
    } catch (err) {
      throw new FacilitatorUnavailableError(`facilitator /supported answered malformed JSON: ${(err as Error).message}`, false);
    }
  }

  private async post<T>(path: "verify" | "settle", payload: PaymentPayload, requirements: PaymentRequirements, parse: (json: JsonValue) => T): Promise<T> {
    const body = JSON.stringify({
      x402Version: payload.x402Version,
      paymentPayload: toJson(PaymentPayloadSchema, payload),
      paymentRequirements: toJson(PaymentRequirementsSchema, requirements),
    });
    const ambiguous = path === "settle";
    const json = await this.request(path, { method: "POST", body, headers: { "content-type": "application/json" } }, ambiguous);
    try {
      return parse(json);
    } catch (err) {
      throw new FacilitatorUnavailableError(`facilitator /${path} answered malformed JSON: ${(err as Error).message}`, ambiguous);
    }
  }

  private async request(path: string, init: RequestInit, ambiguous: boolean): Promise<JsonValue> {
    let res: Response;
    try {
      const headers = { ...(init.headers as Record<string, string>), ...(this.authToken ? { authorization: `Bearer ${this.authToken}` } : {}) };
      res = await this.fetchImpl(`${this.baseUrl}/${path}`, { ...init, headers, signal: AbortSignal.timeout(this.timeoutMs) });
    } catch (err) {
      throw new FacilitatorUnavailableError(`facilitator /${path} did not answer: ${(err as Error).message}`, ambiguous);
    }
    const text = await res.text().catch(() => "");
    if (res.status >= 500) throw new FacilitatorUnavailableError(`facilitator /${path} answered HTTP ${res.status}`, ambiguous);
    // A 4xx is a definite refusal: the facilitator did not act on the request.
    const definite = res.status >= 400 ? false : ambiguous;
    let json: JsonValue;
    try {
      json = JSON.parse(text) as JsonValue;
    } catch {
      throw new FacilitatorUnavailableError(`facilitator /${path} answered HTTP ${res.status} without JSON`, definite);
    }
    if (res.status >= 400 && !(typeof json === "object" && json !== null && ("isValid" in json || "success" in json))) {
      throw new FacilitatorUnavailableError(`facilitator /${path} refused the request with HTTP ${res.status}`, false);
    }
    return json;
  }
}
