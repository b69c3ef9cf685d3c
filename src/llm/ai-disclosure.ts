import { z } from "zod";

// The AI-generation disclosure a deliverable written by a language model carries: that it is
// machine-generated, which engine and model wrote it. Token counts and cost stay internal.

export const AiGenerationOut = z.object({
  ai_generated: z.literal(true),
  disclosure: z.string(),
  engine: z.literal("llm"),
  api: z.literal("openai-compatible chat completions"),
  model: z.string().describe("the model as the provider named it"),
  repaired: z.boolean().describe("whether the model's first answer was invalid and a repair request was needed"),
});
export type AiGeneration = z.infer<typeof AiGenerationOut>;

export function aiGeneration(disclosure: string, answer: { model: string; repaired: boolean }): AiGeneration {
  return { ai_generated: true, disclosure, engine: "llm", api: "openai-compatible chat completions", model: answer.model, repaired: answer.repaired };
}
