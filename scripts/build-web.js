#!/usr/bin/env node
// Builds the browser pages (web/): type-checks them, then bundles each with esbuild into dist/web,
// every asset included, so the pages load nothing from the internet. Runs as part of `npm install`
// and `npm run build`; skipped when no input changed since the last build (a fingerprint of the
// inputs' sizes and times), so `npm test` and `npm start` do not pay for it every time.
"use strict";
const { execFileSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

const root = path.resolve(__dirname, "..");
const outdir = path.join(root, "dist", "web");
const fingerprintFile = path.join(outdir, ".inputs");

function inputFiles() {
  const files = [path.join(root, "package-lock.json"), __filename];
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else files.push(full);
    }
  };
  walk(path.join(root, "web"));
  // Shared with the server: the AWB and status rules the dashboard checks before sending.
  walk(path.join(root, "src", "domain"));
  return files.sort();
}

function fingerprint() {
  return inputFiles()
    .map((file) => {
      const stat = fs.statSync(file);
      return `${path.relative(root, file)}:${stat.size}:${stat.mtimeMs}`;
    })
    .join("\n");
}

async function main() {
  const current = fingerprint();
  const force = process.argv.includes("--force");
  if (!force && fs.existsSync(fingerprintFile) && fs.readFileSync(fingerprintFile, "utf8") === current) return;

  execFileSync(
    process.execPath,
    [path.join(root, "node_modules", "typescript", "bin", "tsc"), "-p", path.join(root, "web")],
    { stdio: "inherit" },
  );
  const esbuild = require("esbuild");
  fs.rmSync(outdir, { recursive: true, force: true });
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: { dashboard: "web/dashboard/main.ts", ide: "web/ide/main.tsx" },
    outdir,
    bundle: true,
    format: "iife",
    minify: true,
    sourcemap: "linked",
    legalComments: "linked",
    target: ["chrome115", "firefox115", "safari16"],
    define: { "process.env.NODE_ENV": '"production"' },
    loader: { ".woff": "file", ".woff2": "file", ".ttf": "file", ".svg": "dataurl", ".png": "dataurl" },
    metafile: true,
    logLevel: "warning",
  });
  const sizes = Object.entries(result.metafile.outputs)
    .filter(([file]) => !file.endsWith(".map"))
    .map(([file, output]) => `${path.basename(file)} ${(output.bytes / 1024).toFixed(0)} KiB`);
  console.log(`web: built ${sizes.join(", ")}`);
  fs.writeFileSync(fingerprintFile, current);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
