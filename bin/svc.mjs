#!/usr/bin/env node
// Entry point for `npx svc ...`: runs the TypeScript CLI through tsx.
import { register } from "tsx/esm/api";
register();
await import("../src/main.ts");
