import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { loadWebAssets } from "../src/web/web-assets";

describe("the browser pages' built files", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "web-assets-"));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it("are read when first asked for, then kept; only files there at start are served", async () => {
    await writeFile(path.join(dir, "app.js"), "first");
    await writeFile(path.join(dir, "notes.rst"), "not a served type");
    const assets = loadWebAssets(dir);
    expect(assets.size).toBe(1);

    // Not read at start: what the file holds when first asked for is what is served.
    await writeFile(path.join(dir, "app.js"), "x".repeat(4096));
    const asset = assets.get("app.js")!;
    expect(asset.body.toString()).toBe("x".repeat(4096));
    expect(gunzipSync(asset.gzipped!).toString()).toBe("x".repeat(4096));
    expect(asset.contentType).toBe("text/javascript; charset=utf-8");

    // Kept: a later change on disk does not reach the answers.
    await writeFile(path.join(dir, "app.js"), "third");
    expect(assets.get("app.js")).toBe(asset);

    await writeFile(path.join(dir, "late.js"), "added after start");
    expect(assets.get("late.js")).toBeUndefined();
    expect(assets.get("notes.rst")).toBeUndefined();
    expect(assets.get("../app.js")).toBeUndefined();
  });

  it("are none when the folder does not exist", () => {
    const assets = loadWebAssets(path.join(dir, "missing"));
    expect(assets.size).toBe(0);
    expect(assets.get("app.js")).toBeUndefined();
  });
});
