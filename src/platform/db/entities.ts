import type { EntityList } from "./data-source.js";

// Every entity, listed explicitly (each domain adds its own array here as it gains tables).
export const ENTITIES: EntityList = [];
