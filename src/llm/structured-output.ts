import { z } from "zod";
import type { LlmMessage } from "./llm-engine.js";

// Structured answers: the expected object's JSON Schema goes in the system prompt (with
// `response_format: json_object` on the request), the answer is parsed and validated with zod, and an
// invalid answer gets exactly one repair request carrying the error and the bad answer.

/** The JSON Schema of what the model must write (the schema's input side; unrepresentable parts are left open). */
export function jsonSchemaOf(schema: z.ZodType): unknown {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
  return rest;
}

/** The instruction appended to the system prompt (the test LLM server reads the name from `JSON object "<name>"`). */
export function schemaInstruction(name: string, schema: z.ZodType): string {
  return [
    `Answer with exactly one JSON object "${name}" and nothing else: no prose, no Markdown code fences.`,
    "It must validate against this JSON Schema:",
    JSON.stringify(jsonSchemaOf(schema)),
  ].join("\n");
}

/** The caller's messages with the schema instruction merged into one leading system message. */
export function withSchema(messages: LlmMessage[], name: string, schema: z.ZodType): LlmMessage[] {
  const system = messages.filter((m) => m.role === "system").map((m) => m.content);
  const rest = messages.filter((m) => m.role !== "system");
  // One system message, first: some chat templates (llama.cpp, Ollama) accept no other layout.
  return [{ role: "system", content: [...system, schemaInstruction(name, schema)].join("\n\n") }, ...rest];
}

export type ParsedAnswer<T> = { ok: true; value: T } | { ok: false; error: string };

/** The JSON text of an answer: reasoning blocks and Markdown fences some models add are removed. */
export function answerJsonText(content: string): string {
  let text = content.replace(/<think>[\s\S]*?<\/think>/gi, "").trim();
  const fenced = /^```(?:json)?\s*([\s\S]*?)\s*```$/i.exec(text);
  if (fenced) text = fenced[1]!.trim();
  return text;
}

/** Parses and validates a model answer. */
export function parseAnswer<T>(content: string, schema: z.ZodType<T>): ParsedAnswer<T> {
  const text = answerJsonText(content);
  if (!text) return { ok: false, error: "the answer is empty" };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { ok: false, error: `the answer is not valid JSON (${(err as Error).message})` };
  }
  const checked = schema.safeParse(json);
  if (checked.success) return { ok: true, value: checked.data };
  const issues = checked.error.issues.slice(0, 12).map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`);
  return { ok: false, error: `the answer does not match the schema: ${issues.join("; ")}` };
}

/** Longest bad answer echoed back in a repair request. */
const ECHO_CHARS = 12_000;

/** The messages of the repair request: the conversation, the bad answer, and what was wrong with it. */
export function repairMessages(messages: LlmMessage[], name: string, bad: string, error: string): LlmMessage[] {
  return [
    ...messages,
    { role: "assistant", content: bad.slice(0, ECHO_CHARS) },
    {
      role: "user",
      content: `Your previous answer was rejected: ${error}. Reply again with only the corrected JSON object "${name}", valid against the JSON Schema given in the instructions.`,
    },
  ];
}
