import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const ROOT = path.resolve(__dirname, "..");
const SCRIPT = path.join(ROOT, "scripts", "layers-graph.js");
const DOC = path.join(ROOT, "docs", "ARCHITECTURE.md");

/** Runs scripts/layers-graph.js; its exit code and what it printed on stderr. */
async function layersGraph(...args: string[]): Promise<{ code: number; stderr: string }> {
  try {
    const { stderr } = await promisify(execFile)(process.execPath, [SCRIPT, ...args], { cwd: ROOT });
    return { code: 0, stderr };
  } catch (error) {
    const failed = error as { code: number; stderr: string };
    return { code: failed.code, stderr: failed.stderr };
  }
}

describe("the layer graph in docs/ARCHITECTURE.md", () => {
  let dir: string;
  let cruised: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), "layers-"));
    // The script's own cruise of the code today, made once (it takes seconds) for every run below.
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the script is CommonJS
    const { cruise } = require(SCRIPT) as { cruise: () => unknown };
    cruised = path.join(dir, "cruise.json");
    writeFileSync(cruised, JSON.stringify(cruise()));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("is what dependency-cruiser draws from the code today (npm run docs:layers)", async () => {
    expect(await layersGraph("--check", "--cruise", cruised)).toEqual({ code: 0, stderr: "" });
  });

  it("is found stale when an edge is missing, and redrawn by the script", async () => {
    const copy = path.join(dir, "ARCHITECTURE.md");
    const committed = readFileSync(DOC, "utf8");
    const stale = committed.replace(/\n {2}L\d+ --> L\d+(?=\n)/, "");
    expect(stale).not.toBe(committed);
    writeFileSync(copy, stale);
    const checked = await layersGraph("--check", "--doc", copy, "--cruise", cruised);
    expect(checked.code).toBe(1);
    expect(checked.stderr).toContain("the layer graph is stale; run npm run docs:layers");
    expect(await layersGraph("--doc", copy, "--cruise", cruised)).toEqual({ code: 0, stderr: "" });
    expect(readFileSync(copy, "utf8")).toBe(committed);
  });
});
