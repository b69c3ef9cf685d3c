import { z } from "zod";

// The documents an agent publishes about itself, as their specifications define them:
// - an A2A agent card, protocol 0.3 (`/.well-known/agent-card.json`: url + preferredTransport, which the
//   spec text makes required though the TypeScript type leaves it optional) or 1.0 (supportedInterfaces);
// - an ERC-8004 registration file (type `…eip-8004#registration-v1`, services[] or the older endpoints[],
//   registrations[] whose agentId and agentRegistry are both mandatory).

export const ERC8004_REGISTRATION_TYPE = "https://eips.ethereum.org/EIPS/eip-8004#registration-v1";

const HttpUrl = z.url({ protocol: /^https?$/, error: "must be an absolute http(s) URL" });
const Transport = z.enum(["JSONRPC", "GRPC", "HTTP+JSON"]);
const Modes = z.array(z.string().min(1));

const Skill = z
  .object({ id: z.string().min(1), name: z.string().min(1), description: z.string(), tags: z.array(z.string()), examples: z.array(z.string()).optional(), inputModes: Modes.optional(), outputModes: Modes.optional() })
  .loose();

const Capabilities = z
  .object({
    streaming: z.boolean().optional(),
    pushNotifications: z.boolean().optional(),
    stateTransitionHistory: z.boolean().optional(),
    extendedAgentCard: z.boolean().optional(),
    extensions: z.array(z.object({ uri: z.string().min(1), description: z.string().optional(), required: z.boolean().optional(), params: z.record(z.string(), z.unknown()).optional() }).loose()).optional(),
  })
  .loose();

const CardCommon = {
  name: z.string().min(1),
  description: z.string().min(1),
  version: z.string().min(1),
  capabilities: Capabilities,
  defaultInputModes: Modes,
  defaultOutputModes: Modes,
  skills: z.array(Skill),
  provider: z.object({ organization: z.string().min(1), url: HttpUrl }).loose().optional(),
  iconUrl: HttpUrl.optional(),
  documentationUrl: HttpUrl.optional(),
  securitySchemes: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
  signatures: z.array(z.object({ protected: z.string().min(1), signature: z.string().min(1), header: z.record(z.string(), z.unknown()).optional() }).loose()).optional(),
};

export const A2aCardV03 = z
  .object({
    ...CardCommon,
    protocolVersion: z.string().regex(/^0\.\d+(\.\d+)?$/, "a 0.x protocol version"),
    url: HttpUrl,
    preferredTransport: Transport,
    additionalInterfaces: z.array(z.object({ url: HttpUrl, transport: z.string().min(1) }).loose()).optional(),
    supportsAuthenticatedExtendedCard: z.boolean().optional(),
    security: z.array(z.record(z.string(), z.array(z.string()))).optional(),
  })
  .loose();

export const A2aCardV1 = z
  .object({
    ...CardCommon,
    supportedInterfaces: z.array(z.object({ url: HttpUrl, protocolBinding: Transport, protocolVersion: z.string().min(1), tenant: z.string().optional() }).loose()).min(1),
  })
  .loose();

const Service = z.object({ name: z.string().min(1), endpoint: z.string().min(1), version: z.string().optional() }).loose();

export const Erc8004Registration = z
  .object({
    type: z.literal(ERC8004_REGISTRATION_TYPE),
    name: z.string().min(1),
    description: z.string(),
    image: z.string().optional(),
    services: z.array(Service).optional(),
    endpoints: z.array(Service).optional(),
    x402Support: z.boolean().optional(),
    active: z.boolean().optional(),
    registrations: z.array(
      z.object({
        agentId: z.union([z.number().int().nonnegative(), z.string().regex(/^\d{1,78}$/, "a decimal token id")]),
        agentRegistry: z.string().regex(/^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}:[-.%a-zA-Z0-9]{1,128}$/, "<namespace>:<chainId>:<registry address>"),
      }).loose(),
    ),
    supportedTrust: z.array(z.string()).optional(),
  })
  .loose()
  .refine((d) => d.services !== undefined || d.endpoints !== undefined, { message: "services[] (or the older endpoints[]) is required", path: ["services"] });

export type DocumentKind = "a2a_card" | "erc8004_registration" | "unknown";
export type Json = Record<string, unknown>;

/** What the document is, unless the buyer said. */
export function detectKind(doc: Json, stated: "auto" | "a2a_card" | "erc8004_registration"): DocumentKind {
  if (stated !== "auto") return stated;
  if (doc.type === ERC8004_REGISTRATION_TYPE || (Array.isArray(doc.registrations) && (Array.isArray(doc.services) || Array.isArray(doc.endpoints)))) return "erc8004_registration";
  if ("supportedInterfaces" in doc || "protocolVersion" in doc || "skills" in doc || "preferredTransport" in doc) return "a2a_card";
  return "unknown";
}

/** The schema check: the specification version applied and every violation, as `path: message`. */
export function schemaIssues(doc: Json, kind: DocumentKind): { spec: string; issues: string[] } {
  if (kind === "unknown") return { spec: "none", issues: ["the document is neither an A2A agent card nor an ERC-8004 registration file"] };
  const [spec, schema] =
    kind === "erc8004_registration" ? ["ERC-8004 registration-v1", Erc8004Registration] : "supportedInterfaces" in doc ? ["A2A agent card 1.0", A2aCardV1] : ["A2A agent card 0.3", A2aCardV03];
  const parsed = (schema as z.ZodType).safeParse(doc);
  return { spec, issues: parsed.success ? [] : parsed.error.issues.slice(0, 50).map((i) => `${i.path.join(".") || "(document)"}: ${i.message}`) };
}
