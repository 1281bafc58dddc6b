import { mapIds, nodesOf, type NodeObject } from "../../src/onerecord/jsonld-tree";

describe("expanded JSON-LD trees", () => {
  it("refuses a tree that contains itself instead of overflowing the stack", () => {
    const node: NodeObject = { "@id": "internal:a" };
    node["https://onerecord.iata.org/ns/cargo#unit"] = [node];
    expect(() => mapIds(node, () => undefined)).toThrow(new TypeError("A JSON-LD tree that contains itself"));
    expect(() => nodesOf(node)).toThrow(new TypeError("A JSON-LD tree that contains itself"));
  });

  it("maps a node reached twice, but not through itself, as two copies", () => {
    const shared: NodeObject = { "@id": "x" };
    const root: NodeObject = { "@id": "root", p: [shared, shared] };
    expect(mapIds(root, (id) => `b/${id}`)).toEqual({ "@id": "b/root", p: [{ "@id": "b/x" }, { "@id": "b/x" }] });
  });
});
