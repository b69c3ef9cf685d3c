import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

// Compiles the repository's Solidity with solc-js (a dev dependency). Artifacts are committed; a test
// recompiles and compares, so what runs on the dev chain is exactly what the sources say.

const here = path.dirname(fileURLToPath(import.meta.url));
export const CONTRACT_DIR = path.resolve(here, "../../contracts");
export const ARTIFACT_DIR = path.resolve(here, "artifacts");
export const CONTRACTS = ["DevUsdc", "Multicall3", "IdentityRegistry", "SettlementBatcher"] as const;

export interface Artifact {
  contractName: string;
  compiler: string;
  abi: unknown[];
  bytecode: `0x${string}`;
  deployedBytecode: `0x${string}`;
}

const SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: "cancun",
  metadata: { bytecodeHash: "none", appendCBOR: false },
  outputSelection: { "*": { "*": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"] } },
};

export function compileContracts(): Record<string, Artifact> {
  const solc = createRequire(import.meta.url)("solc") as { compile(input: string): string; version(): string };
  const sources = Object.fromEntries(
    CONTRACTS.map((name) => [`${name}.sol`, { content: fs.readFileSync(path.join(CONTRACT_DIR, `${name}.sol`), "utf8") }]),
  );
  const output = JSON.parse(solc.compile(JSON.stringify({ language: "Solidity", sources, settings: SETTINGS }))) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts: Record<string, Record<string, { abi: unknown[]; evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }>>;
  };
  const errors = (output.errors ?? []).filter((e) => e.severity === "error");
  if (errors.length) throw new Error(errors.map((e) => e.formattedMessage).join("\n"));
  return Object.fromEntries(
    CONTRACTS.map((name) => {
      const c = output.contracts[`${name}.sol`]![name]!;
      return [
        name,
        {
          contractName: name,
          compiler: solc.version(),
          abi: c.abi,
          bytecode: `0x${c.evm.bytecode.object}`,
          deployedBytecode: `0x${c.evm.deployedBytecode.object}`,
        },
      ];
    }),
  );
}
