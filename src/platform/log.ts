import { pino, type Logger } from "pino";

export type { Logger };

// Structured JSON logs. Credentials never reach a log line: headers that carry them are redacted.
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: "svc" },
    redact: {
      paths: [
        "req.headers.authorization",
        'req.headers["payment-signature"]',
        'req.headers["x-payment"]',
        'req.headers["x-402-payment"]',
        'req.headers["x-cashu"]',
      ],
      censor: "[redacted]",
    },
  });
}
