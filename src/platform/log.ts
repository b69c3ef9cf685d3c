import { pino, type DestinationStream, type Logger } from "pino";
import { REDACT_PATHS, REDACTED, secretScrubber } from "./log-redaction.js";
import { currentRequestContext } from "./request-context.js";

export type { Logger };

// Structured JSON logs. Credentials never reach a log line: headers that carry them are redacted.
// `secrets`: configured secret values scrubbed from every line wherever they appear (see log-redaction.ts).
export function createLogger(level: string, secrets: readonly (string | undefined)[] = [], destination?: DestinationStream): Logger {
  const scrub = secretScrubber(secrets);
  const options: pino.LoggerOptions = {
    level,
    base: { service: "svc" },
    // Every line written while serving a request (or running the job / webhook it caused) carries its ids.
    mixin: () => {
      const ctx = currentRequestContext();
      return ctx ? { requestId: ctx.requestId, ...(ctx.jobId ? { jobId: ctx.jobId } : {}), ...(ctx.eventId ? { eventId: ctx.eventId } : {}) } : {};
    },
    redact: {
      paths: [
        "req.headers.authorization",
        'req.headers["payment-signature"]',
        'req.headers["x-payment"]',
        'req.headers["x-402-payment"]',
        'req.headers["x-cashu"]',
        ...REDACT_PATHS,
      ],
      censor: REDACTED,
    },
    ...(scrub ? { hooks: { streamWrite: scrub } } : {}),
  };
  return destination ? pino(options, destination) : pino(options);
}
