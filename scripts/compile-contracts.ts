import fs from "node:fs";
import path from "node:path";
import { compileContracts, ARTIFACT_DIR } from "../src/chain/contract-compiler.js";

// Recompiles contracts/*.sol with the pinned solc-js and writes src/chain/artifacts/<Name>.json.
const artifacts = compileContracts();
for (const [name, artifact] of Object.entries(artifacts)) {
  const file = path.join(ARTIFACT_DIR, `${name}.json`);
  fs.writeFileSync(file, JSON.stringify(artifact, null, 2) + "\n");
  console.log(`wrote ${path.relative(process.cwd(), file)} (${artifact.deployedBytecode.length / 2 - 1} bytes deployed)`);
}
