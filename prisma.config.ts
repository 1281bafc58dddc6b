import { defineConfig } from "prisma/config";

// Only `prisma generate` uses the Prisma CLI here; migrations are created and applied by
// src/db/migrations.ts through the schema engine's WebAssembly build (see docs/ARCHITECTURE.md).
export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
});
