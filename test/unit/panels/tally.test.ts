import { expect } from "chai";
import { tallyVotes, type Ballot } from "../../../src/panels/tally.js";
import type { RoleId } from "../../../src/panels/roles.js";

const ballot = (panelist: string, role: RoleId, choice: string | null, confidence: number): Ballot => ({ panelist, role, choice, confidence });
const OPTIONS = ["A", "B", "C"];

describe("panels: the vote tally and its forced decision", () => {
  it("a plurality decides; abstentions are counted apart and do not block it", () => {
    const t = tallyVotes(OPTIONS, [
      ballot("P1", "chair", "B", 0.5),
      ballot("P2", "skeptic", "A", 0.9),
      ballot("P3", "finance", "A", 0.8),
      ballot("P4", "security", null, 0.2),
      ballot("P5", "ethicist", "C", 1),
    ]);
    expect(t).to.deep.include({ verdict: "A", decided_by: "plurality", tie: false, tied_options: [], tie_break: [], abstentions: 1, abstained_by: ["P4"], all_abstained: false, absolute_majority: false });
    expect(t.counts).to.deep.equal([
      { option: "A", votes: 2, summed_confidence: 1.7, voters: ["P2", "P3"] },
      { option: "B", votes: 1, summed_confidence: 0.5, voters: ["P1"] },
      { option: "C", votes: 1, summed_confidence: 1, voters: ["P5"] },
    ]);
  });

  it("a tie on votes goes to the highest summed confidence (exact thousandths, no float drift)", () => {
    const t = tallyVotes(OPTIONS, [
      ballot("P1", "chair", "A", 0.1),
      ballot("P2", "skeptic", "A", 0.2),
      ballot("P3", "finance", "B", 0.3),
      ballot("P4", "security", "B", 0.0001),
      ballot("P5", "ethicist", null, 0.9),
    ]);
    // 0.1 + 0.2 = 0.3 exactly in thousandths; B = 0.300 + 0.000 (rounded): still tied, so the chair decides.
    expect(t.tie).to.equal(true);
    expect(t.tied_options).to.deep.equal(["A", "B"]);
    expect(t.tie_break.map((s) => [s.rule, s.remaining])).to.deep.equal([
      ["summed_confidence", ["A", "B"]],
      ["chair", ["A"]],
    ]);
    expect(t).to.include({ verdict: "A", decided_by: "chair" });

    const byConfidence = tallyVotes(OPTIONS, [ballot("P1", "chair", "A", 0.4), ballot("P2", "skeptic", "B", 0.9), ballot("P3", "finance", null, 0.5)]);
    expect(byConfidence).to.deep.include({ verdict: "B", decided_by: "summed_confidence", tie: true, tied_options: ["A", "B"] });
    expect(byConfidence.tie_break).to.deep.equal([{ rule: "summed_confidence", remaining: ["B"], note: "highest summed confidence 0.9" }]);
  });

  it("when the chair abstained or backs an option no longer tied, the buyer's order decides", () => {
    const abstainingChair = tallyVotes(OPTIONS, [ballot("P1", "chair", null, 0), ballot("P2", "skeptic", "C", 0.5), ballot("P3", "finance", "B", 0.5)]);
    expect(abstainingChair).to.include({ verdict: "B", decided_by: "buyer_order" });
    expect(abstainingChair.tie_break.map((s) => [s.rule, s.remaining, s.note])).to.deep.equal([
      ["summed_confidence", ["B", "C"], "highest summed confidence 0.5"],
      ["chair", ["B", "C"], "the chair abstained"],
      ["buyer_order", ["B"], "first of the still-tied options in the order given"],
    ]);
    const outvotedChair = tallyVotes(OPTIONS, [ballot("P1", "chair", "A", 0.1), ballot("P2", "skeptic", "C", 0.5), ballot("P3", "finance", "B", 0.5), ballot("P4", "ethicist", "C", 0.5), ballot("P5", "security", "B", 0.5)]);
    expect(outvotedChair).to.include({ verdict: "B", decided_by: "buyer_order" });
    expect(outvotedChair.tie_break[1]!.note).to.equal("the chair voted for an option no longer tied");
    const noChair = tallyVotes(["yes", "no"], [ballot("P1", "skeptic", "no", 0.5), ballot("P2", "finance", "yes", 0.5)]);
    expect(noChair).to.include({ verdict: "yes", decided_by: "buyer_order" });
    expect(noChair.tie_break[1]!.note).to.equal("no chair on the panel");
  });

  it("forces a verdict when every panelist abstains: all options tie at zero and the rules run to the buyer's order", () => {
    const t = tallyVotes(["no", "yes"], [ballot("P1", "chair", null, 0.3), ballot("P2", "skeptic", null, 0.9), ballot("P3", "finance", null, 1)]);
    expect(t).to.deep.include({ verdict: "no", decided_by: "buyer_order", all_abstained: true, abstentions: 3, tie: true, tied_options: ["no", "yes"], absolute_majority: false });
    expect(t.counts.every((c) => c.votes === 0 && c.summed_confidence === 0)).to.equal(true);
    expect(t.tie_break.map((s) => s.rule)).to.deep.equal(["summed_confidence", "chair", "buyer_order"]);
  });

  it("reports an absolute majority and refuses a vote for something that is not an option", () => {
    expect(tallyVotes(["yes", "no"], [ballot("P1", "chair", "yes", 1), ballot("P2", "skeptic", "yes", 1), ballot("P3", "finance", "no", 1)]).absolute_majority).to.equal(true);
    expect(() => tallyVotes(["yes", "no"], [ballot("P1", "chair", "maybe", 1)])).to.throw(/not an option/);
  });
});
