import type { ServiceImpl } from "@connectrpc/connect";
import type { RulesService } from "../../gen/svc/rules/v1/rules_service_pb.js";
import { rulesDocument, type RuleSection } from "./rules-document.js";

export class RulesServiceImpl implements ServiceImpl<typeof RulesService> {
  constructor(private readonly liveSections: ReadonlySet<RuleSection>) {}

  getRules() {
    return rulesDocument(this.liveSections);
  }
}
