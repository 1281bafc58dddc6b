import { randomBytes } from "node:crypto";
import { mkdtemp, rm, unlink, writeFile } from "node:fs/promises";
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
    const asset = (await assets.get("app.js"))!;
    expect(asset.body.toString()).toBe("x".repeat(4096));
    expect(gunzipSync(asset.gzipped!).toString()).toBe("x".repeat(4096));
    expect(asset.contentType).toBe("text/javascript; charset=utf-8");

    // Kept: a later change on disk does not reach the answers.
    await writeFile(path.join(dir, "app.js"), "third");
    expect(await assets.get("app.js")).toBe(asset);

    await writeFile(path.join(dir, "late.js"), "added after start");
    expect(await assets.get("late.js")).toBeUndefined();
    expect(await assets.get("notes.rst")).toBeUndefined();
    expect(await assets.get("../app.js")).toBeUndefined();
  });

  it("are read and compressed off the event loop, once for concurrent first requests", async () => {
    // Several MB that gzip at level 9 takes a while over: timers must keep firing meanwhile.
    await writeFile(path.join(dir, "big.js"), randomBytes(6 * 1024 * 1024).toString("base64"));
    const assets = loadWebAssets(dir);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    try {
      const [one, two] = await Promise.all([assets.get("big.js"), assets.get("big.js")]);
      expect(one).toBe(two);
      expect(ticks).toBeGreaterThan(0);
    } finally {
      clearInterval(timer);
    }
  });

  it("answer a file that cannot be read any more as absent, and serve it again once it is back", async () => {
    await writeFile(path.join(dir, "app.js"), "here");
    const assets = loadWebAssets(dir);
    await unlink(path.join(dir, "app.js"));
    expect(await assets.get("app.js")).toBeUndefined();
    await writeFile(path.join(dir, "app.js"), "back");
    expect((await assets.get("app.js"))?.body.toString()).toBe("back");
  });

  it("are none when the folder does not exist", async () => {
    const assets = loadWebAssets(path.join(dir, "missing"));
    expect(assets.size).toBe(0);
    expect(await assets.get("app.js")).toBeUndefined();
  });
});
