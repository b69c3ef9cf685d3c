import { expect } from "chai";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { loadConfig, ConfigError } from "../../../src/config.js";
import { configuredSecrets, redactUrl, resolveSecretFiles, SECRET_SETTINGS } from "../../../src/platform/secrets.js";
import { createLogger } from "../../../src/platform/log.js";

// Secret settings from env or `NAME_FILE`; log lines never carry a secret.

function capture(): { lines: string[]; stream: Writable } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(chunk.toString());
      cb();
    },
  });
  return { lines, stream };
}

describe("secrets from env or files", () => {
  let dir: string;
  before(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-secrets-"))));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, content: string) => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, content, { mode: 0o600 });
    return p;
  };

  it("NAME_FILE supplies NAME, trailing newlines trimmed", () => {
    const config = loadConfig({
      OPERATOR_API_KEY_FILE: file("op", "operator-key-from-a-file-0001\n"),
      PROOF_HMAC_KEY_FILE: file("hmac", "hmac-key-from-a-file-00002\r\n"),
      FACILITATOR_PRIVATE_KEY_FILE: file("fac", `0x${"ab".repeat(32)}\n`),
    });
    expect(config.operatorApiKey).to.equal("operator-key-from-a-file-0001");
    expect(config.proofHmacKey).to.equal("hmac-key-from-a-file-00002");
    expect(config.proofHmacKeyIsDev).to.equal(false);
    expect(config.facilitatorPrivateKey).to.equal(`0x${"ab".repeat(32)}`);
  });

  it("every secret setting accepts _FILE (and the validation still applies to the file's value)", () => {
    for (const name of SECRET_SETTINGS) {
      const env = resolveSecretFiles({ [`${name}_FILE`]: file(name, "value-of-sixteen-chars-or-more\n") });
      expect(env[name], name).to.equal("value-of-sixteen-chars-or-more");
      expect(env[`${name}_FILE`], name).to.equal(undefined);
    }
    expect(() => loadConfig({ OPERATOR_API_KEY_FILE: file("short", "short\n") })).to.throw(ConfigError, /OPERATOR_API_KEY/);
  });

  it("refuses NAME and NAME_FILE together, an unreadable file and an empty one, naming the setting but never a value", () => {
    const both = (() => {
      try {
        loadConfig({ WEBHOOK_SECRET_KEY: "inline-secret-value-123456", WEBHOOK_SECRET_KEY_FILE: file("w", "file-secret-value-123456") });
      } catch (err) {
        return err as Error;
      }
    })();
    expect(both).to.be.instanceOf(ConfigError);
    expect(both!.message).to.contain("WEBHOOK_SECRET_KEY").and.contain("not both");
    expect(both!.message).to.not.contain("inline-secret-value").and.not.contain("file-secret-value");
    expect(() => loadConfig({ LLM_API_KEY_FILE: path.join(dir, "missing") })).to.throw(ConfigError, /LLM_API_KEY_FILE: cannot read .*ENOENT/);
    expect(() => loadConfig({ CASHU_PROOF_KEY_FILE: file("empty", "\n") })).to.throw(ConfigError, /CASHU_PROOF_KEY_FILE: .* is empty/);
  });

  it("DATABASE_PASSWORD(_FILE) goes into DATABASE_URL's password, percent-encoded", () => {
    const config = loadConfig({ DATABASE_URL: "mysql://svc@db:3306/svc", DATABASE_PASSWORD_FILE: file("db", "p@ss:w/rd%#\n") });
    expect(config.database.kind).to.equal("mysql");
    const url = new URL((config.database as { url: string }).url);
    expect(decodeURIComponent(url.password)).to.equal("p@ss:w/rd%#");
    expect(url.username).to.equal("svc");
    expect(url.pathname).to.equal("/svc");
    expect(() => loadConfig({ DATABASE_URL: "mysql://db:3306/svc", DATABASE_PASSWORD: "x" })).to.throw(ConfigError, /must name a user/);
    expect(redactUrl("mysql://svc:hunter2@db/svc")).to.equal("mysql://svc:***@db/svc");
  });
});

describe("log redaction", () => {
  const secrets = {
    OPERATOR_API_KEY: "op-key-LEAKCHECK-aaaa-1111",
    FACILITATOR_API_KEY: "fac-key-LEAKCHECK-bbbb-2222",
    FACILITATOR_AUTH_TOKEN: "fac-token-LEAKCHECK-cccc-3333",
    PROOF_HMAC_KEY: "hmac-LEAKCHECK-dddd-4444",
    WEBHOOK_SECRET_KEY: "webhook-LEAKCHECK-eeee-5555",
    CASHU_PROOF_KEY: "cashu-LEAKCHECK-ffff-6666",
    LLM_API_KEY: "sk-LEAKCHECK-gggg-7777",
    LLM_BASE_URL: "http://127.0.0.1:9/v1",
    LLM_MODEL: "m",
    TREASURY_PRIVATE_KEY: `0x${"7e".repeat(32)}`,
    FACILITATOR_PRIVATE_KEY: `0x${"fa".repeat(32)}`,
    DATABASE_URL: "mysql://svc@db:3306/svc",
    DATABASE_PASSWORD: "db-pw-LEAKCHECK-hhhh/8888",
  };
  const values = Object.entries(secrets).filter(([k]) => !["LLM_BASE_URL", "LLM_MODEL", "DATABASE_URL"].includes(k)).map(([, v]) => v);

  function logEverything(log: ReturnType<typeof createLogger>, config: ReturnType<typeof loadConfig>): void {
    log.info({ config }, "config dump");
    log.info({ settings: { nested: { apiKey: secrets.LLM_API_KEY } } }, "nested settings");
    log.error({ err: Object.assign(new Error(`connect to ${config.database.kind === "mysql" ? (config.database as { url: string }).url : ""} failed`), { config: { headers: { Authorization: `Bearer ${secrets.LLM_API_KEY}` } } }) }, "db error");
    log.warn({ req: { headers: { authorization: `Bearer ${secrets.OPERATOR_API_KEY}`, "x-api-key": secrets.FACILITATOR_API_KEY } } }, "request");
    log.warn(`remote facilitator refused token ${secrets.FACILITATOR_AUTH_TOKEN} and key ${secrets.TREASURY_PRIVATE_KEY.slice(2)}`);
    log.info({ upstream: { headers: { authorization: `Bearer ${secrets.FACILITATOR_AUTH_TOKEN}` } } }, "upstream call");
  }

  it("with the configured secrets, no secret value reaches a log line (config dumps, URLs, error objects, messages)", () => {
    const config = loadConfig(secrets);
    const { lines, stream } = capture();
    logEverything(createLogger("trace", configuredSecrets(config), stream), config);
    const out = lines.join("");
    expect(lines.length).to.equal(6);
    for (const v of values) expect(out, v).to.not.contain(v);
    expect(out).to.not.contain(encodeURIComponent(secrets.DATABASE_PASSWORD));
    expect(out).to.contain("[redacted]");
    expect(out).to.contain("config dump"); // the lines are there, only the secrets are gone
  });

  it("the check can fail: without the scrubber, a secret in free text does reach the line", () => {
    const config = loadConfig(secrets);
    const { lines, stream } = capture();
    logEverything(createLogger("trace", [], stream), config);
    expect(lines.join("")).to.contain(secrets.FACILITATOR_AUTH_TOKEN);
    // ...while the structured paths alone still hide headers and config fields.
    expect(lines[0]).to.not.contain(secrets.OPERATOR_API_KEY);
    expect(lines[3]).to.not.contain(secrets.OPERATOR_API_KEY);
  });
});
