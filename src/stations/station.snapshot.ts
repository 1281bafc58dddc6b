import type {
  Address,
  Contact,
  OpeningDay,
  ProductHandling,
  Station,
  StationRecord,
  TemperatureProducts,
} from "./station.view";
import { unavailableProduct } from "./station.view";

/** The station as GraphQL sees it: the REST object plus its time zone and products. */
export type StationView = Station & { timeZone: string | null; temperatureProducts: TemperatureProducts };

export interface StationEntry {
  readonly record: StationRecord;
  /** The REST station object (import address falling back to the export address). */
  readonly station: Station;
  /** `station` serialised once, so the hot read path sends bytes instead of stringifying. */
  readonly json: string;
  readonly products: TemperatureProducts;
  readonly productsJson: string;
  readonly view: StationView;
}

/** An immutable view of every station, built once per import. */
export class StationSnapshot {
  readonly codes: readonly string[];
  readonly codesJson: string;
  /** Every REST station object, sorted by code, serialised as one array. */
  readonly allJson: string;
  readonly all: readonly StationView[];
  private readonly byCode: ReadonlyMap<string, StationEntry>;

  constructor(
    readonly version: number,
    records: readonly StationRecord[],
  ) {
    const entries = [...records].sort((a, b) => (a.code < b.code ? -1 : 1)).map(toEntry);
    this.byCode = new Map(entries.map((e) => [e.record.code, e]));
    this.codes = entries.map((e) => e.record.code);
    this.codesJson = JSON.stringify(this.codes);
    this.allJson = `[${entries.map((e) => e.json).join(",")}]`;
    this.all = entries.map((e) => e.view);
  }

  get size(): number {
    return this.codes.length;
  }

  get(code: string): StationEntry | undefined {
    return this.byCode.get(code);
  }
}

// The database keeps the nested details as jsonb, which reorders keys; these rebuild every object in
// the specification's field order (and drop nothing, since the importer admits no other fields).
const address = (a: Address | null): Address | null =>
  a && { street: a.street, streetNo: a.streetNo, building: a.building, zipCode: a.zipCode, city: a.city };
const contact = (c: Contact | null): Contact | null =>
  c && {
    generalEmail: c.generalEmail,
    generalPhone: c.generalPhone,
    handlingEmail: c.handlingEmail,
    handlingPhone: c.handlingPhone,
  };
const hours = (days: OpeningDay[] | null): OpeningDay[] | null =>
  days && days.map((d) => ({ day: d.day, hours: d.hours.map((h) => ({ open: h.open, close: h.close })) }));
const product = (p: ProductHandling | undefined): ProductHandling =>
  p
    ? {
        available: p.available,
        temperatureRanges: p.temperatureRanges.map((r) => ({ min: r.min, max: r.max })),
        containerTypes: p.containerTypes,
        services: p.services,
        contact: { email: p.contact.email, phone: p.contact.phone },
        comment: p.comment,
      }
    : unavailableProduct();

function toEntry(record: StationRecord): StationEntry {
  const station: Station = {
    code: record.code,
    name: record.name,
    freighterHandling: record.freighterHandling,
    passengerAircraftHandling: record.passengerAircraftHandling,
    truckHandling: record.truckHandling,
    countryShort: record.countryShort,
    countryLong: record.countryLong,
    import: {
      // CONTRACT §2: a station without an import address is served with its export address.
      address: address(record.import.address ?? record.export.address),
      contact: contact(record.import.contact),
      firmsCode: record.import.firmsCode,
      ciscFee: record.import.ciscFee,
      storage: record.import.storage,
      externalComment: record.import.externalComment,
      openingHours: hours(record.import.openingHours),
    },
    export: {
      address: address(record.export.address),
      contact: contact(record.export.contact),
      openingHours: hours(record.export.openingHours),
    },
  };
  const products: TemperatureProducts = {
    code: record.code,
    active: product(record.temperatureProducts?.active),
    passive: product(record.temperatureProducts?.passive),
  };
  const view: StationView = { ...station, timeZone: record.timeZone, temperatureProducts: products };
  return { record, station, json: JSON.stringify(station), products, productsJson: JSON.stringify(products), view };
}
