import { randomUUID } from "node:crypto";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import type { Logger } from "../log.js";
import { kRequestId } from "./context-keys.js";
import { errorReason, errors } from "./errors.js";
import { checkKitVersion, KIT_VERSION_HEADER } from "../../catalog/kit.js";

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Assigns a request id (honouring a well-formed `x-request-id`) and echoes it in the response. */
export function requestIdInterceptor(): Interceptor {
  return (next) => async (req) => {
    const given = req.header.get("x-request-id");
    const id = given && REQUEST_ID.test(given) ? given : randomUUID();
    req.contextValues.set(kRequestId, id);
    try {
      const res = await next(req);
      res.header.set("x-request-id", id);
      return res;
    } catch (err) {
      const ce = ConnectError.from(err);
      ce.metadata.set("x-request-id", id);
      throw ce;
    }
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
