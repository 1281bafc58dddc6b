// Where the build's migrated embedded template is, and its name: a fingerprint of what it is made
// from. Apart from db/embedded-template.ts (which makes and copies it) so that the build check
// (scripts/build.js) can tell whether the template is there without loading PGlite.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { PRISMA_DIR } from "../paths";

/** The build's templates, one folder per fingerprint (db/embedded-template.ts). */
export const EMBEDDED_TEMPLATE_DIR = path.join(PRISMA_DIR, "..", "dist", "embedded-template");

const PACKAGES_MIGRATED_WITH = ["@electric-sql/pglite", "@prisma/schema-engine-wasm", "pglite-prisma-adapter"];

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
