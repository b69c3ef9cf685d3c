// Networks a deployment can settle on. The embedded dev chain mirrors Base Sepolia so that
// off-the-shelf x402 clients pay it unchanged, and a signature made for it is worthless on mainnet.
export interface NetworkInfo {
  /** Key used in configuration (`CHAIN_NETWORK`). */
  key: "base" | "base-sepolia";
  /** CAIP-2 id used by x402 v2. */
  caip2: string;
  /** Network name used by x402 v1. */
  v1Name: string;
  chainId: number;
  /** USDC contract on this network. */
  usdcAddress: `0x${string}`;
  /** EIP-712 domain of that USDC contract. */
  usdcDomain: { name: string; version: string };
  testnet: boolean;
}

export const NETWORKS: Record<NetworkInfo["key"], NetworkInfo> = {
  base: {
    key: "base",
    caip2: "eip155:8453",
    v1Name: "base",
    chainId: 8453,
    usdcAddress: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
    usdcDomain: { name: "USD Coin", version: "2" },
    testnet: false,
  },
  "base-sepolia": {
    key: "base-sepolia",
    caip2: "eip155:84532",
    v1Name: "base-sepolia",
    chainId: 84532,
    usdcAddress: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
    usdcDomain: { name: "USDC", version: "2" },
    testnet: true,
  },
};
