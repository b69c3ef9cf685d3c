import type { Brief } from "./brief.js";
import type { SourceOutcome } from "./source-reader.js";

// The brief as Markdown (the deliverable's `content_markdown`, which the trust envelope hashes).

const quote = (t: string, max = 400) => (t.length > max ? `${t.slice(0, max - 1)}…` : t).replace(/\s+/g, " ");
const cites = (ns: number[]) => ns.map((n) => `[${n}]`).join("");

const EXTRACTIVE_NOTE = "_Extractive brief: each statement is a sentence quoted from a fetched source and cites its passage; statements marked **unverified** have no supporting passage in the fetched sources._";

/** The note under the title of a brief a language model wrote. */
export const llmBriefNote = (model: string) =>
  `_Brief written by a language model (${model}) from numbered passages of the fetched sources only; each statement was checked against the passages it cites and cites those that support it; statements marked **unverified** are not supported by the fetched sources._`;

export function briefMarkdown(task: string, brief: Brief, sources: readonly SourceOutcome[], note: string = EXTRACTIVE_NOTE): string {
  const out: string[] = [`# Research brief: ${quote(task, 200)}`, ""];
  out.push(note, "");
  const many = brief.questions.length > 1;
  for (const q of brief.questions) {
    if (many) out.push(`## ${quote(q.text, 200)}`, "");
    for (const c of brief.claims.filter((c) => c.question === q.index)) {
      out.push(c.status === "supported" ? `- ${c.text} ${cites(c.citations)}` : `- **Unverified:** ${c.text}`);
    }
    out.push("");
  }
  const checked = brief.claims.filter((c) => c.kind === "checked");
  if (checked.length) {
    out.push("## Statements checked", "");
    for (const c of checked) out.push(c.status === "supported" ? `- ${c.text} — supported ${cites(c.citations)}` : `- ${c.text} — **unverified** (no fetched passage supports it)`);
    out.push("");
  }
  out.push("## Sources", "");
  for (const c of brief.citations) {
    const where = `${c.title ? `${c.title}, ` : ""}${c.url}`;
    out.push(`[${c.n}] ${where} — passage ${c.passage_index}, characters ${c.char_start}–${c.char_end}: "${quote(c.text)}"`);
  }
  if (!brief.citations.length) out.push("No passage was cited.");
  const unused = sources.filter((s) => s.status !== "used");
  if (unused.length) {
    out.push("", "## Sources not used", "");
    for (const s of unused) out.push(s.status === "failed" ? `- ${s.url}: could not be read (${s.error})` : s.status === "excluded" ? `- ${s.url}: excluded by the content-trap scan (${s.matched_rules.join(", ")})` : "");
  }
  return out.join("\n").trim() + "\n";
}
