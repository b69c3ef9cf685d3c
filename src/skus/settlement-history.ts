import type { EntityManager } from "typeorm";
import { X402PaymentEntity } from "../x402/payment.entity.js";
import { atomicToUsdNumber } from "../platform/money.js";

// A wallet's verified settlement history, read from the payments ledger of this service.

export type SettlementHistory = {
  settled_payments: number;
  settled_usd: number;
  refunded_payments: number;
  refunded_usd: number;
  rejected_payments: number;
  first_settlement: string | null;
  last_settlement: string | null;
  by_sku: Record<string, number>;
};

export async function settlementHistory(manager: EntityManager, payer: string): Promise<SettlementHistory> {
  const rows = await manager.find(X402PaymentEntity, { where: { payer }, order: { createTime: "ASC" } });
  const settled = rows.filter((r) => r.state === "settled");
  const refunded = rows.filter((r) => r.state === "refunded");
  const sum = (list: X402PaymentEntity[]) => atomicToUsdNumber(list.reduce((s, r) => s + r.amount, 0n));
  const byTime = [...settled, ...refunded].sort((a, b) => a.updateTime.getTime() - b.updateTime.getTime());
  const bySku: Record<string, number> = {};
  for (const r of settled) bySku[r.skuId] = (bySku[r.skuId] ?? 0) + 1;
  return {
    settled_payments: settled.length,
    settled_usd: sum(settled),
    refunded_payments: refunded.length,
    refunded_usd: sum(refunded),
    rejected_payments: rows.filter((r) => r.state === "rejected").length,
    first_settlement: byTime[0]?.updateTime.toISOString() ?? null,
    last_settlement: byTime.at(-1)?.updateTime.toISOString() ?? null,
    by_sku: bySku,
  };
}
