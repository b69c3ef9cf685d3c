import type { ValueTransformer } from "typeorm";

// Column conventions shared by every entity and migration.

/**
 * JSON documents that can exceed 64 KB (deliverables): LONGTEXT on MySQL, TEXT on SQLite. Decorators
 * are evaluated at import time, so the dialect is read from DATABASE_URL, the same variable the
 * configuration uses to pick the database.
 */
export const LONG_TEXT = process.env.DATABASE_URL ? "longtext" : "text";

/** Atomic USDC amounts: DECIMAL(30,0) in SQL, bigint in TypeScript. */
export const MONEY = { type: "decimal", precision: 30, scale: 0 } as const;

export const moneyTransformer: ValueTransformer = {
  to: (v: bigint | null | undefined) => (v === null || v === undefined ? v : v.toString()),
  from: (v: string | number | null) => {
    if (v === null || v === undefined) return v;
    // SQLite hands numeric columns back as JS numbers: refuse any value that lost precision.
    if (typeof v === "number" && !Number.isSafeInteger(v)) throw new Error(`money column value ${v} is not an exact integer`);
    return BigInt(v);
  },
};

/** UTC timestamps: DATETIME(6) on MySQL; SQLite keeps them as text and has no precision to declare. */
export const TIMESTAMP = (process.env.DATABASE_URL ? { type: "datetime", precision: 6 } : { type: "datetime" }) as { type: "datetime"; precision?: number };
