// The marketplace fee schedule (spec: Fees), in basis points. The fee engine applies it; /v1/rules publishes it.
export const FEE_SCHEDULE = {
  mode: "shadow",
  serviceRateBps: 2000,
  floorBps: 1000,
  ceilingBps: 2500,
  providerBadgeAdjustmentBps: { gold: -400, silver: -200, bronze: -100, none: 0 },
  requesterBadgeAdjustmentBps: { gold: -200, silver: -100, bronze: -50, none: 0 },
  repeatPair: [
    { threshold: 2, adjustmentBps: -100 },
    { threshold: 5, adjustmentBps: -200 },
    { threshold: 10, adjustmentBps: -300 },
  ],
  buyerTenureDays: [
    { threshold: 30, adjustmentBps: -100 },
    { threshold: 90, adjustmentBps: -200 },
  ],
  unregisteredRequesterBps: 300,
  unregisteredProviderBps: 200,
  firstTimePairBps: 100,
  internalIdentitiesDiscounted: false,
  volumeDiscount: false,
} as const;
