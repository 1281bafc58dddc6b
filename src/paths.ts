import path from "node:path";

/** prisma/ at the repository root (schema, migrations, bundled data), found from src/ or dist/src/. */
export const PRISMA_DIR = path.resolve(
  __dirname,
  __dirname.includes(`${path.sep}dist${path.sep}`) ? "../../prisma" : "../prisma",
);
