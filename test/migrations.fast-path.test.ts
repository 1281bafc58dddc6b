import { cp, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { applyPendingMigrations, PRISMA_DIR } from "../src/db/migrations";
import { throwawayPGlite } from "../src/db/throwaway-pglite";
import * as schemaEngine from "../src/db/schema-engine";

// A pass-through: the real schema engine runs; the test only counts how often it is opened.
jest.mock("../src/db/schema-engine", () => {
  const actual = jest.requireActual<typeof import("../src/db/schema-engine")>("../src/db/schema-engine");
  return { ...actual, openSchemaEngine: jest.fn(actual.openSchemaEngine) };
});
const engineOpened = schemaEngine.openSchemaEngine as jest.MockedFunction<typeof schemaEngine.openSchemaEngine>;

describe("applying migrations at start", () => {
  let scratch: string;
  let pglite: PGlite;
  const apply = () =>
    applyPendingMigrations(
      new PrismaPGlite(pglite),
      async (text) => (await pglite.query<Record<string, unknown>>(text)).rows,
      scratch,
    );

  beforeEach(async () => {
    scratch = await mkdtemp(path.join(os.tmpdir(), "gw-prisma-"));
    await cp(PRISMA_DIR, scratch, { recursive: true });
    pglite = await throwawayPGlite();
    engineOpened.mockClear();
  });
  afterEach(async () => {
    await pglite.close();
    await rm(scratch, { recursive: true, force: true });
  });

  it("applies every migration to a new database, then loads no engine while nothing is pending", async () => {
    const first = await apply();
    expect(first.length).toBeGreaterThan(0);
    expect(engineOpened).toHaveBeenCalledTimes(1);
    expect(await apply()).toEqual([]);
    expect(engineOpened).toHaveBeenCalledTimes(1);
  });

  it("hands a new migration to the engine, which applies only that one", async () => {
    await apply();
    const name = "20991231000000_add_note_table";
    await mkdir(path.join(scratch, "migrations", name));
    await writeFile(path.join(scratch, "migrations", name, "migration.sql"), 'CREATE TABLE "note" ("id" TEXT);\n');
    expect(await apply()).toEqual([name]);
    expect(engineOpened).toHaveBeenCalledTimes(2);
    expect((await pglite.query("SELECT count(*)::int AS n FROM note")).rows).toEqual([{ n: 0 }]);
  });

  it("hands an edited migration (its checksum no longer recorded) to the engine", async () => {
    const [firstName] = await apply();
    const file = path.join(scratch, "migrations", firstName!, "migration.sql");
    await writeFile(file, "-- edited after it was applied\n", { flag: "a" });
    await apply().catch(() => []); // what the engine makes of it is its own rule
    expect(engineOpened).toHaveBeenCalledTimes(2);
  });

  it("hands a failed migration attempt to the engine, which refuses to go on", async () => {
    await apply();
    await pglite.query(
      "INSERT INTO _prisma_migrations (id, checksum, migration_name, started_at, applied_steps_count) VALUES ('x', 'x', '20991231000000_failed', now(), 0)",
    );
    await expect(apply()).rejects.toThrow();
    expect(engineOpened).toHaveBeenCalledTimes(2);
  });
});
