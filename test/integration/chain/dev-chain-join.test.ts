import { expect } from "chai";
import { spawn, type ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import { loadConfig } from "../../../src/config.js";
import { createLogger } from "../../../src/platform/log.js";
import { startChain } from "../../../src/chain/chain-runtime.js";
import { DEV_USDC } from "../../../src/chain/artifacts.js";

// DEV_CHAIN_JOIN_URL pointing at a bare anvil (docker-compose's `chain` service): the joining process
// places the dev contracts itself, and refuses an anvil with another chain id.

function anvilPath(): string {
  if (process.env.ANVIL_BINARY) return process.env.ANVIL_BINARY;
  const require = createRequire(import.meta.url);
  return path.join(path.dirname(require.resolve("@foundry-rs/anvil-linux-amd64/package.json")), "bin", "anvil");
}

async function bareAnvil(chainId: number): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(anvilPath(), ["--host", "127.0.0.1", "--port", "0", "--chain-id", String(chainId)], { stdio: ["ignore", "pipe", "ignore"] });
  const port = await new Promise<number>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /Listening on [\d.]+:(\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once("exit", (code) => reject(new Error(`anvil exited ${code}: ${out}`)));
  });
  child.stdout!.resume();
  return { url: `http://127.0.0.1:${port}`, child };
}

describe("joining a bare anvil as the dev chain (DEV_CHAIN_JOIN_URL)", function () {
  this.timeout(60_000);
  const children: ChildProcess[] = [];
  after(() => children.forEach((c) => c.kill("SIGKILL")));

  it("places the token and the other dev contracts, with the faucet as the token's minter; a second joiner finds them in place", async () => {
    const anvil = await bareAnvil(84532);
    children.push(anvil.child);
    const config = loadConfig({ DEV_CHAIN_JOIN_URL: anvil.url, DEV_CHAIN_PERSIST: "false" });
    const chain = await startChain(config, createLogger("silent"), config.devChainJoinUrl);
    const code = await chain.publicClient.getCode({ address: chain.network.usdcAddress });
    expect(code).to.match(/^0x[0-9a-f]{100,}/);
    const minter = (await chain.publicClient.readContract({ address: chain.network.usdcAddress, abi: DEV_USDC.abi, functionName: "minter" })) as string;
    expect(minter.toLowerCase()).to.equal(chain.faucetAccount!.address.toLowerCase());
    // A second process joining the same chain finds the contracts in place.
    const again = await startChain(config, createLogger("silent"), config.devChainJoinUrl);
    expect(again.rpcUrl).to.equal(anvil.url);
    await chain.close();
  });

  it("refuses an anvil whose chain id is not the mirrored network's", async () => {
    const anvil = await bareAnvil(31337);
    children.push(anvil.child);
    const config = loadConfig({ DEV_CHAIN_JOIN_URL: anvil.url, DEV_CHAIN_PERSIST: "false" });
    const err = await startChain(config, createLogger("silent"), config.devChainJoinUrl).catch((e: Error) => e);
    expect(err).to.be.instanceOf(Error);
    expect((err as Error).message).to.contain("--chain-id 84532");
  });
});
