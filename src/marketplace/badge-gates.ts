// Badge gates (spec: Authentication item 6): the named internal agents require badge gold; everything
// else is open to any registered agent with no badge. The names are also reserved at registration.
export const GOLD_GATED_INTERNAL_AGENTS = ["svc-auditor", "svc-arbiter", "svc-council", "svc-oracle"] as const;
export const GATED_AGENT_BADGE = "gold";
