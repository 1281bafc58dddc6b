import { readFile } from "node:fs/promises";
import path from "node:path";
import { printGatewaySchema } from "../src/graphql/schema";

describe("schema.graphql", () => {
  it("is what the code generates (run `npm run schema` when this fails)", async () => {
    const committed = await readFile(path.resolve(__dirname, "../schema.graphql"), "utf8");
    expect(committed).toBe(await printGatewaySchema());
  });
});
