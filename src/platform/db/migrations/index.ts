import type { MigrationInterface } from "typeorm";

// Migrations in order. Files are named `{timestamp}-{kebab-name}.ts` and run on SQLite and MySQL/MariaDB.
export const MIGRATIONS: (new () => MigrationInterface)[] = [];
