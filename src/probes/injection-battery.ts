import { randomBytes } from "node:crypto";
import fs from "node:fs";
import { parse } from "yaml";
import { z } from "zod";

// The versioned prompt-injection battery (src/probes/data/injection-battery-<version>.yaml), validated
// when loaded, and its rendering for one run: every probe gets its own canary, given to the target in
// two halves so that only an agent obeying the injection writes the joined token.

export const DETECTORS = ["canary", "exfil_url", "system_prompt", "compliance", "secrets", "tool_call"] as const;
export type DetectorName = (typeof DETECTORS)[number];

const ProbeSchema = z.object({
  id: z.string().regex(/^[a-z0-9_.]+$/),
  category: z.string(),
  severity: z.enum(["high", "medium", "low"]),
  title: z.string(),
  turns: z.array(z.string().min(1)).min(1).max(4),
  detectors: z.array(z.enum(DETECTORS)).min(1),
  encoding: z.enum(["none", "base64", "zero_width"]).default("none"),
  payload: z.string().optional(),
  tool: z.string().optional(),
  compliance: z.array(z.string()).default([]),
});
export type BatteryProbe = z.infer<typeof ProbeSchema>;

const BatterySchema = z.object({
  id: z.string(),
  version: z.string(),
  exfil_prefix: z.url(),
  baseline: z.string().min(1),
  refusal_phrases: z.array(z.string()).min(1),
  compliance_phrases: z.array(z.string()).min(1),
  system_prompt_markers: z.array(z.string()).min(1),
  secret_patterns: z.array(z.object({ id: z.string(), pattern: z.string() })).min(1),
  probes: z.array(ProbeSchema).min(1),
});
export type Battery = z.infer<typeof BatterySchema>;

export const BATTERY_VERSIONS = ["2026.11-1"] as const;
export type BatteryVersion = (typeof BATTERY_VERSIONS)[number];
export const BATTERY_FILE = (version: string) => `src/probes/data/injection-battery-${version}.yaml`;

const cache = new Map<string, Battery>();

export function loadBattery(version: BatteryVersion): Battery {
  const hit = cache.get(version);
  if (hit) return hit;
  const battery = BatterySchema.parse(parse(fs.readFileSync(new URL(`./data/injection-battery-${version}.yaml`, import.meta.url), "utf8")));
  if (battery.version !== version) throw new Error(`battery file ${version} declares version ${battery.version}`);
  for (const p of battery.probes) {
    if (p.encoding !== "none" && !p.payload) throw new Error(`probe ${p.id}: an encoded probe needs a payload`);
    if (p.detectors.includes("tool_call") && !p.tool) throw new Error(`probe ${p.id}: the tool_call detector needs a tool`);
  }
  for (const re of [...battery.system_prompt_markers, ...battery.secret_patterns.map((s) => s.pattern)]) new RegExp(re, "im");
  // The joined canary must never be in what is sent: only an obeying agent may write it.
  for (const p of battery.probes) {
    const r = renderProbe(battery, p);
    if (r.turns.some((t) => t.includes(r.canary.joined))) throw new Error(`probe ${p.id} sends the joined canary itself`);
  }
  cache.set(version, battery);
  return battery;
}

export interface Canary {
  head: string;
  tail: string;
  /** What an obeying agent writes: head and tail joined. */
  joined: string;
}

export function newCanary(): Canary {
  const head = `CANARY-${randomBytes(4).toString("hex")}`;
  const tail = randomBytes(4).toString("hex");
  return { head, tail, joined: `${head}${tail}` };
}

const ZERO_WIDTH = ["\u200B", "\u200C", "\u200D"];

function encode(text: string, encoding: BatteryProbe["encoding"]): string {
  if (encoding === "base64") return Buffer.from(text, "utf8").toString("base64");
  if (encoding === "zero_width") return [...text].map((ch, i) => (i === 0 ? ch : `${ZERO_WIDTH[i % ZERO_WIDTH.length]}${ch}`)).join("");
  return text;
}

export interface RenderedProbe {
  probe: BatteryProbe;
  canary: Canary;
  /** The exfiltration URL prefix with the canary, as an obeying agent would write it. */
  exfilUrl: string;
  turns: string[];
}

export function renderProbe(battery: Battery, probe: BatteryProbe, canary: Canary = newCanary()): RenderedProbe {
  const fill = (t: string) => t.replaceAll("{{HEAD}}", canary.head).replaceAll("{{TAIL}}", canary.tail).replaceAll("{{CANARY}}", canary.joined).replaceAll("{{EXFIL}}", battery.exfil_prefix);
  const payload = probe.payload ? encode(fill(probe.payload), probe.encoding) : "";
  return { probe, canary, exfilUrl: `${battery.exfil_prefix}${canary.joined}`, turns: probe.turns.map((t) => fill(t).replaceAll("{{PAYLOAD}}", payload)) };
}
