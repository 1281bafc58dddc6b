import { createClient } from "graphql-ws";
import WebSocket from "ws";
import { ADMIN_KEY, Disposers, startApp } from "./support/harness";
import { postJson } from "./support/http";

/** An introspection query nested exactly `levels` fields deep (the real schema is not that deep). */
function deepQuery(levels: number): string {
  let nested = "name";
  for (let i = 0; i < levels - 3; i++) nested = `ofType { ${nested} }`;
  return `{ __schema { types { ${nested} } } }`;
}

describe("GraphQL depth limit", () => {
  const disposers = new Disposers();
  let url: string;
  beforeAll(async () => {
    ({ url } = await startApp("pglite", disposers));
  });
  afterAll(() => disposers.disposeAll());

  it("accepts the deepest real station query and refuses an operation nested deeper than 12 levels", async () => {
    const ok = await postJson(`${url}/graphql`, { query: `{ station(code: "FRA") { import { openingHours { hours { open close } } } } }` });
    expect(ok.body.errors).toBeUndefined();
    expect((await postJson(`${url}/graphql`, { query: deepQuery(12) })).body.errors).toBeUndefined();
    const deep = await postJson(`${url}/graphql`, { query: deepQuery(13) });
    expect(deep.body.data).toBeUndefined();
    expect(deep.body.errors[0].extensions).toEqual({ code: "QUERY_TOO_COMPLEX" });
    expect(deep.body.errors[0].message).toContain("at most 12");
  });

  it("applies the same limit over websockets", async () => {
    const client = createClient({ url: `${url.replace("http", "ws")}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0, connectionParams: { authorization: `Bearer ${ADMIN_KEY}` } });
    disposers.add(() => client.dispose());
    const errors = await new Promise<unknown>((resolve) => {
      client.subscribe({ query: deepQuery(13) }, { next: () => {}, error: resolve, complete: () => resolve(undefined) });
    });
    expect(JSON.stringify(errors)).toContain("QUERY_TOO_COMPLEX");
  });
});
