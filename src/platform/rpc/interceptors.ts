import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import type { Logger } from "../log.js";
import { kRequestId } from "./context-keys.js";
import { errorReason, errors } from "./errors.js";
import { checkKitVersion, KIT_VERSION_HEADER } from "../../catalog/kit.js";
import { currentRequestContext, REQUEST_ID_PATTERN, requestIdFrom, runWithRequestContext } from "../request-context.js";
import type { AppMetrics } from "../metrics/app-metrics.js";
import { SpanKind, withSpan } from "../tracing/tracing.js";

/**
 * Assigns a request id (honouring a well-formed `x-request-id`, else the HTTP edge's, else a new one),
 * runs the call in that request context (log lines, job rows, webhook events) and echoes it in the response.
 */
export function requestIdInterceptor(): Interceptor {
  return (next) => async (req) => {
    const given = req.header.get("x-request-id");
    const id = given && REQUEST_ID_PATTERN.test(given) ? given : (currentRequestContext()?.requestId ?? requestIdFrom(undefined));
    req.contextValues.set(kRequestId, id);
    try {
      const res = currentRequestContext()?.requestId === id ? await next(req) : await runWithRequestContext({ requestId: id }, () => next(req));
      res.header.set("x-request-id", id);
      return res;
    } catch (err) {
      const ce = ConnectError.from(err);
      ce.metadata.set("x-request-id", id);
      throw ce;
    }
  };
}

/** Counts and times every RPC by service, method and code, inside a span when tracing is on. */
export function rpcMetricsInterceptor(metrics: AppMetrics): Interceptor {
  return (next) => (req) => {
    const started = process.hrtime.bigint();
    const service = req.service.typeName;
    const method = req.method.name;
    const observe = (code: string) => {
      const labels = { service, method, code };
      metrics.rpcRequests.inc(labels);
      metrics.rpcDuration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
    };
    return withSpan(`${service}/${method}`, { "rpc.system": "connect_rpc", "rpc.service": service, "rpc.method": method }, async (span) => {
      try {
        const res = await next(req);
        observe("ok");
        return res;
      } catch (err) {
        const ce = ConnectError.from(err);
        const code = Code[ce.code].replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();
        observe(code);
        span.setAttribute("rpc.connect_rpc.error_code", code);
        const reason = errorReason(ce);
        if (reason) span.setAttribute("svc.reason", reason);
        throw ce;
      }
    }, SpanKind.SERVER);
  };
}

/** Logs every call; logs the cause of Internal/Unknown errors, which clients never see. */
export function loggingInterceptor(log: Logger): Interceptor {
  return (next) => async (req) => {
    const started = performance.now();
    const rpc = `${req.service.typeName}/${req.method.name}`;
    const requestId = req.contextValues.get(kRequestId);
    try {
      const res = await next(req);
      log.debug({ rpc, requestId, ms: +(performance.now() - started).toFixed(2) }, "rpc ok");
      return res;
    } catch (err) {
      const ce = ConnectError.from(err);
      const ms = +(performance.now() - started).toFixed(2);
      if (ce.code === Code.Internal || ce.code === Code.Unknown) {
        log.error({ rpc, requestId, ms, err: ce.cause ?? err }, "rpc failed");
      } else {
        log.info({ rpc, requestId, ms, code: Code[ce.code], reason: errorReason(ce) }, "rpc refused");
      }
      throw ce;
    }
  };
}

/**
 * Refuses clients whose declared kit (header `x-kit-version`) is older than min_kit_version.
 * Discovery RPCs stay open so that an outdated client can read where to refresh.
 */
export function kitVersionInterceptor(exemptServices: ReadonlySet<string>, exemptMethods: ReadonlySet<string>): Interceptor {
  return (next) => async (req) => {
    const declared = req.header.get(KIT_VERSION_HEADER);
    const rpc = `${req.service.typeName}/${req.method.name}`;
    if (declared !== null && !exemptServices.has(req.service.typeName) && !exemptMethods.has(rpc)) {
      const check = checkKitVersion(declared.trim());
      if (!check.ok) {
        throw check.reason === "kit_outdated"
          ? errors.gateRefused(check.reason, check.message, KIT_VERSION_HEADER)
          : errors.invalidArgument(check.reason, check.message);
      }
    }
    return next(req);
  };
}
