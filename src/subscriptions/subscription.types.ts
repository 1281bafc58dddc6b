import { Field, ID, InputType, Int, ObjectType, registerEnumType } from "type-graphql";
import { checkDigitValid } from "../domain/awb";
import { ALL_STATES, STATUS_CODES } from "../domain/status";
import type { Subscription } from "./subscription.service";

/** CONTRACT §8: the status codes as a GraphQL enum; ALL stands for "*". */
export enum StatusCode {
  RCS = "RCS",
  MAN = "MAN",
  DEP = "DEP",
  ARR = "ARR",
  RCF = "RCF",
  NFD = "NFD",
  DLV = "DLV",
  DDL = "DDL",
  RCT = "RCT",
  TFD = "TFD",
  DIS = "DIS",
  TOA = "TOA",
  ALL = "ALL",
}
registerEnumType(StatusCode, {
  name: "StatusCode",
  description: 'Milestone status codes in the order of the status table; ALL means every code ("*" in REST).',
});

export function toStoredCode(code: StatusCode): string {
  return code === StatusCode.ALL ? ALL_STATES : code;
}

export function toStatusCode(code: string): StatusCode {
  if (code === ALL_STATES) return StatusCode.ALL;
  if (!(STATUS_CODES as readonly string[]).includes(code)) throw new Error(`not a status code: ${code}`);
  return code as StatusCode;
}

@ObjectType("AwbSubscription", { description: "A client's subscription to one AWB's milestones." })
export class SubscriptionType {
  constructor(s: Subscription) {
    this.subscriptionId = s.id;
    this.awb = s.awb;
    this.callback = s.callback;
    this.states = s.states.map(toStatusCode);
    this.checkDigitValid = checkDigitValid(s.awb.slice(4));
    this.createdAt = s.createdAt;
    this.updatedAt = s.updatedAt;
    this.expiresAt = s.expiresAt;
    this.disabledAt = s.disabledAt;
    this.disabledReason = s.disabledReason;
  }

  @Field(() => ID) subscriptionId: string;
  @Field({ description: "Canonical form, e.g. 020-12345675" }) awb: string;
  @Field() callback: string;
  @Field(() => [StatusCode]) states: StatusCode[];
  @Field({ description: "Whether the serial's last digit is the first seven digits mod 7." }) checkDigitValid: boolean;
  @Field() createdAt: Date;
  @Field() updatedAt: Date;
  @Field(() => Date, {
    nullable: true,
    description: "After this nothing is sent and it no longer counts toward the cap; null: never.",
  })
  expiresAt: Date | null;
  @Field(() => Date, {
    nullable: true,
    description:
      "When delivery disabled it (every attempt failed for DELIVERY_DISABLE_AFTER); null: enabled. enableSubscription enables it again.",
  })
  disabledAt: Date | null;
  @Field(() => String, { nullable: true, description: "Why it was disabled." }) disabledReason: string | null;
}

@InputType("SubscriptionInput")
export class SubscriptionInputType {
  @Field({ description: "020-12345675, 02012345675 or 020 12345675" }) awb!: string;
  @Field({ description: "An http(s) URL whose OPTIONS answer allows POST" }) callback!: string;
  @Field(() => [StatusCode]) states!: StatusCode[];
  @Field(() => Date, {
    nullable: true,
    description:
      "In the future; after it nothing is sent and it no longer counts. Null: never (an update without it clears it).",
  })
  expiresAt?: Date | null;
}

@ObjectType("DeliveryCounts", { description: "How this subscription's notifications stand." })
export class DeliveryCountsType {
  @Field(() => Int) pending!: number;
  @Field(() => Int) delivered!: number;
  @Field(() => Int) dead!: number;
}

@ObjectType("SubscriptionPage")
export class SubscriptionPageType {
  @Field(() => [SubscriptionType]) items!: SubscriptionType[];
  @Field(() => String, { nullable: true, description: "Pass as `after` for the next page; null on the last page." })
  nextCursor!: string | null;
}
