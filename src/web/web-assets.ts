import { createHash } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { gzip } from "node:zlib";

const gzipAsync = promisify(gzip);

/** One built file of the browser pages, held in memory with its gzip form and validator. */
export interface WebAsset {
  readonly body: Buffer;
  readonly gzipped: Buffer | undefined;
  readonly contentType: string;
  readonly etag: string;
}

const CONTENT_TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".txt": "text/plain; charset=utf-8",
  ".woff2": "font/woff2",
  ".woff": "font/woff",
  ".ttf": "font/ttf",
};

/** The built files by name: how many there are, and one by its name (read when first asked for). */
export interface WebAssets {
  readonly size: number;
  get(name: string): Promise<WebAsset | undefined>;
}

/**
 * The bundles scripts/build-web.js wrote to dist/web. Only their names are read at start; a file is
 * read and compressed the first time it is asked for, off the event loop (the IDE's source map takes
 * over a second at gzip level 9), then kept: the IDE's bundle and source map are 7 MB that a gateway
 * nobody opens the IDE of never needs in memory. Concurrent first requests share one read. Only files
 * that were there at start are ever served (the URL never reaches the file system), so no path can
 * escape the folder; one that cannot be read any more is answered as absent, and tried again later.
 */
export function loadWebAssets(dir = defaultAssetDir()): WebAssets {
  const names = new Set(existsSync(dir) ? readdirSync(dir).filter((name) => CONTENT_TYPES[path.extname(name)]) : []);
  const loaded = new Map<string, Promise<WebAsset | undefined>>();
  return {
    size: names.size,
    get(name) {
      if (!names.has(name)) return Promise.resolve(undefined);
      let asset = loaded.get(name);
      if (!asset) {
        asset = readAsset(dir, name).catch(() => {
          loaded.delete(name);
          return undefined;
        });
        loaded.set(name, asset);
      }
      return asset;
    },
  };
}

async function readAsset(dir: string, name: string): Promise<WebAsset> {
  const contentType = CONTENT_TYPES[path.extname(name)]!;
  const body = await readFile(path.join(dir, name));
  const compressible = !contentType.startsWith("font/") && body.length > 1024;
  return {
    body,
    gzipped: compressible ? await gzipAsync(body, { level: 9 }) : undefined,
    contentType,
    etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`,
  };
}

/** dist/web under the project root, whether this runs compiled (dist/src/web) or from source (src/web). */
function defaultAssetDir(): string {
  let dir = __dirname;
  while (!existsSync(path.join(dir, "package.json"))) {
    const parent = path.dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return path.join(dir, "dist", "web");
}
