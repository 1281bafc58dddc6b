import { buildSchema, parse } from "graphql";
import { createSharedSubscribe } from "../src/live/shared-subscribe";

describe("shared subscription execution", () => {
  it("executes one event for one operation once, however many subscribers asked it", async () => {
    let resolved = 0;
    const schema = buildSchema(`type Query { x: Int } type Event { id: ID! n: Int! } type Subscription { events(tag: String): Event! }`);
    const events = [{ eventId: "e1", n: 1 }, { eventId: "e2", n: 2 }];
    // Each subscriber gets its own source stream of the same events, as each socket does.
    const rootValue = {
      events: async function* () {
        for (const e of events) yield e;
      },
    };
    const fields = schema.getSubscriptionType()!.getFields();
    fields.events!.resolve = (payload: { eventId: string; n: number }) => {
      resolved++;
      return { id: payload.eventId, n: payload.n };
    };
    const subscribe = createSharedSubscribe((payload) => (payload as { eventId: string }).eventId);
    const run = async (query: string, variables?: Record<string, unknown>) => {
      const stream = (await subscribe({ schema, document: parse(query), rootValue, variableValues: variables })) as AsyncGenerator<unknown>;
      const out: unknown[] = [];
      for await (const result of stream) out.push(result);
      return out;
    };
    const a = await run(`subscription { events { id n } }`);
    const b = await run(`subscription   { events { id n } }`); // same operation, other spacing
    expect(b).toEqual(a);
    expect(b[0]).toBe(a[0]); // the very same result object
    expect(resolved).toBe(2);
    const c = await run(`subscription($t: String) { events(tag: $t) { id } }`, { t: "x" });
    expect(c).toEqual([{ data: { events: { id: "e1" } } }, { data: { events: { id: "e2" } } }]);
    expect(resolved).toBe(4);
  });
});
