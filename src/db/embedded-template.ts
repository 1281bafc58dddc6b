import { constants, type Dirent, existsSync } from "node:fs";
import { copyFile, lstat, mkdir, readdir, rename, rm } from "node:fs/promises";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import type { SqlMigrationAwareDriverAdapterFactory } from "@prisma/driver-adapter-utils";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { PRISMA_DIR } from "../paths";
import { EMBEDDED_TEMPLATE_DIR, embeddedTemplatePath } from "./embedded-template-path";
import { applyPendingMigrations } from "./migrations";

export { EMBEDDED_TEMPLATE_DIR, embeddedTemplateFingerprint, embeddedTemplatePath } from "./embedded-template-path";

// A new embedded database starts as a copy of one the build already migrated and loaded with the
// bundled data (`npm run build` makes it): copying a folder is a fraction of a second, where
// initialising a PostgreSQL cluster, applying every migration through the schema engine's WebAssembly
// and loading the stations is several seconds of CPU. The copy is used only when it was made from
// exactly these migrations and bundled data with this PGlite and schema engine (its folder is named by
// their fingerprint); otherwise the database is created, migrated and loaded as before.

/** The file whose presence makes a folder a database to PGlite: copied last, so a copy cut short is redone. */
const MARKER = "PG_VERSION";
const TEMPLATE_NAME = /^[0-9a-f]{16}$/;

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
    // The first maker to finish wins: a complete template is never removed (a copy may be reading it).
    if (existsSync(path.join(template, MARKER))) await rm(partial, { recursive: true, force: true });
    else {
      await rm(template, { recursive: true, force: true }); // never complete: nobody copies from it
      await rename(partial, template).catch(async (error: unknown) => {
        // Another maker renamed theirs in between: keep it.
        await rm(partial, { recursive: true, force: true });
        if (!existsSync(path.join(template, MARKER))) throw error;
      });
    }
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
  await mkdir(dataDir, { recursive: true }); // DATA_DIR itself may be a link an operator made
  const folders = entries.filter((entry) => entry.isDirectory()).map(relative);
  for (const folder of folders.sort((a, b) => depth(a) - depth(b))) await makeFolder(dataDir, folder);
  const files = entries.filter((entry) => entry.isFile()).map(relative);
  // A data folder is about a thousand small files: copied a few at a time (fs.cp checks each path
  // twice and costs four times the CPU). A file or link a copy finds in its place is replaced
  // (copyOne), a folder that is a link refused (makeFolder). After a failure every copy in flight is
  // waited for: none goes on writing once the caller has released the folder.
  const rest = files.filter((file) => file !== MARKER);
  let next = 0;
  let failed = false;
  const copied = await Promise.allSettled(
    Array.from({ length: COPIES_AT_ONCE }, async () => {
      while (next < rest.length && !failed) {
        const file = rest[next++]!;
        try {
          await copyOne(path.join(template, file), path.join(dataDir, file));
        } catch (error) {
          failed = true;
          throw error;
        }
      }
    }),
  );
  const failure = copied.find((outcome) => outcome.status === "rejected");
  if (failure) throw failure.reason;
  await copyOne(path.join(template, MARKER), path.join(dataDir, MARKER));
  return true;
}

const depth = (folder: string) => folder.split(path.sep).length;

/**
 * Makes a folder of the copy inside `dataDir`, its parent made before it; one already there (a copy
 * cut short) must be a folder, not a link to one: the copy would write wherever it points. Checked,
 * then used: the data folder is the gateway user's alone (docs/DEPLOYMENT.md), so only that user
 * could swap a folder for a link in between.
 */
async function makeFolder(dataDir: string, folder: string): Promise<void> {
  const target = path.join(dataDir, folder);
  try {
    await mkdir(target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    if (!(await lstat(target)).isDirectory())
      throw new Error(`${target} is in the way of the embedded template's copy: not a folder (a link?)`, {
        cause: error,
      });
  }
}

/**
 * Copies one file to a path that must not exist: a file or link found there (a copy cut short left
 * it, or someone put it there) is removed and the copy tried once more, never written through; a
 * folder there fails the copy. Removing only then saves a lookup per file on a new folder, which is
 * every folder but a copy's second attempt.
 */
async function copyOne(from: string, to: string): Promise<void> {
  try {
    await copyFile(from, to, constants.COPYFILE_EXCL);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    await rm(to, { force: true });
    await copyFile(from, to, constants.COPYFILE_EXCL);
  }
}

/** File copies in flight at once (libuv's thread pool runs four by default). */
const COPIES_AT_ONCE = 8;
