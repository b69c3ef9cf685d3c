import type { Interceptor } from "@connectrpc/connect";
import { databaseError } from "./errors.js";

/**
 * Turns a database outage that escaped a service (connection refused, dropped, pool closed) into
 * Unavailable `database_unavailable` (REST 503) instead of an unexplained Internal error. Every
 * write path claims or checks in the database before any charge, so such a call charged nothing.
 */
export function databaseErrorsInterceptor(): Interceptor {
  return (next) => async (req) => {
    try {
      return await next(req);
    } catch (err) {
      throw databaseError(err) ?? err;
    }
  };
}
