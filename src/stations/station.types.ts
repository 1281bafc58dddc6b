import { Field, Float, ObjectType, registerEnumType } from "type-graphql";

export enum Weekday {
  MONDAY = "MONDAY",
  TUESDAY = "TUESDAY",
  WEDNESDAY = "WEDNESDAY",
  THURSDAY = "THURSDAY",
  FRIDAY = "FRIDAY",
  SATURDAY = "SATURDAY",
  SUNDAY = "SUNDAY",
}
registerEnumType(Weekday, { name: "Weekday" });

/**
 * Plain data types: their fields are read straight off the snapshot objects, so type-graphql's
 * per-field middleware wrapper is skipped (it dominated the cost of large station lists).
 */
const SIMPLE = { simpleResolvers: true } as const;

export enum StationSide {
  IMPORT = "IMPORT",
  EXPORT = "EXPORT",
}
registerEnumType(StationSide, { name: "StationSide", description: "Which counter: import or export handling." });

@ObjectType("Address", SIMPLE)
export class AddressType {
  @Field(() => String, { nullable: true }) street!: string | null;
  @Field(() => String, { nullable: true }) streetNo!: string | null;
  @Field(() => String, { nullable: true }) building!: string | null;
  @Field(() => String, { nullable: true }) zipCode!: string | null;
  @Field(() => String, { nullable: true }) city!: string | null;
}

@ObjectType("Contact", SIMPLE)
export class ContactType {
  @Field(() => String, { nullable: true }) generalEmail!: string | null;
  @Field(() => String, { nullable: true }) generalPhone!: string | null;
  @Field(() => String, { nullable: true }) handlingEmail!: string | null;
  @Field(() => String, { nullable: true }) handlingPhone!: string | null;
}

@ObjectType("Interval", { ...SIMPLE, description: "An interval in the station's local time; close may be 24:00." })
export class IntervalType {
  @Field({ description: "HH:mm" }) open!: string;
  @Field({ description: "HH:mm" }) close!: string;
}

@ObjectType("OpeningDay", SIMPLE)
export class OpeningDayType {
  @Field(() => Weekday) day!: Weekday;
  @Field(() => [IntervalType]) hours!: IntervalType[];
}

@ObjectType("ImportDetails", SIMPLE)
export class ImportDetailsType {
  @Field(() => AddressType, {
    nullable: true,
    description: "The export address where the station gives no import address.",
  })
  address!: AddressType | null;
  @Field(() => ContactType, { nullable: true }) contact!: ContactType | null;
  @Field(() => String, { nullable: true }) firmsCode!: string | null;
  @Field(() => String, { nullable: true, description: 'Cargo Import Service Charge, e.g. "EUR 35.00"' }) ciscFee!:
    string | null;
  @Field(() => String, { nullable: true }) storage!: string | null;
  @Field(() => String, { nullable: true }) externalComment!: string | null;
  @Field(() => [OpeningDayType], { nullable: true }) openingHours!: OpeningDayType[] | null;
}

@ObjectType("ExportDetails", SIMPLE)
export class ExportDetailsType {
  @Field(() => AddressType, { nullable: true }) address!: AddressType | null;
  @Field(() => ContactType, { nullable: true }) contact!: ContactType | null;
  @Field(() => [OpeningDayType], { nullable: true }) openingHours!: OpeningDayType[] | null;
}

@ObjectType("TemperatureRange", { ...SIMPLE, description: "Degrees Celsius" })
export class TemperatureRangeType {
  @Field(() => Float) min!: number;
  @Field(() => Float) max!: number;
}

@ObjectType("ProductContact", SIMPLE)
export class ProductContactType {
  @Field(() => String, { nullable: true }) email!: string | null;
  @Field(() => String, { nullable: true }) phone!: string | null;
}

@ObjectType("ProductHandling", SIMPLE)
export class ProductHandlingType {
  @Field() available!: boolean;
  @Field(() => [TemperatureRangeType]) temperatureRanges!: TemperatureRangeType[];
  @Field(() => [String]) containerTypes!: string[];
  @Field(() => [String]) services!: string[];
  @Field(() => ProductContactType) contact!: ProductContactType;
  @Field(() => String, { nullable: true }) comment!: string | null;
}

@ObjectType("TemperatureProducts", {
  ...SIMPLE,
  description: "Temperature-controlled product handling (active and passive).",
})
export class TemperatureProductsType {
  @Field() code!: string;
  @Field(() => ProductHandlingType) active!: ProductHandlingType;
  @Field(() => ProductHandlingType) passive!: ProductHandlingType;
}

// Simple too: its data fields are read off the snapshot's view; `openAt` keeps its resolver.
@ObjectType("Station", {
  ...SIMPLE,
  description: "A carrier station; the fields of the REST station object, and more.",
})
export class StationType {
  @Field({ description: "IATA code" }) code!: string;
  @Field() name!: string;
  @Field(() => Boolean, { nullable: true }) freighterHandling!: boolean | null;
  @Field(() => Boolean, { nullable: true }) passengerAircraftHandling!: boolean | null;
  @Field(() => Boolean, { nullable: true }) truckHandling!: boolean | null;
  @Field(() => String, { nullable: true, description: "ISO 3166-1 alpha-2" }) countryShort!: string | null;
  @Field(() => String, { nullable: true }) countryLong!: string | null;
  @Field(() => ImportDetailsType) import!: ImportDetailsType;
  @Field(() => ExportDetailsType) export!: ExportDetailsType;
  @Field(() => String, { nullable: true, description: "IANA time zone, e.g. Europe/Berlin" }) timeZone!: string | null;
  @Field(() => TemperatureProductsType) temperatureProducts!: TemperatureProductsType;
}
