import Redis from "ioredis";
import { disconnectRedis } from "../src/redis";
import { freePort, type PrivateService, startPrivateRedis } from "./support/private-services";

describe("disconnectRedis", () => {
  let redis: PrivateService;
  beforeAll(async () => {
    redis = await startPrivateRedis();
  });
  afterAll(() => redis.dispose());

  it("resolves once a connected client has ended", async () => {
    const client = new Redis(redis.url);
    expect(await client.ping()).toBe("PONG");
    await disconnectRedis(client);
    expect(client.status).toBe("end");
  });

  it("resolves at once for a client that has ended already", async () => {
    const client = new Redis(redis.url);
    await disconnectRedis(client);
    // With the clock stopped, only an answer that waits for nothing settles.
    jest.useFakeTimers();
    try {
      await disconnectRedis(client);
    } finally {
      jest.useRealTimers();
    }
    expect(client.status).toBe("end");
  });

  it("ends a client still trying to reach a server that is not there", async () => {
    const client = new Redis(`redis://127.0.0.1:${await freePort()}`, { maxRetriesPerRequest: 0 });
    client.on("error", () => {}); // the refused connection attempts
    await disconnectRedis(client);
    expect(client.status).toBe("end");
  });
});
