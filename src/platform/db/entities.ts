import type { EntityList } from "./data-source.js";
import { A2aTaskEntity } from "../../a2a/a2a-task.entity.js";
import { EcashInputEntity, EcashProofEntity, EcashRedemptionEntity } from "../../ecash/ecash.entity.js";
import { X402PaymentEntity } from "../../x402/payment.entity.js";
import { X402PaymentEffectEntity } from "../../x402/payment-effect.entity.js";
import { ServiceJobEntity } from "../../jobs/service-job.entity.js";
import { ProofAnchorEntity, ProofRecordEntity } from "../../proof/proof-record.entity.js";
import { AttestationEntity, WitnessEnrollmentEntity } from "../../witness/witness.entity.js";
import { ReputationScoreEntity, SchedulerLeaseEntity } from "../../reputation/reputation.entity.js";
import { LedgerEntryEntity, LedgerPostingEntity } from "../../ledger/ledger.entity.js";
import { DisputeEntity } from "../../arbitration/dispute.entity.js";
import { SealEntity } from "../../skus/seal.entity.js";
import { PriceAlertEntity, PriceAlertEventEntity } from "../../alerts/price-alert.entity.js";
import { AgentEntity } from "../../registry/agent.entity.js";
import { IntroductionEntity } from "../../social/introduction.entity.js";
import { StarterNoteEntity } from "../../registry/starter-note.entity.js";
import { CompDayEntity, CompGrantEntity } from "../../registry/comp.entity.js";
import { WebhookEventEntity } from "../../webhooks/webhook-event.entity.js";
import { MarketBidEntity, MarketJobEntity, MarketRequestEntity, PayoutEntity } from "../../marketplace/marketplace.entity.js";
import { LlmUsageEntity } from "../../llm/llm-usage.entity.js";
import { ChainNonceEntity, CircuitBreakerEntity, PayerRateLimitEntity } from "./cluster-state.entity.js";
import { MarketEcashReceiptEntity, MarketEntity, MarketFleetMemberEntity, MarketPositionEntity, MarketSubscriptionEntity, MarketUsageDayEntity } from "../../markets/markets.entity.js";

// Every entity, listed explicitly.
export const ENTITIES: EntityList = [X402PaymentEntity, ServiceJobEntity, ProofRecordEntity, LedgerEntryEntity, LedgerPostingEntity, SealEntity,
  AgentEntity, StarterNoteEntity, WebhookEventEntity, CompDayEntity, CompGrantEntity,
  MarketRequestEntity, MarketBidEntity, MarketJobEntity, PayoutEntity, ProofAnchorEntity,
  WitnessEnrollmentEntity, AttestationEntity, ReputationScoreEntity, SchedulerLeaseEntity, DisputeEntity, PriceAlertEntity, PriceAlertEventEntity, IntroductionEntity, LlmUsageEntity, MarketEntity, MarketPositionEntity, MarketSubscriptionEntity, MarketEcashReceiptEntity, MarketUsageDayEntity, MarketFleetMemberEntity, EcashRedemptionEntity, EcashInputEntity, EcashProofEntity, A2aTaskEntity,
  PayerRateLimitEntity, CircuitBreakerEntity, ChainNonceEntity, X402PaymentEffectEntity];
