import { Field, ID, InputType, Int, ObjectType } from "type-graphql";
import { StatusCode } from "../subscriptions/subscription.types";
import { clientEventIdOf } from "../domain/event-id";
import type { StoredMilestone } from "./milestone.service";
import type { MilestoneView } from "./milestone.view";

@ObjectType("StatusEvent", { description: "A stored milestone of an AWB." })
export class StatusEventType {
  constructor(e: StoredMilestone) {
    this.eventId = e.id;
    this.clientEventId = clientEventIdOf(e.dedupeKey);
    this.sequence = e.position.toString();
    this.awb = e.awb;
    this.state = e.state as StatusCode;
    this.timestamp = e.occurredAt;
    this.toaTimestamp = e.toaTimestamp;
    this.receivedAt = e.receivedAt;
    this.station = e.station;
    this.flight = e.flight;
  }

  /** From the view live events carry (the same fields, as JSON). */
  static fromView(v: MilestoneView): StatusEventType {
    const type = Object.create(StatusEventType.prototype) as StatusEventType;
    Object.assign(type, {
      eventId: v.eventId,
      clientEventId: v.clientEventId ?? null, // absent from an older instance's publishes (rolling upgrade)
      sequence: v.sequence,
      awb: v.awb,
      state: v.state as StatusCode,
      timestamp: new Date(v.timestamp),
      toaTimestamp: v.toaTimestamp === null ? null : new Date(v.toaTimestamp),
      receivedAt: new Date(v.receivedAt),
      station: v.station,
      flight: v.flight,
    });
    return type;
  }

  @Field(() => ID, { description: "The gateway's id of the stored event." }) eventId: string;
  @Field(() => String, {
    nullable: true,
    description: "The eventId the ingesting caller gave (its idempotency key), or null.",
  })
  clientEventId: string | null;
  @Field({
    description:
      "The event's place in its AWB's stream (1, 2, 3, … in the order they were stored): pass the last one seen as `after` to catch up.",
  })
  sequence: string;
  @Field() awb: string;
  @Field(() => StatusCode) state: StatusCode;
  @Field({ description: "When the milestone happened." }) timestamp: Date;
  @Field(() => Date, { nullable: true, description: "Time of arrival, for TOA events." }) toaTimestamp: Date | null;
  @Field({ description: "When the gateway received it." }) receivedAt: Date;
  @Field(() => String, { nullable: true, description: "IATA code of the station where it happened." }) station:
    string | null;
  @Field(() => String, { nullable: true, description: "Flight, e.g. LH8160." }) flight: string | null;
}

@InputType("StatusEventInput")
export class StatusEventInputType {
  @Field(() => String, { nullable: true, description: "Your id for the event; a repeat is stored once." }) eventId?:
    string | null;
  @Field() awb!: string;
  @Field(() => StatusCode, {
    description: "One status code (RCS … TOA); ALL is refused here (an event has one state).",
  })
  state!: StatusCode;
  @Field(() => String, { nullable: true, description: "ISO 8601 with offset; default: when received" }) timestamp?:
    string | null;
  @Field(() => String, { nullable: true, description: "ISO 8601 with offset; TOA only" }) toaTimestamp?: string | null;
  @Field(() => String, { nullable: true }) station?: string | null;
  @Field(() => String, { nullable: true }) flight?: string | null;
}

@ObjectType("IngestResult")
export class IngestResultType {
  @Field(() => ID, { description: "The gateway's id of the stored event (for a repeat: the one stored first)." })
  eventId!: string;
  @Field(() => String, { nullable: true, description: "The eventId you sent, or null." }) clientEventId!: string | null;
  @Field() duplicate!: boolean;
  @Field(() => Int, { description: "Subscriptions notified, webhook and ONE Record ones (0 for a duplicate)." })
  matchedSubscriptions!: number;
}
