import { Code, ConnectError } from "@connectrpc/connect";
import { create, type DescMessage, type MessageInitShape } from "@bufbuild/protobuf";
import {
  BadRequestSchema,
  ErrorInfoSchema,
  PreconditionFailureSchema,
} from "../../../gen/google/rpc/error_details_pb.js";
import { isDatabaseBusy, isDatabaseUnavailable } from "../db/errors.js";

// The one error model: service code throws only ConnectErrors built here. Each carries a
// google.rpc.ErrorInfo whose `reason` is the spec's machine code (`auth_required`, ...);
// gRPC/Connect clients read code + reason, and the REST shim maps the reason to an HTTP status.

export const ERROR_DOMAIN = "svc";

export interface ErrorOptions {
  metadata?: Record<string, string>;
  /** Response headers to attach (Connect copies them to the response). */
  headers?: ConstructorParameters<typeof Headers>[0];
  cause?: unknown;
  /** Extra typed details. */
  details?: { desc: DescMessage; value: MessageInitShape<DescMessage> }[];
}

export function rpcError(code: Code, reason: string, message: string, opts: ErrorOptions = {}): ConnectError {
  const details = [
    { desc: ErrorInfoSchema, value: { reason, domain: ERROR_DOMAIN, metadata: opts.metadata ?? {} } },
    ...(opts.details ?? []),
  ];
  return new ConnectError(message, code, opts.headers, details, opts.cause);
}

/** The ErrorInfo reason of an error, if it has one. */
export function errorReason(err: ConnectError): string | undefined {
  return err.findDetails(ErrorInfoSchema)[0]?.reason;
}

export interface FieldViolation {
  field: string;
  description: string;
}

export const errors = {
  invalidArgument(reason: string, message: string, violations: FieldViolation[] = []): ConnectError {
    const details = violations.length
      ? [{ desc: BadRequestSchema, value: create(BadRequestSchema, { fieldViolations: violations }) }]
      : [];
    return rpcError(Code.InvalidArgument, reason, message, { details });
  },
  /** Missing or invalid Bearer key on a gated route (spec: 401 `auth_required`). */
  authRequired(message = "a valid Bearer API key is required"): ConnectError {
    return rpcError(Code.Unauthenticated, "auth_required", message);
  },
  permissionDenied(reason: string, message: string): ConnectError {
    return rpcError(Code.PermissionDenied, reason, message);
  },
  notFound(reason: string, message: string): ConnectError {
    return rpcError(Code.NotFound, reason, message);
  },
  alreadyExists(reason: string, message: string): ConnectError {
    return rpcError(Code.AlreadyExists, reason, message);
  },
  /** A policy gate refused the call before any charge (REST: 409). */
  gateRefused(reason: string, message: string, subject = ""): ConnectError {
    const violation = { type: "gate", subject, description: message };
    return rpcError(Code.FailedPrecondition, reason, message, {
      details: [{ desc: PreconditionFailureSchema, value: { violations: [violation] } }],
    });
  },
  failedPrecondition(reason: string, message: string, opts?: ErrorOptions): ConnectError {
    return rpcError(Code.FailedPrecondition, reason, message, opts);
  },
  resourceExhausted(reason: string, message: string, opts?: ErrorOptions): ConnectError {
    return rpcError(Code.ResourceExhausted, reason, message, opts);
  },
  unavailable(reason: string, message: string, cause?: unknown): ConnectError {
    return rpcError(Code.Unavailable, reason, message, { cause });
  },
  /** A capability this deployment does not have yet: never a fake result, never a charge. */
  unimplemented(what: string): ConnectError {
    return rpcError(Code.Unimplemented, "unimplemented", `${what} is not implemented on this server yet`);
  },
};

/**
 * The ConnectError for a database failure that is not the caller's fault: unreachable or dropped
 * (503 `database_unavailable`) or busy (503 `database_busy`); undefined for any other error.
 */
export function databaseError(err: unknown): ConnectError | undefined {
  if (isDatabaseUnavailable(err)) return errors.unavailable("database_unavailable", "the database is unavailable: the request was not completed; retry shortly", err);
  if (isDatabaseBusy(err)) return errors.unavailable("database_busy", "the database is busy; retry", err);
  return undefined;
}
