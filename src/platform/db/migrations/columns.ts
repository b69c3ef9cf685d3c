import type { TableColumnOptions } from "typeorm";
import { TIMESTAMP } from "../column-types.js";

// Column builders shared by the migrations, matching the entity conventions (column-types.ts).

export const ts = (name: string, nullable = false): TableColumnOptions => ({ name, ...TIMESTAMP, isNullable: nullable });
export const str = (name: string, length: number, nullable = false): TableColumnOptions => ({ name, type: "varchar", length: String(length), isNullable: nullable });
export const money = (name: string): TableColumnOptions => ({ name, type: "decimal", precision: 30, scale: 0 });
