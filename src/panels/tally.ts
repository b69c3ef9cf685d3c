import type { RoleId } from "./roles.js";

// The panels' forced decision: a verdict always results, even on a tie, with abstentions, or when every
// panelist abstains. Rules, applied in order until one option remains:
//   1. plurality: the options with the most votes;
//   2. summed_confidence: among those, the highest sum of the voters' confidence (per mille, integers);
//   3. chair: the chair's vote, when the chair voted for one of the options still tied;
//   4. buyer_order: the first still-tied option in the order the buyer listed them.
// Every vote's confidence is counted in integer thousandths so the sums are exact and reproducible.

export const TIE_BREAK_RULES = [
  "plurality: the option with the most votes wins",
  "summed_confidence: among options tied on votes, the highest sum of their voters' confidence wins",
  "chair: if still tied, the option the chair voted for wins when it is among them",
  "buyer_order: if still tied, the first of them in the order the options were given wins",
] as const;

export type DecidedBy = "plurality" | "summed_confidence" | "chair" | "buyer_order";

export interface Ballot {
  panelist: string;
  role: RoleId;
  /** An option, or null for an abstention. */
  choice: string | null;
  /** 0..1 */
  confidence: number;
}

export interface OptionCount {
  option: string;
  votes: number;
  /** Sum of the voters' confidence (3 decimals). */
  summed_confidence: number;
  voters: string[];
}

export interface TieBreakStep {
  rule: Exclude<DecidedBy, "plurality">;
  /** Options still tied after this rule. */
  remaining: string[];
  note: string;
}

export interface Tally {
  verdict: string;
  decided_by: DecidedBy;
  counts: OptionCount[];
  abstentions: number;
  abstained_by: string[];
  all_abstained: boolean;
  /** More than one option had the most votes. */
  tie: boolean;
  tied_options: string[];
  tie_break: TieBreakStep[];
  /** The verdict had more than half of the panel's votes (abstentions included in the panel). */
  absolute_majority: boolean;
}

export const perMille = (confidence: number) => Math.min(1000, Math.max(0, Math.round(confidence * 1000)));

export function tallyVotes(options: readonly string[], ballots: readonly Ballot[]): Tally {
  if (!options.length) throw new RangeError("no options to vote on");
  const known = new Set(options);
  for (const b of ballots) if (b.choice !== null && !known.has(b.choice)) throw new RangeError(`${b.panelist} voted for ${JSON.stringify(b.choice)}, which is not an option`);
  const rows = options.map((option) => {
    const voters = ballots.filter((b) => b.choice === option);
    return { option, votes: voters.length, mille: voters.reduce((s, b) => s + perMille(b.confidence), 0), voters: voters.map((b) => b.panelist) };
  });
  const abstained = ballots.filter((b) => b.choice === null).map((b) => b.panelist);

  const top = Math.max(...rows.map((r) => r.votes));
  let remaining = rows.filter((r) => r.votes === top);
  const tiedOptions = remaining.length > 1 ? remaining.map((r) => r.option) : [];
  const steps: TieBreakStep[] = [];
  let decidedBy: DecidedBy = "plurality";
  if (remaining.length > 1) {
    const best = Math.max(...remaining.map((r) => r.mille));
    remaining = remaining.filter((r) => r.mille === best);
    steps.push({ rule: "summed_confidence", remaining: remaining.map((r) => r.option), note: `highest summed confidence ${best / 1000}` });
    decidedBy = "summed_confidence";
  }
  if (remaining.length > 1) {
    const chair = ballots.find((b) => b.role === "chair");
    const pick = chair?.choice != null ? remaining.find((r) => r.option === chair.choice) : undefined;
    if (pick) remaining = [pick];
    const note = !chair ? "no chair on the panel" : chair.choice === null ? "the chair abstained" : pick ? `the chair (${chair.panelist}) voted ${JSON.stringify(chair.choice)}` : "the chair voted for an option no longer tied";
    steps.push({ rule: "chair", remaining: remaining.map((r) => r.option), note });
    decidedBy = "chair";
  }
  if (remaining.length > 1) {
    remaining = [remaining[0]!];
    steps.push({ rule: "buyer_order", remaining: [remaining[0]!.option], note: "first of the still-tied options in the order given" });
    decidedBy = "buyer_order";
  }
  const winner = remaining[0]!;
  return {
    verdict: winner.option,
    decided_by: decidedBy,
    counts: rows.map((r) => ({ option: r.option, votes: r.votes, summed_confidence: r.mille / 1000, voters: r.voters })),
    abstentions: abstained.length,
    abstained_by: abstained,
    all_abstained: ballots.length > 0 && abstained.length === ballots.length,
    tie: tiedOptions.length > 1,
    tied_options: tiedOptions,
    tie_break: steps,
    absolute_majority: winner.votes * 2 > ballots.length,
  };
}
