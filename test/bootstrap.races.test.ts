/**
 * Instances started at once on an empty PostgreSQL database: one of them creates the first client,
 * the others find it.
 */
import { randomBytes } from "node:crypto";
import { createClientService } from "../src/clients/client.service";
import { createSecretBox } from "../src/clients/secret-box";
import { openDatabase } from "../src/db/database";
import { describeBackend, Disposers, silentLogger } from "./support/harness";
import { createPostgresDatabase } from "./support/postgres";

describeBackend("postgres")("first starts at once on an empty database", () => {
  const disposers = new Disposers();
  afterAll(() => disposers.disposeAll());

  it("creates one bootstrap client between eight instances racing on their own connections", async () => {
    const database = await createPostgresDatabase();
    disposers.add(database.drop);
    const secrets = createSecretBox(randomBytes(32));
    // Each instance with its own pool, as separate processes would be; migrated before the race.
    const instances = [];
    for (let i = 0; i < 8; i++) {
      const opened = await openDatabase({ kind: "postgres", url: database.url });
      disposers.add(() => opened.close());
      instances.push(createClientService({ prisma: opened.prisma, log: silentLogger, secrets }));
    }
    const outcomes = await Promise.all(
      instances.map((clients) => clients.ensureBootstrapClient({ callbackPrefixes: ["*"] })),
    );
    expect(outcomes.filter((o) => o.created)).toHaveLength(1);
    const [first] = instances;
    const listed = await first!.listClients();
    expect(listed).toHaveLength(1);
    expect(listed[0]!.keys).toHaveLength(1);
  }, 120_000);
});
