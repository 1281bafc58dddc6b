import { createHash } from "node:crypto";
import { type Dirent, existsSync, readdirSync, readFileSync } from "node:fs";
import { copyFile, mkdir, readdir, rename, rm } from "node:fs/promises";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import type { SqlMigrationAwareDriverAdapterFactory } from "@prisma/driver-adapter-utils";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { PRISMA_DIR } from "../paths";
import { applyPendingMigrations } from "./migrations";

/**
 * A new embedded database starts as a copy of one the build already migrated and loaded with the
 * bundled data (`npm run build` makes it): copying a folder is a fraction of a second, where
 * initialising a PostgreSQL cluster, applying every migration through the schema engine's WebAssembly
 * and loading the stations is several seconds of CPU. The copy is used only when it was made from
 * exactly these migrations and bundled data with this PGlite and schema engine (its folder is named by
 * their fingerprint); otherwise the database is created, migrated and loaded as before.
 */
export const EMBEDDED_TEMPLATE_DIR = path.join(PRISMA_DIR, "..", "dist", "embedded-template");

/** The file whose presence makes a folder a database to PGlite: copied last, so a copy cut short is redone. */
const MARKER = "PG_VERSION";
const PACKAGES_MIGRATED_WITH = ["@electric-sql/pglite", "@prisma/schema-engine-wasm", "pglite-prisma-adapter"];
const TEMPLATE_NAME = /^[0-9a-f]{16}$/;

/**
 * What the template depends on: every migration file, the bundled data (prisma/data/) and the
 * packages that create and migrate the database.
 */
export function embeddedTemplateFingerprint(prismaDir = PRISMA_DIR): string {
  const hash = createHash("sha256");
  const files = ["migrations", "data"].flatMap((folder) =>
    readdirSync(path.join(prismaDir, folder), { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => path.join(entry.parentPath, entry.name)),
  );
  for (const file of files.sort())
    hash.update(path.relative(prismaDir, file)).update("\0").update(readFileSync(file)).update("\0");
  for (const name of PACKAGES_MIGRATED_WITH) hash.update(`${name}@${packageVersion(name)}\0`);
  return hash.digest("hex").slice(0, 16);
}

function packageVersion(name: string): string {
  const manifest = path.join(PRISMA_DIR, "..", "node_modules", ...name.split("/"), "package.json");
  return (JSON.parse(readFileSync(manifest, "utf8")) as { version: string }).version;
}

/** The current migrations' template folder under `dir`, whether or not it has been made. */
export function embeddedTemplatePath(dir = EMBEDDED_TEMPLATE_DIR, prismaDir = PRISMA_DIR): string {
  return path.join(dir, embeddedTemplateFingerprint(prismaDir));
}

/** Fills a just-migrated template with what a first start would load (the bundled stations). */
export type LoadBundledData = (adapter: SqlMigrationAwareDriverAdapterFactory) => Promise<void>;

/**
 * Makes the current migrations' template under `dir` unless it is there, and removes the templates
 * of other migrations. Answers whether it made one. The database is made in a folder of its own and
 * renamed into place, so a reader never finds half a template.
 */
export async function ensureEmbeddedTemplate(
  loadBundledData: LoadBundledData,
  dir = EMBEDDED_TEMPLATE_DIR,
  prismaDir = PRISMA_DIR,
): Promise<boolean> {
  const template = embeddedTemplatePath(dir, prismaDir);
  const made = !existsSync(path.join(template, MARKER));
  if (made) {
    const partial = `${template}.${process.pid}`;
    await rm(partial, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    const pglite = new PGlite(partial);
    try {
      await applyPendingMigrations(
        new PrismaPGlite(pglite),
        async (sql) => (await pglite.query<Record<string, unknown>>(sql)).rows,
        prismaDir,
      );
      await loadBundledData(new PrismaPGlite(pglite));
    } finally {
      await pglite.close();
    }
    await rm(template, { recursive: true, force: true });
    await rename(partial, template);
  }
  for (const name of await readdir(dir)) {
    // Another build's folder under way (`<fingerprint>.<pid>`) is left to it.
    if (TEMPLATE_NAME.test(name) && path.join(dir, name) !== template)
      await rm(path.join(dir, name), { recursive: true, force: true });
  }
  return made;
}

/**
 * Copies the current migrations' template into `dataDir`, which holds no database yet; answers false
 * (copying nothing) when there is no template for them. PG_VERSION is copied last: a copy cut short
 * leaves a folder that still counts as new, and the next start copies again over it.
 */
export async function copyEmbeddedTemplate(dataDir: string, dir = EMBEDDED_TEMPLATE_DIR): Promise<boolean> {
  const template = embeddedTemplatePath(dir);
  if (!existsSync(path.join(template, MARKER))) return false;
  const entries = await readdir(template, { withFileTypes: true, recursive: true });
  const relative = (entry: Dirent) => path.relative(template, path.join(entry.parentPath, entry.name));
  const odd = entries.find((entry) => !entry.isDirectory() && !entry.isFile());
  if (odd) throw new Error(`The embedded template holds ${relative(odd)}, neither a file nor a folder`);
  await mkdir(dataDir, { recursive: true });
  for (const folder of entries.filter((entry) => entry.isDirectory()).map(relative))
    await mkdir(path.join(dataDir, folder), { recursive: true });
  const files = entries.filter((entry) => entry.isFile()).map(relative);
  // A data folder is about a thousand small files: copied a few at a time (fs.cp checks each path
  // twice and costs four times the CPU). Copies overwrite what a copy cut short left.
  const rest = files.filter((file) => file !== MARKER);
  let next = 0;
  await Promise.all(
    Array.from({ length: COPIES_AT_ONCE }, async () => {
      while (next < rest.length) {
        const file = rest[next++]!;
        await copyFile(path.join(template, file), path.join(dataDir, file));
      }
    }),
  );
  await copyFile(path.join(template, MARKER), path.join(dataDir, MARKER));
  return true;
}

/** File copies in flight at once (libuv's thread pool runs four by default). */
const COPIES_AT_ONCE = 8;
