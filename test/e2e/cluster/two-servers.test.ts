import { expect } from "chai";
import { SimpleMerkleTree } from "@openzeppelin/merkle-tree";
import { spawn, type ChildProcess } from "node:child_process";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { parseEventLogs, type Address, type Hex, type PublicClient } from "viem";
import { In, type DataSource } from "typeorm";
import { DEV_USDC } from "../../../src/chain/artifacts.js";
import { publicClientFor, viemChain } from "../../../src/chain/chain-runtime.js";
import { NETWORKS } from "../../../src/chain/networks.js";
import { openDataSource } from "../../../src/platform/db/data-source.js";
import { ProofAnchorEntity, ProofRecordEntity } from "../../../src/proof/proof-record.entity.js";
import { X402PaymentEntity } from "../../../src/x402/payment.entity.js";
import { bearer, registerAgent, type RegisteredAgent } from "../../fixtures/agents.js";
import { b64, signV2Payment, type Buyer } from "../../fixtures/buyer.js";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";
import { payingFetch } from "../../fixtures/sku-calls.js";
import { testDatabaseConfig, testDatabaseEnv } from "../../fixtures/test-database.js";
import type { TestServer } from "../../fixtures/test-server.js";

// Issue 10, required item 1: two `svc serve` processes and one `svc worker` process on ONE database and
// ONE dev chain (the second server and the worker join the first server's anvil with DEV_CHAIN_JOIN_URL).
// Paid calls (real x402 payments signed by real buyer keys), async jobs and marketplace escrow flows go
// to both servers at once, including the same payment to both; then the chain and the books prove that
// every payment settled once, every escrow was funded and released once, the payer rate limit is one
// budget across the servers, the settlement key's nonces never collided, and `svc ledger check` is clean.

type Json = Record<string, any>;
const TSX = "node_modules/.bin/tsx";
const OPERATOR = "operator-key-for-cluster-tests-0123";
const BURST = 5;
const TRUST_BADGE = 10_000n; // agent.trust-badge, $0.01
const PREHIRE = 250_000n; // agent.prehire-check (async), $0.25

interface Child {
  child: ChildProcess;
  out: () => string;
}

function spawnSvc(args: string[], env: Record<string, string>, ready: RegExp): Promise<Child & { match: RegExpExecArray }> {
  const { DATABASE_URL: _ignored, ...rest } = process.env;
  const child = spawn(TSX, ["src/main.ts", ...args], {
    env: { ...rest, LOG_LEVEL: "info", ...testDatabaseEnv(), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.on("data", (d: Buffer) => (out += d));
  child.stderr!.on("data", (d: Buffer) => (out += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`svc ${args.join(" ")} not ready:\n${out}`)), 90_000);
    const check = () => {
      const match = ready.exec(out);
      if (match) {
        clearTimeout(timer);
        child.stdout!.off("data", check);
        resolve({ child, out: () => out, match });
      }
    };
    child.stdout!.on("data", check);
    child.once("exit", (code) => reject(new Error(`svc ${args.join(" ")} exited early (${code}):\n${out}`)));
  });
}

async function stop(c: Child | undefined): Promise<void> {
  if (!c || c.child.exitCode !== null) return;
  const exited = new Promise((resolve) => c.child.once("exit", resolve));
  c.child.kill("SIGTERM");
  await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
  if (c.child.exitCode === null) c.child.kill("SIGKILL");
}

describe("a cluster: two svc serve processes and a svc worker on one database and one chain", function () {
  this.timeout(300_000);
  const serverEnv = {
    PORT: "0",
    HOST: "127.0.0.1",
    DEV_CHAIN_PERSIST: "false",
    OPERATOR_API_KEY: OPERATOR,
    // Async jobs run in the worker process only.
    WORKER_CONCURRENCY: "0",
    // One budget per payer: BURST calls, then one call a minute.
    PAYER_RATE_LIMIT_PER_MINUTE: "1",
    PAYER_RATE_LIMIT_BURST: String(BURST),
    // Both servers anchor the proof rail, in small batches: each batch must be anchored once.
    ANCHOR_BATCH_SIZE: "16",
    ANCHOR_MAX_WAIT_SECONDS: "1",
    ANCHOR_POLL_MS: "300",
  };
  let a: Child & { url: string; rpc: string };
  let b: Child & { url: string };
  let worker: Child;
  let ds: DataSource;
  let client: PublicClient;
  let earlierAnchors = new Set<string>();
  const network = NETWORKS["base-sepolia"];

  before(async () => {
    const first = await spawnSvc(["serve"], serverEnv, /"url":"(http:[^"]+)".*"devChain":"(http:[^"]+)"/);
    a = { ...first, url: first.match[1]!, rpc: first.match[2]! };
    const [second, w] = await Promise.all([
      spawnSvc(["serve"], { ...serverEnv, DEV_CHAIN_JOIN_URL: a.rpc }, /"url":"(http:[^"]+)"/),
      spawnSvc(["worker"], { SVC_URL: a.url, DEV_CHAIN_JOIN_URL: a.rpc, WORKER_CONCURRENCY: "4" }, /svc worker running/),
    ]);
    b = { ...second, url: second.match[1]! };
    worker = w;
    ds = await openDataSource(testDatabaseConfig());
    client = publicClientFor(viemChain(network, a.rpc), a.rpc, true);
    // Suites that ran earlier in this run anchored on their own chains: only this cluster's anchors are checked.
    earlierAnchors = new Set((await ds.manager.find(ProofAnchorEntity)).map((x) => x.anchorId));
  });

  after(async () => {
    await Promise.all([stop(b), stop(worker)]);
    await stop(a);
    await ds?.destroy();
  });

  const errorsOf = (c: Child | undefined) => (c?.out() ?? "").split("\n").filter((l) => /"level":(40|50|60)/.test(l)).slice(-6).join("\n");
  const logs = () => `--- server A errors\n${errorsOf(a)}\n--- server B errors\n${errorsOf(b)}\n--- server A\n${a?.out().slice(-3000)}\n--- server B\n${b?.out().slice(-3000)}\n--- worker\n${worker?.out().slice(-2000)}`;
  const servers = () => [a.url, b.url];
  const as = (url: string) => ({ url }) as TestServer;
  const balanceOf = (address: Address) => client.readContract({ address: network.usdcAddress, abi: DEV_USDC.abi, functionName: "balanceOf", args: [address] }) as Promise<bigint>;

  async function newBuyer(url: string, usd = 5): Promise<Buyer> {
    const account = privateKeyToAccount(generatePrivateKey());
    const res = await fetch(`${url}/v1/dev/faucet`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ address: account.address, amount_usd: usd }) });
    expect(res.status, await res.clone().text()).to.equal(200);
    return { account, address: account.address };
  }

  const post = async (url: string, path: string, body: unknown, headers: Record<string, string>) => {
    const res = await fetch(`${url}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const paidCall = async (url: string, buyer: Buyer, skuId: string, body: unknown) => {
    const res = await payingFetch(buyer)(`${url}/v1/services/${skuId}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Json };
  };

  it("the second server and the worker joined the first server's chain; both servers answer", async () => {
    for (const url of servers()) {
      const health = (await (await fetch(`${url}/v1/health`)).json()) as Json;
      expect(health.chain?.rpc_url, logs()).to.equal(a.rpc);
    }
    expect(worker.out()).to.contain(a.rpc);
  });

  it("settles concurrent paid calls sent to both servers (and the same payment sent to both) exactly once on-chain", async () => {
    const buyers = await Promise.all(Array.from({ length: 16 }, (_, i) => newBuyer(servers()[i % 2]!)));
    const twin = await newBuyer(a.url);
    const asyncBuyer = await newBuyer(b.url);
    const before = new Map<string, bigint>();
    for (const x of [...buyers, twin, asyncBuyer]) before.set(x.address, await balanceOf(x.address));
    const fromBlock = await client.getBlockNumber();

    // The same signed payment, twice to each server at once.
    const ch = JSON.parse(Buffer.from((await fetch(`${a.url}/v1/services/agent.trust-badge`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ subject: twin.address }) })).headers.get("payment-required")!, "base64").toString());
    const header = b64(await signV2Payment(twin, ch.accepts[0]));
    const twinCalls = [a.url, b.url, a.url, b.url].map((url) =>
      fetch(`${url}/v1/services/agent.trust-badge`, { method: "POST", headers: { "content-type": "application/json", "payment-signature": header }, body: JSON.stringify({ subject: twin.address }) }).then(async (r) => ({ status: r.status, body: (await r.json()) as Json })),
    );
    // Sixteen buyers, four calls each (under the burst), alternating servers; and two async jobs for the worker.
    const calls = buyers.flatMap((buyer, i) => Array.from({ length: 4 }, (_, j) => paidCall(servers()[(i + j) % 2]!, buyer, "agent.trust-badge", { subject: buyer.address })));
    const jobs = [a.url, b.url].map((url) => paidCall(url, asyncBuyer, "agent.prehire-check", { subject: asyncBuyer.address }));
    const [twins, results, accepted] = await Promise.all([Promise.all(twinCalls), Promise.all(calls), Promise.all(jobs)]);

    expect(results.filter((r) => r.status !== 200).map((r) => r.body), logs()).to.deep.equal([]);
    expect(twins.map((r) => r.status), JSON.stringify(twins.map((t) => t.body))).to.deep.equal([200, 200, 200, 200]);
    expect(new Set(twins.map((t) => JSON.stringify(t.body))).size, "every copy gets the one stored response").to.equal(1);
    expect(accepted.map((r) => r.status)).to.deep.equal([200, 200]);

    // The worker process delivers both async jobs.
    for (const job of accepted) {
      let result: Json = {};
      for (let i = 0; i < 300 && result.status !== "delivered"; i++) {
        await new Promise((r) => setTimeout(r, 100));
        result = (await (await fetch(`${b.url}${job.body.poll_url}`)).json()) as Json;
      }
      expect(result.status, logs()).to.equal("delivered");
    }

    // On-chain: each buyer paid exactly for its calls; each authorization was used once.
    for (const buyer of buyers) expect(await balanceOf(buyer.address)).to.equal(before.get(buyer.address)! - 4n * TRUST_BADGE);
    expect(await balanceOf(twin.address)).to.equal(before.get(twin.address)! - TRUST_BADGE);
    expect(await balanceOf(asyncBuyer.address)).to.equal(before.get(asyncBuyer.address)! - 2n * PREHIRE);
    const payers = new Set([...buyers, twin, asyncBuyer].map((x) => x.address.toLowerCase()));
    const logsSince = await client.getLogs({ address: network.usdcAddress, fromBlock, toBlock: "latest" });
    const ours = parseEventLogs({ abi: DEV_USDC.abi, logs: logsSince, eventName: "AuthorizationUsed" }).filter((l) => payers.has(String((l.args as Json).authorizer).toLowerCase()));
    expect(ours.length).to.equal(buyers.length * 4 + 1 + 2);
    expect(new Set(ours.map((l) => `${(l.args as Json).authorizer}:${(l.args as Json).nonce}`)).size).to.equal(ours.length);
    const rows = await ds.manager.findBy(X402PaymentEntity, { payer: twin.address });
    expect(rows.map((r) => r.state)).to.deep.equal(["settled"]);
    await expectLedgerConsistent(ds);
  });

  it("refuses the (BURST+1)-th call of a payer whichever server it reaches: one budget across the cluster", async () => {
    const buyer = await newBuyer(b.url);
    const before = await balanceOf(buyer.address);
    const results = await Promise.all(Array.from({ length: BURST + 3 }, (_, i) => paidCall(servers()[i % 2]!, buyer, "agent.trust-badge", { subject: buyer.address })));
    expect(results.filter((r) => r.status === 200)).to.have.length(BURST);
    const refused = results.filter((r) => r.status === 429);
    expect(refused).to.have.length(3);
    for (const r of refused) expect(r.body.error.code).to.equal("rate_limited");
    expect(await balanceOf(buyer.address)).to.equal(before - BigInt(BURST) * TRUST_BADGE);
  });

  it("funds and releases marketplace escrows once with requests, accepts, completes and payout releases sent to both servers", async () => {
    const operator = bearer(OPERATOR);
    const flows = await Promise.all(
      Array.from({ length: 4 }, async (_, i) => {
        const [here, there] = i % 2 ? [a.url, b.url] : [b.url, a.url];
        const requester = await registerAgent(as(here));
        const wallet = privateKeyToAccount(generatePrivateKey()).address;
        const provider: RegisteredAgent = await registerAgent(as(there), { evm_address: wallet });
        const created = await post(here, "/a2a/requests", { capability_id: "research", task_description: "summarize the x402 spec", budget_usd: 0.05 }, { ...bearer(requester.api_key), "x-402-payment": requester.note });
        expect(created.status, `${JSON.stringify(created.body)}\n${logs()}`).to.equal(201);
        const bid = await post(there, `/a2a/requests/${created.body.request_id}/bids`, { capability_id: "research", agent_name: provider.name, display_name: "offer", price_usd: 0.03 }, bearer(provider.api_key));
        expect(bid.status, `${JSON.stringify(bid.body)}\n${logs()}`).to.equal(201);
        // The requester accepts on both servers at once: one job.
        const accepts = await Promise.all([here, there, here, there].map((url) => post(url, `/a2a/bids/${bid.body.bid_id}/accept`, {}, bearer(requester.api_key))));
        const won = accepts.filter((r) => r.status === 200);
        expect(won, JSON.stringify(accepts.map((x) => x.body))).to.have.length(1);
        expect(accepts.filter((r) => r.status === 409), `${JSON.stringify(accepts)}\n${logs()}`).to.have.length(3);
        const jid = won[0]!.body.job_id;
        const completes = await Promise.all([there, here, there].map((url) => post(url, `/a2a/jobs/${jid}/complete`, { result_summary: "the spec in 5 bullets" }, bearer(provider.api_key))));
        expect(completes.filter((r) => r.status === 200), `${JSON.stringify(completes)}\n${logs()}`).to.have.length(1);
        return { jid, wallet, net: completes.find((r) => r.status === 200)!.body.payout.net_usd as number };
      }),
    );
    const pending = (await (await fetch(`${a.url}/v1/admin/payouts?state=pending`, { headers: operator })).json()) as Json;
    // The operator releases every payout on both servers at once: each is paid once, in USDC.
    const releases = await Promise.all(
      flows.flatMap((f) => {
        const payout = pending.payouts.find((p: Json) => p.job_id === f.jid);
        expect(payout, JSON.stringify(pending)).to.not.equal(undefined);
        return servers().map((url) => post(url, `/v1/admin/payouts/${payout.payout_id}/release`, {}, operator));
      }),
    );
    // A concurrent duplicate is told the transfer is in flight (409 payout_in_progress); a retry gets the stored transfer.
    expect(releases.filter((r) => r.status !== 200 && r.body.error?.code !== "payout_in_progress").map((r) => r.body), logs()).to.deep.equal([]);
    for (let i = 0; i < flows.length; i++) {
      const pair = [releases[2 * i]!, releases[2 * i + 1]!];
      expect(pair.filter((r) => r.status === 200).length, "at least one release answers").to.be.at.least(1);
      const first = pair.find((r) => r.status === 200)!.body.payout;
      expect(first.state).to.equal("released");
      for (const url of servers()) {
        const again = await post(url, `/v1/admin/payouts/${first.payout_id}/release`, {}, operator);
        expect(again.status, JSON.stringify(again.body)).to.equal(200);
        expect(again.body.payout.tx_hash).to.equal(first.tx_hash);
      }
      expect(await balanceOf(flows[i]!.wallet)).to.equal(BigInt(Math.round(flows[i]!.net * 1e6))); // paid once
    }
    await expectLedgerConsistent(ds);
  });

  it("anchors each proof batch once although both servers anchor, and `svc ledger check` passes", async () => {
    // Wait until every record so far is anchored (both servers poll every 300 ms, batches wait at most 1 s).
    const earlier = earlierAnchors.size ? await ds.manager.count(ProofRecordEntity, { where: { anchorId: In([...earlierAnchors]) } }) : 0;
    const target = (await ds.manager.count(ProofRecordEntity)) - earlier;
    let anchored: ProofAnchorEntity[] = [];
    for (let i = 0; i < 200; i++) {
      anchored = (await ds.manager.findBy(ProofAnchorEntity, { state: "anchored" })).filter((x) => !earlierAnchors.has(x.anchorId));
      const covered = anchored.reduce((s, x) => s + x.leafCount, 0);
      if (covered >= target) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    // Every record is in at most one anchor (one column), and each anchor's root is the Merkle root of
    // exactly the records tagged with it, carried by its own transaction.
    for (const anchor of anchored) {
      const leaves = await ds.manager.find(ProofRecordEntity, { where: { anchorId: anchor.anchorId }, order: { sequence: "ASC" } });
      expect(leaves.length).to.equal(anchor.leafCount);
      expect(SimpleMerkleTree.of(leaves.map((r) => `0x${r.recordSha256}`)).root).to.equal(anchor.root);
      expect((await client.getTransaction({ hash: anchor.txHash as Hex })).input).to.equal(anchor.root);
    }
    expect(new Set(anchored.map((x) => x.txHash as Hex)).size).to.equal(anchored.length);
    expect(anchored.reduce((s, x) => s + x.leafCount, 0)).to.be.at.least(target);

    const check = spawn(TSX, ["src/main.ts", "ledger", "check"], { env: { ...process.env, ...testDatabaseEnv(), LOG_LEVEL: "error" }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    check.stdout!.on("data", (d: Buffer) => (out += d));
    check.stderr!.on("data", (d: Buffer) => (out += d));
    const code = await new Promise<number | null>((resolve) => check.on("exit", resolve));
    expect(code, out).to.equal(0);
    expect(out).to.contain("ledger check: the journal balances");
  });
});
