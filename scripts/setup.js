#!/usr/bin/env node
// Runs after `npm install`: generates the Prisma client (into generated/) and builds (compiles the
// TypeScript, …), so that `npm start` works at once. Plain JavaScript because it runs before anything is
// compiled.
"use strict";
const { execFileSync } = require("node:child_process");
const path = require("node:path");

const root = path.resolve(__dirname, "..");
const bin = (name) => path.join(root, "node_modules", ".bin", name);
const run = (command, args, env = {}) =>
  execFileSync(command, args, { cwd: root, stdio: "inherit", env: { ...process.env, ...env } });

// `prisma generate` does not run the schema engine, but the CLI insists on having one and would try
// to download it from Prisma's host, which these machines cannot reach. Any existing file satisfies
// the check; migrations are handled by the engine's WebAssembly build (src/db/migrations.ts).
const engineEnv = process.env.PRISMA_SCHEMA_ENGINE_BINARY ? {} : { PRISMA_SCHEMA_ENGINE_BINARY: process.execPath };

run(bin("prisma"), ["generate"], { ...engineEnv, PRISMA_HIDE_UPDATE_MESSAGE: "1", CHECKPOINT_DISABLE: "1" });
// The build itself (swc, the embedded template, the pages) through `npm run build`'s script, which
// records what it built from: the first `npm start` or `npm test` then finds it up to date.
if (!process.argv.includes("--generate-only")) run(process.execPath, [path.join(root, "scripts", "build.js")]);
