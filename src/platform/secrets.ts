import fs from "node:fs";

// Secret settings come from the environment or from files (Docker/Kubernetes secrets): `NAME_FILE`
// names a file whose content (trailing newlines trimmed) is the value of `NAME`. Setting both is refused
// so an operator never wonders which one is in force. Values are never echoed in errors.

/** Every secret setting; each also accepts `<NAME>_FILE`. Add new secret settings here. */
export const SECRET_SETTINGS = [
  "TREASURY_PRIVATE_KEY",
  "FACILITATOR_PRIVATE_KEY",
  "FACILITATOR_AUTH_TOKEN",
  "FACILITATOR_API_KEY",
  "PROOF_HMAC_KEY",
  "WEBHOOK_SECRET_KEY",
  "OPERATOR_API_KEY",
  "LLM_API_KEY",
  "CASHU_PROOF_KEY",
  "DATABASE_PASSWORD",
  "METRICS_TOKEN",
] as const;

export class SecretFileError extends Error {}

/**
 * A copy of `env` where each `NAME_FILE` of a secret setting is replaced by `NAME` read from that file.
 * Throws SecretFileError naming every problem (both set, unreadable or empty file); never the value.
 */
export function resolveSecretFiles(env: NodeJS.ProcessEnv, names: readonly string[] = SECRET_SETTINGS): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env };
  const problems: string[] = [];
  for (const name of names) {
    const file = env[`${name}_FILE`];
    if (file === undefined || file === "") continue;
    delete out[`${name}_FILE`];
    if (env[name] !== undefined && env[name] !== "") {
      problems.push(`${name}: set either ${name} or ${name}_FILE, not both`);
      continue;
    }
    let text: string;
    try {
      text = fs.readFileSync(file, "utf8");
    } catch (err) {
      problems.push(`${name}_FILE: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? "error"})`);
      continue;
    }
    const value = text.replace(/[\r\n]+$/, "");
    if (value === "") {
      problems.push(`${name}_FILE: ${file} is empty`);
      continue;
    }
    out[name] = value;
  }
  if (problems.length) throw new SecretFileError(`invalid configuration:\n${problems.map((p) => `  ${p}`).join("\n")}`);
  return out;
}

/** `url` with its password replaced by `password` (percent-encoded), for DATABASE_URL + DATABASE_PASSWORD. */
export function withPassword(url: string, password: string): string {
  const u = new URL(url);
  if (!u.username) throw new SecretFileError("invalid configuration:\n  DATABASE_PASSWORD: DATABASE_URL must name a user (mysql://user@host/db)");
  u.password = encodeURIComponent(password);
  return u.toString();
}

/** `url` with any password replaced by `***`, for log lines and error messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (!u.password) return url;
    u.password = "***";
    return u.toString();
  } catch {
    return url.replace(/\/\/([^:/@]+):[^@]*@/, "//$1:***@");
  }
}

/** The secret values a running process holds, for the log scrubber (createLogger's `secrets`). */
export function configuredSecrets(config: {
  treasuryPrivateKey?: string;
  facilitatorPrivateKey?: string;
  facilitatorAuthToken?: string;
  facilitatorApiKey?: string;
  proofHmacKey: string;
  proofHmacKeyIsDev: boolean;
  webhookSecretKey: string;
  operatorApiKey?: string;
  metricsToken?: string;
  llm?: { apiKey?: string } | undefined;
  cashu: { proofKey: string; proofKeyIsDev: boolean };
  database: { kind: string; url?: string };
}): string[] {
  const out = [
    config.treasuryPrivateKey,
    config.facilitatorPrivateKey,
    config.facilitatorAuthToken,
    config.facilitatorApiKey,
    config.proofHmacKeyIsDev ? undefined : config.proofHmacKey,
    config.webhookSecretKey,
    config.operatorApiKey,
    config.metricsToken,
    config.llm?.apiKey,
    config.cashu.proofKeyIsDev ? undefined : config.cashu.proofKey,
  ];
  if ("url" in config.database && config.database.url) {
    try {
      const password = new URL(config.database.url).password;
      if (password) out.push(decodeURIComponent(password));
    } catch {
      /* not a URL: nothing to extract */
    }
  }
  return out.filter((s): s is string => typeof s === "string" && s.length > 0);
}
