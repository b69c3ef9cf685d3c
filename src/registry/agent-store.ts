import type { HandlerContext } from "@connectrpc/connect";
import type { DataSource, EntityManager } from "typeorm";
import { errors } from "../platform/rpc/errors.js";
import { AgentEntity } from "./agent.entity.js";
import { API_KEY_PREFIX, parseCredential, secretMatches } from "./credentials.js";

// Finding agents (by id or name, case-insensitively) and authenticating their Bearer keys.

export const AGENT_ID = /^agent_[a-z0-9]{12}$/i;

export class AgentStore {
  constructor(private readonly ds: DataSource) {}

  find(idOrName: string, manager: EntityManager = this.ds.manager): Promise<AgentEntity | null> {
    const text = idOrName.trim();
    return AGENT_ID.test(text) ? manager.findOneBy(AgentEntity, { agentId: text.toLowerCase() }) : manager.findOneBy(AgentEntity, { nameKey: text.toLowerCase() });
  }

  async findOrThrow(idOrName: string): Promise<AgentEntity> {
    const agent = await this.find(idOrName);
    if (!agent) throw errors.notFound("not_registered", `no registered agent ${idOrName}`);
    return agent;
  }

  /** The agent whose Bearer key authorizes this call; 401 `auth_required` otherwise. */
  authenticate(ctx: HandlerContext): Promise<AgentEntity> {
    return this.authenticateHeader(ctx.requestHeader.get("authorization") ?? "");
  }

  /** The agent of an `Authorization: Bearer <api_key>` header value; 401 `auth_required` otherwise. */
  async authenticateHeader(header: string): Promise<AgentEntity> {
    const token = /^Bearer\s+(\S+)$/i.exec(header)?.[1];
    const cred = token ? parseCredential(token) : undefined;
    if (!cred || cred.prefix !== API_KEY_PREFIX) throw errors.authRequired();
    const agent = await this.ds.manager.findOneBy(AgentEntity, { apiKeyId: cred.id });
    if (!agent || !secretMatches(cred.secret, agent.apiKeyHash)) throw errors.authRequired();
    return agent;
  }

  /** The caller, who must be the agent named in the path (by id or name). */
  async authenticateSelf(ctx: HandlerContext, pathAgent: string): Promise<AgentEntity> {
    const me = await this.authenticate(ctx);
    const named = pathAgent.trim().toLowerCase();
    if (named !== me.agentId && named !== me.nameKey) throw errors.permissionDenied("not_your_agent", "this key belongs to another agent");
    return me;
  }
}
