/** @type {import('jest').Config} */
// TypeScript through swc with the project's .swcrc (@swc/jest reads it), which the build uses too
// (scripts/build.js): decorator metadata emitted, as type-graphql reads design-time types (esbuild
// cannot emit it).
const swc = ["@swc/jest"];

module.exports = {
  testEnvironment: "<rootDir>/test/support/environment.cjs",
  // How long a worker told to end may take before Jest kills it and warns that it "failed to exit
  // gracefully" (500 ms by default). A worker ends itself once its loop runs dry (environment.cjs), but
  // on a loaded machine getting there can take longer than half a second; a worker that leaked a
  // handle still never ends by itself, and is still killed and warned about.
  workerGracefulExitTimeout: 5_000,
  roots: ["<rootDir>/test"],
  testMatch: ["**/*.test.ts"],
  transform: { "^.+\\.(t|j)s$": swc },
  // ES modules that swc turns into CommonJS for Jest: the schema engine's wasm glue, rdf-validate-shacl
  // with the RDF/JS packages it imports (test/support/onerecord-conformance.ts), and jose.
  transformIgnorePatterns: [
    "/node_modules/(?!(@prisma/schema-engine-wasm|jose|rdf-validate-shacl|rdf-validate-datatype|@rdfjs|@vocabulary|clownface|@tpluscode|@zazuko)/)",
  ],
  // Prisma's generated client imports its siblings as "./x.js"; the sources are .ts.
  moduleNameMapper: { "^(\\.{1,2}/.*)\\.js$": "$1" },
  // The longest files first, by recorded durations: a fresh clone has no cache of earlier runs.
  testSequencer: "<rootDir>/test/shards/sequencer.cjs",
  globalSetup: "<rootDir>/test/support/global-setup.ts",
  globalTeardown: "<rootDir>/test/support/global-teardown.ts",
  setupFiles: ["reflect-metadata"],
  setupFilesAfterEnv: ["<rootDir>/test/support/setup-each-file.ts"],
  testTimeout: 60_000,
  maxWorkers: 2,
};
