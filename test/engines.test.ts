import { readFileSync } from "node:fs";
import path from "node:path";
import semver from "semver";

/**
 * `npm install` is quiet (no EBADENGINE) on every Node line package.json "engines" names, from each
 * line's lowest version: CI installs on one line only (.ci/run), while users install on any, the oldest
 * included. So every locked package that says which Node versions it runs on must admit those lowest
 * versions. package.json "overrides" pin the packages whose newer releases would not.
 */
const root = path.resolve(__dirname, "..");
const read = (file: string) => JSON.parse(readFileSync(path.join(root, file), "utf8")) as unknown;
const { engines } = read("package.json") as { engines: { node: string } };
const lock = read("package-lock.json") as { packages: Record<string, { engines?: { node?: string } | string[] }> };

/** The lowest version of each line (comparator set) of a range: "^20.19 || >=24" → 20.19.0 and 24.0.0. */
function lowestOfEachLine(range: string): string[] {
  return new semver.Range(range).set.map(
    (comparators) => semver.minVersion(new semver.Range(comparators.map((c) => c.value).join(" ")))!.version,
  );
}

test("package.json names Node 20.19, 22.13 and 24 as the lowest versions it supports", () => {
  expect(lowestOfEachLine(engines.node)).toEqual(["20.19.0", "22.13.0", "24.0.0"]);
});

test.each(lowestOfEachLine(engines.node))("every locked package admits Node %s", (version) => {
  const refusing = Object.entries(lock.packages).flatMap(([at, entry]) => {
    const node = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
    return at !== "" && node !== undefined && !semver.satisfies(version, node) ? [`${at} (node ${node})`] : [];
  });
  expect(refusing).toEqual([]);
});
