import type { ConnectError } from "@connectrpc/connect";
import { errors } from "../platform/rpc/errors.js";

// The refusals of an ecash payment, each with its machine reason. REST statuses follow NUT-24 where it
// speaks (a token of the wrong mint or unit, or worth too little: 400); a spent token is a conflict
// (409); no usable mint answer is 503 with nothing taken. Messages never echo the token or a secret.

export const ecashErrors = {
  disabled(): ConnectError {
    return errors.failedPrecondition("ecash_disabled", "this server accepts no ecash: the operator has configured no Cashu mint (CASHU_MINTS)");
  },
  invalid(message: string): ConnectError {
    return errors.invalidArgument("ecash_invalid", message, [{ field: "X-402-Payment", description: message }]);
  },
  mintNotAllowed(mint: string, allowed: readonly string[]): ConnectError {
    return errors.invalidArgument("ecash_mint_not_allowed", `tokens of mint ${mint} are not accepted; accepted mints: ${allowed.join(", ")}`, [
      { field: "X-402-Payment", description: "mint not on this server's allowlist" },
    ]);
  },
  wrongUnit(unit: string, required: string): ConnectError {
    return errors.invalidArgument("ecash_wrong_unit", `the token is in unit ${JSON.stringify(unit.slice(0, 16))}; this payment takes ${required}`, [
      { field: "X-402-Payment", description: `unit must be ${required}` },
    ]);
  },
  insufficient(worth: bigint, required: bigint, unit: string, fee = 0n): ConnectError {
    const after = fee > 0n ? ` (${worth + fee} less the mint's input fee of ${fee})` : "";
    return errors.invalidArgument("ecash_insufficient", `the token is worth ${worth} ${unit}${after}; at least ${required} ${unit} is required`, [
      { field: "X-402-Payment", description: `at least ${required} ${unit} required` },
    ]);
  },
  spent(message = "this ecash token has already been spent"): ConnectError {
    return errors.failedPrecondition("ecash_spent", message);
  },
  mintUnavailable(mint: string, cause?: unknown): ConnectError {
    return errors.unavailable("ecash_mint_unavailable", `the mint ${mint} did not answer; nothing was taken: retry with the same token`, cause);
  },
};
