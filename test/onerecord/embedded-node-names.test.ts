import { nameEmbeddedNodes, type NodeObject } from "../../src/onerecord/jsonld-tree";

/** nameEmbeddedNodes: blank nodes get the server's ids, IRI nodes keep theirs (docs/ONE-RECORD.md "Protocol"). */
const CARGO = "https://onerecord.iata.org/ns/cargo#";
const BASE = "https://gateway.example/onerecord/logistics-objects/";
const EMBEDDED = /^internal:[0-9a-f-]{36}$/;

describe("naming embedded nodes", () => {
  it("names blank nodes and client-given internal: ids, one id per label, references following; keeps IRIs", () => {
    const root: NodeObject = {
      "@id": `${BASE}piece`,
      [`${CARGO}grossWeight`]: [{ [`${CARGO}numericalValue`]: [{ "@value": 1 }] }],
      [`${CARGO}dimensions`]: [
        { "@id": "_:b0", [`${CARGO}height`]: [{ "@id": "internal:theirs", "@type": [`${CARGO}Value`] }] },
      ],
      [`${CARGO}volume`]: [{ "@id": "_:b0" }, { "@id": "_:only-referred" }],
      [`${CARGO}specialHandlingCodes`]: [
        {
          "@id": "https://onerecord.iata.org/ns/code-lists/SpecialHandlingCode#VAL",
          "@type": [`${CARGO}CodeListElement`],
        },
      ],
      [`${CARGO}eventTimeType`]: [{ "@id": `${CARGO}ACTUAL`, "@type": [`${CARGO}EventTimeType`] }],
    };
    const named = nameEmbeddedNodes(root);
    const [weight] = root[`${CARGO}grossWeight`] as NodeObject[];
    const [dimensions] = root[`${CARGO}dimensions`] as NodeObject[];
    const [height] = dimensions![`${CARGO}height`] as NodeObject[];
    const [volume, referred] = root[`${CARGO}volume`] as NodeObject[];
    expect(root["@id"]).toBe(`${BASE}piece`);
    for (const node of [weight, dimensions, height, referred]) expect(node!["@id"]).toMatch(EMBEDDED);
    expect(volume!["@id"]).toBe(dimensions!["@id"]);
    expect(named.get("_:b0")).toBe(dimensions!["@id"]);
    expect(height!["@id"]).not.toBe("internal:theirs");
    expect(root[`${CARGO}specialHandlingCodes`]).toEqual([
      {
        "@id": "https://onerecord.iata.org/ns/code-lists/SpecialHandlingCode#VAL",
        "@type": [`${CARGO}CodeListElement`],
      },
    ]);
    expect(root[`${CARGO}eventTimeType`]).toEqual([{ "@id": `${CARGO}ACTUAL`, "@type": [`${CARGO}EventTimeType`] }]);
  });

  it("with ownObjects, takes a typed link to one of this server's objects as a link and refuses redefining one", () => {
    const ownObjects = {
      isOwn: (id: string) => id.startsWith(BASE),
      refuse: (id: string) => new Error(`${id} is another logistics object`),
    };
    const linked: NodeObject = {
      "@id": "_:event",
      [`${CARGO}recordingOrganization`]: [{ "@id": `${BASE}organization-carrier`, "@type": [`${CARGO}Organization`] }],
      [`${CARGO}eventFor`]: [
        {
          "@id": "https://other.example/x",
          "@type": [`${CARGO}Shipment`],
          [`${CARGO}goodsDescription`]: [{ "@value": "theirs" }],
        },
      ],
    };
    nameEmbeddedNodes(linked, ownObjects);
    expect(linked[`${CARGO}recordingOrganization`]).toEqual([{ "@id": `${BASE}organization-carrier` }]);
    expect((linked[`${CARGO}eventFor`] as NodeObject[])[0]!["@id"]).toBe("https://other.example/x");

    const redefining: NodeObject = {
      [`${CARGO}recordingOrganization`]: [
        {
          "@id": `${BASE}organization-carrier`,
          "@type": [`${CARGO}Organization`],
          [`${CARGO}name`]: [{ "@value": "Mallory" }],
        },
      ],
    };
    expect(() => nameEmbeddedNodes(redefining, ownObjects)).toThrow(
      `${BASE}organization-carrier is another logistics object`,
    );
    // Without ownObjects (the default) such a node keeps its IRI; the caller decides.
    expect(() => nameEmbeddedNodes(structuredClone(redefining))).not.toThrow();
  });
});
