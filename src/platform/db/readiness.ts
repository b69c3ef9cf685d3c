import type { DataSource } from "typeorm";
import { pingDatabase } from "./data-source.js";

export interface ReadinessCheck {
  name: string;
  ready: boolean;
  latencyMs: number;
  detail: string;
}

const DB_CHECK_TIMEOUT_MS = 2_000;

/** Whether the database answers a round trip within its deadline. */
export async function databaseReadiness(ds: DataSource): Promise<ReadinessCheck> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_r, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${DB_CHECK_TIMEOUT_MS} ms`)), DB_CHECK_TIMEOUT_MS);
  });
  try {
    await Promise.race([pingDatabase(ds), timeout]);
    return { name: "database", ready: true, latencyMs: performance.now() - started, detail: "" };
  } catch (err) {
    return { name: "database", ready: false, latencyMs: performance.now() - started, detail: (err as Error).message };
  } finally {
    clearTimeout(timer);
  }
}
