import { Field, Float, ID, Int, ObjectType } from "type-graphql";
import type { StoredCarrierStatus } from "./carrier-status.store";

@ObjectType("CarrierStatusQuantity", { description: "Pieces and weight a carrier status gave." })
export class CarrierStatusQuantityType {
  @Field({ description: "T: the total consignment; P: part of it; D, S: divided or split." }) shipment!: string;
  @Field(() => Int, { nullable: true }) pieces!: number | null;
  @Field(() => Float, { nullable: true }) weight!: number | null;
  @Field(() => String, { nullable: true, description: "K: kilograms, L: pounds." }) weightUnit!: string | null;
  @Field(() => Int, { nullable: true, description: "The consignment's total pieces, when given." }) totalPieces!:
    number | null;
}

@ObjectType("CarrierStatus", {
  description:
    "A status an FSU or XFSU message reported for an AWB: a gateway milestone or not (FOH, customs codes, OCI lines…).",
})
export class CarrierStatusType {
  constructor(s: StoredCarrierStatus) {
    this.id = s.id;
    this.awb = s.awb;
    this.code = s.code;
    this.mapped = s.mapped;
    this.milestoneEventId = s.milestoneId;
    this.reason = s.reason;
    this.format = s.format;
    this.sourceLine = s.sourceLine;
    this.sourceElement = s.sourceElement;
    this.sourceText = s.sourceText;
    this.timestamp = s.occurredAt;
    this.timeBasis = s.timeBasis;
    this.station = s.station;
    this.flight = s.flight;
    this.flightDate = s.flightDate;
    this.carrier = s.carrierCode;
    this.discrepancy = s.discrepancy;
    this.toaTimestamp = s.toaTimestamp;
    this.quantity =
      s.shipment === null
        ? null
        : Object.assign(new CarrierStatusQuantityType(), {
            shipment: s.shipment,
            pieces: s.pieces,
            weight: s.weight,
            weightUnit: s.weightUnit,
            totalPieces: s.totalPieces,
          });
    this.receivedAt = s.receivedAt;
  }

  @Field(() => ID) id: string;
  @Field() awb: string;
  @Field({ description: "The status code as the message gives it (RCS, FOH, OCI, …)." }) code: string;
  @Field({ description: "Whether it is a gateway milestone (stored and delivered as one)." }) mapped: boolean;
  @Field(() => ID, { nullable: true, description: "The stored milestone's eventId, when mapped." })
  milestoneEventId: string | null;
  @Field(() => String, { nullable: true, description: "Why it is not a milestone, when not mapped." }) reason:
    string | null;
  @Field({ description: "FSU or XFSU." }) format: string;
  @Field(() => Int, { nullable: true, description: "The FSU line it was read from." }) sourceLine: number | null;
  @Field(() => String, { nullable: true, description: "The XFSU element it was read from." }) sourceElement:
    string | null;
  @Field({ description: "The text it was read from." }) sourceText: string;
  @Field(() => Date, { nullable: true, description: "When it happened, when the message said." })
  timestamp: Date | null;
  @Field(() => String, { nullable: true, description: "utc, local, day or received: how the time was found." })
  timeBasis: string | null;
  @Field(() => String, { nullable: true }) station: string | null;
  @Field(() => String, { nullable: true }) flight: string | null;
  @Field(() => String, { nullable: true, description: "The flight's day, YYYY-MM-DD." }) flightDate: string | null;
  @Field(() => String, { nullable: true, description: "RCT, TFD: the carrier received from or transferred to." })
  carrier: string | null;
  @Field(() => String, { nullable: true, description: "DIS: the discrepancy code." }) discrepancy: string | null;
  @Field(() => Date, { nullable: true }) toaTimestamp: Date | null;
  @Field(() => CarrierStatusQuantityType, { nullable: true }) quantity: CarrierStatusQuantityType | null;
  @Field() receivedAt: Date;
}
