import { getAddress, recoverTypedDataAddress, type Address, type Hex } from "viem";
import { In, IsNull, Not, type EntityManager } from "typeorm";
import type { ChainRuntime } from "../chain/chain-runtime.js";
import { IDENTITY_REGISTRY } from "../chain/artifacts.js";
import { AgentEntity } from "./agent.entity.js";

// ERC-8004 onboarding. An agent links an on-chain identity by a signed EIP-712 statement from the
// identity's owner or its `agentWallet`:
//   domain  { name: "svc identity link", version: "1", chainId }
//   LinkIdentity(string agentId, uint256 onchainAgentId, address registry, uint256 deadline)
// The service reads the owner and agent wallet on-chain, at linking and again whenever a gated SKU is paid.

export const LINK_DOMAIN_NAME = "svc identity link";
export const LINK_TYPES = {
  LinkIdentity: [
    { name: "agentId", type: "string" },
    { name: "onchainAgentId", type: "uint256" },
    { name: "registry", type: "address" },
    { name: "deadline", type: "uint256" },
  ],
} as const;
/** A link statement may be valid at most this far ahead. */
export const MAX_LINK_DEADLINE_S = 24 * 3600;

export interface LinkStatement {
  agentId: string;
  onchainAgentId: bigint;
  registry: Address;
  deadline: bigint;
}

export class OnchainIdentity {
  constructor(private readonly chain: ChainRuntime, readonly registry: Address) {}

  /** The identity's owner and agent wallet, read on-chain; undefined when the id does not exist. */
  async controllers(onchainAgentId: bigint): Promise<{ owner: Address; wallet: Address } | undefined> {
    const read = (functionName: string, args: unknown[]) => this.chain.publicClient.readContract({ address: this.registry, abi: IDENTITY_REGISTRY.abi, functionName, args });
    try {
      const owner = (await read("ownerOf", [onchainAgentId])) as Address;
      const meta = (await read("getMetadata", [onchainAgentId, "agentWallet"])) as Hex;
      // Packed (20 bytes) or ABI-encoded (32 bytes) address, as registries differ.
      const wallet = meta && meta.length >= 42 ? getAddress(`0x${meta.slice(-40)}`) : owner;
      return { owner: getAddress(owner), wallet };
    } catch {
      return undefined;
    }
  }

  recoverLinkSigner(statement: LinkStatement, signature: Hex): Promise<Address> {
    return recoverTypedDataAddress({
      domain: { name: LINK_DOMAIN_NAME, version: "1", chainId: this.chain.network.chainId },
      types: LINK_TYPES,
      primaryType: "LinkIdentity",
      message: statement,
      signature,
    });
  }

  /** Whether `payer` controls (on-chain, now) the identity linked to some registered agent. */
  async isOnboarded(manager: EntityManager, payer: string): Promise<boolean> {
    const candidates = await manager.find(AgentEntity, {
      where: [
        { identityOwner: In([payer, payer.toLowerCase()]), identityAgentId: Not(IsNull()) },
        { evmAddress: In([payer, payer.toLowerCase()]), identityAgentId: Not(IsNull()) },
      ],
      take: 5,
    });
    for (const agent of candidates) {
      const c = await this.controllers(BigInt(agent.identityAgentId!));
      if (c && (c.owner === getAddress(payer) || c.wallet === getAddress(payer))) return true;
    }
    return false;
  }
}
