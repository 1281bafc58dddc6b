import type { OpeningDay } from "../domain/opening-hours";

/**
 * The station object exactly as the specification's REST routes return it. Every field is present;
 * an unavailable one is null.
 */
export interface Station {
  code: string;
  name: string;
  freighterHandling: boolean | null;
  passengerAircraftHandling: boolean | null;
  truckHandling: boolean | null;
  countryShort: string | null;
  countryLong: string | null;
  import: ImportDetails;
  export: ExportDetails;
}

export interface Address {
  street: string | null;
  streetNo: string | null;
  building: string | null;
  zipCode: string | null;
  city: string | null;
}

export interface Contact {
  generalEmail: string | null;
  generalPhone: string | null;
  handlingEmail: string | null;
  handlingPhone: string | null;
}

// Opening hours are a domain rule (domain/opening-hours.ts); the station object carries them.
export { WEEKDAYS, type Weekday, type Interval, type OpeningDay } from "../domain/opening-hours";

export interface ImportDetails {
  address: Address | null;
  contact: Contact | null;
  firmsCode: string | null;
  /** Cargo Import Service Charge as the carrier publishes it, e.g. "EUR 35.00". */
  ciscFee: string | null;
  storage: string | null;
  externalComment: string | null;
  openingHours: OpeningDay[] | null;
}

export interface ExportDetails {
  address: Address | null;
  contact: Contact | null;
  openingHours: OpeningDay[] | null;
}

/** Degrees Celsius. */
export interface TemperatureRange {
  min: number;
  max: number;
}

export interface ProductHandling {
  available: boolean;
  temperatureRanges: TemperatureRange[];
  containerTypes: string[];
  services: string[];
  contact: { email: string | null; phone: string | null };
  comment: string | null;
}

/** CONTRACT §4: GET /{carrier}/stations/products/{IATACode}. */
export interface TemperatureProducts {
  code: string;
  active: ProductHandling;
  passive: ProductHandling;
}

/**
 * One record of a station file (the importer's input and the bundled data set): the station object
 * plus what the REST object does not carry. `import.address` may be null; it is then served as the
 * export address.
 */
export interface StationRecord extends Station {
  /** IANA time zone of the station, e.g. "Europe/Berlin". */
  timeZone: string | null;
  temperatureProducts: { active: ProductHandling; passive: ProductHandling } | null;
}

export function unavailableProduct(): ProductHandling {
  return {
    available: false,
    temperatureRanges: [],
    containerTypes: [],
    services: [],
    contact: { email: null, phone: null },
    comment: null,
  };
}
