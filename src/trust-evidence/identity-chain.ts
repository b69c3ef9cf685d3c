import { BaseError, ContractFunctionRevertedError, getAddress, type Address, type Hex } from "viem";
import type { ChainRuntime } from "../chain/chain-runtime.js";
import { IDENTITY_REGISTRY } from "../chain/artifacts.js";

// Reads of the ERC-8004 Identity Registry this service links identities from: owner, agent wallet and
// agentURI of a token. A token that does not exist (ownerOf reverts) reads as undefined; any other
// failure (the RPC is down) throws, so a paid call fails uncharged instead of reporting a false fact.

export interface IdentityRecord {
  owner: Address;
  agentWallet: Address;
  agentUri: string;
}

export interface IdentityChain {
  /** CAIP-2 network of the registry (`eip155:84532`). */
  readonly network: string;
  readonly registry: Address;
  /** `eip155:<chainId>:<registry>`, the ERC-8004 `agentRegistry` form. */
  readonly agentRegistry: string;
  read(tokenId: bigint): Promise<IdentityRecord | undefined>;
}

const reverted = (err: unknown) => err instanceof BaseError && err.walk((e) => e instanceof ContractFunctionRevertedError) !== null;

export function identityChain(chain: ChainRuntime, registry: Address): IdentityChain {
  const address = getAddress(registry);
  const read = (functionName: string, args: unknown[]) => chain.publicClient.readContract({ address, abi: IDENTITY_REGISTRY.abi, functionName, args });
  return {
    network: chain.network.caip2,
    registry: address,
    agentRegistry: `${chain.network.caip2}:${address}`,
    async read(tokenId) {
      let owner: Address;
      try {
        owner = getAddress((await read("ownerOf", [tokenId])) as Address);
      } catch (err) {
        if (reverted(err)) return undefined;
        throw err;
      }
      const [meta, uri] = await Promise.all([read("getMetadata", [tokenId, "agentWallet"]) as Promise<Hex>, read("tokenURI", [tokenId]) as Promise<string>]);
      // Packed (20 bytes) or ABI-encoded (32 bytes) address, as registries differ; unset means the owner.
      const agentWallet = meta && meta.length >= 42 ? getAddress(`0x${meta.slice(-40)}`) : owner;
      return { owner, agentWallet, agentUri: uri };
    },
  };
}
