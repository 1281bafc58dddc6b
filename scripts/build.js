#!/usr/bin/env node
// npm run build (and so `npm start` and `npm test`, whose pre-scripts run it): compiles src/,
// scripts/ and the generated Prisma client (generated/) with swc into dist/ (types stripped, as Jest
// runs the same sources, with the same swc settings: jest.config.js), then makes the migrated embedded
// database new data folders start from (scripts/embedded-template.ts; only when the build changed or
// there is no template for the current migrations); the browser pages (build-web.js) build beside
// both. The type-check is not the build's: `npm run typecheck` and `npm test`'s static checks run it
// (scripts/static-checks.js). The compile is skipped when no input changed since the last one (a
// fingerprint of the inputs' paths, sizes and times, as build-web.js keeps for the pages). `--force`
// compiles regardless.
"use strict";
const { spawn } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

const root = path.resolve(__dirname, "..");
const fingerprintFile = path.join(root, "dist", ".build-inputs");

function inputFiles() {
  // package.json too: its "type" decides how Node loads what is emitted.
  const files = ["tsconfig.json", "package.json", "package-lock.json", "scripts/build.js", ".swcrc"].map((f) =>
    path.join(root, f),
  );
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/\.(ts|js|json|cjs|mjs)$/.test(entry.name)) files.push(full);
    }
  };
  walk(path.join(root, "src"));
  walk(path.join(root, "scripts"));
  walk(path.join(root, "generated"));
  return files.sort();
}

function fingerprint(files) {
  return files
    .map((file) => {
      const stat = fs.statSync(file);
      return `${path.relative(root, file)}:${stat.size}:${stat.mtimeMs}`;
    })
    .join("\n");
}

/** Every source's output must be there too: a deleted dist/ file is rebuilt even if no source changed. */
function outputsPresent(files) {
  return files
    .filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"))
    .every((file) => fs.existsSync(outputOf(file)));
}

/**
 * Each TypeScript source to dist/<same path>.js with its source map, and each JSON file copied (the
 * sources import them). swc's settings are .swcrc, which Jest uses too (@swc/jest): what runs from
 * dist/ is what the tests ran. Sources are transformed on swc's thread pool, all at once.
 */
async function compile(files) {
  const swc = require("@swc/core");
  const settings = JSON.parse(fs.readFileSync(path.join(root, ".swcrc"), "utf8"));
  await Promise.all(
    files
      .filter((file) => /^(src|scripts|generated)\//.test(path.relative(root, file)))
      .filter((file) => (file.endsWith(".ts") && !file.endsWith(".d.ts")) || file.endsWith(".json"))
      .map(async (file) => {
        const out = outputOf(file);
        await fs.promises.mkdir(path.dirname(out), { recursive: true });
        if (file.endsWith(".json")) return fs.promises.copyFile(file, out);
        const { code, map } = await swc.transformFile(file, {
          ...settings,
          swcrc: false,
          sourceMaps: true,
          sourceFileName: path.relative(path.dirname(out), file),
        });
        await fs.promises.writeFile(out, `${code}\n//# sourceMappingURL=${path.basename(out)}.map\n`);
        await fs.promises.writeFile(`${out}.map`, map);
      }),
  );
}

/** Where a source's output goes: dist/<its path>, .ts becoming .js. */
const outputOf = (file) => path.join(root, "dist", path.relative(root, file)).replace(/\.ts$/, ".js");

/** Runs `node <args>` with the output shown; resolves when it exits 0, rejects otherwise. */
function run(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: "inherit" });
    child.on("error", reject);
    child.on("close", (code, signal) =>
      code === 0
        ? resolve()
        : reject(
            new Error(`${path.basename(args[0])} ${args.slice(1).join(" ")} failed (${signal ?? `exit ${code}`})`),
          ),
    );
  });
}

async function main() {
  const files = inputFiles();
  const current = fingerprint(files);
  const upToDate =
    !process.argv.includes("--force") &&
    outputsPresent(files) &&
    fs.existsSync(fingerprintFile) &&
    fs.readFileSync(fingerprintFile, "utf8") === current;
  // The pages do not depend on the server's compile: they build beside it, on the other core.
  const pages = run([path.join(__dirname, "build-web.js")]);
  try {
    if (!upToDate) {
      await compile(files);
      fs.writeFileSync(fingerprintFile, current);
    }
    // The template step starts a process that loads PGlite and the schema engine (~0.15 s): skipped when
    // the build was up to date and the template for the current migrations, bundled data and packages is
    // there (its folder is named by their fingerprint, db/embedded-template-path.ts).
    const { embeddedTemplatePath } = require(path.join(root, "dist", "src", "db", "embedded-template-path.js"));
    if (!upToDate || !fs.existsSync(path.join(embeddedTemplatePath(), "PG_VERSION")))
      await run([path.join(root, "dist", "scripts", "embedded-template.js")]);
  } finally {
    await pages.catch(() => {}); // reported below, or after the failure above
  }
  await pages;
}

main().catch((error) => {
  console.error(`build: ${error.message}`);
  process.exit(1);
});
