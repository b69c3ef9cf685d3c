import { create, fromJson, type JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { encodeFunctionData, getAddress, isAddress, parseEther, type Address } from "viem";
import { createTestClient, http } from "viem";
import {
  CallServiceResponseSchema,
  GetServiceResultResponseSchema,
  MintTestFundsResponseSchema,
  type CallServiceRequest,
  type GetServiceResultRequest,
  type MintTestFundsRequest,
  type PaymentService,
} from "../../gen/svc/payment/v1/payment_service_pb.js";
import { CallStatus } from "../../gen/svc/payment/v1/payment_pb.js";
import type { ChainRuntime } from "../chain/chain-runtime.js";
import { DEV_USDC } from "../chain/artifacts.js";
import type { TransactionSender } from "../chain/tx-sender.js";
import type { JobQueue } from "../jobs/job-queue.js";
import type { JobState } from "../jobs/service-job.entity.js";
import { errors } from "../platform/rpc/errors.js";
import type { PaymentGate } from "../x402/payment-gate.js";
import type { PaymentStore } from "../x402/payment-store.js";
import { X402_HEADERS } from "../x402/wire.js";
import { JURISDICTION_HEADER } from "../policy/jurisdiction.js";

// PaymentService: paid SKU calls (through the payment gate), async results, and the dev faucet.

const JOB_STATUS: Record<JobState, CallStatus> = {
  queued: CallStatus.PENDING,
  pending: CallStatus.PENDING,
  awaiting: CallStatus.PENDING,
  running: CallStatus.PENDING,
  delivered: CallStatus.DELIVERED,
  failed: CallStatus.FAILED,
  refunding: CallStatus.FAILED,
  refunded: CallStatus.REFUNDED,
};

export const FAUCET_DEFAULT_ATOMIC = 5_000_000n;
export const FAUCET_MAX_ATOMIC = 1_000_000_000n;
const FAUCET_GAS_WEI = parseEther("1");

export interface PaymentServiceDeps {
  gate: PaymentGate;
  jobs: JobQueue;
  store: PaymentStore;
  chain: ChainRuntime;
  faucetSender: TransactionSender | undefined;
  publicBaseUrl: string | undefined;
  onJobAccepted: () => void;
}

export class PaymentServiceImpl implements ServiceImpl<typeof PaymentService> {
  constructor(private readonly d: PaymentServiceDeps) {}

  async callService(req: CallServiceRequest, ctx: HandlerContext) {
    const header = ctx.requestHeader.get(X402_HEADERS.paymentSignature) ?? ctx.requestHeader.get(X402_HEADERS.xPayment) ?? undefined;
    const host = ctx.requestHeader.get("host") ?? "localhost";
    ctx.responseHeader.set("cache-control", "no-store");
    const res = await this.d.gate.call(
      {
        skuId: req.skuId,
        input: (req.input ?? {}) as JsonObject,
        paymentHeader: header,
        authorization: ctx.requestHeader.get("authorization") ?? undefined,
        baseUrl: this.d.publicBaseUrl ?? `http://${host}`,
        jurisdiction: ctx.requestHeader.get(JURISDICTION_HEADER) ?? undefined,
      },
      (name, value) => ctx.responseHeader.set(name, value),
    );
    if (res.jobId) this.d.onJobAccepted();
    return res;
  }

  async getServiceResult(req: GetServiceResultRequest) {
    const job = req.jobId ? await this.d.jobs.get(req.jobId) : null;
    if (!job) {
      if (req.jobId && (await this.d.store.byJobId(req.jobId))) throw errors.notFound("result_expired", `job ${req.jobId} finished longer ago than results are kept (JOB_RESULT_RETENTION_DAYS); its result is gone`);
      throw errors.notFound("job_not_found", `no job ${req.jobId}`);
    }
    const payment = await this.d.store.get(job.paymentId);
    const stored = job.resultJson ?? payment?.responseJson;
    const base = stored ? fromJson(CallServiceResponseSchema, JSON.parse(stored)) : undefined;
    return create(GetServiceResultResponseSchema, {
      jobId: job.jobId,
      skuId: job.skuId,
      status: JOB_STATUS[job.state],
      deliverable: job.state === "delivered" ? base?.deliverable : undefined,
      paymentProof: base?.paymentProof,
      svcTrust: job.state === "delivered" ? base?.svcTrust : undefined,
      poweredBy: base?.poweredBy ?? "",
      error: job.state === "failed" || job.state === "refunding" || job.state === "refunded" ? (job.error ?? "") : "",
      refundTxHash: payment?.refundTxHash ?? "",
      createTime: timestampFromDate(job.createTime),
      finishTime: job.finishTime ? timestampFromDate(job.finishTime) : undefined,
    });
  }

  async mintTestFunds(req: MintTestFundsRequest) {
    const { chain, faucetSender } = this.d;
    if (!chain.dev || !faucetSender) throw errors.notFound("faucet_unavailable", "the faucet exists only on the embedded dev chain");
    if (!isAddress(req.address, { strict: false })) throw errors.invalidArgument("invalid_address", "address must be a 0x-prefixed 20-byte EVM address", [{ field: "address", description: "not an EVM address" }]);
    const address = getAddress(req.address) as Address;
    if (req.amount && !/^\d{1,30}$/.test(req.amount)) throw errors.invalidArgument("invalid_amount", "amount must be atomic USDC units (a decimal integer)");
    const amount = req.amount ? BigInt(req.amount) : FAUCET_DEFAULT_ATOMIC;
    if (amount <= 0n || amount > FAUCET_MAX_ATOMIC) throw errors.invalidArgument("invalid_amount", `amount_usd must be above 0 and at most ${Number(FAUCET_MAX_ATOMIC) / 1e6}`);
    const data = encodeFunctionData({ abi: DEV_USDC.abi, functionName: "mint", args: [address, amount] });
    const receipt = await faucetSender.send({ to: chain.network.usdcAddress, data, gas: 100_000n });
    if (receipt.status !== "success") throw errors.unavailable("faucet_failed", "the mint transaction reverted");
    await createTestClient({ mode: "anvil", transport: http(chain.rpcUrl) }).setBalance({ address, value: FAUCET_GAS_WEI });
    const balance = (await chain.publicClient.readContract({ address: chain.network.usdcAddress, abi: DEV_USDC.abi, functionName: "balanceOf", args: [address] })) as bigint;
    return create(MintTestFundsResponseSchema, { address, amount: amount.toString(), txHash: receipt.transactionHash, gasWei: FAUCET_GAS_WEI.toString(), balanceAmount: balance.toString() });
  }
}

