import { Field, ID, Int, ObjectType } from "type-graphql";

@ObjectType("ApiKeyInfo", { description: "An API key as stored: never the key itself." })
export class ApiKeyInfoType {
  @Field(() => ID) id!: string;
  @Field({ description: "The first characters of the key, to recognise it" }) lookupPrefix!: string;
  @Field(() => [String]) scopes!: string[];
  @Field(() => String, { nullable: true }) label!: string | null;
  @Field() createdAt!: Date;
  @Field(() => Date, { nullable: true }) revokedAt!: Date | null;
}

@ObjectType("ApiClient")
export class ApiClientType {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field(() => [String]) callbackPrefixes!: string[];
  @Field(() => Int) maxSubscriptions!: number;
  @Field() createdAt!: Date;
  @Field(() => Date, {
    nullable: true,
    description: "When the secret replaced by the last rotation stops signing deliveries; null when none still does",
  })
  previousSecretExpiresAt!: Date | null;
  @Field(() => [ApiKeyInfoType]) keys!: ApiKeyInfoType[];
}

@ObjectType("CreatedClient", { description: "The signing secret is shown this once." })
export class CreatedClientType {
  @Field(() => ID) clientId!: string;
  @Field() signingSecret!: string;
}

@ObjectType("RotatedSigningSecret", { description: "The new signing secret is shown this once." })
export class RotatedSigningSecretType {
  @Field() signingSecret!: string;
  @Field({
    description:
      "When the replaced secret stops signing: until then every delivery carries a signature with each secret (now, for graceSeconds 0)",
  })
  previousSecretExpiresAt!: Date;
}

@ObjectType("IssuedApiKey", { description: "The key is shown this once; only its hash is stored." })
export class IssuedApiKeyType {
  @Field(() => ID) keyId!: string;
  @Field() key!: string;
}

@ObjectType("StationImportResult")
export class StationImportResultType {
  @Field(() => Int) version!: number;
  @Field(() => Int) stationCount!: number;
}
