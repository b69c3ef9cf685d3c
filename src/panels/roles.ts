// The role catalog of the deliberation panels: eleven distinct perspectives. A panel of N seats takes the
// first N roles of its SKU's order (or the buyer's own choice of roles). The chair, first in both orders,
// is the tie-breaker of last resort before the buyer's option order (see tally.ts).

export const ROLE_IDS = [
  "chair",
  "domain_expert",
  "skeptic",
  "risk_officer",
  "finance",
  "legal_compliance",
  "end_user_advocate",
  "operations",
  "security",
  "ethicist",
  "contrarian",
] as const;
export type RoleId = (typeof ROLE_IDS)[number];

export interface Role {
  id: RoleId;
  title: string;
  /** What this panelist weighs; given to the model as its perspective. */
  perspective: string;
}

export const ROLES: Record<RoleId, Role> = {
  chair: { id: "chair", title: "Chair", perspective: "keeps the panel on the question as asked, weighs every side's strongest argument and looks for the decision the evidence best supports" },
  domain_expert: { id: "domain_expert", title: "Domain expert", perspective: "the subject-matter facts, how such choices usually play out in practice, and which claims are technically sound" },
  skeptic: { id: "skeptic", title: "Skeptic", perspective: "demands evidence, points out unsupported claims, hidden assumptions and information that is missing" },
  risk_officer: { id: "risk_officer", title: "Risk officer", perspective: "what can go wrong with each option, its likelihood and impact, and whether it can be mitigated" },
  finance: { id: "finance", title: "Finance", perspective: "costs, total cost of ownership, budget impact, return and financial exposure" },
  legal_compliance: { id: "legal_compliance", title: "Legal and compliance", perspective: "contractual, regulatory, licensing and data-protection exposure of each option" },
  end_user_advocate: { id: "end_user_advocate", title: "End-user advocate", perspective: "the people who will use or be affected by the outcome: usability, accessibility, their day-to-day experience" },
  operations: { id: "operations", title: "Operations", perspective: "feasibility of delivery, support, continuity, dependencies and the effort to run the chosen option" },
  security: { id: "security", title: "Security", perspective: "threats, access control, data protection, supply-chain and incident exposure of each option" },
  ethicist: { id: "ethicist", title: "Ethicist", perspective: "fairness, possible harm, transparency and the interests of everyone affected, including those not in the room" },
  contrarian: { id: "contrarian", title: "Contrarian", perspective: "argues the strongest case against whatever view is emerging, so the panel does not converge by default" },
};

/** Seats filled in this order for deliberation.multi-agent-debate (a general question). */
export const DEBATE_ROLE_ORDER: readonly RoleId[] = ["chair", "domain_expert", "skeptic", "risk_officer", "end_user_advocate", "contrarian", "ethicist", "finance", "operations", "legal_compliance", "security"];

/** Seats filled in this order for procurement.council (a buying decision). */
export const COUNCIL_ROLE_ORDER: readonly RoleId[] = ["chair", "finance", "legal_compliance", "risk_officer", "operations", "security", "end_user_advocate", "domain_expert", "skeptic", "contrarian", "ethicist"];

export const MIN_PANEL = 5;
export const MAX_PANEL = 11;
export const DEFAULT_PANEL = 7;

export interface Panelist {
  /** Seat id `P1`..`P11`, in panel order. */
  id: string;
  role: Role;
}

/** The panel's seats: the buyer's roles when given, else the first `size` roles of the SKU's order. */
export function composePanel(order: readonly RoleId[], size: number, chosen?: readonly RoleId[]): Panelist[] {
  if (!chosen && (size < MIN_PANEL || size > MAX_PANEL)) throw new RangeError(`a panel has ${MIN_PANEL} to ${MAX_PANEL} panelists, not ${size}`);
  const roles = chosen ?? order.slice(0, size);
  if (roles.length < MIN_PANEL || roles.length > MAX_PANEL) throw new RangeError(`a panel has ${MIN_PANEL} to ${MAX_PANEL} panelists, not ${roles.length}`);
  if (new Set(roles).size !== roles.length) throw new RangeError("panel roles must be distinct");
  return roles.map((r, i) => ({ id: `P${i + 1}`, role: ROLES[r] }));
}
