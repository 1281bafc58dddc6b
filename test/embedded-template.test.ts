import { existsSync } from "node:fs";
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { loadBundledData } from "../src/composition/bundled-data";
import { openDatabase } from "../src/db/database";
import {
  copyEmbeddedTemplate,
  embeddedTemplateFingerprint,
  embeddedTemplatePath,
  ensureEmbeddedTemplate,
} from "../src/db/embedded-template";
import { readMigrationList } from "../src/db/migrations";
import { PRISMA_DIR } from "../src/paths";

describe("new embedded databases from the build's migrated template", () => {
  let scratch: string;
  let templates: string;
  beforeAll(async () => {
    scratch = await mkdtemp(path.join(os.tmpdir(), "gw-template-"));
    templates = path.join(scratch, "templates");
    await mkdir(templates);
    // What other builds may have left: another migrations' template, and a build of this one under way.
    await mkdir(path.join(templates, "0123456789abcdef"));
    await mkdir(path.join(templates, `${path.basename(embeddedTemplatePath(templates))}.999999`));
    expect(await ensureEmbeddedTemplate(loadBundledData, templates)).toBe(true);
  }, 60_000);
  afterAll(() => rm(scratch, { recursive: true, force: true }));

  it("is made once per set of migrations; other migrations' templates are removed, builds under way left alone", async () => {
    expect(await ensureEmbeddedTemplate(loadBundledData, templates)).toBe(false);
    const current = path.basename(embeddedTemplatePath(templates));
    expect((await readdir(templates)).sort()).toEqual([current, `${current}.999999`]);
  });

  it("keeps the template another maker finished first: a later maker removes only its own folder", async () => {
    const race = path.join(scratch, "race-templates");
    const current = path.basename(embeddedTemplatePath(templates));
    const later = ensureEmbeddedTemplate(loadBundledData, race);
    // Once the later maker is under way (its own folder exists), another one finishes first.
    const deadline = Date.now() + 30_000;
    const own = path.join(race, `${current}.${process.pid}`);
    while (!existsSync(own) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(existsSync(own)).toBe(true);
    await cp(embeddedTemplatePath(templates), path.join(race, current), { recursive: true });
    await writeFile(path.join(race, current, "finished-first"), "");

    expect(await later).toBe(true);
    expect((await readdir(race)).sort()).toEqual([current]);
    expect(existsSync(path.join(race, current, "finished-first"))).toBe(true);
  }, 60_000);

  it("is named by the migrations and the bundled data: a change to either names another", async () => {
    const prisma = path.join(scratch, "prisma-copy");
    await cp(PRISMA_DIR, prisma, { recursive: true });
    const original = embeddedTemplateFingerprint(prisma);
    expect(original).toBe(embeddedTemplateFingerprint());
    await writeFile(path.join(prisma, "data", "stations.sample.json"), "\n", { flag: "a" });
    const dataChanged = embeddedTemplateFingerprint(prisma);
    expect(dataChanged).not.toBe(original);
    await mkdir(path.join(prisma, "migrations", "20991231000000_more"));
    await writeFile(path.join(prisma, "migrations", "20991231000000_more", "migration.sql"), "SELECT 1;\n");
    expect(embeddedTemplateFingerprint(prisma)).not.toBe(dataChanged);
  });

  it("starts a new data folder migrated, without applying a migration, and reopens it as it is", async () => {
    const dataDir = path.join(scratch, "data-new");
    const database = await openDatabase({ kind: "pglite", dataDir, templateDir: templates });
    try {
      expect(database.createdMigrated).toBe(true);
      expect(database.appliedMigrations).toEqual([]);
      expect(await database.migrationsApplied()).toBe(true);
      // The bundled stations, as a first start loads them.
      const [stations] = await database.sql.query<{ n: number }>("SELECT count(*)::int AS n FROM station", []);
      expect(stations?.n).toBeGreaterThan(10);
      await database.sql.script("CREATE TABLE kept_by_the_folder (id int); INSERT INTO kept_by_the_folder VALUES (7)");
    } finally {
      await database.close();
    }
    const reopened = await openDatabase({ kind: "pglite", dataDir, templateDir: templates });
    try {
      expect(reopened.createdMigrated).toBe(false);
      expect(await reopened.sql.query("SELECT id FROM kept_by_the_folder", [])).toEqual([{ id: 7 }]);
    } finally {
      await reopened.close();
    }
  });

  it("copies again over a copy that was cut short (no PG_VERSION yet)", async () => {
    const dataDir = path.join(scratch, "data-cut-short");
    await copyEmbeddedTemplate(dataDir, templates);
    await rm(path.join(dataDir, "PG_VERSION"));
    await rm(path.join(dataDir, "global"), { recursive: true }); // part of the cluster never arrived
    await writeFile(path.join(dataDir, "postgresql.auto.conf"), "# half written\n");
    const database = await openDatabase({ kind: "pglite", dataDir, templateDir: templates });
    try {
      expect(database.createdMigrated).toBe(true);
      expect(await database.migrationsApplied()).toBe(true);
    } finally {
      await database.close();
    }
    // What the cut-short copy left was replaced, not kept.
    const conf = "postgresql.auto.conf";
    expect(await readFile(path.join(dataDir, conf), "utf8")).toBe(
      await readFile(path.join(embeddedTemplatePath(templates), conf), "utf8"),
    );
  });

  it("refuses a template holding what is neither a file nor a folder, and leaves the data folder free", async () => {
    const odd = path.join(scratch, "odd-templates");
    const template = path.join(odd, path.basename(embeddedTemplatePath(templates)));
    await cp(embeddedTemplatePath(templates), template, { recursive: true });
    await symlink("/etc/hostname", path.join(template, "global", "planted"));
    const dataDir = path.join(scratch, "data-odd");
    await expect(openDatabase({ kind: "pglite", dataDir, templateDir: odd })).rejects.toThrow(
      "The embedded template holds global/planted, neither a file nor a folder",
    );
    expect(existsSync(path.join(dataDir, "PG_VERSION"))).toBe(false);
    // The failed copy released the folder's lock: the next open (of a sound template) takes it.
    const database = await openDatabase({ kind: "pglite", dataDir, templateDir: templates });
    await database.close();
    expect(database.createdMigrated).toBe(true);
  });

  it("after a copy that fails midway, writes nothing more into the data folder, and writes through no link", async () => {
    const template = embeddedTemplatePath(templates);
    const files = (await readdir(template, { recursive: true, withFileTypes: true }))
      .filter((entry) => entry.isFile())
      .map((entry) => path.relative(template, path.join(entry.parentPath, entry.name)))
      .filter((file) => file !== "PG_VERSION");
    const dataDir = path.join(scratch, "data-fails-midway");
    // A folder (not empty) where the middle file goes: its copy fails while others are in flight.
    const blocked = path.join(dataDir, files[Math.floor(files.length / 2)]!);
    await mkdir(path.join(blocked, "in-the-way"), { recursive: true });
    // A link where another file goes, as a copy cut short could not leave but a hostile user could.
    const outside = path.join(scratch, "outside.txt");
    await writeFile(outside, "untouched");
    const linked = path.join(dataDir, files[0]!);
    await mkdir(path.dirname(linked), { recursive: true });
    await symlink(outside, linked);

    await expect(copyEmbeddedTemplate(dataDir, templates)).rejects.toThrow();
    const count = async () => (await readdir(dataDir, { recursive: true })).length;
    const atFailure = await count();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await count()).toBe(atFailure);
    expect(atFailure).toBeLessThan(files.length);
    expect(existsSync(path.join(dataDir, "PG_VERSION"))).toBe(false);
    expect(await readFile(outside, "utf8")).toBe("untouched");
  });

  it("refuses a folder of the copy that is a link to another folder, and writes nothing through it", async () => {
    const dataDir = path.join(scratch, "data-linked-folder");
    const outside = path.join(scratch, "outside-folder");
    await mkdir(outside);
    await writeFile(path.join(outside, "pg_control"), "untouched");
    await mkdir(dataDir);
    await symlink(outside, path.join(dataDir, "global"));

    await expect(copyEmbeddedTemplate(dataDir, templates)).rejects.toThrow(
      `${path.join(dataDir, "global")} is in the way of the embedded template's copy: not a folder (a link?)`,
    );
    expect(await readdir(outside)).toEqual(["pg_control"]);
    expect(await readFile(path.join(outside, "pg_control"), "utf8")).toBe("untouched");
    expect(existsSync(path.join(dataDir, "PG_VERSION"))).toBe(false);
  });

  it("without a template for these migrations, creates the database and applies every migration", async () => {
    const stale = path.join(scratch, "stale-templates");
    // A template of other migrations is never used, whatever it holds.
    await cp(embeddedTemplatePath(templates), path.join(stale, "0123456789abcdef"), { recursive: true });
    const dataDir = path.join(scratch, "data-no-template");
    const database = await openDatabase({ kind: "pglite", dataDir, templateDir: stale });
    try {
      expect(database.createdMigrated).toBe(false);
      const { migrationDirectories } = await readMigrationList();
      expect(database.appliedMigrations).toEqual(migrationDirectories.map((dir) => dir.path));
    } finally {
      await database.close();
    }
    expect(existsSync(path.join(dataDir, "PG_VERSION"))).toBe(true);
  }, 60_000);
});
