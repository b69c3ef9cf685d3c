import { create } from "@bufbuild/protobuf";
import { DisputeDisclosureSchema, type DisputeDisclosure } from "../../gen/svc/catalog/v1/catalog_pb.js";

// What a buyer must know about disputes before paying (spec: arbitration.dispute-settlement).
export const DISPUTE_VERDICTS = ["upheld", "overturned", "withdrawn"] as const;
export const ADJUDICATED_OUTCOME_PROOF_KIND = 30129;

export function disputeDisclosure(): DisputeDisclosure {
  return create(DisputeDisclosureSchema, {
    skuId: "arbitration.dispute-settlement",
    adjudicator: "operator_panel",
    unilateralVerdict: true,
    buyerContestChannel: false,
    verdicts: [...DISPUTE_VERDICTS],
    proofKind: ADJUDICATED_OUTCOME_PROOF_KIND,
    statement:
      "Disputes are adjudicated today by the operator panel. The verdict (upheld, overturned or withdrawn) is " +
      "unilateral and there is no buyer contest channel. Each verdict is recorded on the proof rail as kind 30129.",
  });
}
