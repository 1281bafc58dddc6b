import { buildSchema, parse } from "graphql";
import { createLiveOperations } from "../src/live/live-operations";
import type { LiveMilestone } from "../src/live/live-events";

const event = (eventId: string, state = "DEP"): LiveMilestone => ({
  eventId,
  clientEventId: null,
  sequence: "1",
  awb: "020-12345675",
  state,
  timestamp: "2026-11-21T10:00:00.000Z",
  toaTimestamp: null,
  receivedAt: "2026-11-21T10:00:01.000Z",
  station: null,
  flight: null,
});

describe("live operations", () => {
  const schema = buildSchema(
    `type Query { x: Int } type Event { id: ID! state: String! } type Subscription { events(tag: String): Event! }`,
  );
  let resolved = 0;
  // An asynchronous resolver: every caller that asks before it settles must get the same promise.
  schema.getSubscriptionType()!.getFields().events!.resolve = async (payload: LiveMilestone) => {
    resolved++;
    await new Promise((r) => setTimeout(r, 10));
    return { id: payload.eventId, state: payload.state };
  };

  it("renders an event once for every concurrent caller of the same operation, and again for another operation", async () => {
    const operations = createLiveOperations({ schema, format: (r) => r });
    const document = parse(`subscription { events { id state } }`);
    const feeds = Array.from({ length: 1_000 }, () => operations.acquire({ document }));
    // All thousand ask in the same tick, as the subscribers woken by one event do.
    // payloadFor answers a string once rendered, a promise while rendering: here, all promises.
    const payloads = await Promise.all(feeds.map((f) => Promise.resolve(f.payloadFor(event("e1")))));
    expect(new Set(payloads)).toEqual(new Set([JSON.stringify({ data: { events: { id: "e1", state: "DEP" } } })]));
    expect(resolved).toBe(1);
    expect(operations.executions()).toBe(1);
    expect(operations.size).toBe(1);

    const other = operations.acquire({ document, variableValues: { tag: "x" } });
    await other.payloadFor(event("e1"));
    expect(operations.executions()).toBe(2);
    expect(operations.size).toBe(2);

    for (const f of feeds) f.release();
    other.release();
    expect(operations.size).toBe(0);
  });

  it("shares a rendering between subscribers whose variables differ only in where they resume (`after`)", () => {
    const operations = createLiveOperations({ schema, format: (r) => r });
    // `after` is not an argument of this test schema's field (nothing validates here); what counts is how the document uses it.
    const resuming = parse(`subscription($tag: String, $after: String) { events(tag: $tag, after: $after) { id } }`);
    const a = operations.acquire({ document: resuming, variableValues: { tag: "x", after: "3" } });
    const b = operations.acquire({ document: resuming, variableValues: { tag: "x", after: "17" } });
    const c = operations.acquire({ document: resuming, variableValues: { tag: "y", after: "3" } });
    expect(operations.size).toBe(2);
    a.release();
    b.release();
    c.release();
  });
});
