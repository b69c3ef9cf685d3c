import { spawn, type ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import { createTestClient, http, pad, publicActions, type Address } from "viem";
import type { Logger } from "../platform/log.js";
import type { NetworkInfo } from "./networks.js";
import { DEV_USDC, IDENTITY_REGISTRY, MULTICALL3, MULTICALL3_ADDRESS, SETTLEMENT_BATCHER } from "./artifacts.js";

// The embedded dev chain: anvil (from npm) on a free loopback port, mirroring Base Sepolia: its chain
// id, our EIP-3009 token at Base Sepolia's USDC address with USDC's EIP-712 domain, Multicall3 at
// its standard address, and a minimal ERC-8004 Identity Registry at the ERC-8004 testnet address. Off-the-shelf x402 clients pay it unchanged; its money is worthless elsewhere.

export interface DevChain {
  rpcUrl: string;
  stop(): Promise<void>;
}

export interface DevChainOptions {
  network: NetworkInfo;
  /** The token's minter (the faucet account). */
  minter: Address;
  /** Where the ERC-8004 Identity Registry is placed. */
  identityRegistry: Address;
  /** Where the SettlementBatcher contract is placed (batched settlement); none when unset. */
  settlementBatcher?: Address;
  /** File anvil loads its state from and dumps it to, so the chain survives restarts; none when unset. */
  stateFile?: string;
  log: Logger;
}

/** anvil from its npm binary package (linux x64 here), or ANVIL_BINARY on other platforms. */
function anvilBinary(): string {
  if (process.env.ANVIL_BINARY) return process.env.ANVIL_BINARY;
  const require = createRequire(import.meta.url);
  const pkg = `@foundry-rs/anvil-${process.platform === "win32" ? "win32" : process.platform}-${process.arch === "x64" ? "amd64" : process.arch}`;
  return path.join(path.dirname(require.resolve(`${pkg}/package.json`)), "bin", process.platform === "win32" ? "anvil.exe" : "anvil");
}

async function waitForListening(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`anvil did not start:\n${out}`)), 15_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /Listening on [\d.]+:(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        child.stdout!.off("data", onData);
        child.stdout!.resume(); // keep draining so anvil never blocks on a full pipe
        resolve(Number(m[1]));
      }
    };
    child.stdout!.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`anvil exited with ${code}:\n${out}`));
    });
  });
}

/** Places the dev chain's contracts (token, Multicall3, identity registry, batcher) on the anvil at `rpcUrl`. */
export async function placeDevContracts(rpcUrl: string, opts: Omit<DevChainOptions, "stateFile" | "log">): Promise<void> {
  const client = createTestClient({ mode: "anvil", transport: http(rpcUrl) }).extend(publicActions);
  await client.setCode({ address: opts.network.usdcAddress, bytecode: DEV_USDC.deployedBytecode });
  await client.setStorageAt({ address: opts.network.usdcAddress, index: 0, value: pad(opts.minter) });
  await client.setCode({ address: MULTICALL3_ADDRESS, bytecode: MULTICALL3.deployedBytecode });
  await client.setCode({ address: opts.identityRegistry, bytecode: IDENTITY_REGISTRY.deployedBytecode });
  if (opts.settlementBatcher) await client.setCode({ address: opts.settlementBatcher, bytecode: SETTLEMENT_BATCHER.deployedBytecode });
}

/**
 * Joining a dev chain at `rpcUrl`: refuses a chain whose id is not the mirrored network's, and places the
 * contracts when the token is missing (a bare anvil, e.g. docker-compose's `chain` service).
 */
export async function ensureDevContracts(rpcUrl: string, opts: Omit<DevChainOptions, "stateFile">): Promise<void> {
  const client = createTestClient({ mode: "anvil", transport: http(rpcUrl) }).extend(publicActions);
  const chainId = await client.getChainId();
  if (chainId !== opts.network.chainId) throw new Error(`the dev chain at ${rpcUrl} has chain id ${chainId}; start anvil with --chain-id ${opts.network.chainId}`);
  const code = await client.getCode({ address: opts.network.usdcAddress });
  if (code && code !== "0x") return;
  await placeDevContracts(rpcUrl, opts);
  opts.log.info({ rpcUrl, chainId, usdc: opts.network.usdcAddress }, "dev contracts placed on the joined chain");
}

export async function startDevChain(opts: DevChainOptions): Promise<DevChain> {
  const args = ["--host", "127.0.0.1", "--port", "0", "--chain-id", String(opts.network.chainId)];
  if (opts.stateFile) args.push("--state", opts.stateFile, "--state-interval", "5");
  const child = spawn(anvilBinary(), args, { stdio: ["ignore", "pipe", "pipe"] });
  child.stderr!.on("data", (d: Buffer) => opts.log.warn({ anvil: d.toString().trim() }, "dev chain stderr"));
  const port = await waitForListening(child);
  const rpcUrl = `http://127.0.0.1:${port}`;

  await placeDevContracts(rpcUrl, opts);
  opts.log.info({ rpcUrl, chainId: opts.network.chainId, usdc: opts.network.usdcAddress }, "dev chain started");

  return {
    rpcUrl,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM"); // anvil dumps --state on a clean exit
      const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
