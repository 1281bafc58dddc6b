import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";

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

/**
 * The bundles scripts/build-web.js wrote to dist/web, read once at start. Only files that exist
 * there are ever served (the URL never reaches the file system), so no path can escape the folder.
 */
export function loadWebAssets(dir = defaultAssetDir()): ReadonlyMap<string, WebAsset> {
  const assets = new Map<string, WebAsset>();
  if (!existsSync(dir)) return assets;
  for (const name of readdirSync(dir)) {
    const contentType = CONTENT_TYPES[path.extname(name)];
    if (!contentType) continue;
    const body = readFileSync(path.join(dir, name));
    const compressible = !contentType.startsWith("font/") && body.length > 1024;
    assets.set(name, {
      body,
      gzipped: compressible ? gzipSync(body, { level: 9 }) : undefined,
      contentType,
      etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`,
    });
  }
  return assets;
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
