#!/usr/bin/env node
// The type-check of src/ and scripts/, test/ and web/ and the lint, in one process that builds each
// TypeScript program once: ESLint's type-aware rules are given the same programs (typescript-eslint's
// `programs` option) instead of building their own, so the type-checker's work is shared by both (the
// build only strips types: scripts/build.js). `--types` or `--lint` runs one half; `--types
// --lint-src` (the gate's) type-checks everything and lints the product's own code (src/ and scripts/).
// Exit code 1 on any diagnostic or lint error.
"use strict";
const path = require("node:path");
const ts = require("typescript");
const { ESLint } = require("eslint");

const root = path.join(__dirname, "..");
const args = new Set(process.argv.slice(2));
const lintSrc = args.has("--lint-src");
const both = !args.has("--types") && !args.has("--lint") && !lintSrc;

/** The program a tsconfig describes (as `tsc -p` builds it, without emitting), plus `extra` root files. */
function program(config, extra = []) {
  const parsed = ts.getParsedCommandLineOfConfigFile(path.join(root, config), undefined, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"));
    },
  });
  if (parsed.errors.length > 0) throw new Error(ts.formatDiagnostics(parsed.errors, host));
  return ts.createProgram({
    rootNames: [...parsed.fileNames, ...extra.map((file) => path.join(root, file))],
    options: { ...parsed.options, noEmit: true, incremental: false, tsBuildInfoFile: undefined },
  });
}

const host = {
  getCanonicalFileName: (name) => name,
  getCurrentDirectory: () => root,
  getNewLine: () => "\n",
};

/**
 * Every diagnostic `tsc -p` would report for the program, the semantic ones for the files under
 * `only` (a folder of the repository) when given: the tests' program holds the src/ files they import,
 * which the src/ program checks already (the tests' settings only add the DOM's and Jest's types).
 */
function diagnostics(prog, only) {
  const inScope = only === undefined ? () => true : (file) => file.fileName.startsWith(path.join(root, only) + "/");
  const checked = prog.getSourceFiles().filter(inScope);
  // A path that no longer matches (a moved folder, a link) would check nothing and pass.
  if (only !== undefined && checked.length === 0) throw new Error(`the program holds no file under ${only}/`);
  return ts.sortAndDeduplicateDiagnostics([
    ...prog.getConfigFileParsingDiagnostics(),
    ...prog.getOptionsDiagnostics(),
    ...prog.getGlobalDiagnostics(),
    ...prog.getSyntacticDiagnostics(),
    ...checked.flatMap((file) => prog.getSemanticDiagnostics(file)),
  ]);
}

async function main() {
  let failed = false;
  // prisma.config.ts is in no tsconfig; ESLint's projectService checks it as a default-project file.
  const programs = {
    src: program("tsconfig.json", ["prisma.config.ts"]),
    test: program("test/tsconfig.json"),
    web: program("web/tsconfig.json"),
  };
  if (both || args.has("--types")) {
    for (const name of ["src", "test", "web"]) {
      const found = diagnostics(programs[name], name === "test" ? "test" : undefined);
      if (found.length === 0) continue;
      failed = true;
      process.stderr.write(ts.formatDiagnosticsWithColorAndContext(found, host));
      console.error(`type-check (${name}): ${found.length} error${found.length === 1 ? "" : "s"}`);
    }
  }
  if (both || args.has("--lint") || lintSrc) {
    const eslint = new ESLint({
      cwd: root,
      // The TypeScript files only: the JavaScript ones are linted without types (eslint.config.mjs).
      overrideConfig: [
        {
          files: ["**/*.ts", "**/*.tsx", "**/*.mts", "**/*.cts"],
          languageOptions: {
            parserOptions: { projectService: false, programs: [programs.src, programs.test, programs.web] },
          },
        },
      ],
    });
    const results = await eslint.lintFiles(lintSrc ? ["src", "scripts"] : ["."]);
    const formatted = (await eslint.loadFormatter("stylish")).format(results);
    if (formatted !== "") process.stdout.write(formatted);
    if (results.some((result) => result.errorCount > 0 || result.fatalErrorCount > 0)) failed = true;
  }
  return failed ? 1 : 0;
}

main().then(
  (status) => process.exit(status),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
