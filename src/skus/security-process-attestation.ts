import { createHash } from "node:crypto";
import { z } from "zod";
import { AttestationProofSchema, commitAttestation, prepareAttestation } from "../attestations/attestation-record.js";
import { checkProcess, STEPS_MERKLE_TREE, type ReportedStep } from "../attestations/process-steps.js";
import { lookupAgent } from "./registered-agent.js";
import type { SkuHandler } from "./sku-handler.js";
import type { AgentDirectory } from "./subject.js";

// security.process-attestation: a signed statement that a process was (or was not) followed: its declared
// steps checked against the steps reported, each with an evidence hash (given, or computed from the
// evidence text) and completion time, in order when the process is ordered. The statement, with a Merkle
// root over the reported steps, is recorded on the proof rail (kind 30110) and verifiable with
// `svc verify <proof_id>`. Evidence is attested by hash: the service does not judge its content.

const Hex64 = z.string().regex(/^[0-9a-f]{64}$/, "must be 64 lowercase hex characters");
const StepName = z.string().trim().min(1).max(128);
const SKEW_MS = 5 * 60_000;

const Step = z
  .object({
    step: StepName,
    status: z.enum(["done", "skipped"]).default("done"),
    completed_at: z.iso.datetime({ offset: true }).refine((t) => Date.parse(t) <= Date.now() + SKEW_MS, "must not be in the future"),
    evidence: z.string().min(1).max(1_000_000).optional(),
    evidence_sha256: Hex64.optional(),
  })
  .loose()
  .refine((s) => s.evidence === undefined || s.evidence_sha256 === undefined, { message: "give evidence or evidence_sha256, not both", path: ["evidence_sha256"] });

const Input = z
  .object({
    process: z
      .object({
        name: z.string().trim().min(1).max(200),
        version: z.string().trim().min(1).max(64).optional(),
        steps: z.array(StepName).min(1).max(100).refine((s) => new Set(s).size === s.length, "declared steps must be unique"),
        ordered: z.boolean().default(true),
      })
      .loose(),
    actor: z.string().trim().min(1).max(160),
    steps: z.array(Step).min(1).max(500),
  })
  .loose();
type Input = z.infer<typeof Input>;

const Finding = z.object({
  step: z.string(),
  present: z.boolean(),
  status: z.string().nullable(),
  completed_at: z.string().nullable(),
  evidence_sha256: z.string().nullable(),
  in_order: z.boolean().nullable(),
  ok: z.boolean(),
  problems: z.array(z.string()),
});

export const ProcessStatementSchema = z.object({
  attestation_id: z.string(),
  attestation_type: z.literal("process"),
  sku_id: z.literal("security.process-attestation"),
  process: z.object({ name: z.string(), version: z.string().nullable(), declared_steps: z.array(z.string()), ordered: z.boolean() }),
  actor: z.string(),
  actor_agent_id: z.string().nullable(),
  reported_steps: z.array(z.object({ step: z.string(), status: z.string(), completed_at: z.string(), evidence_sha256: z.string().nullable(), leaf: z.string() })),
  findings: z.array(Finding),
  extra_steps: z.array(z.string()),
  duplicate_steps: z.array(z.string()),
  process_followed: z.boolean(),
  steps_merkle_root: z.string(),
  merkle_tree: z.string(),
  payer: z.string(),
  payment_id: z.string(),
  attested_at: z.string(),
});

export const ProcessAttestationOutput = z.object({ attestation_id: z.string(), statement: ProcessStatementSchema, proof: AttestationProofSchema });

export function securityProcessAttestation(directory: AgentDirectory): SkuHandler<Input> {
  return {
    skuId: "security.process-attestation",
    poweredBy: "svc-attest/process",
    input: Input,
    output: ProcessAttestationOutput,
    async run(input, ctx) {
      const reported: ReportedStep[] = input.steps.map((s) => ({
        step: s.step,
        status: s.status,
        completed_at: new Date(s.completed_at).toISOString(),
        evidence_sha256: s.evidence_sha256 ?? (s.evidence === undefined ? null : createHash("sha256").update(s.evidence, "utf8").digest("hex")),
      }));
      const result = checkProcess(input.process.steps, input.process.ordered, reported);
      const actor = await lookupAgent(directory, ctx.manager, input.actor);
      const { attestationId, body, proof } = prepareAttestation(ctx, "pat", (id) => ({
        attestation_id: id,
        attestation_type: "process",
        sku_id: "security.process-attestation",
        process: { name: input.process.name, version: input.process.version ?? null, declared_steps: input.process.steps, ordered: input.process.ordered },
        actor: input.actor,
        actor_agent_id: actor.agent?.agentId ?? null,
        reported_steps: reported.map((s, i) => ({ ...s, leaf: result.leaves[i]! })),
        findings: result.findings,
        extra_steps: result.extra_steps,
        duplicate_steps: result.duplicate_steps,
        process_followed: result.process_followed,
        steps_merkle_root: result.steps_merkle_root,
        merkle_tree: STEPS_MERKLE_TREE,
        payer: ctx.payer,
        payment_id: ctx.paymentId,
        attested_at: ctx.now.toISOString(),
      }));
      return { attestation_id: attestationId, statement: body, proof };
    },
    // The statement reaches the proof rail only with the settlement of the call that paid for it.
    commit: (manager, deliverable, ctx) => commitAttestation(manager, ctx.proofKey, deliverable),
  };
}
