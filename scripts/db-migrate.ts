// npm run db:migrate -- <name>: writes a new migration from the difference between
// prisma/migrations and prisma/schema.prisma. Needs no database server.
import { createMigration } from "../src/db/migrations";

async function main(): Promise<void> {
  const name = process.argv[2];
  if (!name) {
    console.error("usage: npm run db:migrate -- <name>   (lower-case letters, digits and _)");
    process.exit(2);
  }
  const dir = await createMigration(name);
  console.log(
    dir === null ? "schema.prisma and the migrations agree: nothing to create." : `created ${dir}/migration.sql`,
  );
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
