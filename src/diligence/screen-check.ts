import { z } from "zod";

// One due-diligence check and the screen's overall result (the rule is documented here and in the
// README): high_risk when any check fails; review when no check fails but a core check warns; clear
// otherwise. Informational checks that warn (no audit report yet, no security.txt...) are reported but
// do not move a screen out of `clear`.

export const CheckResult = z.enum(["pass", "warn", "fail"]);
export type CheckResult = z.infer<typeof CheckResult>;

export const CheckSchema = z.object({
  id: z.string(),
  title: z.string(),
  category: z.enum(["registry", "identity", "disputes", "marketplace", "reputation", "settlement", "audits", "domain"]),
  weight: z.enum(["core", "informational"]),
  result: CheckResult,
  evidence: z.string(),
  source: z.object({ name: z.string(), endpoint: z.string(), read_at: z.string() }),
});
export type ScreenCheck = z.infer<typeof CheckSchema>;

export const ScreenResult = z.enum(["clear", "review", "high_risk"]);
export type ScreenResult = z.infer<typeof ScreenResult>;

export const SCREEN_RULE = "high_risk if any check fails; review if no check fails but a core check warns; clear otherwise (informational warnings are reported without changing the result)";

export function screenResult(checks: ScreenCheck[]): ScreenResult {
  if (checks.some((c) => c.result === "fail")) return "high_risk";
  if (checks.some((c) => c.result === "warn" && c.weight === "core")) return "review";
  return "clear";
}
