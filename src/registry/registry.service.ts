import { randomBytes } from "node:crypto";
import { create, type JsonObject } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { getAddress, isAddress } from "viem";
import type { DataSource } from "typeorm";
import {
  GetAgentInstructionsResponseSchema,
  GetWalletBalanceResponseSchema,
  RegisterAgentResponseSchema,
  type GetAgentInstructionsRequest,
  type GetAgentRegistrationRequest,
  type GetPassportRequest,
  type LinkOnchainIdentityRequest,
  type ListWebhookDeliveriesRequest,
  type RegisterAgentRequest,
  type RegistryService,
  type RotateApiKeyRequest,
  type SetCallbackRequest,
  type SetPayoutWalletRequest,
} from "../../gen/svc/registry/v1/registry_service_pb.js";
import { PassportSchema, WebhookDeliverySchema } from "../../gen/svc/registry/v1/agent_pb.js";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { kitBlock } from "../catalog/catalog.service.js";
import { isUniqueViolation } from "../platform/db/errors.js";
import { runInTransaction } from "../platform/db/transaction.js";
import { checkUrl, UnsafeUrlError, type SafeFetchPolicy } from "../platform/http/safe-fetch.js";
import { errors } from "../platform/rpc/errors.js";
import { newId } from "../platform/ids.js";
import { accountBalance, postEntry } from "../ledger/ledger.js";
import { enqueueWebhook, SIGNATURE_HEADER, WEBHOOK_EVENT_TYPES } from "../webhooks/webhook-outbox.js";
import { WebhookEventEntity } from "../webhooks/webhook-event.entity.js";
import type { NetworkInfo } from "../chain/networks.js";
import { AgentEntity } from "./agent.entity.js";
import { checkAgentName } from "./agent-names.js";
import type { AgentStore } from "./agent-store.js";
import { API_KEY_PREFIX, issueCredential, NOTE_PREFIX, parseCredential, secretMatches, type SecretBox } from "./credentials.js";
import { toAgentProto } from "./registry.mapper.js";
import { StarterNoteEntity } from "./starter-note.entity.js";
import { MAX_LINK_DEADLINE_S, type OnchainIdentity } from "./onchain-identity.js";

// RegistryService: registration, payout wallet, callback and webhooks, key rotation, passports,
// instructions, ERC-8004 registration files and starter-credit balances.

export const NOTE_ACCOUNTS = {
  /** What the service spends on starter credit (debit side of every grant). */
  grants: "expense:starter_credit",
  note: (noteId: string) => `liability:starter_note:${noteId}`,
};

const MAX_CAPABILITIES = 32;
const CAPABILITY = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,63}$/;
const NOTE_HEADER = "x-402-payment";

export interface RegistryDeps {
  ds: DataSource;
  agents: AgentStore;
  box: SecretBox;
  starterCreditAtomic: bigint;
  safeFetch: SafeFetchPolicy;
  /** Wallets the service itself uses (lowercase): refused as payout wallets. */
  internalWallets: ReadonlySet<string>;
  network: NetworkInfo;
  identity: OnchainIdentity;
  publicBaseUrl: string | undefined;
}

export class RegistryServiceImpl implements Partial<ServiceImpl<typeof RegistryService>> {
  constructor(private readonly d: RegistryDeps) {}

  private payoutWallet(raw: string, field = "evm_address"): string {
    if (!isAddress(raw, { strict: true })) throw errors.invalidArgument("invalid_address", `${field} must be an EVM address (mixed case must be a valid checksum)`, [{ field, description: "not a valid EVM address" }]);
    const address = getAddress(raw);
    if (this.d.internalWallets.has(address.toLowerCase())) throw errors.gateRefused("wallet_is_internal", `${address} is a wallet the service itself uses and cannot be a payout wallet`, field);
    return address;
  }

  async registerAgent(req: RegisterAgentRequest) {
    const name = req.name.trim();
    const check = checkAgentName(name);
    if (!check.ok) throw errors.invalidArgument(check.reason, check.message, [{ field: "name", description: check.message }]);
    if (req.capabilities.length > MAX_CAPABILITIES) throw errors.invalidArgument("invalid_capabilities", `at most ${MAX_CAPABILITIES} capabilities`);
    const bad = req.capabilities.find((c) => !CAPABILITY.test(c));
    if (bad !== undefined) throw errors.invalidArgument("invalid_capabilities", `capability ${JSON.stringify(bad)} must be 1 to 64 of letters, digits, '.', '_', ':', '/', '-'`);
    const evm = req.evmAddress ? this.payoutWallet(req.evmAddress) : null;
    const key = issueCredential(API_KEY_PREFIX);
    const note = issueCredential(NOTE_PREFIX);
    const now = new Date();
    const agent: AgentEntity = Object.assign(new AgentEntity(), {
      agentId: newId("agent", 12),
      name,
      nameKey: check.key,
      tier: "observer",
      capabilitiesJson: JSON.stringify([...new Set(req.capabilities)]),
      evmAddress: evm,
      apiKeyId: key.id,
      apiKeyHash: key.secretHash,
      callbackUrl: null,
      callbackSecretEnc: null,
      callbackEventsJson: null,
      identityNetwork: null,
      identityRegistry: null,
      identityAgentId: null,
      identityOwner: null,
      createTime: now,
      updateTime: now,
    });
    try {
      await runInTransaction(this.d.ds, async (m) => {
        await m.insert(AgentEntity, agent);
        await m.insert(StarterNoteEntity, { noteId: note.id, agentId: agent.agentId, secretHash: note.secretHash, budget: this.d.starterCreditAtomic, status: "active", createTime: now });
        await postEntry(m, "starter_credit_grant", note.id, [
          { account: NOTE_ACCOUNTS.grants, amount: this.d.starterCreditAtomic },
          { account: NOTE_ACCOUNTS.note(note.id), amount: -this.d.starterCreditAtomic },
        ]);
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw errors.alreadyExists("name_taken", `the name ${name} is already registered`);
      throw err;
    }
    const budget = this.d.starterCreditAtomic.toString();
    return create(RegisterAgentResponseSchema, {
      agent: toAgentProto(agent),
      apiKey: key.token,
      starterCredit: { note: note.token, budgetAmount: budget, remainingAmount: budget, usableFor: ["POST /a2a/requests (X-402-Payment)", "GET /v1/wallet/balance"] },
    });
  }

  async setPayoutWallet(req: SetPayoutWalletRequest, ctx: HandlerContext) {
    const me = await this.d.agents.authenticateSelf(ctx, req.agentId);
    if (!req.evmAddress) throw errors.invalidArgument("invalid_address", "evm_address is required", [{ field: "evm_address", description: "required" }]);
    const address = this.payoutWallet(req.evmAddress);
    return runInTransaction(this.d.ds, async (m) => {
      await m.update(AgentEntity, { agentId: me.agentId }, { evmAddress: address, updateTime: new Date() });
      const agent = (await m.findOneBy(AgentEntity, { agentId: me.agentId }))!;
      await enqueueWebhook(m, agent, "wallet.updated", { evm_address: address });
      return { agent: toAgentProto(agent) };
    });
  }

  async setCallback(req: SetCallbackRequest, ctx: HandlerContext) {
    const me = await this.d.agents.authenticateSelf(ctx, req.agentId);
    const unknown = req.events.find((e) => !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(e));
    if (unknown) throw errors.invalidArgument("invalid_event", `unknown event type ${unknown}; known: ${WEBHOOK_EVENT_TYPES.join(", ")}`);
    if (!req.callbackUrl) {
      await this.d.ds.manager.update(AgentEntity, { agentId: me.agentId }, { callbackUrl: null, callbackSecretEnc: null, callbackEventsJson: null, updateTime: new Date() });
      return { agentId: me.agentId, callbackUrl: "", signingSecret: "", signatureHeader: SIGNATURE_HEADER, events: [] };
    }
    try {
      if (req.callbackUrl.length > 2048) throw new UnsafeUrlError("at most 2048 characters");
      checkUrl(req.callbackUrl, this.d.safeFetch);
    } catch (err) {
      throw errors.invalidArgument("invalid_callback_url", `callback_url: ${(err as Error).message}`, [{ field: "callback_url", description: (err as Error).message }]);
    }
    const secret = `whsec_${randomBytes(32).toString("base64url")}`;
    await runInTransaction(this.d.ds, async (m) => {
      await m.update(AgentEntity, { agentId: me.agentId }, { callbackUrl: req.callbackUrl, callbackSecretEnc: this.d.box.seal(secret), callbackEventsJson: JSON.stringify(req.events), updateTime: new Date() });
      const agent = (await m.findOneBy(AgentEntity, { agentId: me.agentId }))!;
      await enqueueWebhook(m, agent, "callback.test", { message: "your callback is registered; verify this signature with the secret you were given" });
    });
    return { agentId: me.agentId, callbackUrl: req.callbackUrl, signingSecret: secret, signatureHeader: SIGNATURE_HEADER, events: req.events };
  }

  async listWebhookDeliveries(req: ListWebhookDeliveriesRequest, ctx: HandlerContext) {
    const me = await this.d.agents.authenticateSelf(ctx, req.agentId);
    const size = Math.min(req.pageSize > 0 ? req.pageSize : 50, 200);
    const offset = req.pageToken ? Number(Buffer.from(req.pageToken, "base64url").toString()) : 0;
    if (!Number.isSafeInteger(offset) || offset < 0) throw errors.invalidArgument("invalid_page_token", "page_token is not one this server issued");
    const rows = await this.d.ds.manager.find(WebhookEventEntity, { where: { agentId: me.agentId }, order: { createTime: "DESC", eventId: "DESC" }, skip: offset, take: size + 1 });
    return {
      deliveries: rows.slice(0, size).map((r) =>
        create(WebhookDeliverySchema, {
          eventId: r.eventId,
          eventType: r.eventType,
          state: r.state === "delivering" ? "pending" : r.state,
          attempts: r.attempts,
          lastStatus: r.lastStatus ?? 0,
          lastError: r.lastError ?? "",
          createTime: timestampFromDate(r.createTime),
          nextAttemptTime: r.nextAttemptTime ? timestampFromDate(r.nextAttemptTime) : undefined,
        }),
      ),
      nextPageToken: rows.length > size ? Buffer.from(String(offset + size)).toString("base64url") : "",
    };
  }

  async rotateApiKey(req: RotateApiKeyRequest, ctx: HandlerContext) {
    const me = await this.d.agents.authenticateSelf(ctx, req.agentId);
    const key = issueCredential(API_KEY_PREFIX);
    return runInTransaction(this.d.ds, async (m) => {
      // Guarded by the old key id: of two concurrent rotations exactly one wins; the old key is dead at once.
      const res = await m.update(AgentEntity, { agentId: me.agentId, apiKeyId: me.apiKeyId }, { apiKeyId: key.id, apiKeyHash: key.secretHash, updateTime: new Date() });
      if ((res.affected ?? 0) !== 1) throw errors.authRequired("this key was rotated by another request");
      const agent = (await m.findOneBy(AgentEntity, { agentId: me.agentId }))!;
      await enqueueWebhook(m, agent, "key.rotated", { rotated_at: new Date().toISOString() });
      return { agentId: me.agentId, apiKey: key.token };
    });
  }

  async linkOnchainIdentity(req: LinkOnchainIdentityRequest, ctx: HandlerContext) {
    const me = await this.d.agents.authenticateSelf(ctx, req.agentId);
    const registry = this.d.identity.registry;
    if (req.network !== this.d.network.caip2) throw errors.invalidArgument("invalid_network", `network must be ${this.d.network.caip2}`);
    if (!isAddress(req.registry) || getAddress(req.registry) !== getAddress(registry)) throw errors.invalidArgument("invalid_registry", `registry must be the ERC-8004 Identity Registry ${registry}`);
    if (!/^\d{1,78}$/.test(req.onchainAgentId)) throw errors.invalidArgument("invalid_agent_id", "onchain_agent_id must be a decimal token id");
    const now = BigInt(Math.floor(Date.now() / 1000));
    const deadline = BigInt(req.deadline);
    if (deadline <= now || deadline > now + BigInt(MAX_LINK_DEADLINE_S)) throw errors.invalidArgument("invalid_deadline", `deadline must be in the next ${MAX_LINK_DEADLINE_S} seconds`);
    const onchainAgentId = BigInt(req.onchainAgentId);
    const controllers = await this.d.identity.controllers(onchainAgentId);
    if (!controllers) throw errors.notFound("identity_not_found", `no identity ${req.onchainAgentId} in ${registry}`);
    let signer: string;
    try {
      signer = await this.d.identity.recoverLinkSigner({ agentId: me.agentId, onchainAgentId, registry: getAddress(registry), deadline }, req.signature as `0x${string}`);
    } catch {
      throw errors.invalidArgument("invalid_signature", "signature is not a valid EIP-712 LinkIdentity signature");
    }
    if (signer !== controllers.owner && signer !== controllers.wallet) throw errors.permissionDenied("identity_not_controlled", "the statement is not signed by the identity's owner or agent wallet");
    try {
      return await runInTransaction(this.d.ds, async (m) => {
        await m.update(AgentEntity, { agentId: me.agentId }, { identityNetwork: req.network, identityRegistry: getAddress(registry), identityAgentId: onchainAgentId.toString(), identityOwner: controllers.owner, updateTime: new Date() });
        const agent = (await m.findOneBy(AgentEntity, { agentId: me.agentId }))!;
        await enqueueWebhook(m, agent, "identity.linked", { network: req.network, registry: getAddress(registry), onchain_agent_id: onchainAgentId.toString() });
        return { agent: toAgentProto(agent) };
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw errors.alreadyExists("identity_linked_elsewhere", "this on-chain identity is already linked to another agent");
      throw err;
    }
  }

  async getPassport(req: GetPassportRequest) {
    const agent = await this.d.agents.findOrThrow(req.agent);
    // Reputation comes from verifiable work only; with none recorded the spec's zero state holds.
    return { passport: create(PassportSchema, { agent: toAgentProto(agent), reputationScore: 0, badge: "none" }) };
  }

  async getAgentInstructions(req: GetAgentInstructionsRequest, ctx: HandlerContext) {
    const agent = await this.d.agents.findOrThrow(req.name);
    const base = this.baseUrl(ctx);
    return create(GetAgentInstructionsResponseSchema, {
      agentId: agent.agentId,
      name: agent.name,
      kit: kitBlock(),
      steps: [
        "Send your API key as `Authorization: Bearer <api_key>` on agent routes; never send a private key or seed phrase.",
        agent.evmAddress ? "Your payout wallet is set." : "Set a payout wallet: POST /a2a/agents/{agent_id}/wallet {evm_address}.",
        agent.callbackUrl ? "Your webhook callback is set." : "Optionally set a webhook callback: POST /a2a/agents/{agent_id}/callback {callback_url}.",
        agent.identityAgentId ? "Your ERC-8004 identity is linked." : "Link an ERC-8004 identity to call state-mutating SKUs: POST /a2a/agents/{agent_id}/identity.",
        "Pay catalog SKUs per call with x402 (read the price from the 402 challenge); post and bid on marketplace requests with your key and starter-credit note.",
        `Declare your kit in ${kitBlock().versionHeader}; refresh from ${kitBlock().refreshUrl} when refused.`,
      ],
      endpoints: {
        catalog: `${base}/v1/services`,
        guide: `${base}/v1/skill.md`,
        passport: `${base}/a2a/passport/${agent.agentId}`,
        registration: `${base}/a2a/agents/${agent.agentId}/registration.json`,
        balance: `${base}/v1/wallet/balance`,
        open_requests: `${base}/a2a/requests/open`,
      },
    });
  }

  async getAgentRegistration(req: GetAgentRegistrationRequest, ctx: HandlerContext) {
    const agent = await this.d.agents.findOrThrow(req.name);
    const base = this.baseUrl(ctx);
    const services: JsonObject[] = [
      { name: "web", endpoint: `${base}/a2a/passport/${agent.agentId}` },
      { name: "A2A", endpoint: `${base}/.well-known/agent-card.json`, version: "0.3.0" },
    ];
    if (agent.evmAddress) services.push({ name: "agentWallet", endpoint: `${this.d.network.caip2}:${agent.evmAddress}` });
    const registration: JsonObject = {
      type: "https://eips.ethereum.org/EIPS/eip-8004#registration-v1",
      name: agent.name,
      description: `Agent ${agent.name} registered on svc`,
      services,
      x402Support: true,
      active: true,
      registrations: agent.identityAgentId ? [{ agentId: Number(agent.identityAgentId), agentRegistry: `${agent.identityNetwork}:${agent.identityRegistry}` }] : [],
      supportedTrust: ["reputation"],
    };
    if (agent.evmAddress) registration.agentWallet = `${this.d.network.caip2}:${agent.evmAddress}`;
    return { registration };
  }

  async getWalletBalance(_req: unknown, ctx: HandlerContext) {
    const presented = ctx.requestHeader.get(NOTE_HEADER)?.trim() ?? "";
    if (!presented) throw errors.authRequired(`a starter-credit note is required in ${NOTE_HEADER}`);
    const cred = parseCredential(presented.replace(/^Bearer\s+/i, ""));
    if (/^Bearer\s/i.test(presented) || cred?.prefix === API_KEY_PREFIX) throw errors.invalidArgument("not_a_note", `${NOTE_HEADER} carries an API key; it takes the starter-credit note (svcn_…)`);
    const note = cred?.prefix === NOTE_PREFIX ? await this.d.ds.manager.findOneBy(StarterNoteEntity, { noteId: cred.id }) : null;
    if (!note || !secretMatches(cred!.secret, note.secretHash)) throw errors.authRequired("the starter-credit note is not valid");
    const remaining = -(await accountBalance(this.d.ds.manager, NOTE_ACCOUNTS.note(note.noteId)));
    return create(GetWalletBalanceResponseSchema, {
      status: note.status !== "active" ? note.status : remaining > 0n ? "active" : "exhausted",
      budgetAmount: note.budget.toString(),
      remainingAmount: remaining.toString(),
      escrowedAmount: "0",
    });
  }

  private baseUrl(ctx: HandlerContext): string {
    return this.d.publicBaseUrl ?? `http://${ctx.requestHeader.get("host") ?? "localhost"}`;
  }
}
