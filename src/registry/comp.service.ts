import type { DataSource } from "typeorm";
import type { ChainRuntime } from "../chain/chain-runtime.js";
import { DEV_USDC } from "../chain/artifacts.js";
import { isUniqueViolation } from "../platform/db/errors.js";
import { newId } from "../platform/ids.js";
import { runInTransaction } from "../platform/db/transaction.js";
import type { AgentEntity } from "./agent.entity.js";
import type { AgentStore } from "./agent-store.js";
import { CompDayEntity, CompGrantEntity } from "./comp.entity.js";

// The comped enterprise audit (spec: comp rule). All four conditions must hold, checked in this order,
// or the full list price is quoted with the first denial reason:
//   registered agent                     -> not_registered
//   funded, non-internal payout wallet   -> no_wallet_on_registration | wallet_is_internal
//   registration at least 3600 s old     -> registration_age_insufficient:<n>s<3600s
//   fleet-wide daily comp budget left    -> daily_comp_cap_reached:3
// One comp per agent, ever (comp_already_used). "Funded" means the payout wallet holds USDC.

export const COMP_SKU = "security.enterprise-audit";
export const COMP_DAILY_CAP = 3;
export const COMP_MIN_AGE_S = 3600;

export type CompDecision = { granted: true; compId: string; agent: AgentEntity } | { granted: false; reason: string };

export class CompService {
  constructor(
    private readonly ds: DataSource,
    private readonly agents: AgentStore,
    private readonly chain: ChainRuntime,
    private readonly internalWallets: ReadonlySet<string>,
  ) {}

  /** Evaluates the conditions for the agent behind `authorization` and, when all hold, grants the comp. */
  async request(authorization: string, now = new Date()): Promise<CompDecision> {
    const agent = await this.agents.authenticateHeader(authorization).catch(() => undefined);
    if (!agent) return { granted: false, reason: "not_registered" };
    if (!agent.evmAddress) return { granted: false, reason: "no_wallet_on_registration" };
    if (this.internalWallets.has(agent.evmAddress.toLowerCase())) return { granted: false, reason: "wallet_is_internal" };
    const balance = (await this.chain.publicClient.readContract({ address: this.chain.network.usdcAddress, abi: DEV_USDC.abi, functionName: "balanceOf", args: [agent.evmAddress] })) as bigint;
    if (balance <= 0n) return { granted: false, reason: "no_wallet_on_registration" };
    const age = Math.floor((now.getTime() - agent.createTime.getTime()) / 1000);
    if (age < COMP_MIN_AGE_S) return { granted: false, reason: `registration_age_insufficient:${age}s<${COMP_MIN_AGE_S}s` };
    return this.grant(agent, now);
  }

  private async grant(agent: AgentEntity, now: Date): Promise<CompDecision> {
    const day = now.toISOString().slice(0, 10);
    try {
      return await runInTransaction(this.ds, async (m): Promise<CompDecision> => {
        if (await m.findOneBy(CompGrantEntity, { agentId: agent.agentId })) return { granted: false, reason: "comp_already_used" };
        if (!(await m.findOneBy(CompDayEntity, { day }))) {
          await m.insert(CompDayEntity, { day, granted: 0 }).catch((err) => {
            if (!isUniqueViolation(err)) throw err; // another request created the day's row
          });
        }
        // The guarded increment is the cap: concurrent requests serialize on the day's row.
        const res = await m.createQueryBuilder().update(CompDayEntity).set({ granted: () => "granted + 1" }).where("day = :day AND granted < :cap", { day, cap: COMP_DAILY_CAP }).execute();
        if ((res.affected ?? 0) !== 1) return { granted: false, reason: `daily_comp_cap_reached:${COMP_DAILY_CAP}` };
        const compId = newId("comp");
        await m.insert(CompGrantEntity, { compId, agentId: agent.agentId, day, createTime: now });
        return { granted: true, compId, agent };
      });
    } catch (err) {
      if (isUniqueViolation(err)) return { granted: false, reason: "comp_already_used" };
      throw err;
    }
  }
}
