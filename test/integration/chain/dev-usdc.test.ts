import { ERC8004_TESTNET_IDENTITY_REGISTRY } from "../../../src/config.js";
import fs from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { expect } from "chai";
import {
  BaseError,
  ContractFunctionRevertedError,
  bytesToHex,
  concat,
  createPublicClient,
  createWalletClient,
  decodeFunctionResult,
  domainSeparator,
  encodeAbiParameters,
  encodeFunctionData,
  hashDomain,
  hashTypedData,
  http,
  isAddressEqual,
  keccak256,
  numberToHex,
  pad,
  parseEventLogs,
  parseSignature,
  serializeSignature,
  toHex,
  type Address,
  type Chain,
  type Hex,
  type PublicClient,
  type TransactionReceipt,
} from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { baseSepolia } from "viem/chains";
import { DEV_USDC, MULTICALL3, MULTICALL3_ADDRESS } from "../../../src/chain/artifacts.js";
import { ARTIFACT_DIR, CONTRACTS, compileContracts, type Artifact } from "../../../src/chain/contract-compiler.js";
import { devAccounts, type DevAccounts } from "../../../src/chain/dev-accounts.js";
import { startDevChain, type DevChain } from "../../../src/chain/dev-chain.js";
import { NETWORKS } from "../../../src/chain/networks.js";
import { createLogger } from "../../../src/platform/log.js";

// DevUsdc on a real anvil dev chain, driven with real EIP-712 signatures: the parts of FiatTokenV2
// (EIP-3009) that x402 relies on, plus Multicall3 and the committed artifacts matching the sources.

const NETWORK = NETWORKS["base-sepolia"];
const USDC = NETWORK.usdcAddress;
const ABI = DEV_USDC.abi;
/** secp256k1 group order. */
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const DOMAIN = { name: "USDC", version: "2", chainId: 84532, verifyingContract: USDC } as const;

const AUTHORIZATION_FIELDS = [
  { name: "from", type: "address" },
  { name: "to", type: "address" },
  { name: "value", type: "uint256" },
  { name: "validAfter", type: "uint256" },
  { name: "validBefore", type: "uint256" },
  { name: "nonce", type: "bytes32" },
] as const;
const TRANSFER_TYPES = { TransferWithAuthorization: AUTHORIZATION_FIELDS } as const;
const RECEIVE_TYPES = { ReceiveWithAuthorization: AUTHORIZATION_FIELDS } as const;
const CANCEL_TYPES = {
  CancelAuthorization: [
    { name: "authorizer", type: "address" },
    { name: "nonce", type: "bytes32" },
  ],
} as const;

interface Authorization {
  from: Address;
  to: Address;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: Hex;
}

function newNonce(): Hex {
  return bytesToHex(randomBytes(32));
}

function authArgs(a: Authorization): readonly [Address, Address, bigint, bigint, bigint, Hex] {
  return [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce];
}

function vrs(signature: Hex): readonly [number, Hex, Hex] {
  const { r, s, v, yParity } = parseSignature(signature);
  return [Number(v ?? BigInt(yParity + 27)), r, s];
}

/** The same signature with s' = n - s and v flipped: recovers the same key, but is not low-s. */
function highSTwin(signature: Hex): Hex {
  const { r, s, yParity } = parseSignature(signature);
  const highS = SECP256K1_N - BigInt(s);
  return concat([r, numberToHex(highS, { size: 32 }), numberToHex(yParity === 0 ? 28 : 27, { size: 1 })]);
}

/** Runs a call expected to revert and returns the revert reason viem decoded. */
async function revertReason(call: Promise<unknown>): Promise<string> {
  try {
    await call;
  } catch (err) {
    expect(err).to.be.instanceOf(BaseError);
    const reverted = (err as BaseError).walk((e) => e instanceof ContractFunctionRevertedError);
    expect(reverted, (err as Error).message).to.be.instanceOf(ContractFunctionRevertedError);
    // viem also puts the reason into the message it shows.
    expect((err as Error).message).to.include((reverted as ContractFunctionRevertedError).reason);
    return (reverted as ContractFunctionRevertedError).reason ?? "";
  }
  return expect.fail("expected the call to revert");
}

describe("DevUsdc and Multicall3 on the anvil dev chain", function () {
  this.timeout(60_000);

  let chain: DevChain;
  let viemChain: Chain;
  let client: PublicClient;
  let dev: DevAccounts;

  before(async () => {
    dev = devAccounts();
    chain = await startDevChain({ network: NETWORK, minter: dev.faucet.address, identityRegistry: ERC8004_TESTNET_IDENTITY_REGISTRY, log: createLogger("silent") });
    viemChain = { ...baseSepolia, rpcUrls: { default: { http: [chain.rpcUrl] } } };
    client = createPublicClient({ chain: viemChain, transport: http(chain.rpcUrl), pollingInterval: 50 }) as PublicClient;
  });

  after(async () => {
    await chain?.stop();
  });

  function wallet(account: PrivateKeyAccount) {
    return createWalletClient({ account, chain: viemChain, transport: http(chain.rpcUrl) });
  }

  /** Simulates, sends and mines a DevUsdc call; fails the test if the transaction reverts. */
  async function send(account: PrivateKeyAccount, functionName: string, args: readonly unknown[]): Promise<TransactionReceipt> {
    const { request } = await client.simulateContract({ account, address: USDC, abi: ABI, functionName, args });
    const hash = await wallet(account).writeContract(request);
    const receipt = await client.waitForTransactionReceipt({ hash });
    expect(receipt.status).to.equal("success");
    return receipt;
  }

  function simulate(account: PrivateKeyAccount, functionName: string, args: readonly unknown[]): Promise<unknown> {
    return client.simulateContract({ account, address: USDC, abi: ABI, functionName, args });
  }

  async function balanceOf(owner: Address): Promise<bigint> {
    return (await client.readContract({ address: USDC, abi: ABI, functionName: "balanceOf", args: [owner] })) as bigint;
  }

  async function authorizationState(authorizer: Address, nonce: Hex): Promise<boolean> {
    return (await client.readContract({ address: USDC, abi: ABI, functionName: "authorizationState", args: [authorizer, nonce] })) as boolean;
  }

  async function chainTime(): Promise<bigint> {
    return (await client.getBlock()).timestamp;
  }

  /** A fresh key holding `amount` test USDC (minted by the faucet); it has no ETH and sends nothing. */
  async function fundedPayer(amount: bigint): Promise<PrivateKeyAccount> {
    const payer = privateKeyToAccount(generatePrivateKey());
    if (amount > 0n) await send(dev.faucet, "mint", [payer.address, amount]);
    return payer;
  }

  /** An authorization valid for the next hour of chain time. */
  async function authorization(from: Address, to: Address, value: bigint, overrides: Partial<Authorization> = {}): Promise<Authorization> {
    return { from, to, value, validAfter: 0n, validBefore: (await chainTime()) + 3600n, nonce: newNonce(), ...overrides };
  }

  function signTransfer(signer: PrivateKeyAccount, a: Authorization): Promise<Hex> {
    return signer.signTypedData({ domain: DOMAIN, types: TRANSFER_TYPES, primaryType: "TransferWithAuthorization", message: a });
  }

  function signReceive(signer: PrivateKeyAccount, a: Authorization): Promise<Hex> {
    return signer.signTypedData({ domain: DOMAIN, types: RECEIVE_TYPES, primaryType: "ReceiveWithAuthorization", message: a });
  }

  describe("artifacts and deployed code", () => {
    it("recompiles the Solidity sources to exactly the committed artifacts", function () {
      this.timeout(120_000);
      const compiled = compileContracts();
      expect(Object.keys(compiled).sort()).to.deep.equal([...CONTRACTS].sort());
      for (const name of CONTRACTS) {
        const committed = JSON.parse(fs.readFileSync(path.join(ARTIFACT_DIR, `${name}.json`), "utf8")) as Artifact;
        const fresh = compiled[name]!;
        expect(fresh.abi, `${name} abi`).to.deep.equal(committed.abi);
        expect(fresh.bytecode, `${name} bytecode`).to.equal(committed.bytecode);
        expect(fresh.deployedBytecode, `${name} deployedBytecode`).to.equal(committed.deployedBytecode);
        expect(fresh.deployedBytecode.length, `${name} deployedBytecode is not empty`).to.be.greaterThan(2);
      }
      // The modules the dev chain loads are those committed files.
      expect(DEV_USDC.deployedBytecode).to.equal(compiled.DevUsdc!.deployedBytecode);
      expect(MULTICALL3.deployedBytecode).to.equal(compiled.Multicall3!.deployedBytecode);
    });

    it("runs the artifacts' deployed bytecode at the USDC and Multicall3 addresses", async () => {
      expect((await client.getCode({ address: USDC }))?.toLowerCase()).to.equal(DEV_USDC.deployedBytecode.toLowerCase());
      expect((await client.getCode({ address: MULTICALL3_ADDRESS }))?.toLowerCase()).to.equal(MULTICALL3.deployedBytecode.toLowerCase());
    });

    it("runs on Base Sepolia's chain id at Base Sepolia's USDC address", async () => {
      expect(await client.getChainId()).to.equal(84532);
      expect(USDC).to.equal("0x036CbD53842c5426634e7929541eC2318f3dCF7e");
    });
  });

  describe("token metadata and EIP-712 domain", () => {
    it("is named USDC with symbol USDC, 6 decimals and version 2", async () => {
      const read = (functionName: string) => client.readContract({ address: USDC, abi: ABI, functionName });
      expect(await read("name")).to.equal("USDC");
      expect(await read("symbol")).to.equal("USDC");
      expect(await read("decimals")).to.equal(6);
      expect(await read("version")).to.equal("2");
    });

    it("has the EIP-712 domain separator of {USDC, 2, 84532, USDC address}", async () => {
      const onChain = await client.readContract({ address: USDC, abi: ABI, functionName: "DOMAIN_SEPARATOR" });
      const types = {
        EIP712Domain: [
          { name: "name", type: "string" },
          { name: "version", type: "string" },
          { name: "chainId", type: "uint256" },
          { name: "verifyingContract", type: "address" },
        ],
      } as const;
      expect(onChain).to.equal(hashDomain({ domain: { ...DOMAIN, chainId: BigInt(DOMAIN.chainId) }, types }));
      expect(onChain).to.equal(domainSeparator({ domain: DOMAIN }));
      // The same value computed by hand from the EIP-712 definition.
      const byHand = keccak256(
        encodeAbiParameters(
          [{ type: "bytes32" }, { type: "bytes32" }, { type: "bytes32" }, { type: "uint256" }, { type: "address" }],
          [
            keccak256(toHex("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)")),
            keccak256(toHex("USDC")),
            keccak256(toHex("2")),
            84532n,
            USDC,
          ],
        ),
      );
      expect(onChain).to.equal(byHand);
    });

    it("exposes FiatTokenV2's authorization typehashes", async () => {
      const read = (functionName: string) => client.readContract({ address: USDC, abi: ABI, functionName });
      expect(await read("TRANSFER_WITH_AUTHORIZATION_TYPEHASH")).to.equal(
        keccak256(toHex("TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)")),
      );
      expect(await read("RECEIVE_WITH_AUTHORIZATION_TYPEHASH")).to.equal(
        keccak256(toHex("ReceiveWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)")),
      );
      expect(await read("CANCEL_AUTHORIZATION_TYPEHASH")).to.equal(keccak256(toHex("CancelAuthorization(address authorizer,bytes32 nonce)")));
    });
  });

  describe("minting", () => {
    it("has the faucet account as its minter", async () => {
      expect(await client.readContract({ address: USDC, abi: ABI, functionName: "minter" })).to.equal(dev.faucet.address);
    });

    it("lets the minter mint, raising the balance and total supply and emitting Mint and Transfer", async () => {
      const to = privateKeyToAccount(generatePrivateKey()).address;
      const supplyBefore = (await client.readContract({ address: USDC, abi: ABI, functionName: "totalSupply" })) as bigint;
      const receipt = await send(dev.faucet, "mint", [to, 1_234_567n]);
      expect(await balanceOf(to)).to.equal(1_234_567n);
      expect(await client.readContract({ address: USDC, abi: ABI, functionName: "totalSupply" })).to.equal(supplyBefore + 1_234_567n);
      const events = parseEventLogs({ abi: ABI, logs: receipt.logs }).map((l) => [l.eventName, l.args]);
      expect(events).to.deep.equal([
        ["Mint", { minter: dev.faucet.address, to, amount: 1_234_567n }],
        ["Transfer", { from: "0x0000000000000000000000000000000000000000", to, value: 1_234_567n }],
      ]);
    });

    it("refuses to mint for any caller other than the minter", async () => {
      const to = privateKeyToAccount(generatePrivateKey()).address;
      for (const caller of [dev.facilitator, dev.treasury]) {
        expect(await revertReason(simulate(caller, "mint", [to, 1n]))).to.equal("FiatToken: caller is not a minter");
      }
      expect(await balanceOf(to)).to.equal(0n);
    });
  });

  describe("transferWithAuthorization", () => {
    it("moves the value with a (v,r,s) signature, emits Transfer and AuthorizationUsed, and marks the nonce used", async () => {
      const payer = await fundedPayer(5_000_000n);
      const payee = privateKeyToAccount(generatePrivateKey()).address;
      const auth = await authorization(payer.address, payee, 1_500_000n);
      expect(await authorizationState(payer.address, auth.nonce)).to.equal(false);

      const signature = await signTransfer(payer, auth);
      const receipt = await send(dev.facilitator, "transferWithAuthorization", [...authArgs(auth), ...vrs(signature)]);

      expect(await balanceOf(payer.address)).to.equal(3_500_000n);
      expect(await balanceOf(payee)).to.equal(1_500_000n);
      expect(await authorizationState(payer.address, auth.nonce)).to.equal(true);
      const events = parseEventLogs({ abi: ABI, logs: receipt.logs }).map((l) => [l.eventName, l.args]);
      expect(events).to.deep.equal([
        ["AuthorizationUsed", { authorizer: payer.address, nonce: auth.nonce }],
        ["Transfer", { from: payer.address, to: payee, value: 1_500_000n }],
      ]);
    });

    it("refuses to use the same authorization twice", async () => {
      const payer = await fundedPayer(5_000_000n);
      const auth = await authorization(payer.address, dev.treasury.address, 1_000_000n);
      const args = [...authArgs(auth), ...vrs(await signTransfer(payer, auth))];
      await send(dev.facilitator, "transferWithAuthorization", args);

      expect(await revertReason(simulate(dev.facilitator, "transferWithAuthorization", args))).to.equal(
        "FiatTokenV2: authorization is used or canceled",
      );
      expect(await balanceOf(payer.address)).to.equal(4_000_000n);
    });

    it("moves the value with the bytes-signature overload too", async () => {
      const payer = await fundedPayer(2_000_000n);
      const payee = privateKeyToAccount(generatePrivateKey()).address;
      const auth = await authorization(payer.address, payee, 750_000n);
      const signature = await signTransfer(payer, auth);
      expect(signature.length).to.equal(2 + 65 * 2);

      const receipt = await send(dev.facilitator, "transferWithAuthorization", [...authArgs(auth), signature]);

      expect(await balanceOf(payer.address)).to.equal(1_250_000n);
      expect(await balanceOf(payee)).to.equal(750_000n);
      expect(await authorizationState(payer.address, auth.nonce)).to.equal(true);
      const names = parseEventLogs({ abi: ABI, logs: receipt.logs }).map((l) => l.eventName);
      expect(names).to.deep.equal(["AuthorizationUsed", "Transfer"]);
      // The signature is spent whichever overload carries it.
      expect(await revertReason(simulate(dev.facilitator, "transferWithAuthorization", [...authArgs(auth), ...vrs(signature)]))).to.equal(
        "FiatTokenV2: authorization is used or canceled",
      );
    });
  });

  describe("receiveWithAuthorization", () => {
    it("refuses a caller that is not the payee", async () => {
      const payer = await fundedPayer(1_000_000n);
      const auth = await authorization(payer.address, dev.treasury.address, 400_000n);
      const args = [...authArgs(auth), ...vrs(await signReceive(payer, auth))];

      expect(await revertReason(simulate(dev.facilitator, "receiveWithAuthorization", args))).to.equal("FiatTokenV2: caller must be the payee");
      expect(await authorizationState(payer.address, auth.nonce)).to.equal(false);
    });

    it("moves the value when the payee submits it", async () => {
      const payer = await fundedPayer(1_000_000n);
      const payeeBefore = await balanceOf(dev.treasury.address);
      const auth = await authorization(payer.address, dev.treasury.address, 400_000n);
      const receipt = await send(dev.treasury, "receiveWithAuthorization", [...authArgs(auth), ...vrs(await signReceive(payer, auth))]);

      expect(await balanceOf(payer.address)).to.equal(600_000n);
      expect(await balanceOf(dev.treasury.address)).to.equal(payeeBefore + 400_000n);
      expect(await authorizationState(payer.address, auth.nonce)).to.equal(true);
      const events = parseEventLogs({ abi: ABI, logs: receipt.logs }).map((l) => [l.eventName, l.args]);
      expect(events).to.deep.equal([
        ["AuthorizationUsed", { authorizer: payer.address, nonce: auth.nonce }],
        ["Transfer", { from: payer.address, to: dev.treasury.address, value: 400_000n }],
      ]);
    });

    it("does not accept a TransferWithAuthorization signature, nor the reverse", async () => {
      const payer = await fundedPayer(1_000_000n);
      const auth = await authorization(payer.address, dev.treasury.address, 100_000n);
      const transferSig = vrs(await signTransfer(payer, auth));
      const receiveSig = vrs(await signReceive(payer, auth));

      expect(await revertReason(simulate(dev.treasury, "receiveWithAuthorization", [...authArgs(auth), ...transferSig]))).to.equal(
        "FiatTokenV2: invalid signature",
      );
      expect(await revertReason(simulate(dev.facilitator, "transferWithAuthorization", [...authArgs(auth), ...receiveSig]))).to.equal(
        "FiatTokenV2: invalid signature",
      );
    });
  });

  describe("cancelAuthorization", () => {
    it("cancels an unused nonce, emitting AuthorizationCanceled, so a later transfer with it reverts", async () => {
      const payer = await fundedPayer(1_000_000n);
      const auth = await authorization(payer.address, dev.treasury.address, 300_000n);
      const transferArgs = [...authArgs(auth), ...vrs(await signTransfer(payer, auth))];
      const cancelSig = await payer.signTypedData({
        domain: DOMAIN,
        types: CANCEL_TYPES,
        primaryType: "CancelAuthorization",
        message: { authorizer: payer.address, nonce: auth.nonce },
      });

      const receipt = await send(dev.facilitator, "cancelAuthorization", [payer.address, auth.nonce, ...vrs(cancelSig)]);

      const events = parseEventLogs({ abi: ABI, logs: receipt.logs }).map((l) => [l.eventName, l.args]);
      expect(events).to.deep.equal([["AuthorizationCanceled", { authorizer: payer.address, nonce: auth.nonce }]]);
      expect(await authorizationState(payer.address, auth.nonce)).to.equal(true);
      expect(await revertReason(simulate(dev.facilitator, "transferWithAuthorization", transferArgs))).to.equal(
        "FiatTokenV2: authorization is used or canceled",
      );
      expect(await balanceOf(payer.address)).to.equal(1_000_000n);
    });

    it("refuses a cancellation signed by someone other than the authorizer", async () => {
      const payer = await fundedPayer(0n);
      const nonce = newNonce();
      const forged = await dev.facilitator.signTypedData({
        domain: DOMAIN,
        types: CANCEL_TYPES,
        primaryType: "CancelAuthorization",
        message: { authorizer: payer.address, nonce },
      });
      expect(await revertReason(simulate(dev.facilitator, "cancelAuthorization", [payer.address, nonce, forged]))).to.equal(
        "FiatTokenV2: invalid signature",
      );
      expect(await authorizationState(payer.address, nonce)).to.equal(false);
    });
  });

  describe("authorization checks", () => {
    it("refuses an authorization whose validBefore has passed", async () => {
      const payer = await fundedPayer(1_000_000n);
      const now = await chainTime();
      const auth = await authorization(payer.address, dev.treasury.address, 1n, { validBefore: now - 1n });
      const args = [...authArgs(auth), ...vrs(await signTransfer(payer, auth))];
      expect(await revertReason(simulate(dev.facilitator, "transferWithAuthorization", args))).to.equal("FiatTokenV2: authorization is expired");
    });

    it("refuses an authorization whose validAfter is still in the future", async () => {
      const payer = await fundedPayer(1_000_000n);
      const now = await chainTime();
      const auth = await authorization(payer.address, dev.treasury.address, 1n, { validAfter: now + 600n, validBefore: now + 3600n });
      const args = [...authArgs(auth), ...vrs(await signTransfer(payer, auth))];
      expect(await revertReason(simulate(dev.facilitator, "transferWithAuthorization", args))).to.equal(
        "FiatTokenV2: authorization is not yet valid",
      );
    });

    it("refuses a signature made by a key other than from", async () => {
      const payer = await fundedPayer(1_000_000n);
      const auth = await authorization(payer.address, dev.treasury.address, 1n);
      const stranger = privateKeyToAccount(generatePrivateKey());
      const args = [...authArgs(auth), ...vrs(await signTransfer(stranger, auth))];
      expect(await revertReason(simulate(dev.facilitator, "transferWithAuthorization", args))).to.equal("FiatTokenV2: invalid signature");
    });

    it("refuses a signature over different terms than the ones submitted", async () => {
      const payer = await fundedPayer(1_000_000n);
      const auth = await authorization(payer.address, dev.treasury.address, 1n);
      const signature = vrs(await signTransfer(payer, auth));
      const args = [...authArgs({ ...auth, value: 2n }), ...signature];
      expect(await revertReason(simulate(dev.facilitator, "transferWithAuthorization", args))).to.equal("FiatTokenV2: invalid signature");
    });

    it("refuses the high-s twin of a valid signature, though ecrecover maps it to the same signer", async () => {
      const payer = await fundedPayer(1_000_000n);
      const auth = await authorization(payer.address, dev.treasury.address, 1n);
      const signature = await signTransfer(payer, auth);
      const twin = highSTwin(signature);
      const [v, r, s] = vrs(twin);
      expect(BigInt(s) > SECP256K1_N / 2n).to.equal(true);

      // The twin is a genuine signature by the payer: the ecrecover precompile accepts it.
      const digest = hashTypedData({ domain: DOMAIN, types: TRANSFER_TYPES, primaryType: "TransferWithAuthorization", message: auth });
      const recovered = await client.call({ to: "0x0000000000000000000000000000000000000001", data: concat([digest, pad(toHex(v)), r, s]) });
      expect(recovered.data).to.equal(pad(payer.address.toLowerCase() as Hex));

      expect(await revertReason(simulate(dev.facilitator, "transferWithAuthorization", [...authArgs(auth), v, r, s]))).to.equal(
        "FiatTokenV2: invalid signature",
      );
      expect(await revertReason(simulate(dev.facilitator, "transferWithAuthorization", [...authArgs(auth), twin]))).to.equal(
        "FiatTokenV2: invalid signature",
      );
      // The original low-s signature still works.
      await send(dev.facilitator, "transferWithAuthorization", [...authArgs(auth), signature]);
      expect(await authorizationState(payer.address, auth.nonce)).to.equal(true);
    });

    it("refuses a v other than 27 or 28", async () => {
      const payer = await fundedPayer(1_000_000n);
      const auth = await authorization(payer.address, dev.treasury.address, 1n);
      const { r, s, yParity } = parseSignature(await signTransfer(payer, auth));
      const args = [...authArgs(auth), yParity, r, s];
      expect(await revertReason(simulate(dev.facilitator, "transferWithAuthorization", args))).to.equal("FiatTokenV2: invalid signature");
      // Sanity: viem's own serialization of the same signature is accepted.
      const ok = serializeSignature({ r, s, yParity });
      await send(dev.facilitator, "transferWithAuthorization", [...authArgs(auth), ok]);
    });

    it("refuses a transfer larger than the payer's balance", async () => {
      const payer = await fundedPayer(999_999n);
      const auth = await authorization(payer.address, dev.treasury.address, 1_000_000n);
      const args = [...authArgs(auth), ...vrs(await signTransfer(payer, auth))];
      expect(await revertReason(simulate(dev.facilitator, "transferWithAuthorization", args))).to.equal("ERC20: transfer amount exceeds balance");
      expect(await authorizationState(payer.address, auth.nonce)).to.equal(false);
    });
  });

  describe("Multicall3", () => {
    it("returns balanceOf and authorizationState results from one aggregate3 call", async () => {
      const payer = await fundedPayer(2_000_000n);
      const auth = await authorization(payer.address, dev.treasury.address, 500_000n);
      await send(dev.facilitator, "transferWithAuthorization", [...authArgs(auth), ...vrs(await signTransfer(payer, auth))]);
      const unusedNonce = newNonce();

      const calls = [
        { functionName: "balanceOf", args: [payer.address] },
        { functionName: "authorizationState", args: [payer.address, auth.nonce] },
        { functionName: "authorizationState", args: [payer.address, unusedNonce] },
      ] as const;
      const results = (await client.readContract({
        address: MULTICALL3_ADDRESS,
        abi: MULTICALL3.abi,
        functionName: "aggregate3",
        args: [calls.map((c) => ({ target: USDC, allowFailure: false, callData: encodeFunctionData({ abi: ABI, ...c }) }))],
      })) as readonly { success: boolean; returnData: Hex }[];

      expect(results.map((r) => r.success)).to.deep.equal([true, true, true]);
      const decoded = results.map((r, i) => decodeFunctionResult({ abi: ABI, functionName: calls[i]!.functionName, data: r.returnData }));
      expect(decoded).to.deep.equal([1_500_000n, true, false]);
    });

    it("reports a failing call without failing the batch when it allows failure", async () => {
      const results = (await client.readContract({
        address: MULTICALL3_ADDRESS,
        abi: MULTICALL3.abi,
        functionName: "aggregate3",
        args: [
          [
            // Multicall3 is not the minter, so this call reverts inside the batch.
            { target: USDC, allowFailure: true, callData: encodeFunctionData({ abi: ABI, functionName: "mint", args: [dev.treasury.address, 1n] }) },
            { target: USDC, allowFailure: false, callData: encodeFunctionData({ abi: ABI, functionName: "decimals" }) },
          ],
        ],
      })) as readonly { success: boolean; returnData: Hex }[];
      expect(results.map((r) => r.success)).to.deep.equal([false, true]);
      expect(decodeFunctionResult({ abi: ABI, functionName: "decimals", data: results[1]!.returnData })).to.equal(6);
    });

    it("serves viem's multicall helper at Base Sepolia's standard Multicall3 address", async () => {
      expect(isAddressEqual(baseSepolia.contracts.multicall3.address, MULTICALL3_ADDRESS)).to.equal(true);
      const [decimals, supply] = await client.multicall({
        contracts: [
          { address: USDC, abi: ABI, functionName: "decimals" },
          { address: USDC, abi: ABI, functionName: "totalSupply" },
        ],
        allowFailure: false,
      });
      expect(decimals).to.equal(6);
      expect(supply).to.be.a("bigint");
    });
  });
});
