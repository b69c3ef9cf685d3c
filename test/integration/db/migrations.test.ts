import { expect } from "chai";
import { Column, Entity, PrimaryColumn } from "typeorm";
import { openDataSource, runMigrations, schemaDrift } from "../../../src/platform/db/data-source.js";
import { ENTITIES } from "../../../src/platform/db/entities.js";
import { MIGRATIONS } from "../../../src/platform/db/migrations/index.js";
import { testDatabaseConfig } from "../../fixtures/test-database.js";

// An entity no migration creates: proves the drift check can fail.
@Entity({ name: "drift_probe" })
class DriftProbeEntity {
  @PrimaryColumn({ name: "id", type: "varchar", length: 32 })
  id!: string;

  @Column({ name: "note", type: "varchar", length: 64 })
  note!: string;
}

describe(`migrations and schema drift (${process.env.DATABASE_URL ? "MySQL/MariaDB" : "SQLite"})`, () => {
  it("has run every migration, and running them again applies nothing", async () => {
    const ds = await openDataSource(testDatabaseConfig());
    try {
      expect(await runMigrations(ds)).to.deep.equal([]);
      const rows = (await ds.query("SELECT name FROM migrations")) as { name: string }[];
      expect(rows.map((r) => r.name).sort()).to.deep.equal(MIGRATIONS.map((m) => m.name).sort());
    } finally {
      await ds.destroy();
    }
  });

  it("finds no drift between the migrated schema and the entities", async () => {
    const ds = await openDataSource(testDatabaseConfig());
    try {
      expect(await schemaDrift(ds)).to.deep.equal([]);
    } finally {
      await ds.destroy();
    }
  });

  it("reports drift when an entity has no migration", async () => {
    const ds = await openDataSource(testDatabaseConfig(), [...(ENTITIES as Function[]), DriftProbeEntity]);
    try {
      const drift = await schemaDrift(ds);
      expect(drift.join("\n")).to.match(/CREATE TABLE [`"]drift_probe[`"]/);
    } finally {
      await ds.destroy();
    }
  });
});
