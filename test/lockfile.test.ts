import { readFileSync } from "node:fs";
import path from "node:path";

/**
 * `npm install` on a fresh clone must leave the work tree clean. npm rewrites package-lock.json when
 * a locked package names an optional dependency (a native build for another platform, as @swc/core
 * and unrs-resolver do) that the lock has no entry for, so every optional dependency of every locked
 * package must be locked too, whatever platform wrote the lock.
 */
interface LockedPackage {
  optionalDependencies?: Record<string, string>;
}

const lock = JSON.parse(readFileSync(path.resolve(__dirname, "..", "package-lock.json"), "utf8")) as {
  packages: Record<string, LockedPackage>;
};

/** Where npm would look for `name` required from the package at `at` (nearest node_modules first). */
function resolvesFrom(at: string, name: string): boolean {
  let folder = at;
  for (;;) {
    const candidate = folder === "" ? `node_modules/${name}` : `${folder}/node_modules/${name}`;
    if (lock.packages[candidate] !== undefined) return true;
    if (folder === "") return false;
    const parent = folder.lastIndexOf("/node_modules/");
    folder = parent === -1 ? "" : folder.slice(0, parent);
  }
}

test("every optional dependency of a locked package is locked (npm install leaves package-lock.json as it is)", () => {
  const missing = Object.entries(lock.packages).flatMap(([at, entry]) =>
    Object.keys(entry.optionalDependencies ?? {})
      .filter((name) => !resolvesFrom(at, name))
      .map((name) => `${at || "(root)"} → ${name}`),
  );
  expect(missing).toEqual([]);
});
