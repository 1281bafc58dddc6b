import { Field, ID, ObjectType } from "type-graphql";

@ObjectType("OneRecordPartner", {
  description: "A ONE Record partner as the operator registered it: where its server is, what it is offered.",
})
export class OneRecordPartnerType {
  @Field(() => ID, { description: "Its Organization: organization-<client id>, or its agent's URI" })
  organization!: string;
  @Field({ description: "Its ONE Record server's base URL" }) serverUrl!: string;
  @Field(() => ID, { nullable: true, description: "The API client it is; null for an OIDC agent" })
  clientId!: string | null;
  @Field({ description: "Offered publisher-initiated subscriptions" }) proposeSubscriptions!: boolean;
  @Field({ description: "Told of this server's new AWB objects" }) announceObjects!: boolean;
  @Field(() => String, { nullable: true, description: "The audience of the tokens it is sent" })
  audience!: string | null;
  @Field() createdAt!: Date;
}
