import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createMigration, diffMigrationsToSchema, PRISMA_DIR } from "../src/db/migrations";

describe("migrations", () => {
  it("agree with schema.prisma (run `npm run db:migrate -- <name>` when this fails)", async () => {
    const drift = await diffMigrationsToSchema();
    expect(drift).toBe("");
  });

  describe("in a scratch copy of prisma/", () => {
    let scratch: string;
    beforeEach(async () => {
      scratch = await mkdtemp(path.join(os.tmpdir(), "gw-prisma-"));
      await cp(PRISMA_DIR, scratch, { recursive: true });
    });
    afterEach(() => rm(scratch, { recursive: true, force: true }));

    it("reports drift when the schema gains a column the migrations lack, and a new migration closes it", async () => {
      const schemaPath = path.join(scratch, "schema.prisma");
      const schema = await readFile(schemaPath, "utf8");
      await writeFile(
        schemaPath,
        schema.replace(
          "  station      String?\n",
          '  station      String?\n  carrierNote  String? @map("carrier_note")\n',
        ),
      );

      const drift = await diffMigrationsToSchema(scratch);
      expect(drift).toMatch(/ALTER TABLE "status_event" ADD COLUMN\s+"carrier_note" TEXT/);

      const dir = await createMigration("add_carrier_note", scratch, new Date("2030-01-02T03:04:05Z"));
      expect(dir).toBe(path.join(scratch, "migrations", "20300102030405_add_carrier_note"));
      expect(await diffMigrationsToSchema(scratch)).toBe("");
    });
  });
});
