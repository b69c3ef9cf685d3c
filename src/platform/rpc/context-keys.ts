import { createContextKey } from "@connectrpc/connect";

// Per-request values shared by interceptors and services (one file, `k` prefix).

/** Request id: taken from `x-request-id` when well-formed, otherwise generated. */
export const kRequestId = createContextKey<string>("", { description: "request id" });
