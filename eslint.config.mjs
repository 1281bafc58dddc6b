// Lint: type-aware rules (floating and misused promises, unused variables, unsafe `any`) over src/,
// test/, scripts/ and web/. Formatting is Prettier's (`npm run format:check`), not ESLint's.
import js from "@eslint/js";
import globals from "globals";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/", "data/", "coverage/", "generated/", "node_modules/", "stubs/", "test-output/"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ["*.js", "*.mjs", "*.cjs", "scripts/*.js", "prisma.config.ts"] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", caughtErrors: "none" }],
      // An async member without await is how a promise-returning interface member (an Apollo plugin
      // hook, an injected store function) is written most plainly.
      "@typescript-eslint/require-await": "off",
    },
  },
  {
    // Plain JavaScript has no types to check against: the syntax rules only.
    files: ["**/*.js", "**/*.cjs", "**/*.mjs"],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // Plain CommonJS run by Node: the build, setup and test launchers and tool configs.
    files: ["**/*.js", "**/*.cjs"],
    languageOptions: { globals: globals.node, sourceType: "commonjs" },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
  {
    // Tests read JSON answers and GraphQL results as `any` on purpose: the assertions are the
    // type check. Everything else (promises, unused variables) holds as in src/.
    files: ["test/**/*.ts"],
    rules: {
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-unsafe-return": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-explicit-any": "off",
    },
  },
);
