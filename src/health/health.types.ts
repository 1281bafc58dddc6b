import { Field, ObjectType } from "type-graphql";

@ObjectType({ description: "Whether this gateway instance can serve requests." })
export class Health {
  @Field({ description: '"ready" or "unavailable"' })
  status!: string;

  @Field({ description: '"up" or "down"' })
  database!: string;

  @Field({ description: '"postgres" or "pglite" (embedded)' })
  databaseKind!: string;

  @Field()
  migrationsApplied!: boolean;

  @Field({ description: '"up", "down" (live events reach this instance\'s subscribers only) or "not used"' })
  redis!: string;

  @Field({
    description:
      '"consuming", "reconnecting" (carrier messages wait in the queue; the instance stays ready) or "not used"',
  })
  broker!: string;
}
