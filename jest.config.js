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
  // The schema engine's wasm glue is an ES module; let swc turn it into CommonJS for Jest.
  transformIgnorePatterns: ["/node_modules/(?!@prisma/schema-engine-wasm/)"],
  // Prisma's generated client imports its siblings as "./x.js"; the sources are .ts.
  moduleNameMapper: { "^(\\.{1,2}/.*)\\.js$": "$1" },
  globalSetup: "<rootDir>/test/support/global-setup.ts",
  setupFiles: ["reflect-metadata"],
  testTimeout: 60_000,
  maxWorkers: 2,
};
