/** @type {import('jest').Config} */
const swc = [
  "@swc/jest",
  {
    jsc: {
      target: "es2022",
      parser: { syntax: "typescript", decorators: true },
      // type-graphql reads design-time types: decorator metadata must be emitted (esbuild cannot).
      transform: { legacyDecorator: true, decoratorMetadata: true },
    },
    module: { type: "commonjs" },
  },
];

module.exports = {
  testEnvironment: "node",
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
  globalSetup: "<rootDir>/test/support/global-setup.ts",
  globalTeardown: "<rootDir>/test/support/global-teardown.ts",
  setupFiles: ["reflect-metadata"],
  testTimeout: 60_000,
  maxWorkers: 2,
};
