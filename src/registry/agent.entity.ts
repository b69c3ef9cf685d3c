import { Column, Entity, Index, PrimaryColumn } from "typeorm";
import { TIMESTAMP } from "../platform/db/column-types.js";

// A registered agent. Secrets are never stored in clear: the API key as a SHA-256 digest (looked up
// by its public key id), the webhook signing secret encrypted with the server's key.
@Entity({ name: "agents" })
@Index("uq_agents_identity", ["identityNetwork", "identityRegistry", "identityAgentId"], { unique: true })
export class AgentEntity {
  @PrimaryColumn({ name: "agent_id", type: "varchar", length: 24 })
  agentId!: string;

  @Column({ name: "name", type: "varchar", length: 64 })
  name!: string;

  /** Lowercased name: names are unique case-insensitively. */
  @Index("uq_agents_name_key", { unique: true })
  @Column({ name: "name_key", type: "varchar", length: 64 })
  nameKey!: string;

  @Column({ name: "tier", type: "varchar", length: 16 })
  tier!: string;

  @Column({ name: "capabilities_json", type: "text" })
  capabilitiesJson!: string;

  @Index("ix_agents_evm_address")
  @Column({ name: "evm_address", type: "varchar", length: 42, nullable: true })
  evmAddress!: string | null;

  @Index("uq_agents_api_key_id", { unique: true })
  @Column({ name: "api_key_id", type: "varchar", length: 16 })
  apiKeyId!: string;

  @Column({ name: "api_key_hash", type: "varchar", length: 64 })
  apiKeyHash!: string;

  @Column({ name: "callback_url", type: "varchar", length: 2048, nullable: true })
  callbackUrl!: string | null;

  @Column({ name: "callback_secret_enc", type: "varchar", length: 256, nullable: true })
  callbackSecretEnc!: string | null;

  @Column({ name: "callback_events_json", type: "text", nullable: true })
  callbackEventsJson!: string | null;

  @Column({ name: "identity_network", type: "varchar", length: 32, nullable: true })
  identityNetwork!: string | null;

  @Column({ name: "identity_registry", type: "varchar", length: 42, nullable: true })
  identityRegistry!: string | null;

  @Column({ name: "identity_agent_id", type: "varchar", length: 78, nullable: true })
  identityAgentId!: string | null;

  /** Owner of the on-chain identity when it was linked (re-checked on-chain at use). */
  @Index("ix_agents_identity_owner")
  @Column({ name: "identity_owner", type: "varchar", length: 42, nullable: true })
  identityOwner!: string | null;

  @Column({ name: "create_time", ...TIMESTAMP })
  createTime!: Date;

  @Column({ name: "update_time", ...TIMESTAMP })
  updateTime!: Date;
}
