import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import jsonld from "jsonld";
import { compactTree } from "../../src/onerecord/jsonld-compact";
import { API, CARGO, ONE_RECORD_CONTEXT, XSD } from "../../src/onerecord/jsonld-context";
import type { NodeObject } from "../../src/onerecord/jsonld-tree";
import { actionRequestNode, auditTrailNodes } from "../../src/onerecord/objects/action-request.view";
import type { ActionRequestRow } from "../../src/onerecord/sql/action-request-columns";
import { createOneRecordUris } from "../../src/onerecord/uris";
import { runsInSuite } from "../support/suite";

/**
 * The fast compaction (jsonld-compact.ts) gives what jsonld.js's compact() gives, for every tree it
 * takes: the specification's examples, the action requests and audit trails the server builds, and
 * generated trees over the same vocabulary. What it does not take, it says so (undefined).
 */
async function byJsonLd(node: NodeObject): Promise<Record<string, unknown>> {
  const compacted = (await jsonld.compact(node, ONE_RECORD_CONTEXT as jsonld.ContextDefinition)) as Record<
    string,
    unknown
  >;
  delete compacted["@context"];
  return compacted;
}

async function expectSame(node: NodeObject): Promise<boolean> {
  const fast = compactTree(node);
  if (fast === undefined) return false;
  expect(fast).toEqual(await byJsonLd(node));
  return true;
}

const uris = createOneRecordUris(() => "https://1r.example.com/onerecord");

describe("fast JSON-LD compaction", () => {
  it("compacts every node of the specification's examples as jsonld.js does, or leaves it to jsonld.js", async () => {
    const dir = path.join(__dirname, "examples");
    let taken = 0;
    let nodes = 0;
    for (const name of readdirSync(dir).filter((file) => file.endsWith(".json"))) {
      const expanded = (await jsonld.expand(JSON.parse(readFileSync(path.join(dir, name), "utf8")))) as NodeObject[];
      for (const node of expanded) {
        nodes++;
        if (await expectSame(node)) taken++;
      }
    }
    // Most are taken; the rest use what only jsonld.js compacts (a typed term holding another type, a
    // language, a list).
    expect(nodes).toBeGreaterThan(40);
    expect(taken).toBeGreaterThan(nodes / 2);
  });

  it("compacts the action requests and audit trails the server builds as jsonld.js does", async () => {
    const change: NodeObject = {
      "@id": "internal:r-change",
      "@type": [`${API}Change`],
      [`${API}hasLogisticsObject`]: [{ "@id": "piece-1" }],
      [`${API}hasRevision`]: [{ "@value": "2", "@type": `${XSD}positiveInteger` }],
      [`${API}hasOperation`]: [
        {
          "@id": "internal:r-change-operation-1",
          "@type": [`${API}Operation`],
          [`${API}op`]: [{ "@id": `${API}ADD` }],
          [`${API}s`]: [{ "@value": "piece-1" }],
          [`${API}p`]: [{ "@value": `${CARGO}goodsDescription`, "@type": `${XSD}anyURI` }],
          [`${API}o`]: [
            {
              "@id": "internal:r-change-operation-1-object-1",
              "@type": [`${API}OperationObject`],
              [`${API}hasDatatype`]: [{ "@value": `${XSD}string`, "@type": `${XSD}anyURI` }],
              [`${API}hasValue`]: [{ "@value": "BOOKS" }],
            },
          ],
        },
      ],
    };
    const row = (overrides: Partial<ActionRequestRow>): ActionRequestRow => ({
      id: "6b948f9b-b812-46ed-be39-4501453da99b",
      kind: "CHANGE_REQUEST",
      object_id: "piece-1",
      status: "REQUEST_PENDING",
      request: change,
      requested_by: "organization-carrier",
      requested_at: new Date("2026-12-01T10:00:00.120Z"),
      decided_at: null,
      decided_by: null,
      reason: null,
      error_status: null,
      revision: 2,
      ...overrides,
    });
    const rows = [
      row({}),
      row({
        status: "REQUEST_FAILED",
        decided_at: new Date(),
        decided_by: "organization-carrier",
        reason: "The change applies to revision 2",
        error_status: 409,
      }),
      row({ status: "REQUEST_REVOKED", decided_at: new Date(), decided_by: "organization-x" }),
    ];
    for (const version of ["2.2.0", "2.3.0"] as const)
      for (const each of rows) expect(await expectSame(actionRequestNode(each, uris, version))).toBe(true);
    const { trail } = auditTrailNodes("piece-1", rows, 3, uris, "2.3.0");
    expect(await expectSame(trail)).toBe(true);
  });

  it("compacts generated trees over the vocabulary as jsonld.js does, whenever it takes them", async () => {
    const iri = fc.constantFrom(
      `${API}hasChange`,
      `${API}hasRevision`,
      `${API}isRequestedAt`,
      `${API}hasLatestRevision`,
      `${CARGO}goodsDescription`,
      `${CARGO}grossWeight`,
      "https://example.com/other#thing",
    );
    const type = fc.constantFrom(`${XSD}positiveInteger`, `${XSD}dateTime`, `${XSD}string`, `${XSD}anyURI`);
    const literal = fc.oneof(
      fc.record({ "@value": fc.oneof(fc.string(), fc.integer(), fc.boolean()) }),
      fc.record({ "@value": fc.string(), "@type": type }),
    );
    const reference = fc.record({
      "@id": fc.constantFrom(
        `${API}REQUEST_PENDING`,
        `${CARGO}Piece`,
        "https://1r.example.com/x",
        "_:b0",
        "internal:a",
      ),
    });
    const { node } = fc.letrec<{ node: NodeObject; value: unknown }>((tie) => ({
      node: fc
        .record(
          {
            "@id": fc.constantFrom("https://1r.example.com/onerecord/logistics-objects/p", "internal:e1", "_:b1"),
            "@type": fc.array(fc.constantFrom(`${CARGO}Piece`, `${API}Change`, "https://example.com/T"), {
              minLength: 1,
              maxLength: 2,
            }),
            properties: fc.dictionary(iri, fc.array(tie("value"), { minLength: 1, maxLength: 3 }), { maxKeys: 4 }),
          },
          { requiredKeys: ["properties"] },
        )
        .map(({ properties, ...rest }): NodeObject => ({ ...rest, ...properties })),
      value: fc.oneof({ depthSize: "small", withCrossShrink: true }, literal, reference, tie("node")),
    }));
    let taken = 0;
    await fc.assert(
      fc.asyncProperty(node, async (tree) => {
        if (await expectSame(tree)) taken++;
      }),
      { numRuns: runsInSuite(400), seed: 20261205 },
    );
    expect(taken).toBeGreaterThan(0);
  });
});
