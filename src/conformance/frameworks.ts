import fs from "node:fs";
import { parse } from "yaml";
import { z } from "zod";

// The governance frameworks security.conformance-check maps stated posture to, and the posture-fact
// vocabulary their controls are evidenced by, shipped as data (src/conformance/data/*.yaml) and
// validated when first loaded: a framework naming an unknown fact, or a key claimed by two facts, is
// a build error, not a silent miss.

const DATA = new URL("./data/", import.meta.url);

const FactSchema = z.object({
  id: z.string().regex(/^[a-z0-9_]+$/),
  title: z.string().min(1),
  keys: z.array(z.string().regex(/^[a-z0-9_]+$/)).min(1),
  phrases: z.array(z.string().min(2)).default([]),
});
export type PostureFact = z.infer<typeof FactSchema>;

const VocabularySchema = z.object({ version: z.string(), facts: z.array(FactSchema).min(1) });

const ControlSchema = z.object({ id: z.string().min(1), function: z.string().min(1), title: z.string().min(1), requires: z.array(z.string()).min(1) });
export type FrameworkControl = z.infer<typeof ControlSchema>;

const FrameworkSchema = z.object({
  id: z.string().regex(/^[a-z0-9.-]+$/),
  name: z.string(),
  version: z.string(),
  aliases: z.array(z.string()).default([]),
  level: z.string(),
  source: z.object({ publisher: z.string(), document: z.string(), published: z.string(), url: z.url() }),
  controls: z.array(ControlSchema).min(1),
});
export type Framework = z.infer<typeof FrameworkSchema>;

export const FRAMEWORK_FILES = ["nist-ai-rmf-1.0.yaml", "nist-csf-2.0.yaml"] as const;

export interface ConformanceData {
  vocabulary: { version: string; facts: PostureFact[] };
  facts: Map<string, PostureFact>;
  /** Normalized posture key -> fact id. */
  keyIndex: Map<string, string>;
  frameworks: Framework[];
}

const read = (file: string): unknown => parse(fs.readFileSync(new URL(file, DATA), "utf8"));

/** Lower-cased, non-alphanumerics folded: how framework names and aliases are compared. */
export const frameworkKey = (s: string) => s.toLowerCase().replace(/[^a-z0-9]+/g, "");

export function loadConformanceData(): ConformanceData {
  const vocabulary = VocabularySchema.parse(read("posture-facts.yaml"));
  const facts = new Map(vocabulary.facts.map((f) => [f.id, f]));
  if (facts.size !== vocabulary.facts.length) throw new Error("posture-facts.yaml: duplicate fact id");
  const keyIndex = new Map<string, string>();
  for (const f of vocabulary.facts) {
    for (const k of f.keys) {
      const prior = keyIndex.get(k);
      if (prior && prior !== f.id) throw new Error(`posture-facts.yaml: key ${k} is claimed by ${prior} and ${f.id}`);
      keyIndex.set(k, f.id);
    }
  }
  const frameworks = FRAMEWORK_FILES.map((file) => {
    const fw = FrameworkSchema.parse(read(file));
    const ids = new Set<string>();
    for (const c of fw.controls) {
      if (ids.has(c.id)) throw new Error(`${file}: duplicate control ${c.id}`);
      ids.add(c.id);
      const unknown = c.requires.filter((r) => !facts.has(r));
      if (unknown.length) throw new Error(`${file}: control ${c.id} requires unknown fact(s) ${unknown.join(", ")}`);
    }
    return fw;
  });
  return { vocabulary, facts, keyIndex, frameworks };
}

let cached: ConformanceData | undefined;
export function conformanceData(): ConformanceData {
  return (cached ??= loadConformanceData());
}

/** The framework named by id, name or alias (case and punctuation ignored). */
export function findFramework(data: ConformanceData, name: string): Framework | undefined {
  const k = frameworkKey(name);
  return data.frameworks.find((f) => [f.id, f.name, `${f.name} ${f.version}`, ...f.aliases].some((n) => frameworkKey(n) === k));
}
